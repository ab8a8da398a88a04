"""Logging: each record once, as `window/logMessage` while a client listens, else on stderr.

Before `initialize` attaches the client (and once the connection is gone) records go to stderr
with a timestamp: nobody else would see them. While the client is attached, a record is one
`window/logMessage` of its level's type (warnings as Warning, debug as Log), its text without a
timestamp (the client adds its own); stderr then carries only CRITICAL records, a crash's
traceback, which the extension shows even when the server can no longer speak.

tokengauge's own records go to the client at the configured level; other libraries' only from
ERROR up (pygls' handler failures), and pygls' chatter stays at WARNING on stderr's side, so
the client's log is about tokengauge, not JSON-RPC.

Every line, whoever logged it and at whatever level (a traceback included), is redacted on its way
out (`RedactingFormatter`): no credential a request carried, nor anything that looks like one.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Final, Protocol

from lsprotocol.types import LogMessageParams, MessageType

from tokengauge.upstream.redact import SENT

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
OWN_LOGGER: Final = "tokengauge"


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


def message_type(level: int) -> MessageType:
    """The `window/logMessage` type of a logging level."""
    if level >= logging.ERROR:
        return MessageType.Error
    if level >= logging.WARNING:
        return MessageType.Warning
    if level >= logging.INFO:
        return MessageType.Info
    return MessageType.Log  # LSP 3.18's Debug is unknown to many clients


class RedactingFormatter(logging.Formatter):
    """A record's text without the credentials of any request sent (`redact.SENT`) or anything
    that looks like a credential."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as `logging.Formatter` writes it, redacted."""
        return SENT.redact(super().format(record))


class ClientFormatter(RedactingFormatter):
    """The message alone (and its traceback, if any); another library's name in front."""

    def __init__(self) -> None:
        super().__init__("%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """One record as the client shows it."""
        text = super().format(record)
        if _is_own(record):
            return text
        return f"{record.name.split('.')[0]}: {text}"


class ClientLogHandler(logging.Handler):
    """Sends records to the client as `window/logMessage` while the connection lasts."""

    def __init__(self, sink: LogSink) -> None:
        super().__init__()
        self.sink = sink
        self.connected = True
        self._sending = threading.local()
        self.setFormatter(ClientFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        """Send one record; never raise. A record logged while sending one (pygls reporting
        that it could not write) is not sent again; a send that fails hands the record, and
        every later one, to stderr."""
        if not self.connected or getattr(self._sending, "active", False):
            return
        if not _is_own(record) and record.levelno < logging.ERROR:
            return
        self._sending.active = True
        try:
            message = self.format(record)
            self.sink.window_log_message(LogMessageParams(message_type(record.levelno), message))
        except Exception:
            self.connected = False
            _write_to_stderr(record)
        finally:
            self._sending.active = False


class StderrFilter(logging.Filter):
    """Lets through what no client can show: everything while none is attached, else CRITICAL."""

    def filter(self, record: logging.LogRecord) -> bool:
        """True for records stderr must carry."""
        return record.levelno >= logging.CRITICAL or not client_attached()


def _is_own(record: logging.LogRecord) -> bool:
    return record.name == OWN_LOGGER or record.name.startswith(OWN_LOGGER + ".")


def _client_handlers() -> list[ClientLogHandler]:
    return [h for h in logging.getLogger().handlers if isinstance(h, ClientLogHandler)]


def _stderr_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if getattr(h, "_tokengauge_stderr", False)]


def _write_to_stderr(record: logging.LogRecord) -> None:
    for handler in _stderr_handlers():
        handler.handle(record)


def client_attached() -> bool:
    """Whether a connected client receives the records."""
    return any(handler.connected for handler in _client_handlers())


def configure_logging(level: str = "info") -> None:
    """Log tokengauge at `level` and libraries at WARNING; stderr until a client is attached."""
    root = logging.getLogger()
    if not _stderr_handlers():
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(RedactingFormatter(FORMAT))
        handler.addFilter(StderrFilter())
        handler._tokengauge_stderr = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger(OWN_LOGGER).setLevel(LEVELS.get(level, logging.INFO))
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    json_rpc = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, ExpectedErrorFilter) for f in json_rpc.filters):
        json_rpc.addFilter(ExpectedErrorFilter())


def forward_to_client(sink: LogSink) -> ClientLogHandler:
    """Send the records to the client from now on (one handler, attached once)."""
    for handler in _client_handlers():
        handler.sink = sink
        handler.connected = True
        return handler
    handler = ClientLogHandler(sink)
    logging.getLogger().addHandler(handler)
    return handler


def stop_forwarding() -> None:
    """The connection is over: records go to stderr again."""
    for handler in _client_handlers():
        handler.connected = False
