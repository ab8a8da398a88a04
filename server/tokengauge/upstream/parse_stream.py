"""Parse a captured SSE stream offline: `tokengauge parse-stream --dialect openai|anthropic FILE`.

Prints one JSON object per stream event (the `tokenGauge/chatPart` shapes of `event_json`; the
finish reason has none). A capture that stops before its terminal event (`data: [DONE]`,
`message_stop`) without having reported an error gets a closing error, as the chat loop would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal

from tokengauge.upstream.anthropic_stream import AnthropicStreamParser
from tokengauge.upstream.events import StreamError, StreamEvent, StreamParser, event_json
from tokengauge.upstream.openai_stream import OpenAIStreamParser
from tokengauge.upstream.sse import iter_file_events

StreamDialect = Literal["openai", "anthropic"]
_TERMINAL: dict[str, str] = {"openai": "data: [DONE]", "anthropic": "message_stop"}


def make_parser(dialect: StreamDialect) -> StreamParser:
    """A fresh parser for one response in `dialect`."""
    if dialect == "openai":
        return OpenAIStreamParser()
    if dialect == "anthropic":
        return AnthropicStreamParser()
    raise ValueError(f"unknown stream dialect {dialect!r} (expected 'openai' or 'anthropic')")


def parse_stream_file(dialect: StreamDialect, data: bytes) -> list[StreamEvent]:
    """Every stream event of a captured stream, ending with an error if it was cut off."""
    parser = make_parser(dialect)
    events: list[StreamEvent] = []
    for sse in iter_file_events(data):
        events += parser.feed(sse.event, sse.data)
    events += parser.finish()
    if not parser.ended and not any(isinstance(event, StreamError) for event in events):
        terminal = _TERMINAL[dialect]
        events.append(StreamError(f"the stream ended before {terminal}: it is incomplete"))
    return events


def main_parse_stream(dialect: StreamDialect, path: str | Path) -> int:
    """Print a captured stream's events as JSON lines: exit 0, 1 if it reported an error, 2 if
    the file cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        print(f"parse-stream: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    events = parse_stream_file(dialect, data)
    for event in events:
        line = event_json(event)
        if line is not None:
            print(json.dumps(line))
    return 1 if any(isinstance(event, StreamError) for event in events) else 0
