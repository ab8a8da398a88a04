"""Model discovery: what a provider serves and, where its API says, each model's window.

`GET {baseUrl}/models` for every provider, reading the sizes the gateways add (OpenRouter
`context_length` and `top_provider`, Vercel AI Gateway `context_window`/`max_tokens`,
LiteLLM-style `max_input_tokens`, vLLM's `max_model_len`, llama.cpp's `meta.n_ctx_train`). Only
where the list lacks sizes, and only of the servers that have them: Ollama's `/api/show` gives
`<arch>.context_length`, LM Studio's `/api/v0/models` `max_context_length`, a LiteLLM proxy's
`/model/info` gives `max_input_tokens` (other servers answer those paths with 404s in their
logs). These are the models' own windows; what a local server has loaded is `upstream.served`'s.
Prices where the list gives them: OpenRouter's `pricing`, a LiteLLM proxy's `/model/info` costs
(both in US dollars per token, kept per million tokens as `settings.Pricing`). A window, output
cap or price beyond `settings`' bounds is not taken (as if not listed).
`discover_providers` asks every provider of settings with `discover` on, each with its own key;
a failure is logged and reported in words a person can act on, never raised: discovery only adds
to configuration, it never blocks a chat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx

from tokengauge.messages import InvalidInput
from tokengauge.models.catalog import DiscoveredModel
from tokengauge.settings import MIN_WINDOW, Pricing, ProviderSettings, is_price, token_count
from tokengauge.upstream.dialects.dialect import provider_headers
from tokengauge.upstream.errors import HttpStatusError, StreamStalled, UpstreamError
from tokengauge.upstream.explain import explain
from tokengauge.upstream.http import get_json, join_url, json_or_none, server_root, timeouts_of
from tokengauge.upstream.presets import preset_of
from tokengauge.upstream.redact import provider_secrets, redact

log = logging.getLogger(__name__)

OLLAMA_SHOW_CONCURRENCY = 4


def _window(value: Any) -> int | None:
    return token_count(value, MIN_WINDOW)


def _output(value: Any) -> int | None:
    return token_count(value, 1)


def _smallest(size: Callable[[Any], int | None], *values: Any) -> int | None:
    found = [v for v in map(size, values) if v is not None]
    return min(found) if found else None


def _per_m_tok(value: Any) -> float | None:
    """A price per token (a number, or OpenRouter's decimal string) per million tokens; None
    for anything else, a negative price (OpenRouter's `-1`: it varies) or one beyond
    `settings.is_price` included."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    per_m_tok = value * 1_000_000
    return per_m_tok if is_price(per_m_tok) else None


def priced(
    input_: Any, output: Any, cache_read: Any, cache_write: Any, reasoning: Any
) -> Pricing | None:
    """Per-token prices as `Pricing`; None without both an input and an output price. A zero
    reasoning price is read as none (OpenRouter lists `internal_reasoning: "0"` for models that
    bill reasoning as output)."""
    input_price, output_price = _per_m_tok(input_), _per_m_tok(output)
    if input_price is None or output_price is None:
        return None
    return Pricing(
        input_per_m_tok=input_price,
        output_per_m_tok=output_price,
        cached_input_per_m_tok=_per_m_tok(cache_read),
        cache_write_per_m_tok=_per_m_tok(cache_write),
        reasoning_per_m_tok=_per_m_tok(reasoning) or None,
    )


def openrouter_pricing(entry: Mapping[str, Any]) -> Pricing | None:
    """An OpenRouter `/models` entry's `pricing` (`prompt`, `completion`, `input_cache_read`,
    `input_cache_write`, `internal_reasoning`)."""
    raw = entry.get("pricing")
    if not isinstance(raw, Mapping):
        return None
    return priced(
        raw.get("prompt"),
        raw.get("completion"),
        raw.get("input_cache_read"),
        raw.get("input_cache_write"),
        raw.get("internal_reasoning"),
    )


def litellm_pricing(info: Mapping[str, Any]) -> Pricing | None:
    """A LiteLLM `model_info`'s costs per token."""
    return priced(
        info.get("input_cost_per_token"),
        info.get("output_cost_per_token"),
        info.get("cache_read_input_token_cost"),
        info.get("cache_creation_input_token_cost"),
        info.get("output_cost_per_reasoning_token"),
    )


def parse_model_entry(entry: Any) -> DiscoveredModel | None:
    """One entry of a `/models` list in any of the known shapes."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
        return None
    top = entry.get("top_provider")
    top = top if isinstance(top, Mapping) else {}
    meta = entry.get("meta")
    meta = meta if isinstance(meta, Mapping) else {}
    # OpenRouter: the model's window can exceed what the serving provider accepts; take the lower.
    window = _smallest(
        _window,
        entry.get("context_length"),
        top.get("context_length"),
        entry.get("context_window"),
        entry.get("max_input_tokens"),
        entry.get("max_model_len"),  # vLLM
        meta.get("n_ctx_train"),  # llama.cpp's own (it serves `n_ctx`: `upstream.served`)
    )
    output = _smallest(
        _output,
        top.get("max_completion_tokens"),
        entry.get("max_tokens"),
        entry.get("max_output_tokens"),
    )
    name = entry.get("name") if isinstance(entry.get("name"), str) else None
    return DiscoveredModel(entry["id"], name, window, output, openrouter_pricing(entry))


def parse_models_list(payload: Any) -> list[DiscoveredModel]:
    """`{"data": [...]}` (OpenAI style) or a bare list; an id listed twice counts once (the
    first entry)."""
    entries = payload.get("data") if isinstance(payload, Mapping) else payload
    if not isinstance(entries, list):
        return []
    models: dict[str, DiscoveredModel] = {}
    for model in map(parse_model_entry, entries):
        if model is not None:
            models.setdefault(model.id, model)
    return list(models.values())


def ollama_context_length(show: Any) -> int | None:
    """`model_info["<architecture>.context_length"]` from an Ollama `/api/show` answer."""
    info = show.get("model_info") if isinstance(show, Mapping) else None
    if not isinstance(info, Mapping):
        return None
    architecture = info.get("general.architecture")
    if isinstance(architecture, str):
        found = _window(info.get(f"{architecture}.context_length"))
        if found:
            return found
    return _smallest(_window, *(v for k, v in info.items() if str(k).endswith(".context_length")))


def litellm_sizes(payload: Any) -> dict[str, DiscoveredModel]:
    """`/model/info` of a LiteLLM proxy: sizes and prices by model name."""
    entries = payload.get("data") if isinstance(payload, Mapping) else None
    found: dict[str, DiscoveredModel] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("model_name"), str):
            continue
        info = entry.get("model_info")
        info = info if isinstance(info, Mapping) else {}
        window = _window(info.get("max_input_tokens"))
        # `max_tokens` is LiteLLM's legacy name for the output cap.
        output = _smallest(_output, info.get("max_output_tokens"), info.get("max_tokens"))
        found[entry["model_name"]] = DiscoveredModel(
            entry["model_name"], None, window, output, litellm_pricing(info)
        )
    return found


def models_url(provider: ProviderSettings) -> str:
    """Where the provider lists its models (Anthropic's base URL may lack its `/v1`)."""
    if provider.dialect == "anthropic" and not _ends_in_v1(provider.base_url):
        return join_url(provider.base_url, "v1/models")
    return join_url(provider.base_url, "models")


def _ends_in_v1(url: str) -> bool:
    return urlsplit(url).path.rstrip("/").endswith("/v1")


def is_litellm(headers: Mapping[str, str]) -> bool:
    """A LiteLLM proxy's answer: it carries an `x-litellm-*` header."""
    return any(name.lower().startswith("x-litellm-") for name in headers)


async def _fill_from_ollama(
    client: httpx.AsyncClient, root: str, headers: Mapping[str, str], models: list[DiscoveredModel]
) -> list[DiscoveredModel]:
    gate = asyncio.Semaphore(OLLAMA_SHOW_CONCURRENCY)

    async def fill(model: DiscoveredModel) -> DiscoveredModel:
        if model.context_window is not None:
            return model
        async with gate:
            url = join_url(root, "api/show")
            show = await json_or_none(client, url, headers=headers, body={"model": model.id})
        return attrs.evolve(model, context_window=ollama_context_length(show))

    return list(await asyncio.gather(*(fill(model) for model in models)))


async def _fill_from_litellm(
    client: httpx.AsyncClient, root: str, headers: Mapping[str, str], models: list[DiscoveredModel]
) -> list[DiscoveredModel]:
    sizes = litellm_sizes(await json_or_none(client, join_url(root, "model/info"), headers=headers))
    return [
        attrs.evolve(
            model,
            context_window=model.context_window or sizes[model.id].context_window,
            max_output_tokens=model.max_output_tokens or sizes[model.id].max_output_tokens,
            pricing=model.pricing or sizes[model.id].pricing,
        )
        if model.id in sizes
        else model
        for model in models
    ]


async def _fill_from_lmstudio(
    client: httpx.AsyncClient, root: str, headers: Mapping[str, str], models: list[DiscoveredModel]
) -> list[DiscoveredModel]:
    """LM Studio's `/api/v0/models` gives each model's own window (`max_context_length`)."""
    listing = await json_or_none(client, join_url(root, "api/v0/models"), headers=headers)
    entries = listing.get("data") if isinstance(listing, Mapping) else None
    listed = entries if isinstance(entries, list) else []
    windows = {
        entry.get("id"): _window(entry.get("max_context_length"))
        for entry in listed
        if isinstance(entry, Mapping)
    }
    return [
        attrs.evolve(model, context_window=model.context_window or windows.get(model.id))
        for model in models
    ]


async def discover_models(
    client: httpx.AsyncClient, provider: ProviderSettings, headers: Mapping[str, str]
) -> list[DiscoveredModel]:
    """List the provider's models with their sizes (`upstream.errors` says what may fail):
    Ollama's `/api/show` fills in windows for an Ollama, `/model/info` for a LiteLLM proxy
    (by its preset, or by the `x-litellm-*` headers of its list), nobody else is asked."""
    answer = await get_json(client, "GET", models_url(provider), headers=headers)
    payload = answer.data
    if not isinstance(payload, list) and not (
        isinstance(payload, Mapping) and isinstance(payload.get("data"), list)
    ):
        raise UpstreamError("the answer is not a model list")
    models = await asyncio.to_thread(parse_models_list, payload)  # a list may hold 100,000
    if all(model.context_window is not None for model in models):
        return models
    preset = preset_of(provider)
    sizing = preset.sizing if preset is not None else "plain"
    root = server_root(provider.base_url)
    if sizing == "ollama":
        return await _fill_from_ollama(client, root, headers, models)
    if sizing == "litellm" or is_litellm(answer.headers):
        return await _fill_from_litellm(client, root, headers, models)
    if sizing == "lmstudio":
        return await _fill_from_lmstudio(client, root, headers, models)
    return models


@attrs.frozen
class Listing:
    """What one provider's discovery came to: the models it lists, or why it could not say."""

    provider_id: str
    models: list[DiscoveredModel] | None = None
    error: str | None = None
    key_rejected: bool = False
    """The provider turned the key down, or asked for one (401/403): a person should set it."""


async def list_provider(
    client: httpx.AsyncClient, provider: ProviderSettings, key: str | None, *, asked: bool = True
) -> Listing:
    """Ask one provider for its models with `key`; a failure is said in words and logged, as a
    warning unless nobody `asked` for the provider (a default, such as a local Ollama)."""
    url = models_url(provider)
    limit = timeouts_of(client).listing
    rejected = False
    try:
        models = await asyncio.wait_for(
            discover_models(client, provider, provider_headers(provider, key)), limit
        )
    except asyncio.TimeoutError:
        stalled = StreamStalled(f"did not list its models within {limit:g} s")
        reason = explain(provider, url, stalled)
    except InvalidInput as exc:
        reason = redact(str(exc), *provider_secrets(provider, key))
    except UpstreamError as exc:
        reason = explain(provider, url, exc, key=key)
        rejected = isinstance(exc, HttpStatusError) and exc.refuses_key
    else:
        sized = sum(1 for model in models if model.context_window)
        log.info("%s lists %d models (%d with a window size)", provider.id, len(models), sized)
        return Listing(provider.id, models)
    log.log(
        logging.WARNING if asked else logging.DEBUG,
        "model discovery for %s failed: %s Using the configured models.",
        provider.id,
        reason,
    )
    return Listing(provider.id, error=reason, key_rejected=rejected)


async def discover_providers(
    client: httpx.AsyncClient,
    providers: Iterable[ProviderSettings],
    keys: Mapping[str, str | None],
    unasked: Collection[str] = (),
) -> list[Listing]:
    """Ask each provider of settings with `discover` on, with its key from `keys` (by provider
    id; `unasked`: the ids of defaults the person never configured); Manage Models' providers
    are asked when they are added (`list_provider`)."""
    return [
        await list_provider(
            client, provider, keys.get(provider.id), asked=provider.id not in unasked
        )
        for provider in providers
        if provider.discover and not provider.managed
    ]
