"""Messages and parts the request-body tests build from, and the pieces they expect in the
bodies (an image as each API takes it, the cache mark).
"""

from __future__ import annotations

import base64
from typing import Any

from tokengauge.messages import DataPart, Message, Part, ToolCallPart, ToolResultPart
from tokengauge.upstream.options import ChatOptions

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
IMAGE = DataPart("image/png", PNG)
IMAGE_URL = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
IMAGE_BLOCK = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
}
CACHE = DataPart("cache_control", base64.b64encode(b"ephemeral").decode())
EPHEMERAL = [CACHE, DataPart("stateful_marker", "eHl6"), DataPart("usage", "e30=")]
EPHEMERAL_MARK = {"cache_control": {"type": "ephemeral"}}
CALL = ToolCallPart("call_1", "read_file", {"path": "a.py"})
NO_OPTIONS = ChatOptions()
API_KEY = "sk-test-secret-key"


def b64(text: str) -> str:
    """Base64 of UTF-8 text, as VS Code sends a data part's bytes."""
    return base64.b64encode(text.encode()).decode()


def user(*parts: Part, name: str | None = None) -> Message:
    """A user message of these parts."""
    return Message("user", list(parts), name)


def assistant(*parts: Part) -> Message:
    """An assistant message of these parts."""
    return Message("assistant", list(parts))


def system(*parts: Part) -> Message:
    """A system message of these parts."""
    return Message("system", list(parts))


def result(call_id: str, *parts: Part) -> ToolResultPart:
    """The result of tool call `call_id`."""
    return ToolResultPart(call_id, list(parts))


def text(value: str, **extra: Any) -> dict[str, Any]:
    """A text block as both APIs write it."""
    return {"type": "text", "text": value, **extra}
