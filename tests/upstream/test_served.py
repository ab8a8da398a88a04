"""Reading what a local server has loaded: each server's answer, and Ollama's rule of what it will
serve a model with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tokengauge.models.catalog import resolve_model
from tokengauge.models.served import MIN_WINDOW, Served
from tokengauge.settings import MAX_TOKENS, ModelSettings, ProviderSettings
from tokengauge.upstream.http import Timeouts, make_client
from tokengauge.upstream.served import (
    LMSTUDIO_DEFAULT,
    OLLAMA_SMALLEST_DEFAULT,
    llamacpp_served,
    lmstudio_served,
    modelfile_num_ctx,
    ollama_loaded,
    ollama_served,
    read_served,
    served_kind,
    vllm_served,
)

DATA = Path(__file__).parents[1] / "data" / "llamacpp"
# Ollama's documented `/api/ps` example, with the `context_length` it reports since 0.6.
PS: dict[str, Any] = {
    "models": [
        {
            "name": "gemma3:latest",
            "model": "gemma3:latest",
            "size": 6591830464,
            "digest": "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a",
            "details": {"format": "gguf", "family": "gemma3", "parameter_size": "4.3B"},
            "expires_at": "2025-10-17T16:47:07.93355-07:00",
            "size_vram": 5333539264,
            "context_length": 4096,
        }
    ]
}


@pytest.mark.parametrize(
    ("provider", "kind"),
    [
        (ProviderSettings("ollama", base_url="http://localhost:11434/v1"), "ollama"),
        (ProviderSettings("box", base_url="http://10.0.0.2:11434/v1"), "ollama"),
        (ProviderSettings("lm", preset="lmstudio"), "lmstudio"),
        (ProviderSettings("cpp", preset="llamacpp"), "llamacpp"),
        (ProviderSettings("v", preset="vllm"), "vllm"),
        (ProviderSettings("openai", preset="openai"), None),
        (ProviderSettings("mine", base_url="http://localhost:1234/v1"), None),
    ],
)
def test_which_servers_are_read(provider: ProviderSettings, kind: str | None):
    assert served_kind(provider) == kind


@pytest.mark.parametrize("name", ["gemma3", "gemma3:latest"])
def test_ollama_ps_names_a_model_with_or_without_its_tag(name: str):
    assert ollama_loaded(PS, name) == 4096
    assert ollama_loaded(PS, "gemma3:27b") is None
    assert ollama_loaded({"models": []}, name) is None
    assert ollama_loaded({"models": "nonsense"}, name) is None


def test_a_modelfile_num_ctx_is_read_from_show():
    show = {"parameters": 'stop "<|im_end|>"\nnum_ctx 16384\ntemperature 0.7'}
    assert modelfile_num_ctx(show) == 16384
    assert modelfile_num_ctx({"parameters": "temperature 0.7"}) is None
    assert modelfile_num_ctx({}) is None


def test_ollama_serves_what_it_loaded_unless_asked_for_another():
    loaded = ollama_served(32768, None, None, None)
    assert (loaded.window, loaded.loaded, loaded.exact) == (32768, True, True)
    # Asked for 8K, not sent yet: Ollama reloads with it at the next request.
    asked = ollama_served(32768, 8192, None, None)
    assert (asked.window, asked.loaded) == (8192, False)
    # Sent, and Ollama loaded less than asked (its own cap): what it loaded rules.
    capped = ollama_served(65536, 131072, 131072, None)
    assert (capped.window, capped.loaded) == (65536, True)


def test_ollama_not_loaded_is_taken_at_its_smallest_default():
    assert ollama_served(None, None, None, 16384).window == 16384
    assumed = ollama_served(None, None, None, None)
    assert (assumed.window, assumed.exact) == (OLLAMA_SMALLEST_DEFAULT, False)
    assert "assumed" in assumed.source


def test_lm_studio_loaded_context_and_its_default():
    v0 = {
        "object": "list",
        "data": [
            {
                "id": "qwen2.5-7b-instruct",
                "object": "model",
                "type": "llm",
                "state": "loaded",
                "max_context_length": 32768,
                "loaded_context_length": 8192,
            },
            {"id": "other", "type": "llm", "state": "not-loaded", "max_context_length": 2048},
        ],
    }
    assert lmstudio_served(v0, None, "qwen2.5-7b-instruct") == Served(8192, "loaded in LM Studio")
    other = lmstudio_served(v0, None, "other")
    assert other is not None and other.window == 2048 and not other.loaded
    v1 = {
        "models": [
            {
                "key": "qwen2.5-7b-instruct",
                "max_context_length": 32768,
                "loaded_instances": [
                    {"id": "qwen2.5-7b-instruct", "config": {"context_length": 12000}}
                ],
            },
            {"key": "idle", "max_context_length": 131072, "loaded_instances": []},
        ]
    }
    assert lmstudio_served(None, v1, "qwen2.5-7b-instruct") == Served(12000, "loaded in LM Studio")
    idle = lmstudio_served(None, v1, "idle")
    assert idle is not None and idle.window == LMSTUDIO_DEFAULT and not idle.exact
    assert lmstudio_served(v0, None, "missing") is None


def test_llama_cpp_props_give_the_window_of_each_slot():
    """A real llama.cpp server's `/props` (`--ctx-size 512 --parallel 2`)."""
    props = json.loads((DATA / "props.json").read_text())
    served = llamacpp_served(props)
    assert served is not None and served.window == 256
    assert "2 slots" in served.source
    assert llamacpp_served({"default_generation_settings": {}}) is None


@pytest.mark.parametrize("n_ctx", [2, 255, 10**309, MAX_TOKENS + 1, True, "4096", -4096], ids=repr)
def test_a_window_no_model_can_have_is_no_reading(n_ctx: object):
    props = {"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 1}
    assert llamacpp_served(props) is None
    assert ollama_loaded({"models": [{"name": "m", "context_length": n_ctx}]}, "m") is None
    assert lmstudio_served(
        {"data": [{"id": "m", "state": "loaded", "loaded_context_length": n_ctx}]}, None, "m"
    ) == lmstudio_served({"data": [{"id": "m"}]}, None, "m")  # the default load, assumed


def test_the_smallest_and_largest_readings_are_taken():
    for window in (MIN_WINDOW, MAX_TOKENS):
        props = {"default_generation_settings": {"n_ctx": window}}
        assert llamacpp_served(props) == Served(window, "llama.cpp's n_ctx per slot")
    assert modelfile_num_ctx({"parameters": "num_ctx " + "9" * 5_000}) is None


def test_vllm_max_model_len():
    models = {"data": [{"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 8192}]}
    assert vllm_served(models, "Qwen/Qwen3-8B") == Served(8192, "vLLM's max_model_len")
    assert vllm_served(models, "other") is None
    assert vllm_served({"data": [{"id": "x", "max_model_len": True}]}, "x") is None


async def test_lm_studio_without_v0_is_read_from_v1():
    """LM Studio answers a route it lacks with 200 and an error object: v1 is asked then."""
    lacking = {"error": "Unexpected endpoint or method. (GET /api/v0/models)"}
    v1 = {
        "models": [
            {
                "key": "qwen3-8b",
                "max_context_length": 131072,
                "loaded_instances": [{"id": "qwen3-8b", "config": {"context_length": 8192}}],
            }
        ]
    }

    async def v0_answer(_: web.Request) -> web.Response:
        return web.json_response(lacking)

    async def v1_answer(_: web.Request) -> web.Response:
        return web.json_response(v1)

    app = web.Application()
    app.router.add_get("/api/v0/models", v0_answer)
    app.router.add_get("/api/v1/models", v1_answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    provider = ProviderSettings("lm", preset="lmstudio", base_url=f"http://127.0.0.1:{port}/v1")
    model = resolve_model(ModelSettings("qwen3-8b", "lm", context_window=None), provider)
    try:
        async with make_client(Timeouts()) as client:
            served = await read_served(client, model, {})
    finally:
        await runner.cleanup()
    assert served == Served(8192, "loaded in LM Studio")
