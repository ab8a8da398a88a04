"""The test upstream: a real aiohttp HTTP server on 127.0.0.1 speaking the LLM APIs.

In-process::

    async with running_upstream(UpstreamConfig(...)) as up:
        up.base_url                       # "http://127.0.0.1:<port>"
        up.script(Scripted(fixture="anthropic-stream-text"))
        ...; up.requests[-1].headers["x-api-key"]

Standalone: ``python -m tests.harness.fake_upstream.server --port 0 --config '{"listing":
"openai"}'`` prints the base URL on its first stdout line, then serves (control API in
``control.py``) until SIGTERM/SIGINT (or stdin EOF with ``--watch-stdin``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import os
import secrets
import signal
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.harness.fake_upstream import control, respond
from tests.harness.fake_upstream.config import (
    Scripted,
    UpstreamConfig,
    check_scripted,
    from_json,
)
from tests.harness.fake_upstream.loading import Loads, loaded_contexts
from tests.harness.fake_upstream.model import encoding
from tests.harness.fake_upstream.prompt_cache import PromptCache
from tests.harness.fake_upstream.reasoning import Issued
from tests.harness.fake_upstream.records import MODEL_ROUTES, RecordedRequest

HOST = "127.0.0.1"


class Upstream:
    """A test upstream. ``config`` is live: handlers read it on every request."""

    def __init__(self, config: UpstreamConfig | None = None, port: int = 0) -> None:
        self.config = config or UpstreamConfig()
        self.initial_config = copy.deepcopy(self.config)
        self.requests: list[RecordedRequest] = []
        self.reasoning_by_call: dict[str, str] = {}  # Responses call id → its reasoning item's id
        self.reasoning_issued: Issued = {}  # Chat Completions call id → what must come back
        self.prompt_cache = PromptCache()
        self.loads: Loads = {}  # models a request (re)loaded → their context (loading.py)
        self._queue = [copy.deepcopy(item) for item in self.config.script]
        self._port = port
        self._next_id = 1
        # Two upstreams never answer with the same tool call id: the APIs' ids are random.
        self._answer_base = secrets.randbelow(10**9) * 10**6
        self._runner: web.AppRunner | None = None

    async def start(self) -> Upstream:
        """Listen on 127.0.0.1 (port 0: a free one)."""
        encoding(self.config.model.encoding)  # load the tokenizer now, not on the first request
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=0.2
        )
        await self._runner.setup()
        await web.TCPSite(self._runner, HOST, self._port).start()
        self._port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        """Close the listener and every open connection."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Upstream:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        return f"http://{HOST}:{self._port}"

    def url(self, path: str = "") -> str:
        """An absolute URL on this server, e.g. ``up.url("/v1")``."""
        return self.base_url + path

    def script(self, *items: Scripted) -> None:
        """Queue scripted answers; each is consumed by the next matching model request(s)."""
        self._queue += [copy.deepcopy(check_scripted(item)) for item in items]

    @property
    def pending_script(self) -> list[Scripted]:
        """Scripted answers not consumed yet."""
        return list(self._queue)

    def clear_script(self) -> None:
        self._queue.clear()

    def reset(self, config: bool = False) -> None:
        """Forget recorded requests, the script, the models requests loaded and the prompt cache
        (and the config changes, if asked)."""
        self.requests.clear()
        self._queue.clear()
        self.loads.clear()
        self.prompt_cache = PromptCache()
        if config:
            self.config = copy.deepcopy(self.initial_config)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Recorded model requests (chat, messages, responses, Ollama's /api/chat)."""
        return [r for r in self.requests if r.route in MODEL_ROUTES]

    @property
    def truncated_requests(self) -> list[RecordedRequest]:
        """Model requests whose prompt reached the model silently truncated."""
        return [r for r in self.model_requests if r.truncated]

    @property
    def loaded(self) -> dict[str, int]:
        """The models a local server has loaded → the context each is loaded with."""
        return loaded_contexts(self.config, self.loads)

    @property
    def last(self) -> RecordedRequest:
        return self.requests[-1]

    async def wait_for_requests(
        self, count: int = 1, route: str | None = None, timeout: float = 5.0
    ) -> list[RecordedRequest]:
        """Wait until at least ``count`` requests (of ``route``, if given) were recorded."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            found = [r for r in self.requests if route is None or r.route == route]
            if len(found) >= count:
                return found
            if loop.time() > end:
                raise TimeoutError(f"{len(found)} of {count} requests after {timeout}s")
            await asyncio.sleep(0.005)

    def take_script(self, route: str) -> Scripted | None:
        """The next scripted answer for ``route`` (consumed), or None."""
        for index, item in enumerate(self._queue):
            if item.route in ("any", route):
                item.times -= 1
                if item.times <= 0:
                    del self._queue[index]
                return item
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/_control/"):
            return await control.handle(self, request)
        raw = await request.read()
        transport = request.transport
        record = RecordedRequest(
            id=self._next_id,
            answer=self._answer_base + self._next_id,
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={k.lower(): v for k, v in request.headers.items()},
            body=raw,
            json=_parse(raw),
            route=respond.route_of(request.method, request.path),
            peer=str(transport.get_extra_info("peername")) if transport else "",
        )
        self._next_id += 1
        self.requests.append(record)
        try:
            response = await respond.dispatch(self, request, record)
        except asyncio.CancelledError:
            record.mark_disconnected()
            record.finish()
            raise
        if record.status is None:
            record.status = response.status
        record.finish()
        return response


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


@contextlib.asynccontextmanager
async def running_upstream(config: UpstreamConfig | None = None) -> AsyncIterator[Upstream]:
    """Start an upstream on 127.0.0.1:<free port> for the duration of the block."""
    upstream = await Upstream(config).start()
    try:
        yield upstream
    finally:
        await upstream.stop()


def parse_config(text: str) -> UpstreamConfig:
    """``--config`` value: JSON text, or ``@path`` of a JSON file."""
    if text.startswith("@"):
        text = Path(text[1:]).read_text("utf-8")
    return from_json(UpstreamConfig, json.loads(text or "{}"))


async def serve(port: int, config: UpstreamConfig, watch_stdin: bool) -> None:
    """Run until SIGTERM/SIGINT (or stdin EOF); the base URL is the first stdout line."""
    upstream = await Upstream(config, port=port).start()
    print(upstream.base_url, flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if watch_stdin:

        def wait_eof() -> None:
            # The file descriptor, not sys.stdin: a thread blocked in a buffered read holds a lock,
            # and a SIGTERM's exit then aborted the interpreter ("_enter_buffered_busy").
            while os.read(sys.stdin.fileno(), 65536):
                pass
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=wait_eof, daemon=True).start()
    try:
        await stop.wait()
    finally:
        await upstream.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="tokengauge test upstream (127.0.0.1 only)")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument("--config", default="{}", help="UpstreamConfig JSON, or @file.json")
    parser.add_argument("--watch-stdin", action="store_true", help="exit when stdin closes")
    args = parser.parse_args(argv)
    asyncio.run(serve(args.port, parse_config(args.config), args.watch_stdin))


if __name__ == "__main__":
    main()
