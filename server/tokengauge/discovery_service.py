"""Refreshing every provider's discovered models, with the keys the extension passes along."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import httpx

from tokengauge.gauge import Gauge
from tokengauge.messages import InvalidInput
from tokengauge.protocol import Credentials
from tokengauge.upstream.dialects import provider_headers
from tokengauge.upstream.discovery import discover_models
from tokengauge.upstream.errors import UpstreamError
from tokengauge.upstream.http import timeouts_of
from tokengauge.upstream.redact import redact

log = logging.getLogger(__name__)


async def refresh_discovery(
    gauge: Gauge, client: httpx.AsyncClient, credentials: Mapping[str, Credentials]
) -> tuple[list[dict[str, Any]], bool]:
    """Ask each provider with `discover` on: a report per provider, and whether models changed.

    A failure keeps what was discovered before (and configuration), with a logged warning.
    """
    report: list[dict[str, Any]] = []
    changed = False
    for provider in gauge.settings.providers:
        if not provider.discover:
            continue
        key = credentials.get(provider.id, Credentials()).api_key
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
            report.append({"providerId": provider.id, "models": None, "error": reason})
            continue
        changed |= gauge.apply_discovery(provider.id, models)
        sized = sum(1 for model in models if model.context_window)
        log.info("%s lists %d models (%d with a window size)", provider.id, len(models), sized)
        report.append({"providerId": provider.id, "models": len(models), "error": None})
    return report, changed
