"""Inputs that killed or hung the server: each answered over real LSP, and the server still serves.

tiktoken's regex panics on ~1,000,000 whitespace characters in a row, and a Rust panic is a
`BaseException`: in a request it ended the process, in a chat's task it left the answer hanging.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server
from tests.lsp.chat_helpers import chat_options, chat_params, conversation
from tests.lsp.helpers import text_message

ANSWER_WITHIN_S = 120
"""Far above the few seconds these take: reaching it means the request hung."""
MILLION = 1_000_000


@pytest.fixture
async def served(tmp_path: Path):
    async with (
        running_upstream() as up,
        running_server(
            chat_options(str(tmp_path / "storage"), up.base_url, toolResultMaxTokens=1000)
        ) as client,
    ):
        yield client, up


async def answer(client: Any, method: str, params: Any) -> Any:
    """The request's result; a hang fails the test instead of blocking it."""
    return await asyncio.wait_for(call(client, method, params), ANSWER_WITHIN_S)


async def still_serves(client: Any) -> None:
    result = await answer(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["hi"]})
    assert result["raw"] == [1]


def tool_result(text: str) -> dict[str, Any]:
    content = [{"type": "text", "value": text}]
    return {"role": "user", "content": [{"type": "toolResult", "callId": "c1", "content": content}]}


COUNTED = [
    pytest.param("\u3000" * MILLION, id="ideographic-spaces"),
    pytest.param(text_message("user", "\u3000" * MILLION), id="ideographic-spaces-message"),
    pytest.param(tool_result(" " * MILLION), id="tool-result-of-spaces-cut-by-the-cap"),
    pytest.param("\t" * MILLION + "x", id="tabs"),
]


@pytest.mark.parametrize("item", COUNTED)
async def test_a_million_whitespace_characters_are_counted(served, item: Any):
    client, _ = served
    params = {"modelId": "gpt-4o", "inputs": [item]}
    result = await answer(client, "tokenGauge/countTokens", params)
    assert result["raw"][0] > 0
    await still_serves(client)


@pytest.mark.parametrize("model_id", ["gpt-4o", "claude-sonnet-4-5"])
@pytest.mark.parametrize(
    "messages",
    [
        pytest.param(conversation(" " * MILLION), id="spaces"),
        pytest.param([*conversation(), tool_result("\u3000" * MILLION)], id="tool-result"),
    ],
)
async def test_a_chat_holding_a_million_spaces_completes(
    served, model_id: str, messages: list[dict[str, Any]]
):
    client, up = served
    result = await answer(client, "tokenGauge/chat", chat_params(model_id, messages))
    assert result["finishReason"] in ("stop", "end_turn")
    assert len(up.model_requests) == 1
    await still_serves(client)
