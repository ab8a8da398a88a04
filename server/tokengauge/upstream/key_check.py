"""Whether a provider takes an API key: one cheap request with it, and the verdict in words.

The request is the model list, or what the provider's preset names instead (OpenRouter lists its
models to anyone, so its `GET /key` is asked). A 2xx answer accepts the key, 401/403 rejects it,
anything else (unreachable, timeout, 5xx, an answer that is not JSON) cannot tell; the message
says which, names the provider and the URL, and never holds the key.
"""

from __future__ import annotations

import asyncio

import httpx

from tokengauge.messages import InvalidInput
from tokengauge.protocol import CheckKeyResult
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.dialects.dialect import provider_headers
from tokengauge.upstream.discovery import models_url
from tokengauge.upstream.errors import HttpStatusError, StreamStalled, UpstreamError
from tokengauge.upstream.explain import explain
from tokengauge.upstream.http import get_json, join_url, timeouts_of
from tokengauge.upstream.presets import preset_of
from tokengauge.upstream.redact import provider_secrets, redact


def key_check_url(provider: ProviderSettings) -> str:
    """The cheap request that needs the key."""
    preset = preset_of(provider)
    if preset is not None and preset.key_check == "key":
        return join_url(provider.base_url, "key")
    return models_url(provider)


async def check_key(
    client: httpx.AsyncClient, provider: ProviderSettings, key: str
) -> CheckKeyResult:
    """Ask the provider once with `key` (an empty key: none)."""
    url = key_check_url(provider)
    limit = timeouts_of(client).listing
    try:
        headers = provider_headers(provider, key or None)
    except InvalidInput as exc:
        return CheckKeyResult(False, redact(str(exc), *provider_secrets(provider, key)))
    try:
        await asyncio.wait_for(get_json(client, "GET", url, headers=headers), limit)
    except asyncio.TimeoutError:
        stalled = StreamStalled(f"did not answer within {limit:g} s")
        return CheckKeyResult(None, explain(provider, url, stalled))
    except UpstreamError as exc:
        rejected = isinstance(exc, HttpStatusError) and exc.refuses_key
        return CheckKeyResult(False if rejected else None, explain(provider, url, exc, key=key))
    return CheckKeyResult(True, redact(_answered(provider, url, key), *provider_secrets(provider)))


def _answered(provider: ProviderSettings, url: str, key: str) -> str:
    """What a provider that answered made of `key`."""
    if key:
        return f"{provider.id} accepted the key at {url}."
    preset = preset_of(provider)
    if preset is not None and not preset.needs_key:
        return f"{provider.id} answered at {url}; it needs no API key."
    return f"{provider.id} answered at {url} without an API key."
