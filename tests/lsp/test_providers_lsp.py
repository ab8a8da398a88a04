"""`tokenGauge/addProvider` and `tokenGauge/checkKey` end to end: real LSP over stdio, real HTTP
to the test upstream.

A provider configured in VS Code's Manage Models is added at run time: its models are listed with
its key and answered (without `tokenGauge/modelsChanged`, which would make VS Code ask again),
chats reach it, and a rejected key sends the person to Set API Key. A provider of settings
with the same id wins. `checkKey` makes one cheap request and says what it came to.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.helpers import closed_port
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server
from tests.lsp.chat_helpers import PartLog, conversation

KEY = "sk-or-v1-manage-models-0123456789"
INVALID_PARAMS = -32602
LISTED = [
    ListedModel(
        id="acme/coder", name="Acme Coder", context_window=200_000, max_output_tokens=32_000
    )
]


@contextlib.asynccontextmanager
async def server(
    storage: Path, providers: list[dict[str, Any]] | None = None
) -> AsyncIterator[tuple[LanguageClient, PartLog]]:
    options = {
        "storageDir": str(storage),
        "logLevel": "debug",
        "providers": providers or [],
        "models": [],
        "connectTimeout": 2,
        "maxAttempts": 1,
    }
    async with running_server(options) as client:
        yield client, PartLog(client)


def logged(client: LanguageClient) -> str:
    return "\n".join(message.message for message in client.log_messages)


async def test_a_manage_models_provider_is_listed_with_its_key(tmp_path: Path):
    config = UpstreamConfig(listing="openrouter", models=LISTED)
    config.model.require_api_key = KEY
    async with running_upstream(config) as up, server(tmp_path) as (client, log):
        entry = {"id": "My Router", "preset": "openrouter", "baseUrl": up.url("/api/v1")}
        result = await call(client, "tokenGauge/addProvider", {"provider": entry, "apiKey": KEY})
        assert sorted(result) == ["error", "models", "providerId"]
        assert (result["providerId"], result["error"]) == ("My Router", None)
        [model] = result["models"]  # a `tokenGauge/models` entry, with the listed sizes
        assert (model["id"], model["providerId"], model["contextWindow"]) == (
            "acme/coder",
            "My Router",
            200_000,
        )
        assert model["maxInputTokens"] + model["maxOutputTokens"] == 200_000
        assert log.models_changed == 0  # VS Code asked: telling it to ask again would loop
        [listing] = up.requests
        assert (listing.path, listing.header("authorization")) == (
            "/api/v1/models",
            f"Bearer {KEY}",
        )
        # The model is the server's like any other: counted, and chatted with.
        assert [m["id"] for m in await call(client, "tokenGauge/models", {})] == ["acme/coder"]
        chat = {
            "requestId": "r1",
            "modelId": "acme/coder",
            "messages": conversation(),
            "credentials": {"apiKey": KEY},
        }
        assert (await call(client, "tokenGauge/chat", chat))["finishReason"] == "stop"
        assert up.model_requests[-1].path == "/api/v1/chat/completions"
        # A key it no longer takes: the command that changes a group's key (VS Code has none for
        # a group alone).
        chat["requestId"], chat["credentials"] = "r2", {"apiKey": "sk-or-v1-old-key-000000000"}
        with pytest.raises(JsonRpcException) as caught:
            await call(client, "tokenGauge/chat", chat)
        assert caught.value.message == (
            f"My Router rejected the API key at {up.url('/api/v1/chat/completions')} (401 "
            "Unauthorized). Run 'Token Gauge: Set API Key' to enter a valid key for My Router."
        )
        assert KEY not in logged(client)


async def test_the_status_counts_the_models_a_manage_models_provider_added(tmp_path: Path):
    async with running_upstream(UpstreamConfig(listing="openrouter", models=LISTED)) as up:
        entry = {"id": "My Router", "preset": "openrouter", "baseUrl": up.url("/api/v1")}
        async with server(tmp_path) as (client, log):
            await call(client, "tokenGauge/addProvider", {"provider": entry, "apiKey": KEY})
    # Sent before the answer: the status bar no longer says "no models" once VS Code lists them.
    assert log.statuses[-1]["text"] == "$(pulse) 1 model ready"
    assert log.statuses[-1]["severity"] == "info"
    assert "Acme Coder" in log.statuses[-1]["tooltip"]


async def test_a_listing_that_fails_says_why_and_keeps_what_was_listed(tmp_path: Path):
    async with running_upstream(UpstreamConfig(listing="vercel", models=LISTED)) as up:
        entry = {"id": "gateway", "preset": "openai-compatible", "baseUrl": up.url("/v1")}
        async with server(tmp_path) as (client, log):
            first = await call(
                client, "tokenGauge/addProvider", {"provider": entry, "apiKey": None}
            )
            assert first["error"] is None and [m["id"] for m in first["models"]] == ["acme/coder"]
        await up.stop()  # the gateway goes away; a new session adds the group again
        async with server(tmp_path) as (client, log):
            again = await call(
                client, "tokenGauge/addProvider", {"provider": entry, "apiKey": None}
            )
    assert again["error"] == (
        f"gateway could not be reached at {up.url('/v1/models')}: nothing is listening at "
        f"127.0.0.1:{up.port} (connection refused). Start the server there, or correct "
        "gateway's base URL in Manage Models."
    )
    assert [m["id"] for m in again["models"]] == ["acme/coder"]  # from the ledger
    assert log.models_changed == 0


async def test_a_provider_of_settings_with_the_same_id_wins(tmp_path: Path):
    async with (
        running_upstream(UpstreamConfig(listing="vercel", models=LISTED)) as configured,
        running_upstream(UpstreamConfig(listing="vercel")) as other,
    ):
        settings = [{"id": "team", "baseUrl": configured.url("/v1")}]
        async with server(tmp_path, settings) as (client, _):
            entry = {"id": "team", "preset": "openai-compatible", "baseUrl": other.url("/v1")}
            result = await call(
                client, "tokenGauge/addProvider", {"provider": entry, "apiKey": KEY}
            )
    assert [m["id"] for m in result["models"]] == ["acme/coder"]
    assert [r.path for r in configured.requests] == ["/v1/models"] and other.requests == []


async def test_the_group_replaces_itself_when_it_changes(tmp_path: Path):
    async with (
        running_upstream(UpstreamConfig(listing="vercel", models=LISTED)) as first,
        running_upstream(UpstreamConfig(listing="vercel", models=[ListedModel(id="b")])) as second,
        server(tmp_path) as (client, _),
    ):
        for up in (first, second):
            entry = {"id": "group", "preset": "vllm", "baseUrl": up.url("/v1")}
            await call(client, "tokenGauge/addProvider", {"provider": entry, "apiKey": None})
        models = await call(client, "tokenGauge/models", {})
    assert [m["id"] for m in models] == ["b"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param(
            {"provider": {"id": "x", "preset": "openia"}, "apiKey": None},
            "provider x: unknown preset 'openia' (known: openai, openai-responses, "
            "anthropic, openrouter, azure-openai, deepseek, gemini, moonshot, zai, minimax, groq, "
            "ollama, lmstudio, vllm, llamacpp, litellm, openai-compatible)",
            id="unknown-preset",
        ),
        pytest.param(
            {"provider": {"id": "x", "preset": "azure-openai"}, "apiKey": "k"},
            "provider x: preset 'azure-openai' (Azure OpenAI) needs a baseUrl",
            id="azure-without-url",
        ),
        pytest.param(
            {"provider": {"preset": "groq"}, "apiKey": "k"}, "params.provider", id="no-id"
        ),
    ],
)
async def test_an_entry_that_is_not_one_is_invalid_params(
    tmp_path: Path, params: dict[str, Any], message: str
):
    async with server(tmp_path) as (client, _):
        with pytest.raises(JsonRpcException) as caught:
            await call(client, "tokenGauge/addProvider", params)
        assert await call(client, "tokenGauge/models", {}) == []
    assert caught.value.code == INVALID_PARAMS and message in caught.value.message


async def test_check_key(tmp_path: Path):
    config = UpstreamConfig(listing="openrouter", models=LISTED)
    config.model.require_api_key = KEY
    port = closed_port()
    async with running_upstream(config) as up, running_upstream(UpstreamConfig()) as local:
        providers = [
            {"id": "router", "preset": "openrouter", "baseUrl": up.url("/api/v1")},
            {"id": "down", "baseUrl": f"http://127.0.0.1:{port}/v1"},
            {"id": "studio", "preset": "lmstudio", "baseUrl": local.url("/v1")},
        ]
        async with server(tmp_path, providers) as (client, _):

            async def check(provider_id: str, key: str) -> dict[str, Any]:
                params = {"providerId": provider_id, "apiKey": key}
                result: dict[str, Any] = await call(client, "tokenGauge/checkKey", params)
                return result

            key_url = up.url("/api/v1/key")
            assert await check("router", KEY) == {
                "accepted": True,
                "message": f"router accepted the key at {key_url}.",
            }
            assert await check("router", "sk-or-v1-wrong-000000000") == {
                "accepted": False,
                "message": f"router rejected the API key at {key_url} (401 Unauthorized). Run "
                "'Token Gauge: Set API Key' to enter a valid key for router.",
            }
            down = await check("down", KEY)
            assert down["accepted"] is None
            assert down["message"].startswith(
                f"down could not be reached at http://127.0.0.1:{port}/v1/models: nothing is "
                "listening"
            )
            assert await check("studio", "") == {
                "accepted": True,
                "message": f"studio answered at {local.url('/v1/models')}; it needs no API key.",
            }
            with pytest.raises(JsonRpcException) as caught:
                await check("nobody", KEY)
            assert caught.value.code == INVALID_PARAMS
            assert caught.value.message == (
                "unknown provider 'nobody'; configured providers: router, down, studio"
            )
            assert KEY not in logged(client)
    assert [r.path for r in up.requests] == ["/api/v1/key", "/api/v1/key"]
