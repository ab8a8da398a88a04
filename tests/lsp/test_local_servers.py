"""Local servers as they are really served, end to end: real LSP over stdio, real HTTP to stand-ins
that speak Ollama's, LM Studio's and vLLM's wire and, like Ollama and LM Studio, cut a prompt over
the loaded window without an error (`tests/harness/fake_upstream/loading.py`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import ListedModel, ModelBehavior, Reply, UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize, plain
from tests.lsp.chat_helpers import PartLog, chat_params, text_of
from tests.lsp.helpers import text_message

NATIVE = 131_072
LOADED = 8_192
MODEL = "qwen3:8b"


def upstream_config(listing: str, **model: Any) -> UpstreamConfig:
    """One model of a native 128K window behind a server that cuts long prompts silently."""
    return UpstreamConfig(
        listing=listing,
        models=[ListedModel(id=MODEL, context_window=NATIVE, architecture="qwen3", **model)],
        model=ModelBehavior(encoding="o200k_base", overflow="truncate", per_message_overhead=4),
        reply=Reply(text="ok"),
        default_context=LOADED,
    )


class Notices:
    """Collects `tokenGauge/notice` notifications."""

    def __init__(self, client: LanguageClient) -> None:
        self.received: list[dict[str, Any]] = []

        def on_notice(params: Any) -> None:
            self.received.append(plain(params))

        client.feature("tokenGauge/notice")(on_notice)


async def start(
    client: LanguageClient, tmp_path: Path, up: Upstream, preset: str, **model: Any
) -> None:
    client.upstream = up  # type: ignore[attr-defined]
    client.part_log = PartLog(client)  # type: ignore[attr-defined]
    client.notices = Notices(client)  # type: ignore[attr-defined]
    options = {
        "storageDir": str(tmp_path / "storage"),
        "logLevel": "debug",
        "providers": [{"id": preset, "preset": preset, "baseUrl": up.base_url + "/v1"}],
        "models": [{"id": MODEL, "provider": preset, "maxOutputTokens": 1024, **model}]
        if model
        else [],
    }
    await initialize(client, options)
    await call(client, "tokenGauge/discoverModels", {})


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path, request: pytest.FixtureRequest):
    """A server on the stand-in the test is parametrized with: (listing, model settings)."""
    listing, listed, settings = request.param
    async with running_upstream(upstream_config(listing, **listed)) as up:
        await start(lsp_client, tmp_path, up, listing, **settings)
        yield
        await lsp_client.shutdown_session()


def upstream_of(client: LanguageClient) -> Upstream:
    return client.upstream  # type: ignore[attr-defined,no-any-return]


async def model_info(client: LanguageClient) -> dict[str, Any]:
    [info] = [m for m in await call(client, "tokenGauge/models", {}) if m["id"] == MODEL]
    return info  # type: ignore[no-any-return]


async def window_becomes(client: LanguageClient, window: int) -> dict[str, Any]:
    """The model's information once its window is `window` (a reading after a response runs in
    the background)."""
    for _ in range(100):
        info = await model_info(client)
        if info["contextWindow"] == window:
            return info
        await asyncio.sleep(0.05)
    raise AssertionError(f"the window stayed {info['contextWindow']}, not {window}")


def turn(words: int) -> list[dict[str, Any]]:
    """A system prompt and a user message of about `words` tokens."""
    return [
        text_message("system", "You are a careful assistant."),
        text_message("user", "Read this log closely. " + "gateway line answered 502; " * words),
    ]


async def chat(client: LanguageClient, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    params = chat_params(MODEL, messages)
    await call(client, "tokenGauge/chat", params)
    return client.part_log.of(params["requestId"])  # type: ignore[attr-defined,no-any-return]


OLLAMA = ("ollama", {}, {})


@pytest.mark.parametrize("client", [OLLAMA], indirect=True)
async def test_ollama_loads_the_model_first_and_sizes_requests_to_what_it_loaded(
    client: LanguageClient,
):
    up = upstream_of(client)
    assumed = await window_becomes(client, 4096)  # read as it was listed: not loaded yet
    assert "assumed" in assumed["tooltip"]
    await chat(client, turn(20))
    load, first = up.model_requests
    assert load.route == "ollama_chat" and load.json["messages"] == []  # loads it, as Ollama does
    assert "options" not in load.json  # nothing asked: Ollama loads it as it would
    assert first.json["options"] == {"num_ctx": LOADED}  # what it has: no reload
    assert first.load is None and first.served_window == LOADED
    info = await window_becomes(client, LOADED)  # read from /api/ps before the request
    assert "loaded in Ollama, per ollama ps" in info["tooltip"] and "own is 131k" in info["tooltip"]
    assert info["maxInputTokens"] + info["maxOutputTokens"] <= LOADED
    # A conversation that outgrew the loaded window is fitted to it, never cut by the server.
    parts = await chat(client, turn(6000))
    assert up.model_requests[-1].served_window == LOADED
    assert up.model_requests[-1].prompt_tokens is not None
    assert up.model_requests[-1].prompt_tokens <= LOADED
    assert text_of(parts).startswith("*Token Gauge: this request did not fit")
    assert up.truncated_requests == []
    assert len(up.model_requests) == 3  # loaded once


@pytest.mark.parametrize("client", [("ollama", {}, {"numCtx": 16384})], indirect=True)
async def test_ollama_is_asked_for_the_window_set_and_offers_it(client: LanguageClient):
    up = upstream_of(client)
    await chat(client, turn(20))
    load, first = up.model_requests
    assert load.json["options"] == first.json["options"] == {"num_ctx": 16384}
    assert up.loaded[MODEL] == 16384
    info = await window_becomes(client, 16384)
    assert "ollama" in info["tooltip"].lower()


CUTTING = ("ollama", {"loaded_context": LOADED}, {"contextWindow": 32768})


@pytest.mark.parametrize("client", [CUTTING], indirect=True)
async def test_a_prompt_cut_without_an_error_is_caught_told_and_never_repeated(
    client: LanguageClient,
):
    up = upstream_of(client)
    info = await model_info(client)
    assert info["contextWindow"] == 32768  # the person's contextWindow wins, with a warning
    await window_warning(client)
    before = await call(client, "tokenGauge/usage", {})
    parts = await chat(client, turn(6000))  # ~12k tokens: Ollama keeps the last 8,192
    assert len(up.truncated_requests) == 1
    assert "the server read only 8,192 tokens" in text_of(parts)
    info = await window_becomes(client, LOADED)
    [notice] = client.notices.received  # type: ignore[attr-defined]
    assert "cut a request" in notice["message"] and "numCtx" in notice["message"]
    assert notice["setting"] == "tokenGauge.models"
    [record] = (await call(client, "tokenGauge/dashboard", {}))["requests"][-1:]
    assert record["cut"] and record["inputTokens"] == LOADED
    after = await call(client, "tokenGauge/usage", {})
    assert after["models"][0]["ratios"] == before["models"][0]["ratios"]  # nothing learned
    # The next long request fits the window the server really has: no cut, no second notice.
    await chat(client, turn(6000))
    assert len(up.truncated_requests) == 1
    assert len(client.notices.received) == 1  # type: ignore[attr-defined]


async def window_warning(client: LanguageClient) -> None:
    for _ in range(100):
        if "⚠ The server has it loaded with only 8.2k" in (await model_info(client))["tooltip"]:
            return
        await asyncio.sleep(0.05)
    raise AssertionError((await model_info(client))["tooltip"])


@pytest.mark.parametrize("client", [("lmstudio", {"loaded_context": LOADED}, {})], indirect=True)
async def test_lm_studio_offers_its_loaded_context(client: LanguageClient):
    await chat(client, turn(20))
    info = await window_becomes(client, LOADED)
    assert "loaded in LM Studio" in info["tooltip"]


@pytest.mark.parametrize("client", [("vllm", {"loaded_context": 16384}, {})], indirect=True)
async def test_vllm_counts_the_first_request_exactly_and_is_asked_once(client: LanguageClient):
    up = upstream_of(client)
    assert (await model_info(client))["contextWindow"] == 16384
    await chat(client, turn(400))
    await chat(client, turn(500))
    assert "vLLM's max_model_len" in (await model_info(client))["tooltip"]
    tokenize = [r for r in up.requests if r.route == "tokenize"]
    assert len(tokenize) == 1  # before the first request only
    first, second = (await call(client, "tokenGauge/dashboard", {}))["requests"][-2:]
    assert first["estimatedTokens"] == first["inputTokens"] == up.model_requests[0].prompt_tokens
    assert abs(second["estimatedTokens"] - second["inputTokens"]) <= 0.1 * second["inputTokens"]
