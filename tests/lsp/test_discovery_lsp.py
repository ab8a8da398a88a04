"""`tokenGauge/discoverModels` end to end: real LSP over stdio, real HTTP to the test upstream.

Each listing shape the test upstream speaks (OpenAI, OpenRouter, Vercel AI Gateway, Ollama,
LiteLLM) is discovered through a provider with `discover: true`; the report, the
`tokenGauge/modelsChanged` notification and the models VS Code then sees (window, output cap and
the input budget derived from them) are checked, as are precedence (configuration over discovery
over the built-in table), failing listings (configuration stays, a warning is logged) and
persistence in the ledger across a server restart.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from lsprotocol.types import MessageType
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.helpers import closed_port
from tests.harness.fake_upstream.server import running_upstream
from tests.harness.lsp import call, running_server

KEY = "sk-tokengauge-discovery-test-0123456789"
FALLBACK = (32_768, 4_096)  # window and output cap of a model nobody gave sizes for


class Expected(NamedTuple):
    """What `tokenGauge/models` should say about one model."""

    id: str
    name: str
    context_window: int
    max_output_tokens: int


def max_input(window: int, output: int) -> int:
    """README: `maxInputTokens = contextWindow − min(maxOutputTokens, 16,384, window / 4)`."""
    return window - min(output, 16_384, window // 4)


def options(storage: Path, providers: list[dict[str, Any]], models: list[dict[str, Any]]) -> Any:
    return {
        "storageDir": str(storage),
        "logLevel": "debug",
        "providers": providers,
        "models": models,
        "connectTimeout": 2,
    }


class Watch:
    """Counts `tokenGauge/modelsChanged` (sent before the response that caused it)."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.models_changed = 0

        def on_models_changed(params: Any) -> None:  # pygls registers plain functions only
            self.models_changed += 1

        client.feature("tokenGauge/modelsChanged")(on_models_changed)

    async def discover(self, *provider_ids: str) -> dict[str, Any]:
        credentials = {pid: {"apiKey": KEY} for pid in provider_ids}
        result: dict[str, Any] = await call(
            self.client, "tokenGauge/discoverModels", {"credentials": credentials}
        )
        return result

    async def models(self) -> dict[str, dict[str, Any]]:
        return {m["id"]: m for m in await call(self.client, "tokenGauge/models", {})}

    def warnings(self) -> list[str]:
        return [m.message for m in self.client.log_messages if m.type == MessageType.Warning]


@contextlib.asynccontextmanager
async def server(opts: dict[str, Any]) -> AsyncIterator[Watch]:
    async with running_server(opts) as client:
        yield Watch(client)


def assert_model(info: dict[str, Any], expected: Expected, provider_id: str) -> None:
    window, output = expected.context_window, expected.max_output_tokens
    assert info["name"] == expected.name
    assert info["contextWindow"] == window, info
    assert info["maxInputTokens"] == max_input(window, output)
    # The output VS Code is told of is what is kept for it: together they are the window.
    assert info["maxOutputTokens"] == window - max_input(window, output)
    assert info["detail"] == f"Token Gauge · {provider_id}"


SHAPES = [
    pytest.param(
        "openai",
        "up",
        "/v1",
        [ListedModel(id="acme-coder"), ListedModel(id="gpt-4o-mini")],
        [
            # No sizes in an OpenAI listing: the built-in table, else the fallback (warned about).
            Expected("acme-coder", "Acme Coder", *FALLBACK),
            Expected("gpt-4o-mini", "GPT-4o mini", 128_000, 16_384),
        ],
        "/v1/models",
        id="openai",
    ),
    pytest.param(
        "openrouter",
        "openrouter",
        "/api/v1",
        [
            ListedModel(
                id="acme/coder-pro",
                name="Acme: Coder Pro",
                context_window=200_000,
                max_output_tokens=32_000,
                provider_context_length=163_840,  # the serving provider takes less: that wins
            ),
            ListedModel(
                id="acme/mini", name="Acme: Mini", context_window=8_192, max_output_tokens=0
            ),
        ],
        [
            Expected("acme/coder-pro", "Acme: Coder Pro", 163_840, 32_000),
            Expected("acme/mini", "Acme: Mini", 8_192, 4_096),
        ],
        "/api/v1/models",
        id="openrouter-top-provider",
    ),
    pytest.param(
        "vercel",
        "gateway",
        "/v1",
        [
            ListedModel(
                id="acme/vercel-model",
                name="Vercel Model",
                context_window=256_000,
                max_output_tokens=12_000,
            )
        ],
        [Expected("acme/vercel-model", "Vercel Model", 256_000, 12_000)],
        "/v1/models",
        id="vercel-context-window",
    ),
    pytest.param(
        "ollama",
        "ollama-local",  # Ollama by name (`/api/show` is asked for each model's window)
        "/v1",
        # Loaded with their whole windows (`ollama ps`): what the server has loaded, read in the
        # background after the listing, then says the same as the listing, whenever it lands.
        [
            ListedModel(
                id="zeta-coder:7b",
                context_window=65_536,
                architecture="zetacoder",
                loaded_context=65_536,
            ),
            ListedModel(
                id="tiny-chat:1b", context_window=2_048, architecture="llama", loaded_context=2_048
            ),
        ],
        [
            Expected("zeta-coder:7b", "Zeta Coder 7B", 65_536, FALLBACK[1]),
            Expected("tiny-chat:1b", "Tiny Chat 1B", 2_048, 2_047),
        ],
        "/api/show",
        id="ollama-api-show",
    ),
    pytest.param(
        "litellm",
        "proxy",
        "/v1",
        [ListedModel(id="acme-proxy-model", context_window=100_000, max_output_tokens=9_000)],
        [Expected("acme-proxy-model", "Acme Proxy Model", 100_000, 9_000)],
        "/model/info",
        id="litellm-model-info",
    ),
]
PRESETS = {"litellm": "litellm"}  # a LiteLLM proxy is known by its preset (or its headers)


@pytest.mark.parametrize(
    ("shape", "provider_id", "path", "listed", "expected", "size_source"), SHAPES
)
async def test_each_listing_shape_becomes_models_with_their_sizes(
    tmp_path: Path,
    shape: str,
    provider_id: str,
    path: str,
    listed: list[ListedModel],
    expected: list[Expected],
    size_source: str,
):
    provider: dict[str, Any] = {"id": provider_id, "dialect": "openai", "discover": True}
    if shape in PRESETS:
        provider["preset"] = PRESETS[shape]
    async with running_upstream(UpstreamConfig(listing=shape, models=listed)) as up:
        provider["baseUrl"] = up.url(path)
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            assert await s.models() == {}  # nothing configured, nothing discovered yet
            report = await s.discover(provider_id)
            assert report == {
                "providers": [
                    {
                        "providerId": provider_id,
                        "models": len(listed),
                        "error": None,
                        "keyRejected": False,
                    }
                ]
            }
            assert s.models_changed == 1
            models = await s.models()
            assert sorted(models) == sorted(e.id for e in expected)
            for item in expected:
                assert_model(models[item.id], item, provider_id)
            # A discovered model is usable at once.
            counted = await call(
                s.client, "tokenGauge/countTokens", {"modelId": expected[0].id, "inputs": ["hi"]}
            )
            assert counted["tokens"][0] >= 1
        paths = [request.path for request in up.requests]
        assert paths[0] == path + "/models" and size_source in paths
        assert up.requests[0].header("authorization") == f"Bearer {KEY}"


async def test_a_model_without_sizes_falls_back_with_a_warning(tmp_path: Path):
    provider = {"id": "up", "dialect": "openai", "baseUrl": ""}  # `discover` is on by default
    async with running_upstream(UpstreamConfig(models=[ListedModel(id="acme-coder")])) as up:
        provider["baseUrl"] = up.url("/v1")
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            await s.discover("up")
            assert_model(
                (await s.models())["acme-coder"],
                Expected("acme-coder", "Acme Coder", *FALLBACK),
                "up",
            )
            assert any("acme-coder" in w and "32,768" in w for w in s.warnings()), s.warnings()


async def test_configuration_wins_over_discovery_which_wins_over_the_built_in_table(
    tmp_path: Path,
):
    listed = [
        ListedModel(
            id="acme/full", name="Listed Full", context_window=200_000, max_output_tokens=20_000
        ),
        ListedModel(
            id="acme/part", name="Listed Part", context_window=150_000, max_output_tokens=15_000
        ),
        ListedModel(
            id="gpt-4o", name="GPT-4o via gateway", context_window=64_000, max_output_tokens=4_000
        ),
    ]
    configured = [
        {
            "id": "acme/full",
            "provider": "gateway",
            "name": "Configured Full",
            "contextWindow": 50_000,
            "maxOutputTokens": 1_000,
        },
        {"id": "acme/part", "provider": "gateway", "contextWindow": 60_000},
        {"id": "gpt-4o", "provider": "gateway"},
    ]
    async with (
        running_upstream(UpstreamConfig(listing="vercel", models=listed)) as up,
        running_upstream(UpstreamConfig(listing="vercel", models=listed)) as off,
    ):
        providers = [
            {"id": "gateway", "dialect": "openai", "baseUrl": up.url("/v1"), "discover": True},
            {"id": "quiet", "dialect": "openai", "baseUrl": off.url("/v1"), "discover": False},
        ]
        async with server(options(tmp_path / "storage", providers, configured)) as s:
            before = await s.models()
            assert_model(
                before["acme/full"],
                Expected("acme/full", "Configured Full", 50_000, 1_000),
                "gateway",
            )
            assert_model(before["gpt-4o"], Expected("gpt-4o", "GPT-4o", 128_000, 16_384), "gateway")
            report = await s.discover("gateway", "quiet")
            assert report == {
                "providers": [
                    {"providerId": "gateway", "models": 3, "error": None, "keyRejected": False}
                ]
            }
            assert s.models_changed == 1
            models = await s.models()
        assert sorted(models) == ["acme/full", "acme/part", "gpt-4o"]
        # Every configured field wins ...
        assert_model(
            models["acme/full"], Expected("acme/full", "Configured Full", 50_000, 1_000), "gateway"
        )
        # ... the fields not configured come from the listing ...
        assert_model(
            models["acme/part"], Expected("acme/part", "Listed Part", 60_000, 15_000), "gateway"
        )
        # ... which wins over the built-in table.
        assert_model(
            models["gpt-4o"], Expected("gpt-4o", "GPT-4o via gateway", 64_000, 4_000), "gateway"
        )
        assert off.requests == []  # `discover: false` is not asked


FAILING = [
    pytest.param("http://127.0.0.1:9/v1", "nothing is listening at 127.0.0.1:9", id="closed-port"),
    pytest.param(
        "{up}/replay/error-openai-context-length-exceeded?status=500",
        "(500 Internal Server Error)",
        id="500",
    ),
    pytest.param("{up}/replay/no-such-listing", "does not end in /v1", id="404"),
    pytest.param("{up}/replay/anthropic-stream-text", "the answer is not JSON", id="200-not-json"),
    # A proxy that answers 200 with an error object has not listed zero models: it failed.
    pytest.param(
        "{up}/replay/error-openai-context-length-exceeded?status=200",
        "the answer is not a model list",
        id="200-error-object",
    ),
]


@pytest.mark.parametrize(("base_url", "reason"), FAILING)
async def test_a_failing_listing_keeps_the_configured_models_and_warns(
    tmp_path: Path, base_url: str, reason: str
):
    configured = [
        {"id": "cfg-model", "provider": "broken", "contextWindow": 50_000, "maxOutputTokens": 5_000}
    ]
    async with running_upstream(UpstreamConfig()) as up:
        provider = {"id": "broken", "dialect": "openai", "baseUrl": base_url.format(up=up.base_url)}
        async with server(options(tmp_path / "storage", [provider], configured)) as s:
            report = await s.discover("broken")
            [entry] = report["providers"]
            assert entry["providerId"] == "broken"
            assert entry["models"] is None and entry["error"], entry
            assert reason in entry["error"]
            assert s.models_changed == 0
            models = await s.models()
            assert list(models) == ["cfg-model"]
            assert_model(
                models["cfg-model"], Expected("cfg-model", "Cfg Model", 50_000, 5_000), "broken"
            )
            warnings = [w for w in s.warnings() if "model discovery for broken failed" in w]
            assert warnings and KEY not in warnings[0]


async def test_a_failure_keeps_what_was_discovered_before(tmp_path: Path):
    listed = [ListedModel(id="acme/vercel-model", context_window=90_000, max_output_tokens=9_000)]
    expected = Expected("acme/vercel-model", "acme/vercel-model", 90_000, 9_000)
    async with running_upstream(UpstreamConfig(listing="vercel", models=listed)) as up:
        provider = {"id": "gateway", "dialect": "openai", "baseUrl": up.url("/v1")}
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            assert (await s.discover("gateway"))["providers"][0]["error"] is None
            await up.stop()  # the gateway goes away
            report = await s.discover("gateway")
            assert report["providers"][0]["error"] == (
                f"gateway could not be reached at {up.url('/v1/models')}: nothing is listening "
                f"at 127.0.0.1:{up.port} (connection refused). Start the server there, or "
                "correct gateway's base URL in the tokenGauge.providers setting."
            )
            assert report["providers"][0]["keyRejected"] is False  # no key to ask for
            assert s.models_changed == 1  # only the first discovery changed anything
            assert_model((await s.models())[expected.id], expected, "gateway")
            assert any("model discovery for gateway failed" in w for w in s.warnings())


async def test_discovered_models_outlive_a_restart(tmp_path: Path):
    listed = [
        ListedModel(
            id="acme/coder-pro",
            name="Acme: Coder Pro",
            context_window=200_000,
            max_output_tokens=32_000,
        )
    ]
    expected = Expected("acme/coder-pro", "Acme: Coder Pro", 200_000, 32_000)
    storage = tmp_path / "storage"
    async with running_upstream(UpstreamConfig(listing="openrouter", models=listed)) as up:
        providers = [{"id": "openrouter", "dialect": "openai", "baseUrl": up.url("/api/v1")}]
        async with server(options(storage, providers, [])) as first:
            await first.discover("openrouter")
            assert_model((await first.models())[expected.id], expected, "openrouter")
        asked = len(up.requests)
        async with server(options(storage, providers, [])) as second:
            # Known before any discovery call, from the ledger.
            models = await second.models()
            assert list(models) == [expected.id]
            assert_model(models[expected.id], expected, "openrouter")
            assert len(up.requests) == asked
            # Discovering the same listing again changes nothing.
            report = await second.discover("openrouter")
            assert report["providers"][0]["error"] is None
            assert second.models_changed == 0
        # A server whose provider no longer discovers does not offer what was found before.
        quiet = [{**providers[0], "discover": False}]
        async with server(options(storage, quiet, [])) as third:
            assert await third.models() == {}


async def test_every_discovery_request_carries_the_providers_key_and_headers(tmp_path: Path):
    """settings: a provider's `headers` go with every request (an Ollama behind a proxy)."""
    listed = [ListedModel(id="zeta-coder:7b", context_window=65_536, architecture="zetacoder")]
    async with running_upstream(UpstreamConfig(listing="ollama", models=listed)) as up:
        provider = {
            "id": "ollama-remote",
            "dialect": "openai",
            "baseUrl": up.url("/v1"),
            "headers": {"X-Proxy-Token": "proxy-token-1"},
        }
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            await s.discover("ollama-remote")
    sent = [
        (r.method, r.path, r.header("authorization"), r.header("x-proxy-token"))
        for r in up.requests
    ]
    # Then, in the background, what Ollama has loaded (`/api/ps`): with the key and headers too.
    assert [(m, p) for m, p, *_ in sent][:2] == [("GET", "/v1/models"), ("POST", "/api/show")]
    assert all(auth == f"Bearer {KEY}" and token == "proxy-token-1" for *_, auth, token in sent), (
        sent
    )


SIZE_SOURCES = [
    pytest.param("openai", {}, {}, ["/v1/models"], FALLBACK, id="openai-list-only"),
    pytest.param("openai", {"preset": "vllm"}, {}, ["/v1/models"], FALLBACK, id="vllm-preset"),
    # A LiteLLM proxy that says nothing of itself is not asked what it may not serve ...
    pytest.param("litellm", {}, {}, ["/v1/models"], FALLBACK, id="litellm-unknown"),
    # ... one whose list carries its headers is ...
    pytest.param(
        "litellm",
        {},
        {"x-litellm-version": "1.74.0"},
        ["/v1/models", "/model/info"],
        (100_000, 9_000),
        id="litellm-by-headers",
    ),
    # ... and so is one with its preset.
    pytest.param(
        "litellm",
        {"preset": "litellm"},
        {},
        ["/v1/models", "/model/info"],
        (100_000, 9_000),
        id="litellm-by-preset",
    ),
]


@pytest.mark.parametrize(("shape", "entry", "headers", "paths", "sizes"), SIZE_SOURCES)
async def test_only_a_litellm_proxy_is_asked_for_model_info(
    tmp_path: Path,
    shape: str,
    entry: dict[str, Any],
    headers: dict[str, str],
    paths: list[str],
    sizes: tuple[int, int],
):
    """`/model/info` of any other server is a 404 in its logs (and one more request each time)."""
    listed = [ListedModel(id="acme-proxy-model", context_window=100_000, max_output_tokens=9_000)]
    config = UpstreamConfig(listing=shape, models=listed, listing_headers=headers)
    async with running_upstream(config) as up:
        provider = {"id": "proxy", "baseUrl": up.url("/v1"), **entry}
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            report = await s.discover("proxy")
            assert report["providers"][0]["error"] is None
            models = await s.models()
        # (a vLLM's list is read again for the window it serves: the same path)
        assert list(dict.fromkeys(request.path for request in up.requests)) == paths
        assert all(request.status == 200 for request in up.requests)
    expected = Expected("acme-proxy-model", "Acme Proxy Model", *sizes)
    assert_model(models["acme-proxy-model"], expected, "proxy")


async def test_a_listing_that_needs_a_v1_says_which_url_to_use(tmp_path: Path):
    async with running_upstream(UpstreamConfig(api_root="/v1")) as up:
        provider = {"id": "local", "baseUrl": up.base_url}
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            report = await s.discover("local")
    assert report["providers"][0]["error"] == (
        f"local answered 404 Not Found at {up.url('/models')}: its base URL {up.base_url} does "
        f"not end in /v1. Try {up.url('/v1')} as local's base URL in the tokenGauge.providers "
        "setting."
    )
    assert [r.status for r in up.requests] == [404]


async def test_a_rejected_listing_key_says_how_to_enter_another(tmp_path: Path):
    config = UpstreamConfig()
    config.model.require_api_key = "sk-another-key-0123456789"
    async with running_upstream(config) as up:
        provider = {"id": "up", "baseUrl": up.url("/v1")}
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            report = await s.discover("up")
            warnings = s.warnings()
    error = report["providers"][0]["error"]
    assert error == (
        f"up rejected the API key at {up.url('/v1/models')} (401 Unauthorized). Run 'Token "
        "Gauge: Set API Key' to enter a valid key for up."
    )
    assert any(error in warning for warning in warnings)
    assert report["providers"][0]["keyRejected"] is True  # the extension asks for another


async def test_a_responses_provider_lists_its_models_as_openai_does(tmp_path: Path):
    """`dialect: "responses"`: the same `GET …/models`, with the same bearer key."""
    provider = {"id": "gpt", "dialect": "responses", "baseUrl": ""}
    listed = [ListedModel(id="gpt-5", context_window=400000, max_output_tokens=128000)]
    async with running_upstream(UpstreamConfig(models=listed)) as up:
        provider["baseUrl"] = up.url("/v1")
        async with server(options(tmp_path / "storage", [provider], [])) as s:
            report = await s.discover("gpt")
            assert report["providers"][0]["models"] == 1 and report["providers"][0]["error"] is None
            assert_model(
                (await s.models())["gpt-5"], Expected("gpt-5", "GPT-5", 400000, 128000), "gpt"
            )
        assert up.requests[0].path == "/v1/models"
        assert up.requests[0].header("authorization") == f"Bearer {KEY}"


async def test_only_a_provider_the_person_configured_warns_when_it_cannot_list(tmp_path: Path):
    """No providers in the settings: the default local Ollama is asked, and a failure (nothing
    listens for a person who never set it up) is a debug line, not a warning at every start. The
    same provider written in the settings, at an address nothing listens on, warns."""
    quiet = {"storageDir": str(tmp_path / "default"), "logLevel": "debug", "connectTimeout": 2}
    async with server(quiet) as s:
        [entry] = (await s.discover())["providers"]
        said = [(m.type, m.message) for m in s.client.log_messages]
    assert entry["providerId"] == "ollama"
    assert not [text for kind, text in said if kind <= MessageType.Warning and "ollama" in text]
    if entry["error"] is not None:  # else an Ollama answers on this machine
        assert (MessageType.Log, f"model discovery for ollama failed: {entry['error']}") in [
            (kind, text.split(" Using the configured models.")[0]) for kind, text in said
        ]
    written = {"id": "ollama", "baseUrl": f"http://127.0.0.1:{closed_port()}/v1"}
    async with server(options(tmp_path / "written", [written], [])) as s:
        [entry] = (await s.discover())["providers"]
        assert entry["error"] and "connection refused" in entry["error"].lower(), entry
        assert any("model discovery for ollama failed" in w for w in s.warnings())
