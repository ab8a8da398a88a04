"""Helpers for the end-to-end tests: test models, initializationOptions, plain JSON results."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lsprotocol.types import ClientCapabilities, InitializeParams
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client

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
    """initializationOptions as the extension sends them."""
    return {
        "storageDir": str(storage),
        "providers": PROVIDERS,
        "models": MODELS,
        "logLevel": "debug",
    }


async def initialize(client: LanguageClient, options: dict[str, Any]) -> None:
    """The LSP handshake with tokengauge's options."""
    await client.initialize_session(
        InitializeParams(capabilities=ClientCapabilities(), initialization_options=options)
    )


def plain(value: Any) -> Any:
    """pygls' client hands results back as namedtuples; turn them into plain JSON again."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


async def call(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request and return its result as plain JSON."""
    return plain(await client.protocol.send_request_async(method, params))


def text_message(role: str, *texts: str) -> dict[str, Any]:
    """A DESIGN §3 message of text parts."""
    return {"role": role, "content": [{"type": "text", "value": text} for text in texts]}


@contextlib.asynccontextmanager
async def running_server(options: dict[str, Any]) -> AsyncIterator[LanguageClient]:
    """A separately spawned server (for restarts and unusual storage), shut down on exit."""
    client = make_test_lsp_client()
    await client.start_io(sys.executable, "-m", "tokengauge")
    try:
        await initialize(client, options)
        yield client
        await client.shutdown_session()
    finally:
        process = client._server
        if process is not None and process.returncode is None:
            process.kill()  # the test failed before a clean shutdown
        await client.stop()


def expect_notification(client: LanguageClient, method: str) -> asyncio.Future[Any]:
    """Start waiting for a notification before the request that triggers it."""
    return asyncio.ensure_future(client.wait_for_notification(method))
