"""Chat input that is valid, or nearly so: it is sent, or refused with a message naming the
field, never an internal error (real LSP over stdio, real HTTP to the test upstream)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server
from tests.lsp.chat_helpers import chat_options, chat_params, conversation
from tests.lsp.helpers import text_message

INVALID_PARAMS = -32602


@pytest.fixture
async def served(tmp_path: Path):
    async with (
        running_upstream() as up,
        running_server(chat_options(str(tmp_path / "storage"), up.base_url)) as client,
    ):
        yield client, up


@pytest.mark.parametrize("model_id", ["gpt-4o", "claude-sonnet-4-5"])
async def test_a_lone_surrogate_is_sent_as_an_escape(served, model_id: str):
    """Counting takes it (VS Code strings may carry one); the chat must too."""
    client, up = served
    messages = [*conversation()[:1], text_message("user", "broken emoji \ud83d here")]
    result = await call(client, "tokenGauge/chat", chat_params(model_id, messages))
    assert result["finishReason"] in ("stop", "end_turn")
    sent = up.model_requests[-1].body
    assert b"broken emoji \\ud83d here" in sent
    json.loads(sent)  # valid JSON, valid UTF-8


BAD = [
    pytest.param({"toolMode": []}, "toolMode", id="tool-mode-array"),
    pytest.param({"toolMode": {"a": 1}}, "toolMode", id="tool-mode-object"),
    pytest.param({"modelOptions": {"temperature": "hot"}}, "temperature", id="temperature-text"),
]


@pytest.mark.parametrize(("extra", "needle"), BAD)
async def test_bad_options_are_invalid_params(served, extra: dict[str, Any], needle: str):
    client, up = served
    with pytest.raises(JsonRpcException) as caught:
        await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation(), **extra))
    assert caught.value.code == INVALID_PARAMS and needle in caught.value.message
    assert up.model_requests == []


NAN, INF = float("nan"), float("inf")
NON_JSON_NUMBERS = [
    pytest.param({"modelOptions": {"seed": NAN}}, "params.modelOptions.seed: NaN", id="nan-extra"),
    pytest.param(
        {"modelOptions": {"temperature": INF}}, "params.modelOptions.temperature", id="infinity"
    ),
    pytest.param(
        {"modelOptions": {"logit_bias": {"50256": -INF}}}, "logit_bias.50256", id="-infinity"
    ),
    pytest.param(
        {"tools": [{"name": "t", "inputSchema": {"maximum": NAN}}]},
        "params.tools[0].inputSchema.maximum",
        id="nan-in-schema",
    ),
]


@pytest.mark.parametrize(("extra", "needle"), NON_JSON_NUMBERS)
async def test_numbers_json_cannot_carry_are_invalid_params(
    served, extra: dict[str, Any], needle: str
):
    """The client's JSON encoder writes them as NaN/Infinity, which Python's parser accepts; sent
    on, they made the body invalid JSON (an internal error, nothing sent)."""
    client, up = served
    with pytest.raises(JsonRpcException) as caught:
        await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation(), **extra))
    assert caught.value.code == INVALID_PARAMS
    assert needle in caught.value.message and "is not a JSON number" in caught.value.message
    assert up.model_requests == []
    result = await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation()))
    assert result["finishReason"] == "stop"
