"""The model picker's options end to end over LSP: the models say what may be picked, and a chat
carrying a pick (VS Code hands it over as `modelConfiguration`; the extension puts it in the
`modelOptions`) is sent with it; a smaller context size becomes the model's window at once, a
compaction window (picked, or `compactAt`) the window Copilot is told of while requests may still
use the whole one."""

from __future__ import annotations

from pathlib import Path

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.config import UpstreamConfig
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import PartLog, chat_options, chat_params
from tests.lsp.helpers import text_message


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    """The server with a 1M-token model, a reasoning model and a 32K model that Copilot is told
    is a 16K one on the test upstream (which refuses prompts over 32K)."""
    config = UpstreamConfig()
    config.model.context_window = 32_000
    config.model.check_max_tokens = False  # the 1M model's output cap is not the point here
    async with running_upstream(config) as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        lsp_client.part_log = PartLog(lsp_client)  # type: ignore[attr-defined]
        models = [
            {"id": "gpt-4.1", "provider": "up-openai"},
            {"id": "gpt-5", "provider": "up-openai", "options": {"reasoningEffort": "low"}},
            {
                "id": "acme-32k",
                "provider": "up-openai",
                "contextWindow": 32_000,
                "compactAt": 16_000,
            },
        ]
        await initialize(
            lsp_client, chat_options(str(tmp_path / "storage"), up.base_url, models=models)
        )
        yield
        await lsp_client.shutdown_session()


async def models(client: LanguageClient) -> dict[str, dict]:
    return {m["id"]: m for m in await call(client, "tokenGauge/models", {})}


async def hi(client: LanguageClient, model: str, **picked: object) -> None:
    """A chat of one word, with what the model picker picked."""
    params = chat_params(model, [text_message("user", "hi")], modelOptions=picked)
    await call(client, "tokenGauge/chat", params)


async def test_the_models_say_what_may_be_picked(client: LanguageClient):
    listed = await models(client)
    wide = listed["gpt-4.1"]["choices"]
    window = listed["gpt-4.1"]["contextWindow"]
    assert wide == {
        "contextSize": {"values": [200_000, window], "default": window},
        "compactAt": {"values": [128_000, 200_000, window], "default": window},
        "toolDocs": {"values": ["full", "progressive", "minimal"], "default": "full"},
    }
    assert listed["gpt-5"]["choices"]["reasoningEffort"] == {
        "values": ["minimal", "low", "medium", "high"],
        "default": "low",  # the model's settings
    }


async def test_a_picked_effort_is_sent_and_a_smaller_context_becomes_the_window(
    client: LanguageClient,
):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    before = (await models(client))["gpt-4.1"]
    await hi(client, "gpt-5", reasoningEffort="high")
    assert upstream.model_requests[-1].json["reasoning_effort"] == "high"
    await hi(client, "gpt-4.1", contextSize=200_000)
    body = upstream.model_requests[-1].json
    assert "contextSize" not in body and "context_size" not in body  # never the API's business
    assert client.part_log.models_changed == 1  # type: ignore[attr-defined]
    after = (await models(client))["gpt-4.1"]
    assert after["contextWindow"] == 200_000 < before["contextWindow"]
    assert after["maxInputTokens"] + after["maxOutputTokens"] == 200_000
    # The same pick again changes nothing; the whole window again restores it.
    await hi(client, "gpt-4.1", contextSize=200_000)
    assert client.part_log.models_changed == 1  # type: ignore[attr-defined]
    await hi(client, "gpt-4.1", contextSize=before["contextWindow"])
    assert client.part_log.models_changed == 2  # type: ignore[attr-defined]
    assert (await models(client))["gpt-4.1"] == before


async def test_a_compaction_window_is_told_to_copilot_and_requests_still_use_the_whole_window(
    client: LanguageClient,
):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    log: PartLog = client.part_log  # type: ignore[attr-defined]
    small = (await models(client))["acme-32k"]
    assert small["contextWindow"] == 32_000  # the model's own, as the picker's detail says
    assert small["maxInputTokens"] + small["maxOutputTokens"] == 16_000  # what Copilot meters
    assert "Copilot is told of a 16k window" in small["tooltip"]
    assert "may still use the whole 32k" in small["tooltip"]
    # A request over the compaction window (a tool round that grew past it) goes whole.
    text = "Summarize this log.\n" + "worker 7 flushed 512 pages to the ledger\n" * 1_400
    params = chat_params("acme-32k", [text_message("user", text)])
    await call(client, "tokenGauge/chat", params)
    sent = upstream.model_requests[-1]
    assert sent.prompt_tokens is not None and small["maxInputTokens"] < sent.prompt_tokens
    assert sent.json["messages"][-1]["content"] == text
    [usage] = [p for p in log.of(params["requestId"]) if p["type"] == "usage"]
    assert "trimmed" not in usage


async def test_a_picked_compaction_window_moves_what_copilot_is_told_only(client: LanguageClient):
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    before = (await models(client))["gpt-4.1"]
    await hi(client, "gpt-4.1", compactAt=200_000)
    body = upstream.model_requests[-1].json
    assert "compactAt" not in body and "compact_at" not in body  # never the API's business
    assert client.part_log.models_changed == 1  # type: ignore[attr-defined]
    after = (await models(client))["gpt-4.1"]
    assert after["contextWindow"] == before["contextWindow"] > 200_000
    assert after["maxInputTokens"] + after["maxOutputTokens"] == 200_000
    assert after["maxOutputTokens"] == before["maxOutputTokens"]  # the same room for the answer
    await hi(client, "gpt-4.1", compactAt=before["contextWindow"])
    assert client.part_log.models_changed == 2  # type: ignore[attr-defined]
    assert (await models(client))["gpt-4.1"] == before
