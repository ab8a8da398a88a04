"""The real wire captures in ``tests/data/wire`` (their sources in its SOURCES.md): lookup,
status, content type."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

WIRE_DIR = Path(__file__).resolve().parents[2] / "data" / "wire"
"""The captures of real API traffic, each with its provenance in the folder's SOURCES.md."""

_EXTENSIONS = (".sse", ".json", ".pyrepr.txt", ".message.txt", ".headers.json", ".request.json")
_STATUS_IN_NAME = re.compile(r"^error-[a-z]+-(?P<status>[1-5]\d\d)-")
# Response headers that must not be replayed verbatim (aiohttp computes them).
_HOP_HEADERS = frozenset({"status", "content-length", "content-type", "date", "connection"})
_HOP_HEADERS |= {"transfer-encoding", "content-encoding"}


@dataclass(frozen=True)
class WireFixture:
    """A fixture's bytes and how to serve them by default."""

    name: str
    data: bytes
    status: int
    content_type: str
    headers: dict[str, str]

    @property
    def is_sse(self) -> bool:
        """Whether the body is an event stream (streamed in chunks)."""
        return self.content_type.startswith("text/event-stream")


def resolve(name: str) -> Path:
    """The fixture file for ``name`` (a file name, or a name without its extension)."""
    if "/" in name or "\\" in name or name.startswith("."):
        raise FileNotFoundError(f"bad fixture name {name!r}")
    exact = WIRE_DIR / name
    if exact.is_file():
        return exact
    for ext in _EXTENSIONS:
        path = WIRE_DIR / f"{name}{ext}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no wire fixture {name!r} in tests/data/wire")


@lru_cache(maxsize=128)
def load(name: str) -> WireFixture:
    """Read a fixture with its default status, content type and extra response headers."""
    path = resolve(name)
    data = path.read_bytes()
    return WireFixture(
        name=path.name,
        data=data,
        status=_default_status(path.name),
        content_type=content_type_for(path.name),
        headers=_companion_headers(path),
    )


def content_type_for(file_name: str) -> str:
    """``text/event-stream`` for .sse, text for repr/message dumps, JSON otherwise."""
    if file_name.endswith(".sse"):
        return "text/event-stream; charset=utf-8"
    if file_name.endswith(".txt"):
        return "text/plain; charset=utf-8"
    return "application/json"


def _default_status(file_name: str) -> int:
    """200 for streams and listings; the status named in an error file's name; else 400."""
    if not file_name.startswith("error-") or file_name.endswith(".sse"):
        return 200
    match = _STATUS_IN_NAME.match(file_name)
    return int(match["status"]) if match else 400


def _companion_headers(path: Path) -> dict[str, str]:
    """Headers recorded next to a fixture (``X.headers.json``), minus hop-by-hop ones."""
    stem = path.name.split(".", 1)[0]
    companion = path.with_name(f"{stem}.headers.json")
    if companion == path or not companion.is_file():
        return {}
    raw = json.loads(companion.read_text("utf-8"))
    headers = raw.get("headers", raw) if isinstance(raw, dict) else {}
    return {k: str(v) for k, v in headers.items() if k.lower() not in _HOP_HEADERS}


def split_events(data: bytes) -> list[bytes]:
    """An SSE body as events, each with its terminating blank line (lossless: joins back)."""
    events: list[bytes] = []
    rest = data
    while rest:
        end = rest.find(b"\n\n")
        if end < 0:
            events.append(rest)
            break
        events.append(rest[: end + 2])
        rest = rest[end + 2 :]
    return events


def anthropic_error_event() -> bytes:
    """The real mid-stream Anthropic ``event: error`` (overloaded) frame."""
    data = load("error-anthropic-overloaded-stream-event.sse").data
    return data if data.endswith(b"\n\n") else data.rstrip(b"\n") + b"\n\n"


def openai_error_event() -> bytes:
    """The real OpenRouter mid-stream error chunk (``error`` in a data chunk) and ``[DONE]``."""
    events = split_events(load("openrouter-chat-stream-midstream-error.sse").data)
    error = next(e for e in events if b'"error"' in e)
    return error + b"data: [DONE]\n\n"
