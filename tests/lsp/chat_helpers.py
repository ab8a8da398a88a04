"""Helpers for the chat tests: a server wired to the test upstream, and part collection."""

from __future__ import annotations

import base64
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import plain
from tests.lsp.helpers import text_message

API_KEY = "sk-tokengauge-test-SECRET-0123456789abcdef"
_ids = itertools.count(1)


def chat_options(storage: str, base_url: str, **extra: Any) -> dict[str, Any]:
    """initializationOptions with one OpenAI-dialect and one Anthropic-dialect provider."""
    return {
        "storageDir": storage,
        "logLevel": "debug",
        "providers": [
            {"id": "up-openai", "dialect": "openai", "baseUrl": base_url + "/v1"},
            {"id": "up-anthropic", "dialect": "anthropic", "baseUrl": base_url},
        ],
        "models": [
            {"id": "gpt-4o", "provider": "up-openai", "name": "GPT-4o (test)"},
            {
                "id": "claude-sonnet-4-5",
                "provider": "up-anthropic",
                "name": "Sonnet (test)",
                "contextWindow": 200_000,
            },
        ],
        "idleTimeout": 1.5,
        "connectTimeout": 2,
        "retryBaseDelay": 0.05,
        **extra,
    }


def conversation(text: str = "Please explain what this code does.") -> list[dict[str, Any]]:
    """A short conversation with a system prompt."""
    return [
        text_message("system", "You are a helpful coding assistant."),
        text_message("user", text),
    ]


READ_FILE = {
    "name": "read_file",
    "description": "Read a file from the workspace.",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
}


class PartLog:
    """Collects `tokenGauge/chatPart` notifications by request id."""

    def __init__(self, client: LanguageClient) -> None:
        self.parts: dict[str, list[dict[str, Any]]] = {}
        self.statuses: list[dict[str, Any]] = []
        self.models_changed = 0

        # pygls registers plain functions only (not bound methods).
        def on_part(params: Any) -> None:
            params = plain(params)
            self.parts.setdefault(params["requestId"], []).append(params["part"])

        def on_status(params: Any) -> None:
            self.statuses.append(plain(params))

        def on_models_changed(params: Any) -> None:
            self.models_changed += 1

        client.feature("tokenGauge/chatPart")(on_part)
        client.feature("tokenGauge/status")(on_status)
        client.feature("tokenGauge/modelsChanged")(on_models_changed)

    def of(self, request_id: str) -> list[dict[str, Any]]:
        """The parts of one request, in arrival order."""
        return self.parts.get(request_id, [])


def answer_message(parts: list[dict[str, Any]], model_id: str) -> dict[str, Any]:
    """The assistant message VS Code keeps of a streamed answer, as the extension converts it back:
    every part but the usage, the stateful marker as the data part it was reported as."""
    content = []
    for part in parts:
        if part["type"] == "statefulMarker":
            data = base64.b64encode(f"{model_id}\\{part['value']}".encode()).decode()
            content.append({"type": "data", "mimeType": "stateful_marker", "data": data})
        elif part["type"] != "usage":
            content.append(part)
    return {"role": "assistant", "content": content}


def text_of(parts: list[dict[str, Any]]) -> str:
    """The text of an answer's parts."""
    return "".join(p["value"] for p in parts if p["type"] == "text")


def chat_params(model_id: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """`tokenGauge/chat` params with a fresh request id and the test key."""
    return {
        "requestId": f"req-{next(_ids)}",
        "modelId": model_id,
        "messages": messages,
        "credentials": {"apiKey": API_KEY},
        **extra,
    }


@contextlib.asynccontextmanager
async def caching_upstream() -> AsyncIterator[Upstream]:
    """A test upstream that keeps a prompt cache as OpenAI's does (and reports what it read)."""
    config = UpstreamConfig()
    config.model.prompt_cache = True
    async with running_upstream(config) as up:
        yield up


def tool_round(call_id: str, path: str, result: str) -> list[dict[str, Any]]:
    """One `read_file` round as VS Code hands it over: the call, then its result."""
    called = {"type": "toolCall", "callId": call_id, "name": "read_file", "input": {"path": path}}
    content = [{"type": "text", "value": result}]
    return [
        {"role": "assistant", "content": [called]},
        {
            "role": "user",
            "content": [{"type": "toolResult", "callId": call_id, "content": content}],
        },
    ]
