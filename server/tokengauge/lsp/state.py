"""The language server's state (ARCHITECTURE §3): `TokenGaugeServer` owns the gauge (encodings,
ledger, calibration, models), the chat runner with its HTTP client, telemetry and the background
tasks, and sends the notifications; `ServerChatSink` is where a chat's output goes.

Ready fast: `initialize` and the first `tokenGauge/models` need only the ledger and the model
table. The encodings and the chat package load in the background once the models are answered
(or a moment after `initialized` if they are not asked for); the HTTP client and its TLS context
are made with the first request that needs them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import attrs
import platformdirs
from pygls.exceptions import JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter

from tokengauge import __version__, protocol
from tokengauge.gauge import Gauge
from tokengauge.ledger.disk import timings_from_environment
from tokengauge.ledger.store import LEDGER_DIR, Ledger
from tokengauge.lsp.logs import configure_logging
from tokengauge.messages import unstructure
from tokengauge.protocol import ChatPart, ChatPartParams, ModelScales, Notice, Status
from tokengauge.settings import DEFAULT_PROVIDERS, ServerSettings, TelemetrySettings
from tokengauge.telemetry.request import EndedRequest

if TYPE_CHECKING:
    from tokengauge.chat import ChatRunner
    from tokengauge.telemetry.export import Telemetry

log = logging.getLogger(__name__)
AUTOSAVE_CHECK_SECONDS: Final = 1.0
SEMCONV_OPT_IN: Final = "OTEL_SEMCONV_STABILITY_OPT_IN"
WARM_CHAT_WAIT: Final = 5.0
"""Seconds a shutdown waits for the chat path's warm-up (it takes 60–100 ms once started)."""
EARLY_LIMIT: Final = 256
"""Requests kept for telemetry while it starts, at most."""


def warm_chat_path() -> None:
    """Part of what the first chat of a server would otherwise pay before its request goes out
    (60–100 ms of 270–320 here): importing the chat package (the dialects, the send path) and
    the structure functions of a chat's parameters and parts, which cattrs writes on first use."""
    try:
        import tokengauge.chat  # noqa: F401  (for its side effect: the modules loaded)
        from tokengauge.messages import TextPart, structure

        message = {"role": "user", "content": [{"type": "text", "value": "warm"}]}
        params = {"requestId": "warm", "modelId": "warm", "messages": [message]}
        structure(params, protocol.ChatParams, "params")
        unstructure(TextPart("warm"), ChatPart)
    except Exception:
        log.exception("warming the chat path failed")


@attrs.define
class RawRequestMessage:
    """A JSON-RPC request whose params stay plain JSON, to be structured by the handler."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


class TokenGaugeProtocol(LanguageServerProtocol):
    """Leaves tokengauge's params as plain JSON (pygls would make namedtuples of them)."""

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        """Our requests keep raw params; everything else is pygls' business."""
        if method in protocol.REQUESTS:
            return RawRequestMessage
        return super().get_message_type(method)


class TokenGaugeServer(LanguageServer):
    """The language server; owns the `Gauge` once `initialize` has configured it."""

    def __init__(self) -> None:
        super().__init__(
            "tokengauge",
            __version__,
            protocol_cls=TokenGaugeProtocol,
            converter_factory=default_converter,
        )
        self._gauge: Gauge | None = None
        self._chats: ChatRunner | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._warming = False
        self._warm_chat: threading.Thread | None = None
        self._telemetry: Telemetry | None = None
        self._ended_early: list[EndedRequest] | None = None
        """Requests that ended while telemetry was starting (sent once it has)."""
        self.unasked: frozenset[str] = frozenset()
        """The ids of the default providers, when the person configured none: their failures
        are no news to them."""

    @property
    def gauge(self) -> Gauge:
        """The configured gauge; requests before `initialize` get a JSON-RPC error."""
        if self._gauge is None:
            raise JsonRpcServerNotInitialized("tokengauge has not been initialized yet")
        return self._gauge

    def configure(self, settings: ServerSettings, *, default_providers: bool = False) -> None:
        """Open the ledger and build the gauge (the encodings and the HTTP client come later);
        `default_providers`: the settings name no providers, so the defaults serve."""
        configure_logging(settings.log_level)
        self.unasked = (
            frozenset(p.id for p in DEFAULT_PROVIDERS) if default_providers else frozenset()
        )
        directory = Path(settings.storage_dir or platformdirs.user_cache_dir("tokengauge"))
        ledger = Ledger(directory / LEDGER_DIR, timings=timings_from_environment())
        self._gauge = Gauge(settings, ledger)
        log.info(
            "tokengauge %s: %d models, ledger %s%s",
            __version__,
            len(self._gauge.catalog),
            ledger.directory,
            "" if ledger.persistent else " (in memory: see the warning above)",
        )

    def start_telemetry(self) -> None:
        """Start OpenTelemetry in the background when the settings turn it on (the SDK is
        imported only then, off the loop)."""
        settings = self.gauge.settings.telemetry
        if not settings.enabled or self._ended_early is not None:
            return
        self._ended_early = []
        task = asyncio.get_running_loop().create_task(self._start_telemetry(settings))
        self._background.add(task)
        task.add_done_callback(self._background_done)

    async def _start_telemetry(self, settings: TelemetrySettings) -> None:
        def start() -> Telemetry:
            from tokengauge.telemetry.export import Telemetry

            return Telemetry(settings, os.environ.get(SEMCONV_OPT_IN, ""))

        try:
            self._telemetry = await asyncio.to_thread(start)
        except Exception as exc:
            log.warning("telemetry could not start (%s): requests are not traced", exc)
            self._ended_early = None
            return
        log.info("telemetry: each request's span and metrics go to %s", _where(settings))
        for ended in self._ended_early or []:
            self._telemetry.request_ended(ended)
        self._ended_early = None

    def request_ended(self, ended: EndedRequest) -> None:
        """Telemetry hears of a request that ended (if it is on)."""
        if self._telemetry is not None:
            self._telemetry.request_ended(ended)
        elif self._ended_early is not None and len(self._ended_early) < EARLY_LIMIT:
            self._ended_early.append(ended)

    def start_autosave(self) -> None:
        """Save the most asked strings when due, in the background: they outlive a crash, not
        only a clean shutdown."""
        task = asyncio.get_running_loop().create_task(self._autosave())
        self._background.add(task)
        task.add_done_callback(self._background_done)

    async def _autosave(self) -> None:
        while True:
            await asyncio.sleep(AUTOSAVE_CHECK_SECONDS)
            try:
                self.gauge.frequent.save_if_due()
            except Exception:
                log.exception("saving the most asked strings failed")

    def _background_done(self, task: asyncio.Task[None]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task ended: %s", task.exception())

    def warm_up(self) -> None:
        """Once: load in background threads the encodings a chat will need (Copilot's own, in
        which every answered request is also counted, and those of the offered models whose
        strings were counted before: another family's loads when first counted, each holds
        23–46 MiB) and the chat path (`warm_chat_path`); read what the local servers have loaded
        (models may have changed since)."""
        if self._warming or self._gauge is None:
            return
        self._warming = True
        gauge = self._gauge
        offered = [model.encoding for model in gauge.catalog]
        if offered:
            gauge.encodings.warm(gauge.counts.start_encodings(offered))
        self._warm_chat = threading.Thread(
            target=warm_chat_path, name="tokengauge-warm-chat", daemon=True
        )
        self._warm_chat.start()
        self.read_served()

    def read_served(self, provider_id: str | None = None, api_key: str | None = None) -> None:
        """Read in the background what the local servers (of one provider, if named, with its
        key) have loaded their models with; VS Code hears of a window that moved."""
        if self._gauge is None or not self._gauge.has_local_models():
            return
        reading = self.chats.read_all_served(provider_id, api_key)
        task = asyncio.get_running_loop().create_task(reading)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    @property
    def chats(self) -> ChatRunner:
        """The chat runner, built (with the HTTP client) when first needed; requests before
        `initialize` get a JSON-RPC error."""
        if self._chats is None:
            from tokengauge.chat import ChatRunner
            from tokengauge.upstream.http import Timeouts, make_client
            from tokengauge.upstream.retry import RetryPolicy

            gauge, settings = self.gauge, self.gauge.settings
            client = make_client(
                Timeouts(settings.connect_timeout, settings.idle_timeout, settings.response_timeout)
            )
            retry = RetryPolicy(settings.max_attempts, settings.retry_base_delay)
            self._chats = ChatRunner(
                gauge,
                client,
                ServerChatSink(self),
                retry,
                observer=self.request_ended if settings.telemetry.enabled else None,
                capture_content=settings.telemetry.capture_content,
            )
        return self._chats

    def send_status(self) -> None:
        """Notify the extension of the current status-bar content."""
        self.protocol.notify(protocol.STATUS, unstructure(self.gauge.bar.status()))

    def send_models_changed(self) -> None:
        """Tell the extension to ask for the models again."""
        self.protocol.notify(protocol.MODELS_CHANGED, {})

    def send_activity(self) -> None:
        """Tell the extension the usage history has a new request."""
        self.protocol.notify(protocol.ACTIVITY, {})

    def send_calibration(self, model_id: str) -> None:
        """Tell the extension a model's scales and the epoch (its memo follows at once)."""
        gauge = self.gauge
        scales = gauge.counts.scales(gauge.offer.model(model_id))
        payload = ModelScales(model_id, scales, gauge.epoch)
        self.protocol.notify(protocol.CALIBRATION, unstructure(payload))

    async def shutdown_state(self) -> None:
        """Stop the background tasks; let the chat path's warm-up end (its imports write the
        bytecode every later start reads: cut off, the next start compiles them again); close the
        HTTP connections and the ledger."""
        for task in list(self._background):
            task.cancel()
        if self._warm_chat is not None:
            await asyncio.to_thread(self._warm_chat.join, WARM_CHAT_WAIT)
        if self._chats is not None:
            await self._chats.client.aclose()
        if self._telemetry is not None:
            await asyncio.to_thread(self._telemetry.shutdown)
        if self._gauge is not None:
            self._gauge.frequent.save()
            self._gauge.ledger.close()


@attrs.frozen
class ServerChatSink:
    """Sends a chat's parts and status to the client as notifications."""

    server: TokenGaugeServer

    def part(self, request_id: str, part: ChatPart) -> None:
        """One `tokenGauge/chatPart` notification."""
        payload = ChatPartParams(request_id, part)
        self.server.protocol.notify(protocol.CHAT_PART, unstructure(payload))

    def status(self, status: Status) -> None:
        """One `tokenGauge/status` notification."""
        self.server.protocol.notify(protocol.STATUS, unstructure(status))

    def models_changed(self) -> None:
        """One `tokenGauge/modelsChanged` notification."""
        self.server.send_models_changed()

    def calibration_changed(self, model_id: str) -> None:
        """One `tokenGauge/calibration` notification."""
        self.server.send_calibration(model_id)

    def activity(self) -> None:
        """One `tokenGauge/activity` notification."""
        self.server.send_activity()

    def notice(self, message: str, setting: str | None) -> None:
        """One `tokenGauge/notice` notification."""
        self.server.protocol.notify(protocol.NOTICE, unstructure(Notice(message, setting)))


def _where(settings: TelemetrySettings) -> str:
    """Where telemetry goes, for the log (the endpoint's host only: no path, no credentials)."""
    if settings.endpoint is None:
        return "the collector of OTEL_EXPORTER_OTLP_* (default http://localhost:4318)"
    parts = urlsplit(settings.endpoint)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"
