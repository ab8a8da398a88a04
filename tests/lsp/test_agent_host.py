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
)

MODEL = "gpt-4o"
SKEW = 1.6


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server, wired to a fresh test upstream (`client.upstream`) that counts at SKEW."""
    config = UpstreamConfig()
    config.model.scale = config.model.tool_scale = SKEW
    async with running_upstream(config) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        await initialize(lsp_client, chat_options(str(tmp_path / "storage"), up.base_url))
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
