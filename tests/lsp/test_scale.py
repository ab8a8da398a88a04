"""A provider that lists tens of thousands of models: counts are answered while the listing is
taken in (over real LSP; the catalog is built off the server's loop).

Taken in on the loop, 100,000 listed models held every other request for 24 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.harness.lsp import call, running_server

LISTED = 50_000


@contextlib.asynccontextmanager
async def listing(models: int) -> AsyncIterator[str]:
    """An OpenAI-style `/v1/models` of `models` models on loopback; yields the base URL."""
    data = [{"id": f"vendor/model-{i:06d}", "context_length": 131_072} for i in range(models)]
    body = json.dumps({"object": "list", "data": data})

    async def answer(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/v1/models", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


async def read(client: Any, words: str) -> None:
    """Wait for the server to log `words` (its log comes in order with its answers)."""
    while not any(words in message.message for message in client.log_messages):
        await asyncio.sleep(0.01)


async def test_counts_are_answered_while_a_long_listing_is_taken_in(tmp_path: Path):
    async with listing(LISTED) as base_url:
        options: dict[str, Any] = {
            "storageDir": str(tmp_path / "storage"),
            "providers": [
                {"id": "big", "dialect": "openai", "baseUrl": base_url},
                {"id": "openai", "baseUrl": "http://127.0.0.1:9/v1", "discover": False},
            ],
            "models": [{"id": "gpt-4o", "provider": "openai"}],
            "logLevel": "info",
        }
        async with running_server(options) as client:
            ping = {"modelId": "gpt-4o", "inputs": ["ping"]}
            await call(client, "tokenGauge/countTokens", ping)  # the encoding is loaded
            discovery = asyncio.ensure_future(call(client, "tokenGauge/discoverModels", {}))
            await read(client, f"big lists {LISTED} models")  # read: the catalog is next
            answered_meanwhile = 0
            while not discovery.done():
                pinged = asyncio.ensure_future(call(client, "tokenGauge/countTokens", ping))
                await asyncio.wait([pinged, discovery], return_when=asyncio.FIRST_COMPLETED)
                if pinged.done() and not discovery.done():
                    answered_meanwhile += 1
                await pinged
            [report] = (await discovery)["providers"]
            assert report["models"] == LISTED
            # Taken in on the loop, a count sent once the listing was read waited for the end.
            assert answered_meanwhile > 0
