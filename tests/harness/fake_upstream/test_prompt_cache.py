"""The test upstream's prompt caches: OpenAI's prefix blocks, Anthropic's breakpoints."""

from __future__ import annotations

from typing import Any

import httpx

from tests.harness.fake_upstream.prompt_cache import BLOCK, PromptCache, laid
from tests.harness.fake_upstream.server import Upstream

ENCODER = "o200k_base"
LONG = " ".join(f"word{i}" for i in range(1_500))  # about 3,000 tokens


def chat(*texts: str, model: str = "m") -> dict[str, Any]:
    messages = [{"role": "system", "content": LONG}]
    messages += [{"role": "user", "content": text} for text in texts]
    return {"model": model, "messages": messages}


def test_openai_reads_the_longest_prefix_seen_in_whole_blocks() -> None:
    cache = PromptCache()
    assert cache.use(chat("first"), "openai", ENCODER, 10_000).read == 0
    again = cache.use(chat("first", "second"), "openai", ENCODER, 10_000)
    assert 0 < again.read < 10_000 and again.written == 0
    same = cache.use(chat("first", "second"), "openai", ENCODER, 10_000)
    assert same.read >= again.read


def test_openai_reads_in_blocks_of_the_layout() -> None:
    cache = PromptCache()
    size = laid(chat("first"), "openai", ENCODER)
    cache.use(chat("first"), "openai", ENCODER, size)  # true tokens = the layout's: no scaling
    longer = chat("first", "x")
    read = cache.use(longer, "openai", ENCODER, laid(longer, "openai", ENCODER)).read
    assert read > 0 and read % BLOCK == 0 and size - BLOCK < read <= size


def test_openai_reads_nothing_of_a_changed_start_a_short_prompt_or_another_model() -> None:
    cache = PromptCache()
    cache.use(chat("first"), "openai", ENCODER, 5_000)
    changed = chat("first")
    changed["messages"][0]["content"] = "Changed. " + LONG
    assert cache.use(changed, "openai", ENCODER, 5_000).read == 0
    assert cache.use(chat("first", model="other"), "openai", ENCODER, 5_000).read == 0
    short = {"model": "m", "messages": [{"role": "user", "content": "hi " * 300}]}
    cache.use(short, "openai", ENCODER, 400)
    assert cache.use(short, "openai", ENCODER, 400).read == 0  # under 1,024 tokens


def anthropic(marked: bool, *texts: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": LONG}
    if marked:
        block["cache_control"] = {"type": "ephemeral"}
    messages = [{"role": "user", "content": [{"type": "text", "text": t}]} for t in texts]
    return {"model": "m", "system": [block], "messages": messages}


def test_anthropic_caches_only_at_its_breakpoints() -> None:
    cache = PromptCache()

    def use(body: dict[str, Any]) -> tuple[int, int]:
        found = cache.use(body, "anthropic", ENCODER, laid(body, "anthropic", ENCODER))
        return found.read, found.written

    assert use(anthropic(False, "a")) == (0, 0)
    assert use(anthropic(False, "a", "b")) == (0, 0)
    read, written = use(anthropic(True, "a"))
    assert read == 0 and written > 3_000
    assert use(anthropic(True, "a", "b")) == (written, 0)  # the marked system prompt, read


async def test_upstream_reports_what_its_cache_served(
    upstream: Upstream, http: httpx.AsyncClient
) -> None:
    upstream.config.model.prompt_cache = True
    upstream.config.model.encoding = ENCODER
    reported = []
    for body in (chat("first"), chat("first", "second")):
        body |= {"stream": True, "stream_options": {"include_usage": True}}
        response = await http.post("/v1/chat/completions", json=body)
        usage = [line for line in response.text.splitlines() if '"usage":{' in line][-1]
        reported.append(usage)
    first, second = upstream.model_requests
    assert first.cached_tokens == 0
    assert 0 < (second.cached_tokens or 0) < (second.prompt_tokens or 0)
    assert f'"cached_tokens":{second.cached_tokens}' in reported[1]
    upstream.reset()
    await http.post("/v1/chat/completions", json=chat("first", "second"))
    assert upstream.last.cached_tokens == 0  # a reset empties the cache
