"""Copilot's foreground summary asked over the conversation's last request as it was sent
(`chat.cached_summary`), end to end through a test upstream that keeps a prompt cache as
OpenAI's does (`prompt_cache.py`).

The summary request reaching the API is the conversation's last request, tools and messages as
they were sent, then one user message with the tail Copilot's request holds (the answer's call,
its result), Copilot's instructions and its ask; tool choice none. So the API reads the whole
conversation from its cache; and everything Copilot asked to be summarized is in what the model
saw. Where that would not fit, or the conversation's last request is not known, Copilot's request
goes as it came.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, Scripted
from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import (
    READ_FILE,
    PartLog,
    answer_message,
    caching_upstream,
    chat_options,
    chat_params,
)
from tests.lsp.helpers import text_message
from tokengauge.chat.cached_summary import ASK_MARK, INSTRUCTIONS_MARK, SIMPLE_MARK

SMALL: Final = {
    "id": "small",
    "provider": "up-openai",
    "name": "Small (test)",
    "family": "gpt-4o",
    "contextWindow": 8_000,
    "maxOutputTokens": 1_000,
}
"""Requests of at most 8,000 − 1,000 (output) − 128 (safety) = 6,872 input tokens."""
SYSTEM: Final = "You are an expert AI programming assistant. " + "Follow the rules. " * 150
QUESTION: Final = "Review ledger.py and list its riskiest function. " + "ledger window " * 300
RESULT: Final = "def post(entry):\n    audit.write(entry.checksum)\n" * 40
INSTRUCTIONS: Final = f"{INSTRUCTIONS_MARK} of the entire conversation. Wrap it in <summary> tags."
ASK: Final = f"{ASK_MARK}, paying special attention to the most recent tool results."
BLOCK: Final = 128
"""The cache's unit (OpenAI's): a prefix is served in whole blocks of 128 tokens."""
SUMMARY: Final = "<summary>ledger.py was read; post() writes each checksum.</summary>"


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with caching_upstream() as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        options = chat_options(str(tmp_path / "storage"), up.base_url)
        options["models"].append(SMALL)
        await initialize(lsp_client, options)
        yield
        await lsp_client.shutdown_session()


def upstream_of(client: LanguageClient) -> Upstream:
    return client.upstream  # type: ignore[no-any-return, attr-defined]


async def turn_with_a_call(
    client: LanguageClient, model: str, system: str = SYSTEM
) -> dict[str, Any]:
    """A turn answered with a read_file call: the call's answer as VS Code keeps it."""
    call_reply = Reply(tool_call=True, tool_name="read_file", tool_arguments={"path": "ledger.py"})
    upstream_of(client).script(Scripted(reply=call_reply))
    messages = [text_message("system", system), text_message("user", QUESTION)]
    params = chat_params(model, messages, tools=[READ_FILE])
    await call(client, "tokenGauge/chat", params)
    parts = client.part_log.of(params["requestId"])  # type: ignore[attr-defined]
    return answer_message(parts, model)


def simple_summary(answer: dict[str, Any], result: str) -> list[dict[str, Any]]:
    """Copilot's Simple-mode summary of that turn: its instructions, the conversation as chunks
    (the first user message, the answer's round with its call's result), its ask."""
    [call_part] = [p for p in answer["content"] if p["type"] == "toolCall"]
    arguments = json.dumps(call_part["input"])
    compressed = (
        f"{SIMPLE_MARK} in the current conversation. The first message is kept:\n"
        f"<user>\n{QUESTION}\n</user>\n<assistant>\n\n</assistant>\n"
        f'<tool>\nUsed tool "read_file" with arguments: {arguments}\n{result}\n</tool>\n'
    )
    return [
        text_message("system", INSTRUCTIONS),
        text_message("user", compressed),
        text_message("user", ASK),
    ]


async def summarized(client: LanguageClient, model: str, messages: list[dict[str, Any]]) -> str:
    """Ask for the summary; the answer's text."""
    upstream_of(client).script(Scripted(reply=Reply(text=SUMMARY)))
    params = chat_params(model, messages)
    result = await call(client, "tokenGauge/chat", params)
    assert result is not None
    parts = client.part_log.of(params["requestId"])  # type: ignore[attr-defined]
    return "".join(p["value"] for p in parts if p["type"] == "text")


def user_texts(request: RecordedRequest) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "user"]


async def test_a_summary_is_asked_over_the_last_request_and_read_from_the_cache(
    client: LanguageClient,
) -> None:
    answer = await turn_with_a_call(client, "gpt-4o")
    text = await summarized(client, "gpt-4o", simple_summary(answer, RESULT))
    turn, summary = upstream_of(client).model_requests[-2:]
    sent = turn.json["messages"]
    assert summary.json["messages"][: len(sent)] == sent  # the prefix, byte for byte
    assert summary.json["tools"] == turn.json["tools"] and summary.json["tool_choice"] == "none"
    last = summary.json["messages"][-1]["content"]
    assert RESULT.strip() in last and INSTRUCTIONS in last and last.endswith(ASK)
    # What Copilot asked to be summarized is all in what the model saw.
    seen = json.dumps(summary.json["messages"], ensure_ascii=False)
    assert all(json.dumps(t)[1:-1] in seen for t in (QUESTION, SYSTEM))
    assert summary.cached_tokens is not None and summary.prompt_tokens is not None
    # All the last request held, but for the block its end falls in (and its layout's closing).
    assert summary.cached_tokens >= turn.prompt_tokens - 2 * BLOCK
    assert text == SUMMARY  # the answer Copilot asked for, as it came


async def test_a_summary_goes_as_copilot_sent_it_when_the_rewrite_would_not_fit(
    client: LanguageClient,
) -> None:
    # The last request (3,600 tokens) fits, and Copilot's summary with the result (4,500); the
    # last request and the result (7,500) do not.
    result = RESULT * 8
    answer = await turn_with_a_call(client, "small", SYSTEM * 5)
    messages = simple_summary(answer, result)
    await summarized(client, "small", messages)
    summary = upstream_of(client).model_requests[-1]
    assert summary.json["messages"][0]["content"] == INSTRUCTIONS
    assert user_texts(summary) == [messages[1]["content"][0]["value"], ASK]
    assert "tools" not in summary.json


async def test_a_summary_of_an_unknown_conversation_goes_as_copilot_sent_it(
    client: LanguageClient,
) -> None:
    answer = {
        "role": "assistant",
        "content": [
            {"type": "toolCall", "callId": "c9", "name": "read_file", "input": {"path": "x"}}
        ],
    }
    messages = simple_summary(answer, RESULT)
    await summarized(client, "gpt-4o", messages)
    summary = upstream_of(client).model_requests[-1]
    assert summary.json["messages"][0]["content"] == INSTRUCTIONS
    assert "tools" not in summary.json and summary.cached_tokens == 0
