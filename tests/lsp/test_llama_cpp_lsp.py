"""tokengauge against a real llama.cpp server (xllamacpp from PyPI, SmolLM2-135M from PyPI): the
window each slot really has, the server's exact count of a model's first request, and its real
overflow error. Real LSP over stdio, real HTTP over loopback, a real model answering."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.llama_cpp import TOOL_TEMPLATE, LlamaCpp, running_llama_cpp
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import READ_FILE, PartLog, chat_params
from tests.lsp.helpers import text_message

CTX = 4096
PARALLEL = 2
SLOT = CTX // PARALLEL
MODEL = "smollm2"


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaCpp]:
    """Two slots of 2,048 tokens; a template that puts the tools in the prompt."""
    with running_llama_cpp(CTX, PARALLEL, chat_template=TOOL_TEMPLATE, alias=MODEL) as server:
        yield server


@pytest_lsp.fixture(config=SERVER)
async def client(
    lsp_client: LanguageClient, tmp_path: Path, llama: LlamaCpp, request: pytest.FixtureRequest
):
    """tokengauge with the llama.cpp preset; the model's settings from the test's parameter."""
    lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
    settings: dict[str, Any] = getattr(request, "param", {})
    await initialize(
        lsp_client,
        {
            "storageDir": str(tmp_path / "storage"),
            "logLevel": "debug",
            "providers": [{"id": "llamacpp", "preset": "llamacpp", "baseUrl": llama.url + "/v1"}],
            "models": [{"id": MODEL, "provider": "llamacpp", "maxOutputTokens": 48, **settings}],
        },
    )
    yield
    await lsp_client.shutdown_session()


def turn(words: int) -> list[dict[str, Any]]:
    return [
        text_message("system", "You are terse."),
        text_message("user", "Summarize this log. " + "gateway answered 502 after 41 ms; " * words),
    ]


async def chat(client: LanguageClient, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    params = chat_params(MODEL, messages, tools=[READ_FILE], modelOptions={"temperature": 0})
    await call(client, "tokenGauge/chat", params)
    return client.part_log.of(params["requestId"])  # type: ignore[attr-defined,no-any-return]


async def model_info(client: LanguageClient) -> dict[str, Any]:
    [info] = await call(client, "tokenGauge/models", {})
    return info  # type: ignore[no-any-return]


async def records(client: LanguageClient) -> list[dict[str, Any]]:
    return (await call(client, "tokenGauge/dashboard", {}))["requests"]  # type: ignore[no-any-return]


async def test_each_slots_window_is_offered_and_the_first_request_is_exact(client: LanguageClient):
    await chat(client, turn(40))
    info = await model_info(client)
    assert info["contextWindow"] == SLOT
    assert "llama.cpp's n_ctx per slot, 2 slots sharing the server's context" in info["tooltip"]
    assert info["maxInputTokens"] + info["maxOutputTokens"] <= SLOT
    [first] = await records(client)
    # The server's own count before sending: the estimate is the count it then reported.
    assert first["inputTokens"] > 100
    assert abs(first["estimatedTokens"] - first["inputTokens"]) <= 0.01 * first["inputTokens"]
    await chat(client, turn(80))
    second = (await records(client))[-1]
    assert second["outcome"] == "answered" and second["retries"] == 0
    assert abs(second["estimatedTokens"] - second["inputTokens"]) <= 0.1 * second["inputTokens"]


@pytest.mark.parametrize("client", [{"contextWindow": 16384}], indirect=True)
async def test_its_real_overflow_error_teaches_the_window_and_the_turn_still_answers(
    client: LanguageClient,
):
    # The person's contextWindow wins over the server's reading: a request over a slot is sent,
    # refused with llama.cpp's exceed_context_size_error, fitted to what it said, and answered.
    parts = await chat(client, turn(600))
    text = "".join(p["value"] for p in parts if p["type"] == "text")
    assert text.startswith("*Token Gauge: this request did not fit")
    info = await model_info(client)
    assert info["contextWindow"] == SLOT
    assert "llama.cpp's n_ctx per slot" in info["tooltip"]
    rows = await records(client)
    assert rows[-1]["outcome"] == "answered" and rows[-1]["inputTokens"] < SLOT
