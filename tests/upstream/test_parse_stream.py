"""Both stream parsers against every real capture, with CRLF line ends too, and the
`parse-stream` entry point.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import WIRE
from tests.upstream.stream_cases import CASES, EXACT, Expected, assert_honest, parse, read, shape
from tokengauge.upstream.events import (
    Finish,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    UsageReport,
    event_json,
)
from tokengauge.upstream.parse_stream import main_parse_stream, make_parser, parse_stream_file

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
    assert all(e.value for e in thinking if e.signature is None)
    assert tuple(e.signature for e in thinking if e.signature is not None) == expected.signatures
    assert tuple(e for e in events if isinstance(e, ToolCall)) == expected.tool_calls
    usage = [e for e in events if isinstance(e, UsageReport)]
    assert usage == ([expected.usage] if expected.usage else [])
    finish = [e.reason for e in events if isinstance(e, Finish)]
    assert finish == ([expected.finish] if expected.finish else [])
    assert tuple(e.message for e in events if isinstance(e, StreamError)) == expected.errors
    assert ended is expected.ended
    assert_honest(events)
    assert parse_stream_file(dialect, read(name)) == events  # type: ignore[arg-type]


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


def test_parse_stream_prints_json_lines(capsys: pytest.CaptureFixture[str]):
    assert main_parse_stream("anthropic", WIRE / "anthropic-stream-text.sse") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"type": "text", "value": "Hello"},
        event_json(UsageReport(10, 4, total_input_tokens=10)),
    ]


def test_parse_stream_exits_1_on_an_error(capsys: pytest.CaptureFixture[str]):
    assert main_parse_stream("anthropic", WIRE / "error-anthropic-overloaded-stream-event.sse") == 1
    assert json.loads(capsys.readouterr().out) == {"type": "error", "message": "Overloaded"}


def test_parse_stream_exits_1_on_a_cut_off_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    raw = read("anthropic-stream-thinking.sse")
    path = tmp_path / "cut.sse"
    path.write_bytes(raw[: raw.index(b"\n\n", len(raw) // 2) + 2])
    assert main_parse_stream("anthropic", path) == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["type"] == "error"
    assert "message_stop" in last["message"]


def test_parse_stream_exits_2_when_the_file_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert main_parse_stream("openai", tmp_path / "missing.sse") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot read" in captured.err


def test_make_parser_rejects_an_unknown_dialect():
    with pytest.raises(ValueError, match="unknown stream dialect"):
        make_parser("gemini")  # type: ignore[arg-type]
