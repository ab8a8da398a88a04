"""Inputs that killed or hung the server: each answered over real LSP, and the server still serves.

tiktoken's regex panics on ~1,000,000 whitespace characters in a row, and a Rust panic is a
`BaseException`: in a request it ended the process, in a chat's task it left the answer hanging.
A tool call whose arguments nest deeper than Python's parser follows failed the whole answer.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness.fake_upstream.config import Scripted
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server
from tests.lsp.chat_helpers import (
    READ_FILE,
    PartLog,
    answer_message,
    chat_options,
    chat_params,
    conversation,
)
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


def sse(events: list[tuple[str | None, dict[str, Any]]]) -> str:
    """An event stream of these (event name, data) pairs."""
    return "".join(
        (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
        for name, data in events
    )


def openai_answer(arguments: str) -> str:
    call = {"index": 0, "id": "call_1", "function": {"name": "read_file", "arguments": arguments}}
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Reading it."}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": {"prompt_tokens": 60, "completion_tokens": 9}},
    ]
    return sse([(None, chunk) for chunk in chunks]) + "data: [DONE]\n\n"


def anthropic_answer(arguments: str) -> str:
    usage = {"input_tokens": 60, "output_tokens": 1}
    text = {"type": "text_delta", "text": "Reading it."}
    tool = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}
    json_delta = {"type": "input_json_delta", "partial_json": arguments}
    return sse(
        [
            ("message_start", {"type": "message_start", "message": {"usage": usage}}),
            ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": text}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("content_block_start", {"index": 1, "content_block": tool}),
            ("content_block_delta", {"index": 1, "delta": json_delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            (
                "message_delta",
                {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
    )


@pytest.mark.parametrize("depth", [70, 100_000])
@pytest.mark.parametrize(
    ("model_id", "body"),
    [("gpt-4o", openai_answer), ("claude-sonnet-4-5", anthropic_answer)],
    ids=["openai", "anthropic"],
)
async def test_a_tool_call_nested_too_deeply_does_not_fail_the_answer(
    served, model_id: str, body: Any, depth: int
):
    """The text and the call arrive, the call's arguments as the string the model wrote (its tool
    says what is wrong with them), and the conversation goes on with it."""
    client, up = served
    parts = PartLog(client)
    arguments = '{"path": ' + "[" * depth + "]" * depth + "}"
    up.script(Scripted(body=body(arguments), status=200, content_type="text/event-stream"))
    params = chat_params(model_id, conversation(), tools=[READ_FILE])
    result = await answer(client, "tokenGauge/chat", params)
    assert result["finishReason"] in ("tool_calls", "tool_use")
    got = parts.of(params["requestId"])
    assert got[0] == {"type": "text", "value": "Reading it."}
    [tool_call] = [part for part in got if part["type"] == "toolCall"]
    assert tool_call["name"] == "read_file" and tool_call["input"] == arguments
    result_part = {"type": "toolResult", "callId": tool_call["callId"], "content": []}
    later = [
        *params["messages"],
        answer_message(got, model_id),
        {"role": "user", "content": [result_part]},
    ]
    again = await answer(client, "tokenGauge/chat", chat_params(model_id, later, tools=[READ_FILE]))
    assert again["finishReason"] in ("stop", "end_turn")


async def test_a_usage_no_number_can_hold_ends_the_answer_as_usual(served):
    """A count of 400 digits reported by the API failed the answer it ended (no float holds it):
    it is read as no count, and every later answer is JSON."""
    client, up = served
    huge = 10**400
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi."}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": huge, "completion_tokens": huge}},
    ]
    body = sse([(None, chunk) for chunk in chunks]) + "data: [DONE]\n\n"
    up.script(Scripted(body=body, status=200, content_type="text/event-stream"))
    result = await answer(client, "tokenGauge/chat", chat_params("gpt-4o", conversation()))
    assert result["finishReason"] == "stop" and result["usage"]["prompt_tokens"] == 0
    for method in ("tokenGauge/usage", "tokenGauge/dashboard"):
        json.dumps(await answer(client, method, {}), allow_nan=False)
