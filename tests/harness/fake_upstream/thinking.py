"""Anthropic's rules for extended thinking, as strict as the real API.

A signature is bound to its block's text here (the real one is opaque and checked by the API), so
a client that alters or invents a thinking block is refused, as it would be. With `thinking` on,
the final assistant message of a tool-use continuation must start with a thinking block; every
thinking block sent must carry the signature this upstream streamed for it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

MISSING_THINKING = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a thinking "
    "block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. "
    "Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
INVALID_SIGNATURE = "messages.{index}.content.{block}: Invalid `signature` in `thinking` block"


def signature_of(thinking: str) -> str:
    """The signature this upstream gives a thinking block of this text."""
    return "Esig" + hashlib.sha256(thinking.encode()).hexdigest()[:40] + "=="


def redacted_data(serial: int) -> str:
    """The data of a redacted thinking block this upstream issues."""
    return f"EredactedThinking{serial:06d}" + signature_of(str(serial))[4:]


def thinking_error(body: Mapping[str, Any]) -> str | None:
    """Why the API would refuse this Messages body's thinking, or None."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for number, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "thinking":
                text, signature = block.get("thinking"), block.get("signature")
                if not isinstance(text, str) or signature != signature_of(text):
                    return INVALID_SIGNATURE.format(index=index, block=number)
            if block.get("type") == "redacted_thinking":
                data = block.get("data")
                if not (isinstance(data, str) and data.startswith("EredactedThinking")):
                    return INVALID_SIGNATURE.format(index=index, block=number)
    thinking = body.get("thinking")
    if not (isinstance(thinking, dict) and thinking.get("type") == "enabled"):
        return None
    assistants = [
        i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"
    ]
    if not assistants:
        return None
    index = assistants[-1]
    continuing = index == len(messages) - 1 or _has_tool_use(messages[index])
    content = messages[index].get("content")
    first = content[0] if isinstance(content, list) and content else {"type": "text"}
    found = first.get("type") if isinstance(first, dict) else "text"
    if continuing and found not in ("thinking", "redacted_thinking"):
        return MISSING_THINKING.format(index=index, found=found)
    return None


def _has_tool_use(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_use" for block in content
    )
