"""The server's stdin reader: an asyncio pipe where stdin is one, pygls' own reader otherwise."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any, cast

import pytest

from tokengauge.stdio import PipeReader, can_read_as_pipe


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def initialize(storage: Path) -> bytes:
    params = {"processId": None, "rootUri": None, "capabilities": {}}
    params["initializationOptions"] = {
        "storageDir": str(storage),
        "models": [{"id": "gpt-4o", "provider": "ollama"}],
    }
    return frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})


COUNT = frame(
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tokenGauge/countTokens",
        "params": {"modelId": "gpt-4o", "inputs": ["hello world"]},
    }
)
SERVER = [sys.executable, "-m", "tokengauge"]
SHUTDOWN = frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
EXIT = frame({"jsonrpc": "2.0", "method": "exit"})


def test_pipes_are_read_by_the_event_loop_and_files_are_not(tmp_path):
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(os.dup(read_end), "rb") as pipe:
            assert can_read_as_pipe(pipe)
    finally:
        os.close(read_end)
        os.close(write_end)
    (tmp_path / "input").write_bytes(b"")
    with (tmp_path / "input").open("rb") as regular:
        assert not can_read_as_pipe(regular)


async def test_the_reader_reads_lines_and_bodies_and_drops_a_cut_body(caplog):
    stream = asyncio.StreamReader()
    stream.feed_data(b"Content-Length: 10\r\n\r\nshort")
    stream.feed_eof()
    reader = PipeReader(stream)
    assert await reader.readline() == b"Content-Length: 10\r\n"
    assert await reader.readline() == b"\r\n"
    assert await reader.readexactly(10) == b""
    assert "ended inside a message (5 of 10 bytes)" in caplog.text
    assert await reader.readline() == b""


async def test_the_reader_gives_whole_bodies():
    stream = asyncio.StreamReader()
    stream.feed_data(b"0123456789rest")
    reader = PipeReader(stream)
    assert await reader.readexactly(10) == b"0123456789"
    assert await reader.readexactly(4) == b"rest"


def run_server(stdin: int | bytes, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    if isinstance(stdin, bytes):
        return subprocess.run(SERVER, input=stdin, capture_output=True, timeout=timeout)
    return subprocess.run(SERVER, stdin=stdin, capture_output=True, timeout=timeout)


def read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """One framed message from the server's stdout (blocking); None at the end of its output."""
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.startswith(b"Content-Length: "):
            length = int(line.split(b": ")[1])
    return cast(dict[str, Any], json.loads(stream.read(length))) if length else None


def responses(output: bytes) -> dict[int, dict[str, Any]]:
    """The JSON-RPC responses in the server's whole output, by id."""
    stream = io.BytesIO(output)
    found: dict[int, dict[str, Any]] = {}
    while (message := read_message(stream)) is not None:
        if "id" in message and "method" not in message:
            found[message["id"]] = message
    return found


def answer(stream: IO[bytes], request_id: int) -> dict[str, Any]:
    """Messages until the response to `request_id`."""
    while (message := read_message(stream)) is not None:
        if "method" not in message and message.get("id") == request_id:
            return message
    raise AssertionError(f"the server's output ended before the answer to request {request_id}")


@pytest.mark.parametrize("closing", ["shutdown and exit", "end of input"])
def test_over_a_pipe_the_server_answers_and_ends(tmp_path, closing):
    with subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(initialize(tmp_path) + COUNT)
        server.stdin.flush()
        assert answer(server.stdout, 1)["result"]["capabilities"]
        assert answer(server.stdout, 2)["result"]["raw"] == [2]
        if closing == "shutdown and exit":
            server.stdin.write(SHUTDOWN)
            server.stdin.flush()
            assert answer(server.stdout, 3)["result"] is None
            server.stdin.write(EXIT)
            server.stdin.flush()
        server.stdin.close()
        assert server.wait(timeout=30) == 0


def test_with_a_regular_file_as_stdin_pygls_reader_serves(tmp_path):
    script = tmp_path / "session.lsp"
    script.write_bytes(initialize(tmp_path) + COUNT)
    with script.open("rb") as stdin:
        done = run_server(stdin.fileno())
    assert done.returncode == 0, done.stderr.decode()
    assert responses(done.stdout)[2]["result"]["raw"] == [2]


def test_a_message_cut_short_by_the_end_of_input_is_dropped_with_a_warning(tmp_path):
    done = run_server(initialize(tmp_path) + COUNT[:-5])
    assert done.returncode == 0, done.stderr.decode()
    assert set(responses(done.stdout)) == {1}
    assert b"the input ended inside a message" in done.stderr
    assert b"Traceback" not in done.stderr
