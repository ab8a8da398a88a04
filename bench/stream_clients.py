"""The two clients through which `stream_bench.py` talks to `python -m tokengauge` over stdio.

`Session` is pygls' client, as the bench's main measurements use it; `BareClient` frames JSON-RPC
by hand, to tell the server's share from pygls'. Both stamp each `tokenGauge/chatPart` with
`perf_counter_ns` as it arrives (`arrivals`), and both point the server at the bench upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol

import attrs
from lsprotocol import types

import benchlib
from benchlib import STOP_TIMEOUT_S, BarePipe, LspServer, bare_process, bench_client, now
from stream_upstream import ANTHROPIC, OPENAI
from tokengauge.protocol import CHAT_PART, MODELS_CHANGED, STATUS


def init_options(storage: Path, base_url: str) -> dict[str, Any]:
    """`initializationOptions`: one provider per dialect, both on the bench upstream."""
    return {
        "storageDir": str(storage),
        "providers": [
            {"id": "bench-openai", "dialect": "openai", "baseUrl": f"{base_url}/v1"},
            {"id": "bench-anthropic", "dialect": "anthropic", "baseUrl": base_url},
        ],
        "models": [
            {"id": OPENAI.model_id, "provider": "bench-openai"},
            {"id": ANTHROPIC.model_id, "provider": "bench-anthropic"},
        ],
    }


def as_json(value: Any) -> Any:
    """Plain JSON from what pygls hands over (dicts, or namedtuples with some converters)."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: as_json(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [as_json(item) for item in value]
    return value


Arrival = tuple[int, Any]
"""(perf_counter_ns when handled, the notification's params)."""


@attrs.define
class Session:
    """A spawned server with pygls' client, and the `chatPart` notifications it has handled."""

    server: LspServer
    arrivals: list[Arrival]

    @property
    def process(self) -> asyncio.subprocess.Process:
        """The server's process."""
        return self.server.process

    async def request(self, method: str, params: Any) -> Any:
        return await self.server.request(method, params)


@contextlib.asynccontextmanager
async def spawn_server(storage: Path, base_url: str) -> AsyncIterator[Session]:
    """Start and initialize `python -m tokengauge` with a pygls client; always stop it cleanly."""
    client = bench_client()
    arrivals: list[Arrival] = []

    def on_part(params: Any) -> None:  # pygls registers plain functions, not bound methods.
        arrivals.append((now(), params))

    client.feature(CHAT_PART)(on_part)
    for method in (STATUS, MODELS_CHANGED, types.WINDOW_LOG_MESSAGE):
        client.feature(method)(lambda params: None)
    async with benchlib.spawn_server(client) as server:
        await server.initialize(init_options(storage, base_url))
        yield Session(server, arrivals)


@attrs.define
class BareClient(BarePipe):
    """Bare JSON-RPC: the server's figures without pygls' client cost.

    A reader task stamps each `tokenGauge/chatPart` as soon as its body is parsed.
    """

    arrivals: list[Arrival] = attrs.field(factory=list)
    pending: dict[int, asyncio.Future[Any]] = attrs.field(factory=dict)

    async def request(self, method: str, params: Any) -> Any:
        self.last_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.last_id] = future
        self.send({"id": self.last_id, "method": method, "params": params})
        return await future

    async def read_messages(self) -> None:
        """Until the server closes its output: stamp parts, resolve requests."""
        with contextlib.suppress(ConnectionError):
            while True:
                message = await self.receive()
                if message.get("method") == CHAT_PART:
                    self.arrivals.append((now(), message["params"]))
                elif "method" in message and "id" in message:
                    self.send({"id": message["id"], "result": None})
                elif "id" in message and "method" not in message:
                    self.settle(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its output"))

    def settle(self, message: dict[str, Any]) -> None:
        future = self.pending.pop(message["id"], None)
        if future is None or future.done():
            return
        if "error" in message:
            future.set_exception(RuntimeError(f"{message['error']}"))
        else:
            future.set_result(message.get("result"))


@contextlib.asynccontextmanager
async def spawn_bare(storage: Path, base_url: str) -> AsyncIterator[BareClient]:
    """Start and initialize `python -m tokengauge` for a `BareClient`; always stop it cleanly."""
    async with bare_process() as process:
        client = BareClient(process)
        reader = asyncio.create_task(client.read_messages())
        try:
            await client.initialize(init_options(storage, base_url))
            yield client
        finally:
            await client.shut_down()
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, ConnectionError):
                await asyncio.wait_for(reader, STOP_TIMEOUT_S)


class Endpoint(Protocol):
    """What a chat needs of a client: `Session` (pygls) or `BareClient`."""

    @property
    def process(self) -> asyncio.subprocess.Process: ...

    arrivals: list[Arrival]

    async def request(self, method: str, params: Any) -> Any: ...
