"""LSP over stdin/stdout with stdin read as an asyncio pipe.

pygls' own stdio reader hands every header line and every body to a thread pool, three thread
hops a request; Copilot asks for token counts one at a time, so each miss pays them in full.
Reading stdin through the event loop keeps pygls' message loop (`pygls.io_.run_async`), its
protocol and its writer, and only replaces where the bytes come from. Where stdin is not a pipe,
a socket or a terminal (a regular file), or on Windows, pygls' own reader serves instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


class PipeReader:
    """pygls' `AsyncReader` over an asyncio stream: b"" at the end of input."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        """One header line, with its line end; b"" at the end of input."""
        return await self._stream.readline()

    async def readexactly(self, n: int) -> bytes:
        """A body of `n` bytes; b"" if the input ended inside it (the cut message is dropped)."""
        try:
            return await self._stream.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            log.warning(
                "the input ended inside a message (%d of %d bytes): dropped", len(exc.partial), n
            )
            return b""


def can_read_as_pipe(stdin: BinaryIO) -> bool:
    """Whether the event loop can watch `stdin` (a pipe, socket or terminal, not on Windows)."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(stdin.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _serve(server: LanguageServer, stdin: BinaryIO, stdout: BinaryIO) -> None:
    loop = asyncio.get_running_loop()
    stream = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)
    server.protocol.set_writer(StdoutWriter(stdout))
    await run_async(
        stop_event=threading.Event(),  # the loop ends at the end of input or on `exit`
        reader=PipeReader(stream),
        protocol=server.protocol,
        logger=log,
        error_handler=server.report_server_error,
    )


def serve_stdio(server: LanguageServer) -> None:
    """Serve `server` on stdin/stdout until the input ends or the client says exit."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if not can_read_as_pipe(stdin):
        server.start_io(stdin, stdout)
        return
    try:
        asyncio.run(_serve(server, stdin, stdout))
    except BrokenPipeError:
        log.error("the client closed the connection; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        with contextlib.suppress(Exception):
            server.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it unannotated
