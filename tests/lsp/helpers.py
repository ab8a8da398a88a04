"""Helpers for the end-to-end tests: test models, initializationOptions, wire messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.harness import lsp
from tests.harness.lsp import call

MODELS: list[dict[str, Any]] = [
    {"id": "gpt-4o", "provider": "openai", "name": "GPT-4o"},
    {"id": "claude-sonnet-4-5", "provider": "anthropic", "name": "Claude Sonnet 4.5"},
    {
        "id": "local-small",
        "provider": "local",
        "contextWindow": 8192,
        "maxOutputTokens": 2048,
        "family": "llama-3.1",
    },
]
PROVIDERS: list[dict[str, Any]] = [
    {"id": "openai", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"},
    {"id": "anthropic", "dialect": "anthropic", "baseUrl": "http://127.0.0.1:9"},
    {"id": "local", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"},
]


def init_options(storage: Path) -> dict[str, Any]:
    """initializationOptions as the extension sends them, with the test providers and models."""
    return lsp.init_options(storage, PROVIDERS, MODELS, log_level="debug")


def text_message(role: str, *texts: str) -> dict[str, Any]:
    """A wire message (ARCHITECTURE §3) of text parts."""
    return {"role": role, "content": [{"type": "text", "value": text} for text in texts]}


async def told_per_true(client: Any, model_id: str) -> float:
    """Tokens in the units VS Code is told of the model's window, per true token: counts are in
    those units (`models.declared`)."""
    models = {m["id"]: m for m in await call(client, "tokenGauge/models", {})}
    report = {m["id"]: m for m in (await call(client, "tokenGauge/usage", {}))["models"]}
    return float(models[model_id]["maxInputTokens"] / report[model_id]["maxInputTokens"])
