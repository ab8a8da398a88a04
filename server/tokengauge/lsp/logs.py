"""Logging: stderr always (stdout carries the protocol), and `window/logMessage` once connected.

pygls' own records stay at WARNING so the client's log is about tokengauge, not JSON-RPC chatter.
"""

from __future__ import annotations

import logging
import sys
from typing import Final, Protocol

from lsprotocol.types import LogMessageParams, MessageType

LEVELS: Final = {
    "off": logging.CRITICAL + 10,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": logging.DEBUG,
}
LIBRARY_LOGGERS: Final = ("pygls", "pygls.protocol", "httpx", "httpcore")
FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


EXPECTED_ERROR_CODES: Final = frozenset({-32602, -32803, -32800})
"""InvalidParams, RequestFailed, RequestCancelled: answers we give on purpose."""


class ExpectedErrorFilter(logging.Filter):
    """Drops pygls' traceback for a request we answered with an error on purpose (bad params,
    a failed chat, a message pygls could not read): tokengauge logs those itself, in one line a
    person can read."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for records about an expected error."""
        if record.msg == "Unable to deserialize message\n%s":
            return False
        error = record.exc_info[1] if record.exc_info else None
        return getattr(error, "code", None) not in EXPECTED_ERROR_CODES


class LogSink(Protocol):
    """Anything that can show a log message to the user (the language server)."""

    def window_log_message(self, params: LogMessageParams) -> None: ...


def _message_type(level: int) -> MessageType:
    if level >= logging.ERROR:
        return MessageType.Error
    if level >= logging.WARNING:
        return MessageType.Warning
    if level >= logging.INFO:
        return MessageType.Info
    return MessageType.Log


class ClientLogHandler(logging.Handler):
    """Forwards tokengauge's records to the client as `window/logMessage`."""

    def __init__(self, sink: LogSink) -> None:
        super().__init__()
        self.sink = sink
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        """Send one record; never raise (a closed pipe must not break logging)."""
        if not record.name.startswith("tokengauge"):
            return
        try:
            message = self.format(record)
            self.sink.window_log_message(
                LogMessageParams(type=_message_type(record.levelno), message=message)
            )
        except Exception:
            self.handleError(record)


def configure_logging(level: str = "info") -> None:
    """Log tokengauge to stderr at `level` and libraries at WARNING."""
    root = logging.getLogger()
    if not any(getattr(h, "_tokengauge_stderr", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        handler._tokengauge_stderr = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("tokengauge").setLevel(LEVELS.get(level, logging.INFO))
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    json_rpc = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, ExpectedErrorFilter) for f in json_rpc.filters):
        json_rpc.addFilter(ExpectedErrorFilter())


def forward_to_client(sink: LogSink) -> ClientLogHandler:
    """Attach (once) a handler that forwards tokengauge's records to the client."""
    logger = logging.getLogger("tokengauge")
    for handler in logger.handlers:
        if isinstance(handler, ClientLogHandler):
            handler.sink = sink
            return handler
    handler = ClientLogHandler(sink)
    logger.addHandler(handler)
    return handler
