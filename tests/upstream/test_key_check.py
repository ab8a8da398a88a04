"""upstream.key_check against the test upstream: one cheap request, and a verdict in words."""

from __future__ import annotations

import attrs
import pytest

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.helpers import closed_port
from tests.harness.fake_upstream.server import running_upstream
from tokengauge.protocol import CheckKeyResult
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.http import Timeouts, make_client
from tokengauge.upstream.key_check import check_key

GOOD = "sk-good-key-0123456789"
BAD = "sk-bad-key-9876543210"


async def checked(provider: ProviderSettings, key: str) -> CheckKeyResult:
    async with make_client(Timeouts(connect=2)) as client:
        return await check_key(client, provider, key)


@pytest.mark.parametrize(
    ("shape", "preset", "dialect", "path", "key", "accepted", "message"),
    [
        pytest.param(
            "openai",
            None,
            "openai",
            "/v1",
            GOOD,
            True,
            "up accepted the key at {url}.",
            id="openai",
        ),
        pytest.param(
            "openai",
            None,
            "openai",
            "/v1",
            BAD,
            False,
            "up rejected the API key at {url} (401 Unauthorized). Run 'Token Gauge: Set API Key' "
            "to enter a valid key for up.",
            id="openai-rejected",
        ),
        pytest.param(
            "anthropic",
            "anthropic",
            None,
            "",
            BAD,
            False,
            "up rejected the API key at {url} (401 Unauthorized). Run 'Token Gauge: Set API Key' "
            "to enter a valid key for up.",
            id="anthropic-rejected",
        ),
        pytest.param(
            "anthropic",
            "anthropic",
            None,
            "",
            GOOD,
            True,
            "up accepted the key at {url}.",
            id="anthropic",
        ),
        # OpenRouter lists its models to anyone: its key record is what needs the key.
        pytest.param(
            "openrouter",
            "openrouter",
            None,
            "/api/v1",
            BAD,
            False,
            "up rejected the API key at {url} (401 Unauthorized). Run 'Token Gauge: Set API Key' "
            "to enter a valid key for up.",
            id="openrouter-rejected",
        ),
        pytest.param(
            "openrouter",
            "openrouter",
            None,
            "/api/v1",
            GOOD,
            True,
            "up accepted the key at {url}.",
            id="openrouter",
        ),
    ],
)
async def test_a_key_is_accepted_or_rejected(
    shape: str,
    preset: str | None,
    dialect: str | None,
    path: str,
    key: str,
    accepted: bool,
    message: str,
):
    config = UpstreamConfig(listing=shape, models=[ListedModel()])
    config.model.require_api_key = GOOD
    async with running_upstream(config) as up:
        provider = ProviderSettings(
            id="up", dialect=dialect or "anthropic", base_url=up.url(path), preset=preset
        )
        result = await checked(provider, key)
        [request] = up.requests
    url = up.url(request.path)
    assert request.path == (path or "/v1") + ("/key" if shape == "openrouter" else "/models")
    assert result == CheckKeyResult(accepted, message.format(url=url))
    assert GOOD not in result.message and BAD not in result.message


async def test_a_server_that_needs_no_key_is_asked_too():
    async with running_upstream(UpstreamConfig()) as up:
        provider = ProviderSettings(
            id="local", dialect="openai", base_url=up.url("/v1"), preset="vllm"
        )
        result = await checked(provider, "")
        [request] = up.requests
    assert request.header("authorization") is None
    assert result == CheckKeyResult(
        True, f"local answered at {up.url('/v1/models')}; it needs no API key."
    )


async def test_a_key_that_cannot_be_told():
    port = closed_port()
    provider = ProviderSettings(id="up", dialect="openai", base_url=f"http://127.0.0.1:{port}/v1")
    result = await checked(provider, GOOD)
    assert result.accepted is None
    assert result.message.startswith(
        f"up could not be reached at http://127.0.0.1:{port}/v1/models: nothing is listening"
    )
    async with running_upstream(UpstreamConfig()) as up:
        provider = attrs.evolve(provider, base_url=up.url("/replay/no-such-fixture/v1"))
        result = await checked(provider, GOOD)
    assert result.accepted is None and "(404 Not Found)" in result.message


async def test_a_key_no_header_can_carry_is_rejected_unsent():
    async with running_upstream(UpstreamConfig()) as up:
        provider = ProviderSettings(id="up", dialect="openai", base_url=up.url("/v1"), managed=True)
        result = await checked(provider, "sk-é-0123456789")
        assert up.requests == []
    assert result == CheckKeyResult(
        False,
        "The API key for up has a character an HTTP header cannot carry (position 4). Please "
        "run 'Token Gauge: Set API Key' to enter it again.",
    )
