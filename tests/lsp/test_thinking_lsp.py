"""Anthropic extended thinking across a tool call, end to end over LSP against the strict upstream.

The first request streams thinking, its signed block and a tool call; the extension gives the parts
back in the next request (as Copilot keeps them in its history); the upstream, as strict as the real
API, refuses a tool-use continuation with thinking on unless it starts with that very block.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.fake_upstream.thinking import signature_of
from tests.harness.lsp import SERVER, call, initialize, running_server
from tests.lsp.chat_helpers import PartLog, answer_message, chat_options, chat_params
from tests.lsp.helpers import text_message

THOUGHT = "The user wants the parser fixed; reading parser.py first is the way."
READ_FILE = {
    "name": "read_file",
    "description": "Read a file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
ASK = '<tg-tool-calls>[{"name": "read_file", "arguments": {"path": "parser.py"}}]</tg-tool-calls>'
THINKING = {"thinkingBudget": 2048}


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server, wired to a test upstream that thinks and makes the calls a turn scripts."""
    config = UpstreamConfig(reply=Reply(thinking=THOUGHT, scripted_calls=True))
    async with running_upstream(config) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        await initialize(lsp_client, chat_options(str(tmp_path / "storage"), up.base_url))
        yield
        await lsp_client.shutdown_session()


async def first_round(client: LanguageClient) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first request of the turn: its messages, and the parts it streamed."""
    messages = [text_message("user", f"Fix the parser. {ASK}")]
    params = chat_params("claude-sonnet-4-5", messages, tools=[READ_FILE], modelOptions=THINKING)
    await call(client, "tokenGauge/chat", params)
    return messages, client.part_log.of(params["requestId"])  # type: ignore[attr-defined]


async def test_thinking_stays_on_across_the_tool_call(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages, parts = await first_round(client)
    signed = [p for p in parts if p["type"] == "thinking" and "signature" in p]
    assert signed == [{"type": "thinking", "value": THOUGHT, "signature": signature_of(THOUGHT)}]
    [tool_call] = [p for p in parts if p["type"] == "toolCall"]
    # The next request, as the extension converts Copilot's history: every part of the answer.
    answer = answer_message(parts, "claude-sonnet-4-5")
    result = {
        "type": "toolResult",
        "callId": tool_call["callId"],
        "content": [{"type": "text", "value": "def parse(): ..."}],
    }
    follow = [*messages, answer, {"role": "user", "content": [result]}]
    params = chat_params("claude-sonnet-4-5", follow, tools=[READ_FILE], modelOptions=THINKING)
    await call(client, "tokenGauge/chat", params)
    first, second = (r.json for r in upstream.model_requests)
    assert first["thinking"] == second["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    replayed = second["messages"][1]["content"]
    assert replayed[0] == {
        "type": "thinking",
        "thinking": THOUGHT,
        "signature": signature_of(THOUGHT),
    }
    assert [block["type"] for block in replayed] == ["thinking", "tool_use"]


@pytest.mark.parametrize("keep", ["shown-only", "nothing"])
async def test_without_the_signed_block_thinking_is_left_off_not_refused(
    client: LanguageClient, keep: str
):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages, parts = await first_round(client)
    kept = [
        p
        for p in parts
        if p["type"] == "toolCall"
        or ("signature" not in p and keep != "nothing" and p["type"] == "thinking")
    ]
    [tool_call] = [p for p in kept if p["type"] == "toolCall"]
    result = {"type": "toolResult", "callId": tool_call["callId"], "content": []}
    follow = [
        *messages,
        {"role": "assistant", "content": kept},
        {"role": "user", "content": [result]},
    ]
    params = chat_params("claude-sonnet-4-5", follow, tools=[READ_FILE], modelOptions=THINKING)
    await call(client, "tokenGauge/chat", params)
    second = upstream.model_requests[-1]
    assert second.status == 200 and "thinking" not in second.json


async def test_a_models_settings_switch_thinking_on(tmp_path: Path):
    """`tokenGauge.models[].options`: what Copilot never sends, set once for the model."""
    config = UpstreamConfig(reply=Reply(thinking=THOUGHT))
    async with running_upstream(config) as up:
        model = {
            "id": "claude-sonnet-4-5",
            "provider": "up-anthropic",
            "options": {"thinkingBudget": 4096, "temperature": 0.5},
        }
        options = chat_options(str(tmp_path / "storage"), up.base_url, models=[model])
        async with running_server(options) as client:
            plain = chat_params("claude-sonnet-4-5", [text_message("user", "Why?")])
            await call(client, "tokenGauge/chat", plain)
            asked = chat_params(
                "claude-sonnet-4-5",
                [text_message("user", "Why?")],
                modelOptions={"thinkingBudget": 0},
            )
            await call(client, "tokenGauge/chat", asked)
        first, second = (r.json for r in up.model_requests)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert "temperature" not in first  # thinking takes no temperature
    assert "thinking" not in second and second["temperature"] == 0.5  # the request's 0 wins
