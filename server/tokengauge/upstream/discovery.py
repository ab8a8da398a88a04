"""Model discovery: what a provider serves and, where its API says, each model's window.

`GET {baseUrl}/models` for every OpenAI-compatible provider, reading the sizes the gateways add
(OpenRouter `context_length` and `top_provider`, Vercel AI Gateway `context_window`/`max_tokens`,
LiteLLM-style `max_input_tokens`). Ollama's `/api/show` gives `<arch>.context_length`; a LiteLLM
proxy's `/model/info` gives `max_input_tokens`. `discover_providers` asks every provider with
`discover` on, each with its own key; a failure is logged and reported with its reason, never
raised: discovery only adds to configuration, it never blocks a chat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
import httpx

from tokengauge.messages import InvalidInput
from tokengauge.models.catalog import DiscoveredModel
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.dialects import provider_headers
from tokengauge.upstream.errors import UpstreamError
from tokengauge.upstream.http import get_json, join_url, server_root, timeouts_of
from tokengauge.upstream.redact import redact

log = logging.getLogger(__name__)

OLLAMA_PORT = 11434
OLLAMA_SHOW_CONCURRENCY = 4


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _smallest(*values: Any) -> int | None:
    found = [v for v in map(_positive_int, values) if v is not None]
    return min(found) if found else None


def parse_model_entry(entry: Any) -> DiscoveredModel | None:
    """One entry of a `/models` list in any of the known shapes."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
        return None
    top = entry.get("top_provider")
    top = top if isinstance(top, Mapping) else {}
    # OpenRouter: the model's window can exceed what the serving provider accepts; take the lower.
    window = _smallest(
        entry.get("context_length"),
        top.get("context_length"),
        entry.get("context_window"),
        entry.get("max_input_tokens"),
        entry.get("max_model_len"),  # vLLM
    )
    output = _smallest(
        top.get("max_completion_tokens"), entry.get("max_tokens"), entry.get("max_output_tokens")
    )
    name = entry.get("name") if isinstance(entry.get("name"), str) else None
    return DiscoveredModel(entry["id"], name, window, output)


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
        found = _positive_int(info.get(f"{architecture}.context_length"))
        if found:
            return found
    return _smallest(*(v for k, v in info.items() if str(k).endswith(".context_length")))


def litellm_sizes(payload: Any) -> dict[str, DiscoveredModel]:
    """`/model/info` of a LiteLLM proxy: sizes by model name."""
    entries = payload.get("data") if isinstance(payload, Mapping) else None
    found: dict[str, DiscoveredModel] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("model_name"), str):
            continue
        info = entry.get("model_info")
        info = info if isinstance(info, Mapping) else {}
        window = _positive_int(info.get("max_input_tokens"))
        # `max_tokens` is LiteLLM's legacy name for the output cap.
        output = _smallest(info.get("max_output_tokens"), info.get("max_tokens"))
        found[entry["model_name"]] = DiscoveredModel(entry["model_name"], None, window, output)
    return found


def is_ollama(provider: ProviderSettings) -> bool:
    """Ollama by name or by its default port."""
    return (
        provider.id.lower().startswith("ollama") or urlsplit(provider.base_url).port == OLLAMA_PORT
    )


async def _fill_from_ollama(
    client: httpx.AsyncClient, root: str, headers: Mapping[str, str], models: list[DiscoveredModel]
) -> list[DiscoveredModel]:
    gate = asyncio.Semaphore(OLLAMA_SHOW_CONCURRENCY)

    async def fill(model: DiscoveredModel) -> DiscoveredModel:
        if model.context_window is not None:
            return model
        async with gate:
            try:
                show = await get_json(
                    client,
                    "POST",
                    join_url(root, "api/show"),
                    body={"model": model.id},
                    headers=headers,
                )
            except (httpx.HTTPError, UpstreamError) as exc:
                log.debug("ollama /api/show %s failed: %s", model.id, exc)
                return model
        return attrs.evolve(model, context_window=ollama_context_length(show))

    return list(await asyncio.gather(*(fill(model) for model in models)))


async def _fill_from_litellm(
    client: httpx.AsyncClient, root: str, headers: Mapping[str, str], models: list[DiscoveredModel]
) -> list[DiscoveredModel]:
    try:
        sizes = litellm_sizes(
            await get_json(client, "GET", join_url(root, "model/info"), headers=headers)
        )
    except (httpx.HTTPError, UpstreamError):
        return models  # not a LiteLLM proxy
    return [
        attrs.evolve(
            model,
            context_window=model.context_window or sizes[model.id].context_window,
            max_output_tokens=model.max_output_tokens or sizes[model.id].max_output_tokens,
        )
        if model.id in sizes
        else model
        for model in models
    ]


async def discover_models(
    client: httpx.AsyncClient, provider: ProviderSettings, headers: Mapping[str, str]
) -> list[DiscoveredModel]:
    """List the provider's models with their sizes; raises `httpx.HTTPError` / `UpstreamError`."""
    url = join_url(provider.base_url, "models" if provider.dialect == "openai" else "v1/models")
    payload = await get_json(client, "GET", url, headers=headers)
    if not isinstance(payload, list) and not (
        isinstance(payload, Mapping) and isinstance(payload.get("data"), list)
    ):
        raise UpstreamError(f"{url} did not answer with a model list")
    models = parse_models_list(payload)
    root = server_root(provider.base_url)
    if any(model.context_window is None for model in models):
        if is_ollama(provider):
            models = await _fill_from_ollama(client, root, headers, models)
        else:
            models = await _fill_from_litellm(client, root, headers, models)
    return models


@attrs.frozen
class Listing:
    """What one provider's discovery came to: the models it lists, or why it could not say."""

    provider_id: str
    models: list[DiscoveredModel] | None = None
    error: str | None = None


async def discover_providers(
    client: httpx.AsyncClient,
    providers: Iterable[ProviderSettings],
    keys: Mapping[str, str | None],
) -> list[Listing]:
    """Ask each provider with `discover` on, with its key from `keys` (by provider id)."""
    listings: list[Listing] = []
    for provider in providers:
        if not provider.discover:
            continue
        key = keys.get(provider.id)
        limit = timeouts_of(client).listing
        reason: str | None = None
        try:
            models = await asyncio.wait_for(
                discover_models(client, provider, provider_headers(provider, key)), limit
            )
        except asyncio.TimeoutError:
            reason = f"no complete answer within {limit:g} s"
        except (httpx.HTTPError, UpstreamError, InvalidInput) as exc:
            reason = redact(f"{type(exc).__name__}: {exc}", key)
        if reason is not None:
            log.warning(
                "model discovery for %s failed (%s); using configured models", provider.id, reason
            )
            listings.append(Listing(provider.id, error=reason))
            continue
        sized = sum(1 for model in models if model.context_window)
        log.info("%s lists %d models (%d with a window size)", provider.id, len(models), sized)
        listings.append(Listing(provider.id, models))
    return listings
