"""Where the API caches only at marks, the requests mark it, end to end: through the Messages
dialect and through OpenRouter's Chat Completions for a Claude model, the next request of a tool
loop reads the one before from the test upstream's cache (Anthropic's rule); another OpenRouter
model carries no marks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import pytest_lsp
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import SERVER, call, initialize
from tests.lsp.chat_helpers import READ_FILE, caching_upstream, chat_params, tool_round
from tests.lsp.helpers import text_message

SIZES: Final = {"contextWindow": 200_000, "maxOutputTokens": 4096}


def options(storage: str, base_url: str) -> dict[str, Any]:
    return {
        "storageDir": storage,
        "providers": [
            {"id": "or", "preset": "openrouter", "baseUrl": base_url + "/v1", "discover": False},
            {"id": "an", "dialect": "anthropic", "baseUrl": base_url},
        ],
        "models": [
            {"id": "anthropic/claude-sonnet-4", "provider": "or", **SIZES},
            {"id": "openai/gpt-5", "provider": "or", **SIZES},
            {"id": "claude-sonnet-4-5", "provider": "an", **SIZES},
        ],
        "idleTimeout": 5,
        "retryBaseDelay": 0.05,
    }


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    async with caching_upstream() as up:
        lsp_client.upstream = up  # type: ignore[attr-defined]
        await initialize(lsp_client, options(str(tmp_path / "storage"), up.base_url))
        yield
        await lsp_client.shutdown_session()


def loop(rounds: int) -> list[dict[str, Any]]:
    messages = [
        text_message("system", "You are an expert AI programming assistant. " * 120),
        text_message("user", "Review ledger.py and its tests."),
    ]
    for n in range(rounds):
        messages += tool_round(f"c{n}", f"ledger_{n}.py", f"def post_{n}(entry):\n    pass\n" * 60)
    return messages


async def requests_of(client: LanguageClient, model: str) -> list[Any]:
    upstream: Upstream = client.upstream  # type: ignore[attr-defined]
    upstream.reset()
    for rounds in (1, 2):
        await call(client, "tokenGauge/chat", chat_params(model, loop(rounds), tools=[READ_FILE]))
    return upstream.model_requests


async def test_a_claude_model_reads_the_request_before_from_the_cache(client: LanguageClient):
    for model in ("anthropic/claude-sonnet-4", "claude-sonnet-4-5"):
        first, second = await requests_of(client, model)
        assert "cache_control" in first.body.decode() and "cache_control" in second.body.decode()
        assert first.prompt_tokens is not None and second.cached_tokens is not None
        assert second.cached_tokens >= first.prompt_tokens * 0.95, model


async def test_another_openrouter_model_carries_no_marks(client: LanguageClient):
    first, second = await requests_of(client, "openai/gpt-5")
    assert "cache_control" not in first.body.decode() + second.body.decode()
    assert second.cached_tokens  # OpenAI's rule: cached without marks
