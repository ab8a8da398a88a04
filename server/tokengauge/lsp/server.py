"""The tokengauge language server: ARCHITECTURE §3's custom methods over stdio.

`TokenGaugeServer` owns the state (one `Gauge`: encodings, ledger, calibration, models); the
handlers below only convert parameters, call it, and send notifications. Bad parameters come back
as `JsonRpcInvalidParams` with a message a person can act on, and the server keeps serving.

Ready fast: `initialize` and the first `tokenGauge/models` need only the ledger and the model
table. The chat and upstream machinery (httpx and its TLS context) loads with the first request
that needs it, and the encodings load in the background once the models are answered (or a
moment after `initialized` if they are not asked for).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar
from urllib.parse import urlsplit

import attrs
import platformdirs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcServerNotInitialized
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter

from tokengauge import __version__, protocol
from tokengauge.gauge import Gauge
from tokengauge.jsontext import TreeError, check_tree
from tokengauge.ledger.disk import timings_from_environment
from tokengauge.ledger.store import LEDGER_DIR, Ledger
from tokengauge.lsp.logs import configure_logging, forward_to_client
from tokengauge.lsp.stdio import serve_stdio
from tokengauge.messages import InvalidInput, structure, unstructure
from tokengauge.models.catalog import UnknownModelError
from tokengauge.protocol import (
    AddProviderParams,
    AddProviderResult,
    ChatParams,
    ChatPart,
    ChatPartParams,
    CheckKeyParams,
    CountTokensParams,
    DiscoverModelsParams,
    DiscoverModelsResult,
    ModelScales,
    Notice,
    ProviderDiscovery,
    RecordErrorParams,
    RecordUsageParams,
    Status,
    WarmCountsParams,
)
from tokengauge.settings import (
    DEFAULT_PROVIDERS,
    ProviderSettings,
    ServerSettings,
    TelemetrySettings,
    parse_provider,
    parse_settings,
)
from tokengauge.telemetry.request import EndedRequest

if TYPE_CHECKING:
    import httpx

    from tokengauge.chat import ChatRunner
    from tokengauge.telemetry.export import Telemetry
    from tokengauge.upstream.discovery import Listing

log = logging.getLogger(__name__)
P = TypeVar("P")
AUTOSAVE_CHECK_SECONDS: Final = 1.0
WARM_AFTER_INITIALIZED_SECONDS: Final = 2.0
"""When the encodings load if the extension has not asked for the models by then."""
SEMCONV_OPT_IN: Final = "OTEL_SEMCONV_STABILITY_OPT_IN"
EARLY_LIMIT: Final = 256
"""Requests kept for telemetry while it starts, at most."""


async def discover_providers(
    client: httpx.AsyncClient,
    providers: Iterable[ProviderSettings],
    keys: Mapping[str, str | None],
    unasked: Collection[str],
) -> list[Listing]:
    """`upstream.discovery.discover_providers`, loaded with its first use (it brings httpx)."""
    from tokengauge.upstream import discovery

    return await discovery.discover_providers(client, providers, keys, unasked)


class JsonRpcRequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was valid but could not be carried out."""

    CODE = -32803
    MESSAGE = "request failed"


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

    def warm_encodings(self) -> None:
        """Load the models' encodings in a background thread (once); read what the local
        servers have loaded (a new session: models may have been loaded or reloaded since)."""
        if self._warming or self._gauge is None:
            return
        self._warming = True
        self._gauge.encodings.warm(model.encoding for model in self._gauge.catalog)
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
        self.protocol.notify(protocol.STATUS, unstructure(self.gauge.status()))

    def send_models_changed(self) -> None:
        """Tell the extension to ask for the models again."""
        self.protocol.notify(protocol.MODELS_CHANGED, {})

    def send_activity(self) -> None:
        """Tell the extension the usage history has a new request."""
        self.protocol.notify(protocol.ACTIVITY, {})

    def send_calibration(self, model_id: str) -> None:
        """Tell the extension a model's scales and the epoch (its memo follows at once)."""
        gauge = self.gauge
        scales = gauge.scales(gauge.model(model_id))
        payload = ModelScales(model_id, scales, gauge.epoch)
        self.protocol.notify(protocol.CALIBRATION, unstructure(payload))

    async def shutdown_state(self) -> None:
        """Stop the background tasks; close the HTTP connections and the ledger."""
        for task in list(self._background):
            task.cancel()
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


@contextlib.contextmanager
def invalid_params() -> Iterator[None]:
    """Report malformed params and unknown models as `JsonRpcInvalidParams`."""
    try:
        yield
    except (InvalidInput, UnknownModelError) as exc:
        log.warning("%s", exc)
        raise JsonRpcInvalidParams(str(exc)) from None


def params_as(params: Any, cls: type[P]) -> P:
    """Structure request params (call inside `invalid_params`): refused if they hold a number
    JSON cannot carry or nest deeper than the code that walks them can follow."""
    if params is None:
        raise InvalidInput(f"{cls.__name__}: params are missing")
    try:
        check_tree(params)
    except TreeError as exc:
        raise InvalidInput(f"invalid {exc}") from None
    return structure(params, cls, "params")


def _where(settings: TelemetrySettings) -> str:
    """Where telemetry goes, for the log (the endpoint's host only: no path, no credentials)."""
    if settings.endpoint is None:
        return "the collector of OTEL_EXPORTER_OTLP_* (default http://localhost:4318)"
    parts = urlsplit(settings.endpoint)
    return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"


def create_server() -> TokenGaugeServer:
    """A server with every handler registered."""
    server = TokenGaugeServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TokenGaugeServer, params: types.InitializeParams) -> None:
        forward_to_client(ls)
        options = params.initialization_options
        named = isinstance(options, dict) and "providers" in options
        ls.configure(parse_settings(options), default_providers=not named)
        ls.start_autosave()
        ls.start_telemetry()

    @server.feature(types.INITIALIZED)
    def initialized(ls: TokenGaugeServer, params: types.InitializedParams) -> None:
        ls.send_status()
        loop = asyncio.get_running_loop()
        loop.call_later(WARM_AFTER_INITIALIZED_SECONDS, ls.warm_encodings)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TokenGaugeServer, *_: Any) -> None:
        await ls.shutdown_state()

    @server.feature(protocol.MODELS)
    async def models(ls: TokenGaugeServer, params: Any) -> list[Any]:
        # Runs once the answer is written: loading the encodings must not delay it.
        asyncio.get_running_loop().call_soon(ls.warm_encodings)
        # Off the loop, as a listing's models are taken: a provider may list 100,000.
        return await asyncio.to_thread(lambda: [unstructure(info) for info in ls.gauge.models()])

    @server.feature(protocol.COUNT_TOKENS)
    def count_tokens(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params, CountTokensParams)
            return unstructure(ls.gauge.count(request.model_id, request.inputs))

    @server.feature(protocol.USAGE)
    def usage(ls: TokenGaugeServer, params: Any) -> Any:
        return unstructure(ls.gauge.usage_report())

    @server.feature(protocol.DASHBOARD)
    async def dashboard(ls: TokenGaugeServer, params: Any) -> Any:
        # Off the loop: a month of a busy agent's history takes a while to read and sum, and
        # counts must not wait for it.
        data = await asyncio.to_thread(ls.gauge.dashboard())
        return data.to_json()

    @server.feature(protocol.RECORD_USAGE)
    def record_usage(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params, RecordUsageParams)
            result = ls.gauge.record_usage(request)
        ls.send_calibration(request.model_id)
        if result.models_changed:
            ls.send_models_changed()
        ls.send_status()
        ls.send_activity()
        return unstructure(result)

    @server.feature(protocol.RECORD_ERROR)
    def record_error(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params, RecordErrorParams)
            result = ls.gauge.record_error(request)
        ls.send_calibration(request.model_id)
        if result.models_changed:
            ls.send_models_changed()
        ls.send_activity()
        return unstructure(result)

    @server.feature(protocol.WARM_COUNTS)
    def warm_counts(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params, WarmCountsParams)
            return unstructure(ls.gauge.warm_counts(request.model_ids))

    @server.feature(protocol.DISCOVER_MODELS)
    async def discover(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params or {}, DiscoverModelsParams)
        keys = {provider: c.api_key for provider, c in request.credentials.items()}
        listings = await discover_providers(
            ls.chats.client, ls.gauge.settings.providers, keys, ls.unasked
        )
        changed = False
        for listing in listings:
            if listing.models is not None:
                # Off the loop: the catalog is built anew, and counts must not wait for it.
                apply = ls.gauge.apply_discovery
                changed |= await asyncio.to_thread(apply, listing.provider_id, listing.models)
                ls.read_served(listing.provider_id, keys.get(listing.provider_id))
        if changed:
            ls.send_models_changed()
            ls.send_status()  # before any request, it counts the models ready
        reports = [
            ProviderDiscovery(
                listing.provider_id,
                None if listing.models is None else len(listing.models),
                listing.error,
                listing.key_rejected,
            )
            for listing in listings
        ]
        return unstructure(DiscoverModelsResult(reports))

    @server.feature(protocol.ADD_PROVIDER)
    async def add_provider(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params, AddProviderParams)
            entry = parse_provider(request.provider, "params.provider", managed=True)
            provider = ls.gauge.add_provider(entry)
        from tokengauge.upstream.discovery import list_provider

        listing = await list_provider(ls.chats.client, provider, request.api_key)
        if listing.models is not None:  # no modelsChanged: VS Code is asking for them already
            await asyncio.to_thread(ls.gauge.apply_discovery, provider.id, listing.models)
            ls.read_served(provider.id, request.api_key)
        catalog = ls.gauge.catalog
        models = await asyncio.to_thread(
            lambda: [ls.gauge.model_info(m) for m in catalog if m.provider.id == provider.id]
        )
        ls.send_status()  # before any request, it counts the models ready
        return unstructure(AddProviderResult(provider.id, models, listing.error))

    @server.feature(protocol.CHECK_KEY)
    async def check_key(ls: TokenGaugeServer, params: Any) -> Any:
        with invalid_params():
            request = params_as(params, CheckKeyParams)
            provider = ls.gauge.provider(request.provider_id)
        from tokengauge.upstream import key_check

        return unstructure(await key_check.check_key(ls.chats.client, provider, request.api_key))

    @server.feature(protocol.CHAT)
    async def chat(ls: TokenGaugeServer, params: Any) -> Any:
        from tokengauge.chat import ChatError

        with invalid_params():
            request = params_as(params, ChatParams)
            try:
                return unstructure(await ls.chats.run(request))
            except ChatError as exc:
                log.warning("chat %s failed (%s): %s", request.request_id, exc.kind, exc.message)
                raise JsonRpcRequestFailed(exc.message, data={"kind": exc.kind}) from None

    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    configure_logging()
    serve_stdio(create_server())
