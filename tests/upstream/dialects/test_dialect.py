"""upstream.dialects: both stream parsers against every real capture, with CRLF line ends too, as
`parse_stream_file` reads a capture."""

from __future__ import annotations

import json

import pytest

from tests.conftest import WIRE
from tests.upstream.dialects.stream_cases import (
    CASES,
    EXACT,
    Expected,
    assert_honest,
    carries_reasoning,
    parse,
    read,
    shape,
)
from tokengauge.messages import Usage
from tokengauge.upstream.dialects.dialect import make_parser, parse_stream_file
from tokengauge.upstream.dialects.events import (
    Finish,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
)

# --- every capture ---


def test_every_capture_has_a_case():
    covered = {case.values[0] for case in CASES}
    assert covered == {path.name for path in WIRE.glob("*.sse")}


@pytest.mark.parametrize(("name", "dialect", "expected"), CASES)
def test_capture(name: str, dialect: str, expected: Expected):
    events, ended = parse(dialect, read(name))
    assert shape(events) == expected.shape
    assert "".join(e.value for e in events if isinstance(e, TextDelta)) == expected.text
    thinking = [e for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(e.value for e in thinking) == expected.thinking
    assert all(e.value for e in thinking)
    blocks = [e for e in events if isinstance(e, ThinkingBlock)]
    signed = [b for b in blocks if not carries_reasoning(b)]
    assert tuple(e.signature for e in signed) == expected.signatures
    assert tuple(b.field for b in blocks if carries_reasoning(b)) == expected.reasoning
    # A signed block, or a message's reasoning, holds the whole thinking before it, as the API
    # wants it back.
    assert all(b.thinking == expected.thinking for b in blocks if len(blocks) == 1)
    assert tuple(e for e in events if isinstance(e, ToolCall)) == expected.tool_calls
    usage = [e for e in events if isinstance(e, Usage)]
    assert usage == ([expected.usage] if expected.usage else [])
    finish = [e.reason for e in events if isinstance(e, Finish)]
    assert finish == ([expected.finish] if expected.finish else [])
    assert tuple(e.message for e in events if isinstance(e, StreamError)) == expected.errors
    assert ended is expected.ended
    assert_honest(events)
    # Offline, a capture that stops before its terminal event ends with an error saying so.
    offline = parse_stream_file(dialect, read(name))  # type: ignore[arg-type]
    cut = not ended and not expected.errors
    assert offline[: len(events)] == events
    assert [e.message for e in offline[len(events) :]] == (
        ["the stream ended before data: [DONE]: it is incomplete"] if cut else []
    )


@pytest.mark.parametrize(("name", "dialect", "events"), EXACT)
def test_capture_exact_sequence(name: str, dialect: str, events: list[StreamEvent]):
    assert parse(dialect, read(name))[0] == events


def test_midstream_error_keeps_the_raw_chunk():
    raw = read("openrouter-chat-stream-midstream-error.sse").decode()
    line = next(line for line in raw.splitlines() if '"error":{' in line)
    error = next(e for e in parse("openai", raw.encode())[0] if isinstance(e, StreamError))
    assert error.body == line.removeprefix("data: ")
    assert json.loads(error.body)["error"] == {"code": 400, "message": "Token limit reached"}


@pytest.mark.parametrize(("name", "dialect", "expected"), CASES)
def test_crlf_line_ends_give_the_same_events(name: str, dialect: str, expected: Expected):
    raw = read(name)
    assert parse(dialect, raw.replace(b"\n", b"\r\n")) == parse(dialect, raw)


# --- parse-stream ---


def test_make_parser_rejects_an_unknown_dialect():
    with pytest.raises(ValueError, match="unknown stream dialect"):
        make_parser("gemini")  # type: ignore[arg-type]
