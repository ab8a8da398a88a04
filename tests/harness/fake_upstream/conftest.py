"""Fixtures for the upstream's own tests: a running upstream and an httpx client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream


@pytest.fixture
async def upstream() -> AsyncIterator[Upstream]:
    """A default upstream on 127.0.0.1:<free port> (its ``config`` is live: mutate it)."""
    async with running_upstream(UpstreamConfig()) as up:
        yield up


@pytest.fixture
async def http(upstream: Upstream) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client for ``upstream`` (real loopback HTTP)."""
    async with httpx.AsyncClient(base_url=upstream.base_url, timeout=10) as client:
        yield client
