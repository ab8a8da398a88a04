"""The send path's safety net end to end: real LSP over stdio, real HTTP to a test upstream whose
true tokenizer is o200k_base × 1.3 (+7 per message) behind a small window, answering Anthropic's
real "prompt is too long" error; tokengauge counts the model as a Claude (cl100k_base)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import ModelBehavior, Reply, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params
from tests.lsp.helpers import text_message
from tokengauge.calibration.trim import marker

WINDOW = 12_000
MODEL = "sim"
SIM = {
    "id": MODEL,
    "provider": "up-openai",
    "name": "Sim",
    "family": "claude-sonnet-4",
    "contextWindow": WINDOW,
    "maxOutputTokens": 2_000,
}


def behavior(scale: float) -> ModelBehavior:
    return ModelBehavior(
        encoding="o200k_base",
        scale=scale,
        tool_scale=scale,
        per_message_overhead=7,
        context_window=WINDOW,
        error_style="anthropic",
    )


async def start(client: LanguageClient, tmp_path: Path, up: Upstream, **extra: Any) -> None:
    client.upstream = up  # type: ignore[attr-defined]
    client.part_log = PartLog(client)  # type: ignore[attr-defined]
    options = chat_options(str(tmp_path / "storage"), up.base_url, **extra)
    options["models"] = [SIM]
    await initialize(client, options)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with running_upstream(UpstreamConfig(model=behavior(1.3), reply=Reply(text="ok"))) as up:
        await start(lsp_client, tmp_path, up)
        yield
        await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def doubling(lsp_client: LanguageClient, tmp_path: Path):
    """A new model whose API counts twice what tiktoken says."""
    async with running_upstream(UpstreamConfig(model=behavior(2.0), reply=Reply(text="ok"))) as up:
        await start(lsp_client, tmp_path, up)
        yield
        await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def capped(lsp_client: LanguageClient, tmp_path: Path):
    async with running_upstream(UpstreamConfig(model=behavior(1.3), reply=Reply(text="ok"))) as up:
        await start(lsp_client, tmp_path, up, toolResultMaxTokens=300)
        yield
        await lsp_client.shutdown_session()


def log(lines: int) -> str:
    return "".join(
        f"gateway line {i}: upstream answered 502 after {i % 97} ms\n" for i in range(lines)
    )


def turn(result_lines: int, history: int = 0) -> list[dict[str, Any]]:
    """A system prompt, earlier exchanges, a question, and one tool call with its result."""
    messages = [text_message("system", "You are a careful assistant.")]
    for i in range(history):
        messages.append(text_message("user", f"earlier question {i} " * 60))
        messages.append(text_message("assistant", f"earlier answer {i} " * 60))
    messages.append(text_message("user", "Why did the gateway fail? Read its log."))
    call_part = {"type": "toolCall", "callId": "c1", "name": "read_file", "input": {"p": "g.log"}}
    result = {
        "type": "toolResult",
        "callId": "c1",
        "content": [{"type": "text", "value": log(result_lines)}],
    }
    messages.append({"role": "assistant", "content": [call_part]})
    messages.append({"role": "user", "content": [result]})
    return messages


def sent_text(request: Any) -> str:
    return "".join(
        m["content"] if isinstance(m["content"], str) else "" for m in request.json["messages"]
    )


async def chat(client: LanguageClient, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    params = chat_params(MODEL, messages)
    await call(client, "tokenGauge/chat", params)
    return client.part_log.of(params["requestId"])  # type: ignore[attr-defined,no-any-return]


async def test_a_request_that_cannot_fit_is_trimmed_before_it_is_sent(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    for lines in (10, 60, 120, 30):  # a few ordinary requests: calibration learns the ratios
        await chat(client, turn(lines))
    sent_before = len(upstream.model_requests)
    parts = await chat(client, turn(900))  # ~30k true tokens of log in a 12k window
    [request] = upstream.model_requests[sent_before:]
    assert request.status == 200
    assert request.prompt_tokens <= WINDOW - 1_000  # room left for the answer
    text = sent_text(request)
    assert "gateway line 0:" in text and "gateway line 899:" in text  # both ends kept
    assert "tokens omitted" in text
    usage = parts[-1]
    assert usage["type"] == "usage" and usage["totalInputTokens"] == request.prompt_tokens
    assert usage["trimmed"]["toolResults"] == 1 and usage["trimmed"]["tokens"] > 4_000
    status = client.part_log.statuses[-1]  # type: ignore[attr-defined]
    assert "trimmed 1 tool result" in status["text"] and status["severity"] == "warning"


async def test_the_first_request_overflows_once_then_fits(doubling: LanguageClient):
    """The first request, estimated from the prior, overflows; the error teaches the size and the
    request goes again, trimmed, once."""
    upstream: Upstream = doubling.upstream  # type: ignore[attr-defined]
    await chat(doubling, turn(450))  # ~9.3k tokens by the prior, 12.6k for the API
    first, second = upstream.model_requests
    assert first.status == 400
    assert second.status == 200 and second.prompt_tokens <= WINDOW
    assert "tokens omitted" in sent_text(second)


async def test_history_goes_when_cutting_tool_results_is_not_enough(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    for lines in (10, 60, 120):
        await chat(client, turn(lines))
    await chat(client, turn(300, history=30))
    request = upstream.model_requests[-1]
    assert request.status == 200 and request.prompt_tokens <= WINDOW
    sent = request.json["messages"]
    assert sent[0]["content"] == "You are a careful assistant."
    assert sent[1]["role"] == "user"
    assert "earlier question 0 " not in sent_text(request)  # the oldest went first
    assert "Why did the gateway fail?" in sent_text(request)
    status = client.part_log.statuses[-1]  # type: ignore[attr-defined]
    assert "messages" in status["text"]


async def test_the_tool_result_cap_is_sent_and_counted(capped: LanguageClient):
    upstream: Upstream = capped.upstream  # type: ignore[attr-defined]
    messages = turn(400)
    counted = await call(capped, "tokenGauge/countTokens", {"modelId": MODEL, "inputs": messages})
    parts = await chat(capped, messages)
    request = upstream.model_requests[-1]
    tool_message = next(m for m in request.json["messages"] if m["role"] == "tool")
    assert "tokens omitted" in tool_message["content"]
    assert parts[-1]["trimmed"]["toolResults"] == 1
    # The count of the message with the long result is the count of what was sent.
    sent_result = marker(0).strip()[:3] in tool_message["content"]
    assert sent_result and counted["raw"][-1] < 400
    assert counted["raw"][-1] == pytest.approx(300 + 15, abs=15)


DOCUMENTED_TOOLS = [
    {
        "name": f"step_{i}",
        "description": f"Runs step {i}. " + "Each option changes how the step behaves. " * 30,
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where it runs. " * 40},
                "mode": {"type": "string", "enum": ["fast", "full"]},
            },
            "required": ["path"],
        },
    }
    for i in range(6)
]


def pasted(lines: int) -> list[dict[str, Any]]:
    """A system prompt and a turn whose own message is a long pasted log."""
    return [
        text_message("system", "You are a careful assistant."),
        text_message("user", "What failed first in this log?\n" + log(lines)),
    ]


async def history(client: LanguageClient) -> list[dict[str, Any]]:
    report = await call(client, "tokenGauge/usage", {})
    return report["history"]  # type: ignore[no-any-return]


async def test_a_large_message_with_many_tools_goes_with_the_tools_shortened(
    client: LanguageClient,
):
    """Nothing to cut but the tools' documentation: the request goes with the tools minimal (all
    of them, names and required parameters kept), the answer says so first, and the usage
    history keeps what each rung removed."""
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    for lines in (10, 60):
        await chat(client, turn(lines))
    params = chat_params(MODEL, pasted(400), tools=DOCUMENTED_TOOLS)
    await call(client, "tokenGauge/chat", params)
    parts = client.part_log.of(params["requestId"])  # type: ignore[attr-defined]
    request = upstream.model_requests[-1]
    assert request.status == 200
    assert request.prompt_tokens + request.json["max_tokens"] <= WINDOW
    sent = {tool["function"]["name"]: tool["function"] for tool in request.json["tools"]}
    assert list(sent) == [tool["name"] for tool in DOCUMENTED_TOOLS]
    assert all(t["parameters"]["required"] == ["path"] for t in sent.values())
    assert "Where it runs." not in str(sent)  # the annotations went
    assert "gateway line 399:" in sent_text(request)  # the message went whole
    note, *_, usage = parts
    assert note["type"] == "text" and note["value"].startswith("*Token Gauge:")
    assert "the model did not see all of it" in note["value"] and "minimal" in note["value"]
    assert usage["trimmed"]["toolDocs"] == "minimal" and usage["trimmed"]["removed"]["toolDocs"]
    [record] = [r for r in await history(client) if r.get("ladder")]
    assert set(record["ladder"]) == {"toolDocs"} and record["trimmedTokens"] > 0
    status = client.part_log.statuses[-1]  # type: ignore[attr-defined]
    assert "tool docs (minimal)" in status["text"] and status["severity"] == "warning"


async def test_the_answer_gets_less_room_before_the_message_is_cut(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    for lines in (10, 60):
        await chat(client, turn(lines))
    parts = await chat(client, pasted(570))  # fits with ~1.5k for the answer, not with 2k
    request = upstream.model_requests[-1]
    assert request.status == 200 and "gateway line 569:" in sent_text(request)
    assert "tokens omitted" not in sent_text(request)
    assert 1_024 <= request.json["max_tokens"] < 2_000
    assert request.prompt_tokens + request.json["max_tokens"] <= WINDOW
    assert set(parts[-1]["trimmed"]["removed"]) == {"output"}
    assert "the answer limited to" in parts[0]["value"]


async def test_last_the_turns_own_message_is_cut_in_the_middle(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    for lines in (10, 60):
        await chat(client, turn(lines))
    parts = await chat(client, pasted(900))  # ~30k true tokens in a 12k window
    request = upstream.model_requests[-1]
    assert request.status == 200
    assert request.prompt_tokens + request.json["max_tokens"] <= WINDOW
    text = sent_text(request)
    assert "What failed first" in text and "gateway line 899:" in text and "tokens omitted" in text
    assert set(parts[-1]["trimmed"]["removed"]) == {"output", "userMessage"}
    assert "your message cut in the middle" in parts[0]["value"]


async def test_a_system_prompt_larger_than_the_window_is_refused_with_what_to_do(
    client: LanguageClient,
):
    from pygls.exceptions import JsonRpcException

    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages = [text_message("system", log(900)), text_message("user", "Hi")]
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, messages)
    assert caught.value.data == {"kind": "overflow"}
    message = caught.value.message
    assert "cannot fit Sim's 12k-token window" in message and "system prompt" in message
    assert "Start a new chat" in message
    assert not upstream.model_requests  # never sent
