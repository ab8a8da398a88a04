"""Helpers for tests that talk to the upstream: a strict little SSE parser, a closed port."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass
from typing import Any

USER = "Please summarise the following paragraph about pelicans and their pouches."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "Multiply two numbers.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}},
        },
    }
]
"""One tool in the OpenAI shape, for requests that offer tools."""


@dataclass(frozen=True)
class SseEvent:
    """One SSE event: its ``event:`` name (None if absent) and its joined ``data:`` lines."""

    name: str | None
    data: str

    def json(self) -> Any:
        """The data parsed as JSON (raises on malformed data)."""
        return json.loads(self.data)


def parse_sse(text: str) -> list[SseEvent]:
    """Events of an SSE body (blank-line separated; ``:`` comments ignored)."""
    events: list[SseEvent] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if name is not None or data:
            events.append(SseEvent(name, "\n".join(data)))
    return events


def json_events(text: str) -> list[dict[str, Any]]:
    """Every event's data as JSON, except OpenAI's ``[DONE]`` terminator."""
    return [e.json() for e in parse_sse(text) if e.data != "[DONE]"]


def chat(**extra: Any) -> dict[str, Any]:
    """An OpenAI streaming request with a system and a user message."""
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": USER}]
    body = {"model": "gpt-test", "stream": True, "messages": messages}
    return {**body, **extra}


def messages_body(**extra: Any) -> dict[str, Any]:
    """An Anthropic streaming request."""
    body = {"model": "claude-test", "max_tokens": 100, "stream": True, "system": "Be brief."}
    return {**body, "messages": [{"role": "user", "content": USER}], **extra}


def closed_port() -> int:
    """A loopback port nothing listens on (bound for a moment, then let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port
