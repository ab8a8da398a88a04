"""What the recovery ladder cut from a conversation's request is cut the same way from the next
(`calibration.precedent`), end to end through a test upstream that keeps a prompt cache as
OpenAI's does: a conversation that outgrew its window is cut a step past what it needs, and the
tool loop's next request, which alone the ladder would cut to other lengths, repeats that
request's messages byte for byte and reads them from the cache; a round too large for the same
cuts is cut further, by a step again."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import (
    READ_FILE,
    caching_upstream,
    chat_options,
    chat_params,
    tool_round,
)
from tests.lsp.helpers import text_message

SMALL: Final = {"provider": "up-openai", "family": "gpt-4o", "contextWindow": 8_000}
SMALL_OUTPUT: Final = {**SMALL, "maxOutputTokens": 1_000}
MODELS: Final = [
    {"id": "small", **SMALL_OUTPUT},
    {"id": "small-twin", **SMALL_OUTPUT},  # the same model, no conversation of its own yet
]


def log(name: str, lines: int) -> str:
    return "".join(f"{name} line {i}: request served in {i % 97} ms\n" for i in range(lines))


BEGIN: Final = [
    text_message("system", "You are an expert AI programming assistant."),
    text_message("user", "Why is the service slow? Read both logs."),
    *tool_round("c1", "a.log", log("a", 200)),
]
START: Final = [*BEGIN, *tool_round("c2", "b.log", log("b", 450))]
NEXT: Final = [*START, *tool_round("c3", "c.log", log("c", 30))]
LARGE: Final = [*NEXT, *tool_round("c4", "d.log", log("d", 250))]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with caching_upstream() as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        await initialize(
            lsp_client, chat_options(str(tmp_path / "storage"), up.base_url, models=MODELS)
        )
        yield
        await lsp_client.shutdown_session()


async def chat(
    client: LanguageClient, model: str, messages: list[dict[str, Any]]
) -> RecordedRequest:
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    await call(client, "tokenGauge/chat", chat_params(model, messages, tools=[READ_FILE]))
    return upstream.model_requests[-1]


def results(request: RecordedRequest) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"] for m in request.json["messages"] if m["role"] == "tool"
    }


async def test_the_next_round_is_cut_as_the_last_and_read_from_the_cache(client: LanguageClient):
    begun = await chat(client, "small", BEGIN)
    assert "tokens omitted" not in str(begun.json["messages"])  # it fitted
    first = await chat(client, "small", START)
    assert "tokens omitted" in results(first)["c2"]  # the ladder cut the longer log to fit
    second = await chat(client, "small", NEXT)
    assert second.json["messages"][: len(first.json["messages"])] == first.json["messages"]
    assert results(second)["c3"] == log("c", 30)  # the new round whole
    assert first.prompt_tokens is not None and second.cached_tokens is not None
    assert second.cached_tokens >= first.prompt_tokens - 128  # all but the last block read
    # The same request decided alone (another model: no conversation of its own) is cut only as
    # far as it needs, not the step past it the growing conversation took: its prefix is not
    # the last request's.
    alone = await chat(client, "small-twin", NEXT)
    assert results(alone)["c2"] != results(first)["c2"]


async def test_a_round_too_large_for_the_same_cuts_is_cut_further_by_a_step(
    client: LanguageClient,
):
    await chat(client, "small", BEGIN)
    first = await chat(client, "small", START)
    await chat(client, "small", NEXT)
    large = await chat(client, "small", LARGE)
    sent, before = results(large), results(first)
    assert len(sent["c2"]) < len(before["c2"])  # cut further, never back
    assert len(sent["c1"]) <= len(before["c1"])
    # A step past what it needs: the round after it fits with the same cuts.
    after = await chat(client, "small", [*LARGE, *tool_round("c5", "e.log", log("e", 30))])
    assert after.json["messages"][: len(large.json["messages"])] == large.json["messages"]
