"""Logging: each record once, as `window/logMessage` while a client listens, else on stderr."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import httpx
import pytest
from lsprotocol.types import LogMessageParams, MessageType

from tokengauge.lsp import logs
from tokengauge.upstream.errors import UpstreamError
from tokengauge.upstream.http import get_json
from tokengauge.upstream.redact import REDACTED


class Sink:
    """A client that keeps what it is sent (and can fail, or log while sending)."""

    def __init__(self, fail: bool = False, log_inside: bool = False) -> None:
        self.messages: list[LogMessageParams] = []
        self.fail = fail
        self.log_inside = log_inside

    def window_log_message(self, params: LogMessageParams) -> None:
        if self.log_inside:  # pygls logs "Error sending data" when its write fails
            logging.getLogger("pygls.protocol.json_rpc").error("Error sending data")
        if self.fail:
            raise BrokenPipeError("the client is gone")
        self.messages.append(params)


@pytest.fixture
def stderr(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """Logging configured as the server does, on a fresh root logger; stderr captured."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("tokengauge").level)
    root.handlers = []
    captured = io.StringIO()
    monkeypatch.setattr("sys.stderr", captured)
    logs.configure_logging("debug")
    yield captured
    root.handlers, root.level = saved[0], saved[1]
    logging.getLogger("tokengauge").setLevel(saved[2])


LOG = logging.getLogger("tokengauge.test")


def test_before_a_client_records_go_to_stderr(stderr: io.StringIO):
    LOG.info("starting")
    assert " INFO tokengauge.test: starting" in stderr.getvalue()


@pytest.mark.parametrize(
    ("level", "kind"),
    [
        pytest.param(logging.DEBUG, MessageType.Log, id="debug"),
        pytest.param(logging.INFO, MessageType.Info, id="info"),
        pytest.param(logging.WARNING, MessageType.Warning, id="warning"),
        pytest.param(logging.ERROR, MessageType.Error, id="error"),
    ],
)
def test_once_attached_each_record_goes_once_to_the_client(
    stderr: io.StringIO, level: int, kind: MessageType
):
    sink = Sink()
    logs.forward_to_client(sink)
    LOG.log(level, "ledger at %s opened", "/tmp/x")
    assert [(m.type, m.message) for m in sink.messages] == [(kind, "ledger at /tmp/x opened")]
    assert stderr.getvalue() == ""


def test_a_crash_reaches_stderr_too(stderr: io.StringIO):
    sink = Sink()
    logs.forward_to_client(sink)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        LOG.critical("the server stopped on an unexpected error", exc_info=True)
    assert "CRITICAL tokengauge.test: the server stopped" in stderr.getvalue()
    assert "RuntimeError: boom" in stderr.getvalue()
    [message] = sink.messages
    assert message.type == MessageType.Error and "RuntimeError: boom" in message.message


def test_other_libraries_reach_the_client_only_from_error_up(stderr: io.StringIO):
    sink = Sink()
    logs.forward_to_client(sink)
    pygls = logging.getLogger("pygls.protocol.json_rpc")
    pygls.warning("Cancel notification for unknown message id %r", "7")
    pygls.error("Failed to handle request %r", "8")
    assert [m.message for m in sink.messages] == ["pygls: Failed to handle request '8'"]
    assert stderr.getvalue() == ""


def test_when_the_client_is_gone_stderr_takes_over(stderr: io.StringIO):
    logs.forward_to_client(Sink(fail=True))
    LOG.warning("first")
    LOG.warning("second")
    assert "WARNING tokengauge.test: first" in stderr.getvalue()
    assert "WARNING tokengauge.test: second" in stderr.getvalue()
    assert not logs.client_attached()


def test_a_record_logged_while_sending_is_not_sent_again(stderr: io.StringIO):
    sink = Sink(log_inside=True)
    logs.forward_to_client(sink)
    LOG.info("hello")  # would recurse forever if the handler sent pygls' record too
    assert [m.message for m in sink.messages] == ["hello"]


def test_after_the_connection_ends_stderr_again(stderr: io.StringIO):
    sink = Sink()
    logs.forward_to_client(sink)
    logs.stop_forwarding()
    LOG.info("the client closed the connection; stopping")
    assert sink.messages == []
    assert "the client closed the connection" in stderr.getvalue()
    logs.forward_to_client(sink)  # attached again (a new session): one handler, reused
    LOG.info("again")
    assert [m.message for m in sink.messages] == ["again"]
    assert sum(isinstance(h, logs.ClientLogHandler) for h in logging.getLogger().handlers) == 1


async def test_no_line_shows_a_credential_a_request_carried(stderr: io.StringIO):
    """Whoever logs it (tokengauge at debug, httpx's own error, a traceback), the line goes out
    without the credentials of the requests built so far or anything that looks like one."""
    gateway, password, query = "gw-9f8e7d6c5b4a", "pw-0a1b2c3d4e5f", "qk-5e4d3c2b1a0f"
    url = f"http://me:{password}@127.0.0.1:9/v1/models?api-key={query}"
    async with httpx.AsyncClient() as client:
        with pytest.raises(UpstreamError):
            await get_json(client, "GET", url, headers={"X-Gateway-Key": gateway})
    lines = [
        ("tokengauge.chat", logging.DEBUG, "POST %s with %s", (url, gateway)),
        ("httpx", logging.ERROR, "HTTP Request: GET %s failed", (url,)),
    ]
    sink = Sink()
    for attached in (False, True):
        if attached:
            logs.forward_to_client(sink)
        for name, level, text, args in lines:
            logging.getLogger(name).log(level, text, *args)
        try:
            raise RuntimeError(f"gateway {gateway} said no")
        except RuntimeError:
            logging.getLogger("tokengauge").critical("crashed", exc_info=True)
    out = stderr.getvalue() + "\n".join(m.message for m in sink.messages)
    assert out.count(f"POST http://{REDACTED}@127.0.0.1:9/v1/models?api-key={REDACTED}") == 2
    assert "httpx: HTTP Request: GET http://" in out and "gateway [redacted] said no" in out
    assert not [secret for secret in (gateway, password, query) if secret in out]
