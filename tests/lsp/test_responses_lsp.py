"""The OpenAI Responses dialect end to end over LSP: a provider with `dialect: "responses"`, a
text answer, a tool-call round, and encrypted reasoning carried across it, against a test
upstream that checks the input items as the real API does (and refuses a continuation whose
reasoning item is missing or altered)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, UpstreamConfig
from tests.harness.fake_upstream.responses import NO_REASONING, NOT_VERIFIED, reasoning_of
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import PartLog, answer_message, chat_options, chat_params
from tests.lsp.helpers import text_message

READ_FILE = {
    "name": "read_file",
    "description": "Read a file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
ASK = '<tg-tool-calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tg-tool-calls>'
THOUGHT = "Reading a.py first shows what the parser does."
EFFORT = {"reasoningEffort": "medium"}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server with one Responses-dialect provider on the test upstream."""
    reply = Reply(scripted_calls=True, thinking=THOUGHT)
    async with running_upstream(UpstreamConfig(reply=reply)) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        options = chat_options(
            str(tmp_path / "storage"),
            up.base_url,
            providers=[
                {"id": "up-responses", "dialect": "responses", "baseUrl": up.base_url + "/v1"}
            ],
            models=[{"id": "gpt-5", "provider": "up-responses"}],
        )
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


def parts(client: LanguageClient, params: dict[str, Any]) -> list[dict[str, Any]]:
    return client.part_log.of(params["requestId"])  # type: ignore[attr-defined]


async def test_a_text_answer_with_usage(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    params = chat_params(
        "gpt-5", [text_message("user", "Say hello.")], modelOptions={"reasoningEffort": "low"}
    )
    result = await call(client, "tokenGauge/chat", params)
    [request] = upstream.model_requests
    assert request.path == "/v1/responses" and request.status == 200
    body = request.json
    assert body["store"] is False and body["stream"] is True and body["max_output_tokens"] > 0
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "Say hello."}]}
    ]
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    text = "".join(p["value"] for p in parts(client, params) if p["type"] == "text")
    assert text.startswith("ok: ")
    assert parts(client, params)[-1]["totalInputTokens"] == request.prompt_tokens
    assert result["finishReason"] == "stop"


async def test_a_tool_call_round(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages = [text_message("user", f"Read a.py. {ASK}")]
    first = chat_params("gpt-5", messages, tools=[READ_FILE])
    result = await call(client, "tokenGauge/chat", first)
    [tool_call] = [p for p in parts(client, first) if p["type"] == "toolCall"]
    assert (tool_call["name"], tool_call["input"]) == ("read_file", {"path": "a.py"})
    assert result["finishReason"] == "tool_calls"
    answer = {"role": "assistant", "content": [tool_call]}
    output = {
        "type": "toolResult",
        "callId": tool_call["callId"],
        "content": [{"type": "text", "value": "x = 1"}],
    }
    second = chat_params(
        "gpt-5", [*messages, answer, {"role": "user", "content": [output]}], tools=[READ_FILE]
    )
    await call(client, "tokenGauge/chat", second)
    sent = upstream.model_requests[-1]
    assert sent.status == 200
    items = sent.json["input"]
    assert [item.get("type", item.get("role")) for item in items] == [
        "user",
        "function_call",
        "function_call_output",
    ]
    assert items[1]["call_id"] == items[2]["call_id"] == tool_call["callId"]
    assert sent.json["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": "Read a file.",
        "parameters": READ_FILE["inputSchema"],
        "strict": False,
    }


async def test_a_result_without_its_call_is_refused_as_the_api_would(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    orphan = {
        "type": "toolResult",
        "callId": "call_nowhere",
        "content": [{"type": "text", "value": "x"}],
    }
    params = chat_params(
        "gpt-5", [text_message("user", "hi"), {"role": "user", "content": [orphan]}]
    )
    try:
        await call(client, "tokenGauge/chat", params)
    except Exception as exc:  # the chat fails with the API's own words
        assert "No tool call found for function call output with call_id call_nowhere" in str(exc)
    else:
        raise AssertionError("the strict upstream accepted an orphan function_call_output")
    assert upstream.model_requests[-1].status == 400


async def reasoned_round(
    client: LanguageClient,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """A first request with reasoning on: its messages, its streamed parts and its tool result."""
    messages = [text_message("user", f"Fix a.py. {ASK}")]
    first = chat_params("gpt-5", messages, tools=[READ_FILE], modelOptions=EFFORT)
    await call(client, "tokenGauge/chat", first)
    streamed = parts(client, first)
    [tool_call] = [p for p in streamed if p["type"] == "toolCall"]
    output = {"type": "toolResult", "callId": tool_call["callId"], "content": []}
    return messages, streamed, output


async def test_encrypted_reasoning_survives_the_tool_call(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages, streamed, output = await reasoned_round(client)
    shown = "".join(p["value"] for p in streamed if p["type"] == "thinking" and "id" not in p)
    assert shown == THOUGHT  # the summary, as it streamed
    [item] = [p for p in streamed if p["type"] == "thinking" and "encrypted" in p]
    assert item["value"] == "" and item["id"].startswith("rs_")
    assert reasoning_of(item["id"], item["encrypted"]) == THOUGHT
    # The next request as the extension converts Copilot's history: every part of the answer.
    answer = answer_message(streamed, "gpt-5")
    follow = [*messages, answer, {"role": "user", "content": [output]}]
    await call(
        client,
        "tokenGauge/chat",
        chat_params("gpt-5", follow, tools=[READ_FILE], modelOptions=EFFORT),
    )
    sent = upstream.model_requests[-1]
    assert sent.status == 200
    items = sent.json["input"]
    assert [i.get("type", i.get("role")) for i in items] == [
        "user",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert items[1] == {
        "type": "reasoning",
        "id": item["id"],
        "summary": [],
        "encrypted_content": item["encrypted"],
    }
    # The reasoning of this turn counts in the prompt, by the upstream and by our estimate.
    assert sent.prompt_tokens > upstream.model_requests[0].prompt_tokens


async def test_a_continuation_without_its_reasoning_or_with_it_altered_is_refused(
    client: LanguageClient,
):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages, streamed, output = await reasoned_round(client)
    [item] = [p for p in streamed if p["type"] == "thinking" and "encrypted" in p]
    [tool_call] = [p for p in streamed if p["type"] == "toolCall"]
    content = item["encrypted"]
    altered = {
        **item,
        "encrypted": content[:12] + ("B" if content[12] != "B" else "C") + content[13:],
    }
    refusals = {
        "missing": (
            [tool_call],
            NO_REASONING.format(call_item="fc_" + item["id"][3:], item_id=item["id"]),
        ),
        "altered": ([altered, tool_call], NOT_VERIFIED.format(item_id=item["id"])),
    }
    for kept, error in refusals.values():
        follow = [
            *messages,
            {"role": "assistant", "content": kept},
            {"role": "user", "content": [output]},
        ]
        params = chat_params("gpt-5", follow, tools=[READ_FILE], modelOptions=EFFORT)
        try:
            await call(client, "tokenGauge/chat", params)
        except Exception as exc:  # the chat fails with the API's own words
            assert error.rstrip(".") in str(exc)
        else:
            raise AssertionError(f"the strict upstream accepted {kept!r}")
        assert upstream.model_requests[-1].status == 400


async def test_the_overflow_event_teaches_the_window(client: LanguageClient):
    """The API's overflow arrives as a stream `error` event without counts, before any part of
    the answer: a smaller window is learned from it (VS Code is told), and the request is fitted
    to it and sent again at once, as after an HTTP 400."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    upstream.config.model.context_window = 8_000
    before = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}["gpt-5"]
    words = " ".join(f"line {i}: the parser reads tokens one by one." for i in range(800))
    messages = [
        text_message("user", words),
        text_message("assistant", "It reads tokens."),
        text_message("user", "Summarize."),
    ]
    params = chat_params("gpt-5", messages)
    result = await call(client, "tokenGauge/chat", params)
    first, second = upstream.model_requests
    assert first.status == 200 and first.prompt_tokens > 8_000  # streamed, then the error event
    assert client.part_log.models_changed == 1  # type: ignore[attr-defined]
    after = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}["gpt-5"]
    assert after["contextWindow"] < first.prompt_tokens < before["contextWindow"]
    # Sent again at once, fitted to the window learned: the answer arrives, nothing failed.
    assert second.status == 200 and second.prompt_tokens <= 8_000 < first.prompt_tokens
    assert result["finishReason"] == "stop"
    assert "".join(p["value"] for p in parts(client, params) if p["type"] == "text")
