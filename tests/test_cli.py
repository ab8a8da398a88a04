"""The `tokengauge` command line, run as a real subprocess (its parse-stream command in process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA, WIRE
from tests.upstream.dialects.stream_cases import read
from tokengauge.calibration.classify import classify_error
from tokengauge.cli import parse_stream_command
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.messages import Usage
from tokengauge.upstream.dialects.events import event_json

SAMPLE = DATA / "copilot-request.json"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tokengauge", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_count_table():
    result = run("count", str(SAMPLE))
    assert result.returncode == 0, result.stderr
    needles = ("system", "tools (2)", "request overhead", "#0 user", "#4 user", "maxInputTokens")
    for needle in (*needles, "fits"):
        assert needle in result.stdout


def test_count_json_matches_tiktoken():
    result = run("count", str(SAMPLE), "--json", "--model", "gpt-4o")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    request = json.loads(SAMPLE.read_text())
    encoding = EncodingRegistry().get("o200k_base")
    first_user = request["messages"][1]["content"]
    assert report["encoding"] == "o200k_base"
    assert report["messages"][0]["raw"] == len(encoding.encode_ordinary(first_user))
    assert report["total"] == report["system"] + report["tools"] + report["requestOverhead"] + sum(
        m["tokens"] for m in report["messages"]
    )
    assert report["maxInputTokens"] == 128_000 - 16_384
    assert report["fits"] is True


def test_count_reports_a_request_that_does_not_fit(tmp_path: Path):
    request = {"messages": [{"role": "user", "content": "word " * 5000}]}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(request))
    result = run("count", str(path), "--json", "--model", "tiny", "--context-window", "4096")
    report = json.loads(result.stdout)
    assert report["fits"] is False
    assert report["total"] > report["maxInputTokens"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        pytest.param("{not json", "Expecting property name", id="not-json"),
        pytest.param('{"messages": 3}', "`messages` list", id="no-messages"),
        pytest.param('{"messages": [{"role": "robot"}]}', "robot", id="bad-role"),
    ],
)
def test_count_bad_input_is_a_clear_error(tmp_path: Path, content: str, needle: str):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = run("count", str(path))
    assert result.returncode == 2
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


ERROR_BODIES = sorted(p.name for p in WIRE.glob("error-*") if "headers" not in p.name)


@pytest.mark.parametrize("name", ERROR_BODIES)
def test_parse_error_prints_the_classification(name: str):
    result = run("parse-error", str(WIRE / name))
    printed = json.loads(result.stdout)
    expected = classify_error(None, (WIRE / name).read_text())
    assert printed == expected.to_json()
    assert result.returncode == (0 if printed["kind"] == "overflow" else 1)


def test_parse_error_overflow_shape():
    result = run(
        "parse-error", str(WIRE / "error-openai-context-length-exceeded-with-completion.json")
    )
    assert result.returncode == 0
    assert json.loads(result.stdout) | {"message": ""} == {
        "kind": "overflow",
        "inputTokens": 3120,
        "limitTokens": 4097,
        "outputTokens": 1000,
        "excessTokens": None,
        "message": "",
    }


def test_parse_error_with_status():
    result = run(
        "parse-error", str(WIRE / "error-anthropic-429-rate-limited-short.json"), "--status", "429"
    )
    assert result.returncode == 1
    assert json.loads(result.stdout)["kind"] == "rate_limit"


def test_version_and_missing_file(tmp_path: Path):
    assert run("--version").stdout.startswith("tokengauge ")
    result = run("parse-error", str(tmp_path / "missing.json"))
    assert result.returncode == 2 and "missing.json" in result.stderr


def test_importing_the_entry_point_runs_nothing():
    """Only `python -m tokengauge` serves: a tool importing `tokengauge.__main__` gets its `run`."""
    result = subprocess.run(
        [sys.executable, "-c", "import tokengauge.__main__ as m; print(m.run.__name__)"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "run\n"), result.stderr


STREAMS = sorted(p.name for p in WIRE.glob("*.sse"))


@pytest.mark.parametrize("name", STREAMS)
def test_parse_stream_prints_the_parsed_events(name: str):
    from tokengauge.upstream.dialects.dialect import parse_stream_file
    from tokengauge.upstream.dialects.events import event_json

    dialect = "anthropic" if "anthropic" in name else "openai"
    result = run("parse-stream", "--dialect", dialect, str(WIRE / name))
    printed = [json.loads(line) for line in result.stdout.splitlines()]
    events = parse_stream_file(dialect, (WIRE / name).read_bytes())
    expected = [j for j in map(event_json, events) if j is not None]
    assert printed == expected
    assert printed, "every capture yields at least one event"
    failed = any(event["type"] == "error" for event in printed)
    assert result.returncode == (1 if failed else 0)


def test_parse_stream_needs_a_dialect():
    result = run("parse-stream", str(WIRE / "anthropic-stream-text.sse"))
    assert result.returncode == 2 and "--dialect" in result.stderr


def test_parse_stream_prints_json_lines(capsys: pytest.CaptureFixture[str]):
    assert parse_stream_command("anthropic", WIRE / "anthropic-stream-text.sse") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        {"type": "text", "value": "Hello"},
        event_json(Usage(total_input_tokens=10, output_tokens=4, input_tokens=10)),
    ]


def test_parse_stream_exits_1_on_an_error(capsys: pytest.CaptureFixture[str]):
    assert (
        parse_stream_command("anthropic", WIRE / "error-anthropic-overloaded-stream-event.sse") == 1
    )
    assert json.loads(capsys.readouterr().out) == {"type": "error", "message": "Overloaded"}


def test_parse_stream_exits_1_on_a_cut_off_capture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    raw = read("anthropic-stream-thinking.sse")
    path = tmp_path / "cut.sse"
    path.write_bytes(raw[: raw.index(b"\n\n", len(raw) // 2) + 2])
    assert parse_stream_command("anthropic", path) == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["type"] == "error"
    assert "message_stop" in last["message"]


def test_parse_stream_exits_2_when_the_file_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    assert parse_stream_command("openai", tmp_path / "missing.sse") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "cannot read" in captured.err
