"""State a conversation needs back rides in a stateful marker, and in nothing else.

Of the data parts a provider gives, Copilot's Agent Host keeps only four mime types in its
history (`cache_control`, `stateful_marker`, `thinking`, `context_management`); the local agent
keeps the marker too, and drops it with the rounds a summary replaces. An answer ends with a
`statefulMarker` part naming its conversation; the history sent back with it, with or without the
other data parts, must give the same request upstream and the same conversation.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import Reply, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize, running_server
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params
from tests.lsp.helpers import text_message

MODEL = "gpt-4o"
SURVIVING = {"cache_control", "stateful_marker", "thinking", "context_management"}
"""The data parts the Agent Host keeps in its history."""
ANSWER = "The module parses the ledger and writes each entry's checksum to the audit log."


def conversation(question: str) -> list[dict[str, Any]]:
    """The start of a chat (Copilot's system prompt, not one of its helpers)."""
    return [
        text_message("system", "You are an AI programming assistant."),
        text_message("user", question),
    ]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with running_upstream(UpstreamConfig(reply=Reply(text=ANSWER))) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.options = chat_options(str(tmp_path / "storage"), up.base_url)  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        await initialize(lsp_client, lsp_client.options)  # type: ignore[attr-defined]
        yield
        await lsp_client.shutdown_session()


def data_part(mime_type: str, text: str) -> dict[str, Any]:
    return {"type": "data", "mimeType": mime_type, "data": base64.b64encode(text.encode()).decode()}


def answered(parts: list[dict[str, Any]], keep: set[str] | None) -> dict[str, Any]:
    """The assistant message a runtime keeps of an answer: its text and those of the data parts
    the extension reported (the marker, the usage) it keeps (`keep`; None: all of them)."""
    content: list[dict[str, Any]] = [
        {"type": "text", "value": "".join(p["value"] for p in parts if p["type"] == "text")}
    ]
    reported = [
        data_part("stateful_marker", f"{MODEL}\\{p['value']}")
        for p in parts
        if p["type"] == "statefulMarker"
    ]
    reported.append(data_part("usage", json.dumps(parts[-1]["data"])))
    content += [d for d in reported if keep is None or d["mimeType"] in keep]
    return {"role": "assistant", "content": content}


async def conversations(client: LanguageClient) -> list[str | None]:
    history = (await call(client, "tokenGauge/usage", {}))["history"]
    return [record.get("conversation") for record in history]


async def test_the_next_request_is_the_same_whatever_data_parts_survive(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    first = conversation("What does ledger.py do?")
    params = chat_params(MODEL, first)
    await call(client, "tokenGauge/chat", params)
    parts = client.part_log.of(params["requestId"])  # type: ignore[attr-defined]
    [marker] = [p for p in parts if p["type"] == "statefulMarker"]
    assert parts[-1]["type"] == "usage" and parts[-2] == marker  # just before the usage
    [started] = await conversations(client)
    assert json.loads(marker["value"]) == {"tokenGauge": {"conversation": started}}

    follow_up = text_message("user", "And where is the checksum written?")
    for keep in (None, SURVIVING, set()):
        messages = [*first, answered(parts, keep), follow_up]
        await call(client, "tokenGauge/chat", chat_params(MODEL, messages))
    everything, surviving, none = upstream.model_requests[1:]
    assert everything.json == surviving.json == none.json
    assert await conversations(client) == [started] * 4


async def test_a_restarted_server_knows_the_conversation_by_its_marker(tmp_path: Path):
    first = conversation("What does ledger.py do?")
    follow_up = text_message("user", "And where is the checksum written?")
    async with running_upstream(UpstreamConfig(reply=Reply(text=ANSWER))) as up:
        options = chat_options(str(tmp_path / "storage"), up.base_url)
        async with running_server(options) as server:
            part_log = PartLog(server)
            params = chat_params(MODEL, first)
            await call(server, "tokenGauge/chat", params)
            parts = part_log.of(params["requestId"])
            [started] = await conversations(server)
        # What the server remembered of the messages went with it; the marker did not.
        without_marker = [*first, answered(parts, set()), follow_up]
        with_marker = [*first, answered(parts, SURVIVING), follow_up]
        async with running_server(options) as restarted:
            await call(restarted, "tokenGauge/chat", chat_params(MODEL, without_marker))
            await call(restarted, "tokenGauge/chat", chat_params(MODEL, with_marker))
            *_, guessed, known = await conversations(restarted)
    assert known == started and guessed != started
