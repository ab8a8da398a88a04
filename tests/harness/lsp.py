"""`python -m tokengauge` over stdio, and the clients that talk to it: one way for tests and bench.

`SERVER_COMMAND` is how the server starts (this Python, so the environment carries over) and
`spawned` runs it under a pygls client and always stops it; `init_options` builds what it is
initialized with. Three clients:
- pytest-lsp's, for the tests: `SERVER` for `@pytest_lsp.fixture`, `running_server` for a server
  of the test's own; `initialize`, `call` (results back as plain JSON) and `expect_notification`;
- pygls' with lsprotocol's plain converter, for the bench (`spawn_server`): custom params and
  results stay plain JSON, as `vscode-jsonrpc` hands them to the extension;
- `BareClient`, JSON-RPC framed by hand over the server's pipes (`bare_server`): the server's
  figures without a client library's cost, and any number of requests in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import IO, Any, Final, Protocol

import attrs
from lsprotocol import converters, types
from pygls.lsp.client import LanguageClient
from pytest_lsp import ClientServerConfig
from pytest_lsp import LanguageClient as TestClient
from pytest_lsp.client import make_test_lsp_client

from tokengauge import protocol

SERVER_COMMAND: Final = (sys.executable, "-m", "tokengauge")
SERVER: Final = ClientServerConfig(server_command=list(SERVER_COMMAND))
"""The server for `@pytest_lsp.fixture(config=SERVER)`."""
STOP_TIMEOUT_S: Final = 10.0
"""How long a server gets to answer `shutdown` and to exit before it is killed."""
NOTIFICATIONS: Final = (*sorted(protocol.NOTIFICATIONS), types.WINDOW_LOG_MESSAGE)
"""Every notification the server sends."""

Handler = Callable[[Any], None]


@contextlib.asynccontextmanager
async def spawned(
    client: LanguageClient, command: Sequence[str] = SERVER_COMMAND
) -> AsyncIterator[asyncio.subprocess.Process]:
    """Start the server under `client` (not initialized). On the way out a server that did not
    shut down is killed, and the client stopped."""
    await client.start_io(*command)
    process = client._server
    if process is None:
        raise RuntimeError("the server process did not start")
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(client.stop(), STOP_TIMEOUT_S)  # type: ignore[no-untyped-call]


def plain(value: Any) -> Any:
    """pygls' default converter hands custom results over as namedtuples: plain JSON again."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def init_options(
    storage: str | os.PathLike[str],
    providers: Sequence[Mapping[str, Any]],
    models: Sequence[Mapping[str, Any]] = (),
    log_level: str | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """tokengauge's `initializationOptions` as the extension sends them: the storage directory,
    the providers and models, the log level if given, and any other setting by its name
    (`connectTimeout=5`, `telemetry={...}`; ARCHITECTURE §6)."""
    options: dict[str, Any] = {
        "storageDir": os.fspath(storage),
        "providers": [dict(p) for p in providers],
        "models": [dict(m) for m in models],
    }
    if log_level is not None:
        options["logLevel"] = log_level
    return {**options, **settings}


# --- the tests: pytest-lsp ------------------------------------------------------------------------


async def initialize(client: TestClient, options: dict[str, Any]) -> None:
    """The LSP handshake with tokengauge's `initializationOptions`."""
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(), initialization_options=options
    )
    await client.initialize_session(params)


async def call(client: LanguageClient, method: str, params: Any) -> Any:
    """Send a request and return its result as plain JSON."""
    return plain(await client.protocol.send_request_async(method, params))


def expect_notification(client: TestClient, method: str) -> asyncio.Future[Any]:
    """Start waiting for a notification before the request that triggers it."""
    return asyncio.ensure_future(client.wait_for_notification(method))


@contextlib.asynccontextmanager
async def running_server(
    options: dict[str, Any], command: Sequence[str] = SERVER_COMMAND
) -> AsyncIterator[TestClient]:
    """A server of a test's own (restarts, unusual storage; started by `command`), initialized,
    shut down cleanly."""
    client = make_test_lsp_client()
    async with spawned(client, command):
        await initialize(client, options)
        yield client
        await client.shutdown_session()


# --- the bench: pygls' client, plain JSON ---------------------------------------------------------


def plain_client(handlers: Mapping[str, Handler] | None = None) -> LanguageClient:
    """pygls' client with lsprotocol's plain converter (no namedtuples). Every notification the
    server sends is handled: by `handlers` where given, else dropped."""
    client = LanguageClient("tokengauge-harness", "0", converter_factory=converters.get_converter)
    chosen = dict(handlers or {})
    for method in NOTIFICATIONS:
        client.feature(method)(chosen.pop(method, lambda params: None))
    for method, handler in chosen.items():
        client.feature(method)(handler)
    return client


@attrs.define
class LspServer:
    """A running server and the pygls client talking to it."""

    client: LanguageClient
    process: asyncio.subprocess.Process
    stderr: list[bytes] = attrs.field(factory=list)
    """The last lines the server wrote to stderr."""

    async def initialize(self, options: dict[str, Any]) -> None:
        """`initialize` with these `initializationOptions`, then `initialized`."""
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options=options
        )
        await self.client.initialize_async(params)
        self.client.initialized(types.InitializedParams())

    async def request(self, method: str, params: Any) -> Any:
        """One request, awaited; params and result as plain JSON."""
        return await self.client.protocol.send_request_async(method, params)

    async def shut_down(self) -> None:
        """`shutdown` + `exit`, and the wait for the process, each bounded."""
        with contextlib.suppress(Exception):
            if self.process.returncode is None and not self.client.stopped:
                await asyncio.wait_for(self.client.shutdown_async(None), STOP_TIMEOUT_S)
                self.client.exit(None)
            await asyncio.wait_for(self.process.wait(), STOP_TIMEOUT_S)


async def keep_tail(stream: asyncio.StreamReader | None, sink: list[bytes]) -> None:
    """Read the server's stderr so it never blocks on a full pipe; keep the last lines."""
    if stream is None:
        return
    while line := await stream.readline():
        sink.append(line)
        del sink[:-50]


@contextlib.asynccontextmanager
async def spawn_server(client: LanguageClient | None = None) -> AsyncIterator[LspServer]:
    """The server under `client` (a `plain_client()` by default), not yet initialized; stopped
    cleanly on the way out. After an error inside the block its last stderr lines are printed."""
    client = client or plain_client()
    async with spawned(client) as process:
        server = LspServer(client, process)
        reader = asyncio.create_task(keep_tail(process.stderr, server.stderr))
        try:
            yield server
        except BaseException:
            tail = b"".join(server.stderr[-20:]).decode(errors="replace")
            print(f"server stderr (last lines):\n{tail}", file=sys.stderr)
            raise
        finally:
            await server.shut_down()
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(reader, STOP_TIMEOUT_S)


# --- no client library: JSON-RPC framed by hand ---------------------------------------------------


def frame(message: Any) -> bytes:
    """One message as the LSP base protocol frames it (NaN and Infinity written as Python does)."""
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """One framed message from a server's output (blocking); None at its end."""
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if not length:
        return None
    message: dict[str, Any] = json.loads(stream.read(length))
    return message


def frames(data: bytes) -> list[dict[str, Any]]:
    """Every framed message in `data` (a finished server's whole output)."""
    stream = io.BytesIO(data)
    messages = []
    while (message := read_frame(stream)) is not None:
        messages.append(message)
    return messages


@attrs.define
class BareClient:
    """JSON-RPC over a running server's stdin and stdout; `read_messages` (a task) routes what
    comes back: answers to their requests, notifications to `on_notification` as they are parsed,
    and the server's own requests answered with `null`."""

    process: asyncio.subprocess.Process
    on_notification: Handler | None = None
    last_id: int = 0
    pending: dict[int, asyncio.Future[dict[str, Any]]] = attrs.field(factory=dict)

    def send(self, message: dict[str, Any]) -> None:
        """Write one message (`jsonrpc` added)."""
        if self.process.stdin is None:
            raise RuntimeError("the server has no stdin")
        self.process.stdin.write(frame({"jsonrpc": "2.0", **message}))

    async def receive(self) -> dict[str, Any]:
        """Read the next message; `ConnectionError` once the server has closed its output."""
        if self.process.stdout is None:
            raise RuntimeError("the server has no stdout")
        length = 0
        while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if not length:
            raise ConnectionError("the server closed its output")
        message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
        return message

    async def read_messages(self) -> None:
        """Until the server closes its output; then every request still waiting fails."""
        with contextlib.suppress(ConnectionError):
            while True:
                message = await self.receive()
                if "method" not in message:
                    future = self.pending.pop(message.get("id", -1), None)
                    if future is not None and not future.done():
                        future.set_result(message)
                elif "id" in message:
                    self.send({"id": message["id"], "result": None})
                elif self.on_notification is not None:
                    self.on_notification(message)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its output"))

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        """One request; the whole answer, `result` or `error`."""
        self.last_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.last_id] = future
        self.send({"id": self.last_id, "method": method, "params": params})
        return await future

    async def request(self, method: str, params: Any) -> Any:
        """One request: its result, or `RuntimeError` for an error answer."""
        answer = await self.call(method, params)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer.get("result")

    async def initialize(self, options: dict[str, Any]) -> None:
        """`initialize` with these `initializationOptions`, then `initialized`."""
        await self.request("initialize", {"capabilities": {}, "initializationOptions": options})
        self.send({"method": "initialized", "params": {}})

    async def shut_down(self) -> None:
        """`shutdown` + `exit`, if the server still answers."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), STOP_TIMEOUT_S)
            self.send({"method": "exit"})


@contextlib.asynccontextmanager
async def bare_server(
    options: dict[str, Any],
    on_notification: Handler | None = None,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] = SERVER_COMMAND,
) -> AsyncIterator[BareClient]:
    """The server on pipes (stderr discarded; `env` its environment, else this one's; `command`
    how it starts), initialized, for a `BareClient`; shut down on the way out, killed if it does
    not exit."""
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    client = BareClient(process, on_notification)
    reader = asyncio.create_task(client.read_messages())
    try:
        await client.initialize(options)
        yield client
    finally:
        await client.shut_down()
        try:
            await asyncio.wait_for(process.wait(), STOP_TIMEOUT_S)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(reader, STOP_TIMEOUT_S)


class Endpoint(Protocol):
    """What a bench asks of either way of talking to the server (`LspServer`, `BareClient`)."""

    @property
    def process(self) -> asyncio.subprocess.Process: ...

    async def request(self, method: str, params: Any) -> Any: ...
