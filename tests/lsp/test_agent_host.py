"""`tokenGauge/chat` from the Agents window's runtime (`client: agentHost`), end to end: what it is
told in its own terms (ARCHITECTURE §1). The runtime meters a session against the `maxInputTokens`
it was created with and takes a reported prompt count only above its own; it compacts and retries
only on an error that says "prompt is too long"."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import (
    READ_FILE,
    PartLog,
    chat_options,
    chat_params,
    conversation,
    text_message,
    text_of,
)
from tokengauge.chat.compaction import SUMMARY_INSTRUCTIONS
from tokengauge.counting.encodings import build_encoding

MODEL = "gpt-4o"
SKEW = 1.6
SMALL = {
    "id": "small",
    "provider": "up-openai",
    "name": "Small (test)",
    "family": "gpt-4o",
    "contextWindow": 8_000,
    "maxOutputTokens": 1_000,
}
"""A model whose requests may have 8,000 − 1,000 (output) − 128 (safety) = 6,872 input tokens."""
SMALL_TARGET = 6_872
WORDS = "ledger window budget summary stream "


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server, wired to a fresh test upstream (`client.upstream`) that counts at SKEW."""
    config = UpstreamConfig()
    config.model.scale = config.model.tool_scale = SKEW
    async with running_upstream(config) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        options = chat_options(str(tmp_path / "storage"), up.base_url)
        options["models"].append(SMALL)
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


@pytest.fixture
def upstream(client: LanguageClient) -> Upstream:
    return client.upstream  # type: ignore[attr-defined,no-any-return]


async def usage_of(client: LanguageClient, params: dict) -> dict:
    """The usage part a chat ends with."""
    await call(client, "tokenGauge/chat", params)
    parts = client.part_log.of(params["requestId"])  # type: ignore[attr-defined]
    assert parts[-1]["type"] == "usage"
    return parts[-1]  # type: ignore[no-any-return]


async def declared_max_input(client: LanguageClient) -> tuple[int, int]:
    """`maxInputTokens` VS Code is told, and the true input budget it stands for."""
    told = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}[MODEL]
    true = {m["id"]: m for m in (await call(client, "tokenGauge/usage", {}))["models"]}[MODEL]
    return told["maxInputTokens"], true["maxInputTokens"]


async def test_the_runtime_is_told_the_prompt_in_the_units_its_session_meters(
    client: LanguageClient, upstream: Upstream
):
    """(Requests with tools, as the runtime's all are: a conversation's turns.) Cold, the
    declaration is the true budget; the first answer teaches the skew and VS Code is
    told a smaller `maxInputTokens`. A runtime session keeps the limit it was created with: its
    conversation is told the prompt in the first declaration to its end, a new one in the new
    declaration, and the chat panel, which reads the declaration anew, in the new one too."""
    first_declared, budget = await declared_max_input(client)
    assert first_declared == budget  # nothing learned yet
    notes = "Summarize the notes: " + "ledger window budget summary stream " * 300
    opening = conversation(notes)
    agent = await usage_of(
        client, chat_params(MODEL, opening, client="agentHost", tools=[READ_FILE])
    )
    declared, _ = await declared_max_input(client)
    assert declared < first_declared / (SKEW - 0.2)  # the skew was learned and declared
    true_input = upstream.model_requests[0].prompt_tokens
    assert agent["totalInputTokens"] == true_input
    assert agent["data"]["prompt_tokens"] == math.ceil(true_input * first_declared / budget)
    # The same conversation goes on: the same session, the same limit.
    answered = [*opening, text_message("assistant", "ok: " + notes[:40])]
    going_on = [*answered, text_message("user", "And the next part? " + notes)]
    later = await usage_of(
        client, chat_params(MODEL, going_on, client="agentHost", tools=[READ_FILE])
    )
    true_later = upstream.model_requests[1].prompt_tokens
    assert later["data"]["prompt_tokens"] == math.ceil(true_later * first_declared / budget)
    # A new conversation is a new session, created with the declaration of now.
    other = [
        text_message("system", "You review changes."),
        text_message("user", "Review: " + notes),
    ]
    new = await usage_of(client, chat_params(MODEL, other, client="agentHost", tools=[READ_FILE]))
    true_new = upstream.model_requests[2].prompt_tokens
    assert new["data"]["prompt_tokens"] == math.ceil(true_new * declared / budget)
    chat = await usage_of(
        client, chat_params(MODEL, conversation(notes + " two"), tools=[READ_FILE])
    )
    true_chat = upstream.model_requests[3].prompt_tokens
    assert chat["data"]["prompt_tokens"] == round(true_chat * declared / budget)


def runtime_prompt(session: str) -> dict:
    """The runtime's system prompt of `session`: it names the session's folder."""
    folder = f"/home/me/.copilot/session-state/{session}-6f3b-4bc0-b19d-6d98b9fb5b41"
    return text_message("system", f"You are the GitHub Copilot CLI.\nSession folder: {folder}")


async def test_a_runtime_session_keeps_its_units_after_its_compaction_and_beside_a_twin(
    client: LanguageClient, upstream: Upstream
):
    """After the runtime compacts, a session's requests share no message with its earlier ones,
    and another session may say the same: its system prompt's session folder tells them apart."""
    first_declared, budget = await declared_max_input(client)
    notes = "Read the notes: " + WORDS * 300
    turn = [runtime_prompt("eb1b369c"), text_message("user", notes)]
    await usage_of(client, chat_params(MODEL, turn, client="agentHost", tools=[READ_FILE]))
    declared, _ = await declared_max_input(client)
    assert declared < first_declared  # the skew was learned
    summary = text_message("user", "Some of the conversation history has been summarized… " + notes)
    after = [turn[0], summary, text_message("user", "And the next part?")]
    again = await usage_of(client, chat_params(MODEL, after, client="agentHost", tools=[READ_FILE]))
    true_again = upstream.model_requests[1].prompt_tokens
    assert again["data"]["prompt_tokens"] == math.ceil(true_again * first_declared / budget)
    twin = [runtime_prompt("0c3e2a19"), *after[1:]]
    new = await usage_of(client, chat_params(MODEL, twin, client="agentHost", tools=[READ_FILE]))
    true_new = upstream.model_requests[2].prompt_tokens
    assert new["data"]["prompt_tokens"] == math.ceil(true_new * declared / budget)


@pytest.mark.parametrize(("sent_by", "said"), [("agentHost", True), ("chat", False)])
async def test_an_overflow_says_prompt_is_too_long_to_the_runtime_only(
    client: LanguageClient, upstream: Upstream, sent_by: str, said: bool
):
    """The runtime compacts and sends the turn again only for "prompt is too long"; the chat
    panel's words stay those a person reads there."""
    upstream.config.model.context_window = 60
    upstream.config.model.check_max_tokens = False
    params = chat_params(MODEL, conversation("word " * 200), client=sent_by)
    with pytest.raises(JsonRpcException) as caught:
        await call(client, "tokenGauge/chat", params)
    message = caught.value.message
    assert caught.value.data == {"kind": "overflow"}
    assert "cannot fit" in message
    assert ("prompt is too long" in message) is said


def sized(tokens: int) -> str:
    """Text of about `tokens` o200k tokens."""
    encoding = build_encoding("o200k_base")
    text = WORDS * (tokens // 5)
    while len(encoding.encode(text)) > tokens:
        text = text[: -len(WORDS)]
    return text


def answer_text(client: LanguageClient, params: dict) -> str:
    """The text of the answer to the chat of `params`."""
    return text_of(client.part_log.of(params["requestId"]))  # type: ignore[attr-defined]


def earlier_turn() -> list[dict]:
    """A conversation's first turn: an ask, a read and its result, the answer."""
    call_part = {"type": "toolCall", "callId": "c1", "name": "read_file", "input": {"path": "a"}}
    result = {"type": "toolResult", "callId": "c1", "content": [{"type": "text", "value": "ok"}]}
    return [
        text_message("system", "You are the runtime's agent."),
        text_message("user", "Read a."),
        {"role": "assistant", "content": [call_part]},
        {"role": "user", "content": [result]},
        text_message("assistant", "Read it."),
    ]


async def test_a_turn_that_fits_but_whose_summary_would_not_asks_the_runtime_to_compact(
    client: LanguageClient, upstream: Upstream
):
    """The runtime's request for a summary is the conversation and its instructions after it: a
    turn that fits but leaves no room for them is refused once in the runtime's words (so that
    it compacts while its summary can see everything); sent again, it is sent as it is. The chat
    panel's is sent at once."""
    upstream.config.model.scale = upstream.config.model.tool_scale = 1.0
    size = SMALL_TARGET - SUMMARY_INSTRUCTIONS + 200  # fits; with the instructions, would not
    messages = [*earlier_turn(), text_message("user", "Now this: " + sized(size))]
    params = chat_params("small", messages, client="agentHost", tools=[READ_FILE])
    with pytest.raises(JsonRpcException) as caught:
        await call(client, "tokenGauge/chat", params)
    assert caught.value.message.startswith("The prompt is too long for Small (test)")
    assert upstream.model_requests == []  # refused before it was sent
    again = chat_params("small", messages, client="agentHost", tools=[READ_FILE])
    await call(client, "tokenGauge/chat", again)
    panel = chat_params("small", messages, tools=[READ_FILE])
    await call(client, "tokenGauge/chat", panel)
    assert len(upstream.model_requests) == 2
    for sent in (again, panel):
        assert not answer_text(client, sent).startswith("*Token Gauge")  # nothing was cut


@pytest.mark.parametrize(
    ("last", "noted"),
    [
        ("Please create a detailed summary of the conversation so far. The history is", False),
        ("And what does it say?", True),
    ],
)
async def test_a_summary_the_ladder_fitted_carries_no_note(
    client: LanguageClient, upstream: Upstream, last: str, noted: bool
):
    """A summary's text becomes the conversation from then on: the note of what the ladder cut
    would be sent with every later request, and no person reads it. An answer begins with it."""
    upstream.config.model.scale = upstream.config.model.tool_scale = 1.0
    messages = earlier_turn()
    messages[3]["content"][0]["content"] = [{"type": "text", "value": sized(SMALL_TARGET)}]
    params = chat_params("small", [*messages, text_message("user", last)])
    await call(client, "tokenGauge/chat", params)
    assert answer_text(client, params).startswith("*Token Gauge: this request did not fit") is noted
    record = (await call(client, "tokenGauge/usage", {}))["history"][-1]
    assert record["trimmedTokens"] > 0  # the status and the dashboard still say what was cut
