"""The server's stdin: an asyncio pipe where stdin is one, a thread otherwise; whatever a client
writes, every request gets an answer and the server keeps serving."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from tests.harness.lsp import SERVER_COMMAND, frame, frames, read_frame
from tokengauge.lsp.stdio import MessageWriter, can_read_as_pipe

REPO = Path(__file__).resolve().parents[2]


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


def test_on_windows_even_a_pipe_is_read_by_a_thread(monkeypatch):
    """Windows' event loop (proactor) cannot watch a pipe handed over as stdin: a thread reads it,
    as pygls' own reader would."""
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(os.dup(read_end), "rb") as pipe:
            monkeypatch.setattr(sys, "platform", "win32")
            assert not can_read_as_pipe(pipe)
            monkeypatch.setattr(sys, "platform", "linux")
            assert can_read_as_pipe(pipe)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_dev_null_is_read_by_a_thread_and_ends_the_server():
    """epoll refuses /dev/null: as an asyncio pipe it left the server waiting for ever."""
    with Path(os.devnull).open("rb") as null:
        assert not can_read_as_pipe(null)
    done = run_server(subprocess.DEVNULL, timeout=30)
    assert done.returncode == 0 and done.stdout == b""


def run_server(stdin: int | bytes, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    if isinstance(stdin, bytes):
        return subprocess.run(SERVER_COMMAND, input=stdin, capture_output=True, timeout=timeout)
    return subprocess.run(SERVER_COMMAND, stdin=stdin, capture_output=True, timeout=timeout)


def responses(output: bytes) -> dict[int, dict[str, Any]]:
    """The JSON-RPC responses in the server's whole output, by id."""
    return {m["id"]: m for m in frames(output) if "id" in m and "method" not in m}


def answer(stream: IO[bytes], request_id: int) -> dict[str, Any]:
    """Messages until the response to `request_id`."""
    while (message := read_frame(stream)) is not None:
        if "method" not in message and message.get("id") == request_id:
            return message
    raise AssertionError(f"the server's output ended before the answer to request {request_id}")


@pytest.mark.parametrize("closing", ["shutdown and exit", "end of input"])
def test_over_a_pipe_the_server_answers_and_ends(tmp_path, closing):
    with subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
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


def test_with_a_regular_file_as_stdin_a_thread_reads_it(tmp_path):
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
    # Said to the client (it is connected), once, as a warning; stderr stays quiet.
    logged = [m["params"] for m in frames(done.stdout) if m.get("method") == "window/logMessage"]
    warnings = [p["message"] for p in logged if p["type"] == 2]
    assert any("the input ended inside a message" in w for w in warnings), logged
    assert done.stderr == b""


def request(request_id: int, method: str, params: object) -> bytes:
    return frame({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def count(request_id: int, *inputs: str) -> bytes:
    return request(request_id, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": inputs})


def raw(text: str) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(text.encode()), text.encode())


HOSTILE = [
    pytest.param(b"stray bytes\r\n\x00\xff", None, id="stray-bytes"),
    pytest.param(b"X-Header: " + b"y" * 100_000 + b"\r\n", None, id="100k-header-line"),
    pytest.param(count(10, "héllo wörld")[:-30], None, id="cut-message"),
    pytest.param(
        count(11, "日本語のテキスト").replace(b"Content-Length: ", b"Content-Length: 1", 1),
        ("result", 11),
        id="length-too-large",
    ),
    pytest.param(
        raw('{"jsonrpc":"2.0","id":12,"method":"tokenGauge/models"'), ("error", 12), id="not-json"
    ),
    pytest.param(raw("[1, 2, 3]"), None, id="array"),
    pytest.param(raw('{"jsonrpc":"2.0","id":NaN,"method":"tokenGauge/models"}'), None, id="nan-id"),
    pytest.param(
        raw('{"jsonrpc":"1.0","id":13,"method":"tokenGauge/models"}'),
        ("error", 13),
        id="wrong-version",
    ),
    pytest.param(
        raw('{"jsonrpc":"2.0","id":14,"method":42}'), ("error", 14), id="method-not-a-string"
    ),
    pytest.param(
        raw(
            '{"jsonrpc":"2.0","id":15,"method":"tokenGauge/countTokens","params":{"modelId":"gpt-4o","inputs":[NaN]}}'
        ),
        ("error", 15),
        id="nan-input",
    ),
    pytest.param(
        request(
            16, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": [" " * 1_000_000 + "x"]}
        ),
        ("result", 16),
        id="million-spaces",
    ),
    pytest.param(
        request(17, "initialize", {"capabilities": 5}), ("error", 17), id="bad-initialize"
    ),
    pytest.param(
        raw(
            '{"jsonrpc":"2.0","id":19,"method":"tokenGauge/countTokens","params":{"modelId":'
            '"gpt-4o","inputs":[{"role":"user","content":['
            + '{"type":"toolResult","callId":"c","content":[' * 500
            + "]}" * 500
            + "]}]}}"
        ),
        ("error", 19),
        id="500-deep-tool-results",
    ),
    pytest.param(
        raw(
            '{"jsonrpc":"2.0","id":18,"method":"tokenGauge/countTokens","params":'
            + "[" * 100_000
            + "]" * 100_000
            + "}"
        ),
        ("error", 18),
        id="100k-deep",
    ),
]


@pytest.mark.parametrize(("hostile", "expected"), HOSTILE)
def test_hostile_input_is_answered_and_the_server_keeps_serving(tmp_path, hostile, expected):
    after = count(99, "still exact")
    done = run_server(initialize(tmp_path) + COUNT + hostile + after)
    assert done.returncode == 0, done.stderr.decode()
    found = responses(done.stdout)
    assert found[2]["result"]["raw"] == [2]
    assert found[99]["result"]["raw"] == [2]  # counted exactly after the hostile input
    if expected is not None:
        kind, request_id = expected
        assert kind in found[request_id], found[request_id]
        error = found[request_id].get("error")
        assert error is None or (error["code"] != -32603 and "Traceback" not in error["message"])
    assert b"Traceback" not in done.stderr


def test_requests_after_shutdown_are_refused_not_ignored(tmp_path):
    with subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(initialize(tmp_path) + SHUTDOWN)
        server.stdin.flush()
        assert answer(server.stdout, 3)["result"] is None
        server.stdin.write(count(4, "late"))
        server.stdin.flush()
        refused = answer(server.stdout, 4)["error"]
        assert refused["code"] == -32600 and "shutting down" in refused["message"]
        server.stdin.write(EXIT)
        server.stdin.close()
        assert server.wait(timeout=30) == 0


TWO_WRITERS = """
import sys, threading, time
from tests.harness.lsp import frame
from tokengauge.lsp.stdio import MessageWriter

writer = MessageWriter(sys.stdout.buffer)
answer = frame({"jsonrpc": "2.0", "id": 4, "result": {"entries": ["a" * 64] * 20_000}})
log = {"type": 4, "message": "x"}
record = frame({"jsonrpc": "2.0", "method": "window/logMessage", "params": log})

def log_records():
    for _ in range(200):
        writer.write(record)
        time.sleep(0.001)

logging_thread = threading.Thread(target=log_records)
logging_thread.start()
for _ in range(3):
    writer.write(answer)
logging_thread.join()
"""


def test_messages_sent_from_two_threads_arrive_whole():
    """A long answer written on the loop while a worker thread logs, to a client that reads
    64 KiB now and then: the pipe takes a long write in parts, and a record written between
    them would land inside the answer (as one did inside a 450 KB warmCounts answer)."""
    received = []
    command = [sys.executable, "-c", TWO_WRITERS]
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE) as writers:
        assert writers.stdout is not None
        while chunk := writers.stdout.read1(64 * 1024):
            received.append(chunk)
            time.sleep(0.002)
    assert writers.returncode == 0
    messages = frames(b"".join(received))
    assert [m.get("id") for m in messages].count(4) == 3
    assert [m.get("method") for m in messages].count("window/logMessage") == 200
    assert len(messages) == 203


def test_after_close_nothing_is_written_and_nothing_raises(tmp_path):
    """The client said exit: pygls closed stdout, and what a thread still sends is dropped (it
    was a ValueError, which pygls reported by sending again, over and over)."""
    out = (tmp_path / "out").open("wb")
    writer = MessageWriter(out)
    writer.write(b"first")
    writer.close()
    writer.write(b"late")
    assert out.closed
    assert (tmp_path / "out").read_bytes() == b"first"
