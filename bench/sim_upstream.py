"""The fake upstream (`tests/harness/fake_upstream`) as a subprocess on 127.0.0.1, driven over
`/_control`.

`python -m tests.harness.fake_upstream.server --port 0 --config JSON --watch-stdin` runs the
deterministic "model": its true tokenizer (encoding, scale, per-message / per-tool / fixed
overheads, image cost) decides the real prompt size, it reports real usage, and it refuses a prompt
that does not fit the window (or whose `max_tokens` would not fit beside it) with OpenAI's real 400
body. The simulator sets the model per skew, clears the recorded requests before each send (so the
upstream's memory stays flat and the last request is easy to find) and reads the true size of a
refused request back from the record. `TrueTokenizer.count_*` make the same counts in process (for
the "exact" counter).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import attrs
import httpx

REPO: Final = Path(__file__).resolve().parents[1]
START_TIMEOUT_S: Final = 20.0


@attrs.frozen
class TrueTokenizer:
    """How the upstream's model really counts (`ModelBehavior` of
    tests/harness/fake_upstream/config.py): `ceil(scale × Σ message tokens) + per_message_overhead
    × messages + ceil(tool_scale × Σ tokens(JSON(tool))) + per_tool_overhead × tools +
    fixed_overhead`, and how it says no."""

    encoding: str = "cl100k_base"
    scale: float = 1.0
    tool_scale: float = 1.0
    per_message_overhead: int = 5
    per_tool_overhead: int = 4
    fixed_overhead: int = 3
    image_tokens: int = 765
    error_style: str = "openai"

    def behavior(self, window: int) -> dict[str, Any]:
        """The `model` section of the upstream's config for a window of `window` tokens."""
        return attrs.asdict(self) | {"context_window": window, "check_max_tokens": True}


@attrs.define
class Upstream:
    """A running upstream process and an HTTP client for its control API."""

    base_url: str
    process: asyncio.subprocess.Process
    client: httpx.AsyncClient

    async def control(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        """One `/_control/<path>` call; its JSON answer."""
        response = await self.client.request(
            method, f"{self.base_url}/_control/{path}", json=body, params=params
        )
        response.raise_for_status()
        return response.json()

    async def configure(self, tokenizer: TrueTokenizer, window: int) -> None:
        """Set the true tokenizer and the window (the rest of the config stays)."""
        await self.control("POST", "config", {"model": tokenizer.behavior(window)})

    async def forget(self) -> None:
        """Drop the recorded requests (their bodies are large)."""
        await self.control("POST", "reset", {"config": False})

    async def true_count(self, body: dict[str, Any]) -> int:
        """The model's true prompt size of an OpenAI request body (nothing is sent to it)."""
        count = await self.control("POST", "count", {"dialect": "openai", "body": body})
        return int(count["total"])

    async def model_requests(self) -> list[int]:
        """The true prompt size of each model request since `forget` (a retry makes two)."""
        records = await self.control("GET", "requests", route="chat")
        counts = [r.get("prompt_tokens") for r in records.get("requests", [])]
        return [c for c in counts if isinstance(c, int)]


@contextlib.asynccontextmanager
async def running_upstream(
    tokenizer: TrueTokenizer, window: int, python: str
) -> AsyncIterator[Upstream]:
    """Start the upstream with this model; stop it (stdin EOF, then terminate) on exit."""
    config = {"model": tokenizer.behavior(window)}
    process = await asyncio.create_subprocess_exec(
        python, "-m", "tests.harness.fake_upstream.server", "--port", "0",
        "--config", json.dumps(config), "--watch-stdin",
        cwd=REPO, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT_S)
        base_url = line.decode().strip()
        if not base_url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the test upstream did not start: {line!r}")
        async with httpx.AsyncClient(timeout=60) as client:
            yield Upstream(base_url, process, client)
    finally:
        await _stop(process)


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 5)
    except asyncio.TimeoutError:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
