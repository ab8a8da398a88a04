"""The tokengauge language server: ARCHITECTURE §3's custom methods over stdio.

One handler per method, below: each only converts parameters, calls the `TokenGaugeServer` that
owns the state (`lsp.state`), and sends notifications. Bad parameters come back as
`JsonRpcInvalidParams` with a message a person can act on, and the server keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tokengauge import protocol
from tokengauge.jsontext import TreeError, check_tree
from tokengauge.lsp.logs import configure_logging, forward_to_client
from tokengauge.lsp.state import TokenGaugeServer
from tokengauge.lsp.stdio import serve_stdio
from tokengauge.messages import InvalidInput, structure, unstructure
from tokengauge.models.catalog import UnknownModelError
from tokengauge.protocol import (
    AddProviderParams,
    AddProviderResult,
    ChatParams,
    CheckKeyParams,
    CountTokensParams,
    DiscoverModelsParams,
    DiscoverModelsResult,
    ProviderDiscovery,
    RecordErrorParams,
    RecordUsageParams,
    WarmCountsParams,
)
from tokengauge.settings import ProviderSettings, parse_provider, parse_settings

if TYPE_CHECKING:
    import httpx

    from tokengauge.upstream.discovery import Listing

log = logging.getLogger(__name__)
P = TypeVar("P")
WARM_AFTER_INITIALIZED_SECONDS: Final = 2.0
"""When the encodings load if the extension has not asked for the models by then."""


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


def initialize(ls: TokenGaugeServer, params: types.InitializeParams) -> None:
    """Configure the server from the extension's settings and start its background work."""
    forward_to_client(ls)
    options = params.initialization_options
    named = isinstance(options, dict) and "providers" in options
    ls.configure(parse_settings(options), default_providers=not named)
    ls.start_autosave()
    ls.start_telemetry()


def initialized(ls: TokenGaugeServer, params: types.InitializedParams) -> None:
    """Show the status, and load the encodings a moment later if the models are not asked."""
    ls.send_status()
    loop = asyncio.get_running_loop()
    loop.call_later(WARM_AFTER_INITIALIZED_SECONDS, ls.warm_up)


async def shutdown(ls: TokenGaugeServer, *_: Any) -> None:
    """Stop the background work and close the connections and the ledger."""
    await ls.shutdown_state()


async def models(ls: TokenGaugeServer, params: Any) -> list[Any]:
    """`tokenGauge/models`: every configured model, as VS Code is to offer it."""
    # Runs once the answer is written: loading the encodings must not delay it.
    asyncio.get_running_loop().call_soon(ls.warm_up)
    # Off the loop, as a listing's models are taken: a provider may list 100,000.
    return await asyncio.to_thread(lambda: [unstructure(info) for info in ls.gauge.models()])


def count_tokens(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/countTokens`: counts for a model's strings and messages, in input order."""
    with invalid_params():
        request = params_as(params, CountTokensParams)
        return unstructure(ls.gauge.count(request.model_id, request.inputs))


def usage(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/usage`: the latest breakdown, per-model calibration and recent history."""
    return unstructure(ls.gauge.usage_report())


async def dashboard(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/dashboard`: the usage history summed for the dashboard."""
    # Off the loop: a month of a busy agent's history takes a while to read and sum, and
    # counts must not wait for it.
    data = await asyncio.to_thread(ls.gauge.dashboard())
    return data.to_json()


def record_usage(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/recordUsage`: learn from the usage a request the extension sent reported."""
    with invalid_params():
        request = params_as(params, RecordUsageParams)
        result = ls.gauge.record_usage(request)
    ls.send_calibration(request.model_id)
    if result.models_changed:
        ls.send_models_changed()
    ls.send_status()
    ls.send_activity()
    return unstructure(result)


def record_error(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/recordError`: learn from an error a request the extension sent got."""
    with invalid_params():
        request = params_as(params, RecordErrorParams)
        result = ls.gauge.record_error(request)
    ls.send_calibration(request.model_id)
    if result.models_changed:
        ls.send_models_changed()
    ls.send_activity()
    return unstructure(result)


def warm_counts(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/warmCounts`: raw counts of the most asked strings for each model named."""
    with invalid_params():
        request = params_as(params, WarmCountsParams)
        return unstructure(ls.gauge.warm_counts(request.model_ids))


async def discover(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/discoverModels`: list the providers' models and offer them."""
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


async def add_provider(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/addProvider`: add a provider the person entered, with its models."""
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


async def check_key(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/checkKey`: ask the provider once with the key a person entered."""
    with invalid_params():
        request = params_as(params, CheckKeyParams)
        provider = ls.gauge.offer.provider(request.provider_id)
    from tokengauge.upstream import key_check

    return unstructure(await key_check.check_key(ls.chats.client, provider, request.api_key))


async def chat(ls: TokenGaugeServer, params: Any) -> Any:
    """`tokenGauge/chat`: stream one response (`chat.ChatRunner`); its result."""
    from tokengauge.chat import ChatError

    with invalid_params():
        request = params_as(params, ChatParams)
        try:
            return unstructure(await ls.chats.run(request))
        except ChatError as exc:
            log.warning("chat %s failed (%s): %s", request.request_id, exc.kind, exc.message)
            raise JsonRpcRequestFailed(exc.message, data={"kind": exc.kind}) from None


HANDLERS: Final[dict[str, Callable[..., Any]]] = {
    types.INITIALIZE: initialize,
    types.INITIALIZED: initialized,
    types.SHUTDOWN: shutdown,
    protocol.MODELS: models,
    protocol.COUNT_TOKENS: count_tokens,
    protocol.USAGE: usage,
    protocol.DASHBOARD: dashboard,
    protocol.RECORD_USAGE: record_usage,
    protocol.RECORD_ERROR: record_error,
    protocol.WARM_COUNTS: warm_counts,
    protocol.DISCOVER_MODELS: discover,
    protocol.ADD_PROVIDER: add_provider,
    protocol.CHECK_KEY: check_key,
    protocol.CHAT: chat,
}
"""The handler of each method the server answers."""


def create_server() -> TokenGaugeServer:
    """A server with every handler registered."""
    server = TokenGaugeServer()
    for method, handler in HANDLERS.items():
        server.feature(method)(handler)
    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client says exit."""
    configure_logging()
    serve_stdio(create_server())
