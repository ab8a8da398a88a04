"""`toolDocs: "progressive"` end to end over LSP: the first request of a turn carries each tool's
minimal signature; once the conversation holds a call to a tool, that tool goes whole; the model's
call made against the minimal form is answered like any other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params
from tests.lsp.helpers import text_message

READ_FILE = {
    "name": "read_file",
    "description": "Read a file. Give the path, and optionally a line range; lines are 1-based.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The absolute path."},
            "startLine": {"type": "integer", "description": "The first line."},
        },
        "required": ["path"],
    },
}
LIST_DIR = {
    "name": "list_dir",
    "description": "List a directory. Folders end in a slash.",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "The directory."}},
        "required": ["path"],
    },
}
ASK = '<tg-tool-calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tg-tool-calls>'


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with running_upstream(UpstreamConfig(reply=Reply(scripted_calls=True))) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        models = [{"id": "gpt-4o", "provider": "up-openai", "toolDocs": "progressive"}]
        await initialize(
            lsp_client, chat_options(str(tmp_path / "storage"), up.base_url, models=models)
        )
        yield
        await lsp_client.shutdown_session()


def functions(request: Any) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request.json["tools"]}


async def test_tools_go_minimal_until_called(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    messages = [text_message("user", f"Read a.py. {ASK}")]
    first = chat_params("gpt-4o", messages, tools=[READ_FILE, LIST_DIR])
    await call(client, "tokenGauge/chat", first)
    sent = functions(upstream.model_requests[0])
    assert sent["read_file"] == {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "startLine": {"type": "integer"}},
            "required": ["path"],
        },
    }
    assert sent["list_dir"]["description"] == "List a directory."
    # The call the model made against the minimal form came through, and went back answered.
    [tool_call] = [p for p in client.part_log.of(first["requestId"]) if p["type"] == "toolCall"]  # type: ignore[attr-defined]
    assert (tool_call["name"], tool_call["input"]) == ("read_file", {"path": "a.py"})
    result = {
        "type": "toolResult",
        "callId": tool_call["callId"],
        "content": [{"type": "text", "value": "x = 1"}],
    }
    follow = [
        *messages,
        {"role": "assistant", "content": [tool_call]},
        {"role": "user", "content": [result]},
    ]
    await call(
        client, "tokenGauge/chat", chat_params("gpt-4o", follow, tools=[READ_FILE, LIST_DIR])
    )
    second = upstream.model_requests[1]
    assert second.status == 200
    again = functions(second)
    assert again["read_file"]["description"] == READ_FILE["description"]
    assert again["read_file"]["parameters"] == READ_FILE["inputSchema"]
    assert again["list_dir"]["description"] == "List a directory."  # not called: still minimal
    # The upstream counted fewer tool tokens for the minimal forms.
    assert upstream.model_requests[0].prompt_tools < second.prompt_tools
