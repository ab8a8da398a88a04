"""Raw token counts of messages, tools and system prompts (DESIGN §4), before any margin.

Nothing here knows about calibration or LSP: a `RequestCounter` turns DESIGN §3 objects into
tiktoken-based counts. Data parts whose MIME type marks them as VS Code's ephemeral bookkeeping
(`cache_control`, `stateful_marker`, `usage`) cost nothing and are left out of digests.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any, Final

import attrs

from tokengauge.images import ImageRule, image_tokens
from tokengauge.text_counter import TextCounter
from tokengauge.wire import (
    DataPart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
    converter,
)

EPHEMERAL_MIME_TYPES: Final = frozenset({"cache_control", "stateful_marker", "usage"})
MESSAGE_OVERHEAD: Final = 4
SYSTEM_OVERHEAD: Final = 28
TOOLS_BASE: Final = 16
TOOL_OVERHEAD: Final = 8
TOOLS_SCALE: Final = 1.1
TEXT_MIME_PREFIXES: Final = ("text/", "application/json", "application/xml", "application/x-yaml")
BASE64_CHARS_PER_TOKEN: Final = 4  # one token per 3 bytes of binary data


def is_ephemeral(part: Part) -> bool:
    """True for data parts that only carry VS Code bookkeeping."""
    return isinstance(part, DataPart) and part.mime_type in EPHEMERAL_MIME_TYPES


def countable_parts(parts: Sequence[Part]) -> list[Part]:
    """The parts with ephemeral data parts removed, also inside tool results."""
    kept: list[Part] = []
    for part in parts:
        if is_ephemeral(part):
            continue
        if isinstance(part, ToolResultPart):
            part = attrs.evolve(part, content=countable_parts(part.content))
        kept.append(part)
    return kept


def message_digest(message: Message) -> str:
    """SHA-256 of the canonical JSON `{role, parts}`, ephemeral parts left out."""
    parts = converter.unstructure(countable_parts(message.content), list[Part])
    canonical = {"role": message.role, "parts": parts}
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def to_json_text(value: Any) -> str:
    """JSON as an API would see it; keys unsorted, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _decoded_text(data_base64: str) -> str | None:
    try:
        return base64.b64decode(data_base64, validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


@attrs.frozen
class RawRequestCount:
    """Raw counts of one whole request, split by category."""

    system: int
    tools: int
    messages: tuple[int, ...]
    digests: tuple[str, ...]

    @property
    def total(self) -> int:
        """Everything together."""
        return self.system + self.tools + sum(self.messages)


class RequestCounter:
    """Raw counts for one encoding and one image rule."""

    def __init__(self, text: TextCounter, image_rule: ImageRule) -> None:
        self.text = text
        self.image_rule = image_rule

    def part(self, part: Part) -> int:
        """Tokens of one part."""
        if isinstance(part, (TextPart, ThinkingPart)):
            return self.text.count(part.value)
        if isinstance(part, ToolCallPart):
            return self.text.count(part.name) + self.text.count(to_json_text(part.input))
        if isinstance(part, ToolResultPart):
            return sum(self.part(inner) for inner in part.content)
        if isinstance(part, DataPart):
            return self._data(part)
        if isinstance(part, UnknownPart):
            return self.text.count(to_json_text(part.json))
        raise TypeError(f"not a part: {part!r}")

    def _data(self, part: DataPart) -> int:
        if part.mime_type in EPHEMERAL_MIME_TYPES:
            return 0
        if part.mime_type.startswith("image/"):
            return image_tokens(part.data, self.image_rule)
        if part.mime_type.startswith(TEXT_MIME_PREFIXES):
            text = _decoded_text(part.data)
            if text is not None:
                return self.text.count(text)
        return math.ceil(len(part.data) / BASE64_CHARS_PER_TOKEN)

    def message(self, message: Message) -> int:
        """Tokens of one message: 4 for its structure, its name, and its parts."""
        name = self.text.count(message.name) if message.name else 0
        return MESSAGE_OVERHEAD + name + sum(self.part(part) for part in message.content)

    def tools(self, tools: Sequence[Tool]) -> int:
        """GCMP's formula: `16 + Σ(8 + name + description + JSON(schema))`, × 1.1."""
        if not tools:
            return 0
        body = sum(
            TOOL_OVERHEAD
            + self.text.count(tool.name)
            + self.text.count(tool.description)
            + self.text.count(to_json_text(tool.input_schema or {}))
            for tool in tools
        )
        return math.ceil((TOOLS_BASE + body) * TOOLS_SCALE)

    def request(self, messages: Sequence[Message], tools: Sequence[Tool]) -> RawRequestCount:
        """Raw counts of a whole request: system prompt (+28), tools, every other message."""
        system_messages = [m for m in messages if m.role == "system"]
        chat_messages = [m for m in messages if m.role != "system"]
        system = sum(self.message(m) for m in system_messages)
        return RawRequestCount(
            system=system + SYSTEM_OVERHEAD if system_messages else 0,
            tools=self.tools(tools),
            messages=tuple(self.message(m) for m in chat_messages),
            digests=tuple(message_digest(m) for m in chat_messages),
        )
