"""What the request-body builders share: data parts as text, tool schemas as the APIs require
them, the image types they take, OpenAI's sampling fields and the caller's extra keys, and header
layers merged."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, Final

from tokengauge.messages import (
    TEXT_MIME_PREFIXES,
    DataPart,
    Part,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    UnknownPart,
    is_ephemeral,
    to_json_text,
    unstructure,
)
from tokengauge.upstream.options import RESERVED_KEYS, ChatOptions


def openai_sampling(options: ChatOptions) -> dict[str, Any]:
    """`temperature` and `top_p` as OpenAI's APIs take them, those set; then the caller's extra
    keys (never over the structure the builder sets)."""
    fields = {"temperature": options.temperature, "top_p": options.top_p}
    extra = {k: v for k, v in options.extra.items() if k not in RESERVED_KEYS}
    return {**{k: v for k, v in fields.items() if v is not None}, **extra}


IMAGE_MIME_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
EMPTY_OBJECT_SCHEMA: Final[dict[str, Any]] = {"type": "object", "properties": {}}


def data_text(part: DataPart) -> str | None:
    """The text of a text-like data part (text/*, JSON, XML, YAML), or None for anything else."""
    if not part.mime_type.startswith(TEXT_MIME_PREFIXES):
        return None
    try:
        return base64.b64decode(part.data, validate=False).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def omitted_note(part: DataPart) -> str:
    """The text that stands in for data the API cannot take."""
    return f"[{part.mime_type} attachment omitted: this API cannot take it]"


def part_text(part: Part) -> str:
    """A part where only text can go: thinking and ephemeral parts vanish, unknown parts and tool
    calls become their JSON, data its decoded text or a note."""
    if isinstance(part, TextPart):
        return part.value
    if isinstance(part, ThinkingPart) or is_ephemeral(part):
        return ""
    if isinstance(part, DataPart):
        text = data_text(part)
        return omitted_note(part) if text is None else text
    if isinstance(part, UnknownPart):
        return to_json_text(part.json)
    if isinstance(part, ToolResultPart):
        return "".join(part_text(inner) for inner in part.content)
    return to_json_text(unstructure(part))


def object_schema(schema: Any) -> dict[str, Any]:
    """A tool's input schema as both APIs require it: a JSON object schema (`type: object`)."""
    if not isinstance(schema, dict) or not schema:
        return dict(EMPTY_OBJECT_SCHEMA)
    if "type" not in schema:
        return {"type": "object", **schema}
    return schema


def merged_headers(*layers: Mapping[str, str]) -> dict[str, str]:
    """Header layers merged in order; a later layer replaces an earlier header whatever its case."""
    headers: dict[str, str] = {}
    for layer in layers:
        for name, value in layer.items():
            for existing in [key for key in headers if key.lower() == name.lower()]:
                del headers[existing]
            headers[name] = value
    return headers
