"""`cache_control` marks in a Chat Completions body, for a gateway in front of an API that caches
only where a request marks it (OpenRouter's Claude models: its prompt-caching guide).

Copilot marks nothing for this provider (its `emitCacheBreakpoints` is for its own vendors), and
Copilot's own OpenRouter client sends a mark OpenRouter does not read (microsoft/vscode #312939),
so without these a Claude conversation through OpenRouter is never cached. Marked as the Messages
dialect marks (`anthropic/breakpoints.py`): the last message, the last of the user and tool
messages before the last assistant message (where the previous request ended) and the system
prompt, each on its last text part (a string content becomes one text part).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

EPHEMERAL: Final = {"type": "ephemeral"}
_MARKABLE: Final = ("user", "tool", "system")

JsonObject = dict[str, Any]


def mark_cache(messages: list[JsonObject]) -> None:
    """Mark the messages (in place) as the module docstring says."""
    chosen: list[JsonObject] = []
    for message in _targets(messages):
        if message is not None and not any(message is seen for seen in chosen):
            chosen.append(message)
    for message in chosen:
        _mark(message)


def _targets(messages: list[JsonObject]) -> Iterator[JsonObject | None]:
    yield messages[-1] if messages and messages[-1]["role"] in _MARKABLE else None
    last_assistant = max(
        (i for i, message in enumerate(messages) if message["role"] == "assistant"), default=-1
    )
    before = [m for m in messages[:last_assistant] if m["role"] in ("user", "tool")]
    yield before[-1] if before else None
    yield next((m for m in messages if m["role"] == "system"), None)


def _mark(message: JsonObject) -> None:
    content = message.get("content")
    if isinstance(content, str):
        if content:
            message["content"] = [{"type": "text", "text": content, "cache_control": EPHEMERAL}]
        return
    if isinstance(content, list):
        text = next((p for p in reversed(content) if p.get("type") == "text"), None)
        if text is not None:
            text["cache_control"] = dict(EPHEMERAL)
