"""LSP over stdin/stdout: tokengauge's own message loop in front of pygls' protocol.

pygls' stdio reader hands every header line and every body to a thread pool (three thread hops a
request; Copilot asks for counts one at a time, so each miss pays them in full), and one bad byte
on stdin desynchronises it for good or ends it. Here stdin is read through the event loop where
it is a pipe, a socket or a terminal (a thread reads it otherwise: a regular file, Windows),
`framing` cuts it into messages whatever the client got wrong, and every message that asks for
an answer gets one: JSON that does not parse is a ParseError (-32700), a message that is not a
JSON-RPC request an InvalidRequest (-32600), params that pygls cannot read an InvalidParams
(-32602). Everything valid goes to pygls' protocol and its handlers unchanged.

Messages go out through `MessageWriter`, one whole message at a time whichever thread sends it:
log records are sent from the threads that log them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import threading
from typing import Any, BinaryIO, Final

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from tokengauge.lsp.framing import Frame, FrameReader, Read
from tokengauge.lsp.logs import stop_forwarding

log = logging.getLogger(__name__)

CHUNK: Final = 64 * 1024
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

MessageId = int | str | None


def can_read_as_pipe(stdin: BinaryIO) -> bool:
    """Whether the event loop can watch `stdin` (a pipe, socket or terminal, not on Windows;
    not another character device such as /dev/null, which epoll refuses)."""
    if sys.platform == "win32":
        return False
    try:
        fd = stdin.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


async def open_reader(stdin: BinaryIO) -> Read:
    """A function giving the next chunk of `stdin` (b"" at its end), through the event loop if
    it can watch `stdin`, else through a thread."""
    loop = asyncio.get_running_loop()
    if can_read_as_pipe(stdin):
        stream = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
        return lambda: stream.read(CHUNK)
    read1 = getattr(stdin, "read1", stdin.read)
    return lambda: loop.run_in_executor(None, read1, CHUNK)


class MessageWriter:
    """pygls' writer for stdout, safe to call from any thread: each message is written whole before
    the next begins (two threads writing at once interleave in the pipe once a message is longer
    than the pipe writes at a time, as a log record did inside a 450 KB answer), and nothing is
    written once the stream is closed (the client said exit). The lock is reentrant: a record
    logged by a finalizer that runs mid-write must not hang the thread that is writing."""

    def __init__(self, stdout: BinaryIO) -> None:
        self._stdout = stdout
        self._lock = threading.RLock()
        self._closed = False

    def write(self, data: bytes) -> None:
        """Write one framed message and flush it."""
        with self._lock:
            if self._closed:
                return
            self._stdout.write(data)
            self._stdout.flush()

    def close(self) -> None:
        """Close the stream, after the message being written."""
        with self._lock:
            self._closed = True
            self._stdout.close()


class MessageLoop:
    """Feeds framed messages to a pygls protocol and answers whatever it cannot take."""

    def __init__(self, server: LanguageServer, writer: MessageWriter) -> None:
        self.protocol = server.protocol
        self.writer = writer
        self._shut_down = False

    async def run(self, reader: FrameReader) -> None:
        """Serve until the input ends (or `exit` ends the process)."""
        while (frame := await reader.next()) is not None:
            self.handle(frame)

    def handle(self, frame: Frame) -> None:
        """One framed message: answered with an error, or handed to pygls."""
        if frame.problem is not None:
            log.warning("unreadable message: %s", frame.problem)
            self.reply_error(frame.request_id, PARSE_ERROR, frame.problem)
            return
        message = frame.value
        problem, request_id = envelope_problem(message)
        if problem is not None:
            log.warning("invalid JSON-RPC message: %s", problem)
            self.reply_error(request_id, INVALID_REQUEST, problem)
            return
        is_request = "method" in message and "id" in message
        if is_request and self._shut_down and message["method"] != types.EXIT:
            self.reply_error(request_id, INVALID_REQUEST, "the server is shutting down")
            return
        try:
            structured = self.protocol.structure_message(message)
        except JsonRpcException as exc:
            reason = _params_problem(exc)
            log.warning("%s: %s", message.get("method", "message"), reason)
            if is_request:
                self.reply_error(request_id, INVALID_PARAMS, reason)
            return
        self._shut_down |= is_request and message["method"] == types.SHUTDOWN
        self.protocol.handle_message(structured)

    def reply_error(self, request_id: MessageId, code: int, message: str) -> None:
        """Write an error response (id null when the request's id is unknown)."""
        error = {"code": code, "message": message}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def envelope_problem(message: Any) -> tuple[str | None, MessageId]:
    """Why `message` is not a JSON-RPC 2.0 message (None if it is), and its usable id."""
    if not isinstance(message, dict):
        return f"a message must be a JSON object, not {_kind(message)}", None
    raw_id = message.get("id")
    valid_id = isinstance(raw_id, (int, str)) and not isinstance(raw_id, bool)
    request_id = raw_id if valid_id else None
    if message.get("jsonrpc") != "2.0":
        return 'a message must say "jsonrpc": "2.0"', request_id
    if "id" in message and not valid_id:
        return f"a request id must be a number or a string, not {_kind(raw_id)}", None
    if "method" in message:
        if not isinstance(message["method"], str):
            return f"method must be a string, not {_kind(message['method'])}", request_id
    elif "id" not in message or not ("result" in message or "error" in message):
        return "a message must have a method (or be a response with an id)", request_id
    return None, request_id


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", list: "an array", dict: "an object", str: "a string"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else repr(value)
    )


def _params_problem(exc: JsonRpcException) -> str:
    """What was wrong with the params pygls could not read, in words."""
    cause = exc.__cause__
    if isinstance(cause, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(cause, "request"))
    return f"invalid params ({type(cause).__name__ if cause else exc.message})"


async def _serve(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    writer = MessageWriter(stdout)
    server.protocol.set_writer(writer)
    reader = FrameReader(await open_reader(stdin))
    await MessageLoop(server, writer).run(reader)


def serve_stdio(server: LanguageServer) -> None:
    """Serve `server` on stdin/stdout until the input ends or the client says exit; a crash
    is logged (with its traceback, on stderr too) and ends the process with status 1."""
    try:
        asyncio.run(_serve(server, sys.stdin.buffer, sys.stdout.buffer))
    except BrokenPipeError:
        stop_forwarding()
        log.info("the client closed the connection; stopping")
    except (KeyboardInterrupt, SystemExit):
        pass
    except Exception:
        log.critical("the server stopped on an unexpected error", exc_info=True)
        raise SystemExit(1) from None
    finally:
        stop_forwarding()
        with contextlib.suppress(Exception):
            server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated
