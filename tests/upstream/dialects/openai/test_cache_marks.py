"""`cache_control` marks in Chat Completions bodies for OpenRouter's Claude models, judged by the
test upstream's rule for them (Anthropic's, at marked content parts)."""

from __future__ import annotations

from typing import Any

from tests.harness.fake_upstream.prompt_cache import PromptCache, laid
from tests.upstream.dialects.request_parts import NO_OPTIONS, assistant, result, system, user
from tokengauge.messages import Message, TextPart, ToolCallPart
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.dialects.openai.cache_marks import mark_cache
from tokengauge.upstream.dialects.openai.request import build_openai_body
from tokengauge.upstream.presets import caches_where_marked

ENCODER = "o200k_base"
SYSTEM = system(TextPart("You are a careful agent. " * 200))
OPENROUTER = ProviderSettings(id="or", preset="openrouter", base_url="http://127.0.0.1:9/api/v1")


def rounds(count: int) -> list[Message]:
    messages = [SYSTEM, user(TextPart("Fix the bug in the parser."))]
    for n in range(count):
        messages.append(assistant(ToolCallPart(f"c{n}", "read_file", {"n": n})))
        messages.append(user(result(f"c{n}", TextPart(f"result {n}: " + "x " * 300))))
    return messages


def body(
    messages: list[Message], marks: bool, model: str = "anthropic/claude-sonnet-4"
) -> dict[str, Any]:
    return build_openai_body(model, messages, [], NO_OPTIONS, 1024, cache_marks=marks)


def marked(request: dict[str, Any]) -> list[str]:
    return [
        f"{n}:{m['role']}"
        for n, m in enumerate(request["messages"])
        if isinstance(m["content"], list) and any("cache_control" in p for p in m["content"])
    ]


def test_the_end_the_previous_end_and_the_system_prompt_are_marked() -> None:
    request = body(rounds(2), marks=True)
    assert marked(request) == ["0:system", "3:tool", "5:tool"]
    assert request["messages"][5]["content"] == [
        {"type": "text", "text": "result 1: " + "x " * 300, "cache_control": {"type": "ephemeral"}}
    ]


def test_each_request_of_a_tool_loop_reads_the_one_before_and_unmarked_nothing() -> None:
    for marks in (True, False):
        cache, before = PromptCache(), 0
        for count in range(1, 4):
            request = body(rounds(count), marks)
            size = laid(request, "openai", ENCODER)
            read = cache.use(request, "openai", ENCODER, size).read
            assert read >= before if marks else read == 0
            before = size


def test_a_text_part_beside_an_image_is_the_one_marked() -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {}}],
        }
    ]
    mark_cache(messages)
    assert "cache_control" in messages[0]["content"][0]


def test_only_openrouters_claude_models_are_marked() -> None:
    assert caches_where_marked(OPENROUTER, "anthropic/claude-sonnet-4")
    assert not caches_where_marked(OPENROUTER, "openai/gpt-5")
    assert not caches_where_marked(ProviderSettings(id="o", preset="openai"), "anthropic/claude")
