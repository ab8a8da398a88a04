"""ARCHITECTURE §5.3 end to end: the API key goes to the API and nowhere else.

A server at `logLevel: "debug"` runs chats with a recognizable canary key through every outcome
(success in both dialects, 429 retries, 401s, API error bodies, overflows and mid-stream error
events that echo the key back, a cancelled chat, model discovery against failing listings), then
every place the key could end up is searched: the raw JSON-RPC transcript of everything the
server sent (`window/logMessage`, `window/showMessage`, `tokenGauge/chatPart`,
`tokenGauge/status`, `tokenGauge/modelsChanged`, results, errors and their `data`), the server's
stderr, every file under `storageDir` (SQLite database and journal, diskcache value files),
and the output of the `count` command line tool run on that storage. Zero hits, while the
upstream's records prove the key really was sent.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol.types import CancelParams
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from pytest_lsp.client import make_test_lsp_client

from tests.harness.fake_upstream import faults
from tests.harness.fake_upstream.config import Scripted, UpstreamConfig
from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import call, initialize, plain, spawned
from tests.lsp.chat_helpers import chat_options, conversation
from tokengauge.upstream.redact import REDACTED

INVALID_PARAMS = -32602
REQUEST_FAILED = -32803
NOTIFICATIONS = ("tokenGauge/chatPart", "tokenGauge/status", "tokenGauge/modelsChanged")


def canary(prefix: str = "sk-tg-CANARY-") -> str:
    """A fresh key nobody could mistake for anything else."""
    return prefix + uuid.uuid4().hex


def needles(key: str) -> list[str]:
    """The key, and its random part on its own (a leak that reshaped the prefix still shows)."""
    return [key, key[-32:]]


def hits(key: str, text: str | bytes) -> list[str]:
    """Which needles occur in `text`."""
    if isinstance(text, bytes):
        return [n for n in needles(key) if n.encode() in text]
    return [n for n in needles(key) if n in text]


class Session:
    """A server over stdio; everything it sends to the client is kept as raw JSON text."""

    def __init__(self, client: LanguageClient, key: str) -> None:
        self.client = client
        self.key = key
        self.transcript: list[str] = []  # every JSON-RPC message from the server, verbatim
        self.notifications: dict[str, list[Any]] = {method: [] for method in NOTIFICATIONS}
        self.errors: list[JsonRpcException] = []
        structure = client.protocol.structure_message

        def keep(data: dict[str, Any]) -> Any:
            if "jsonrpc" in data:  # the whole message (inner objects are plain dicts still)
                self.transcript.append(json.dumps(data))
            return structure(data)

        client.protocol.structure_message = keep  # type: ignore[method-assign]
        for method in NOTIFICATIONS:
            client.feature(method)(self._keeper(method))

    def _keeper(self, method: str) -> Callable[[Any], None]:
        def keep(params: Any) -> None:  # pygls registers plain functions only
            self.notifications[method].append(plain(params))

        return keep

    async def call(self, method: str, params: Any) -> Any:
        return await call(self.client, method, params)

    async def fails(self, method: str, params: Any) -> JsonRpcException:
        """Send a request that must fail; the error is kept for the search."""
        with pytest.raises(JsonRpcException) as caught:
            await self.call(method, params)
        self.errors.append(caught.value)
        return caught.value

    def chat_params(self, model_id: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
        messages = conversation(text) if text else conversation()
        return {
            "requestId": f"req-{uuid.uuid4().hex[:8]}",
            "modelId": model_id,
            "messages": messages,
            "credentials": {"apiKey": self.key},
            **extra,
        }

    def leaks(self, secret: str | None = None) -> dict[str, list[str]]:
        """Every place in the session's output where `secret` (by default the key) shows up."""
        secret = secret or self.key
        found: dict[str, list[str]] = {}
        places: list[tuple[str, str]] = [
            *((f"transcript[{i}]", text) for i, text in enumerate(self.transcript)),
            *(("window/logMessage", m.message) for m in self.client.log_messages),
            *(("window/showMessage", m.message) for m in self.client.messages),
            *(
                (method, json.dumps(params))
                for method, items in self.notifications.items()
                for params in items
            ),
            *(("error", f"{e.code} {e.message} {json.dumps(plain(e.data))}") for e in self.errors),
        ]
        for where, text in places:
            if hits(secret, text):
                found.setdefault(where, []).append(text)
        return found


@contextlib.asynccontextmanager
async def session(options: dict[str, Any], key: str) -> AsyncIterator[Session]:
    """Start `python -m tokengauge`, record it from the first byte, shut it down cleanly."""
    client = make_test_lsp_client()
    async with spawned(client):
        recorded = Session(client, key)
        await initialize(client, options)
        yield recorded
        await client.shutdown_session()
        # pytest-lsp copies the server's stderr to ours until EOF: let it get there.
        forwarder = client._stderr_forwarder
        if forwarder is not None:
            await asyncio.wait_for(asyncio.shield(forwarder), 5)


def storage_files(storage: Path) -> dict[str, bytes]:
    """Every file under `storage`, by relative path, with its bytes."""
    return {
        str(path.relative_to(storage)): path.read_bytes()
        for path in storage.rglob("*")
        if path.is_file()
    }


def file_leaks(key: str, files: dict[str, bytes], label: str) -> dict[str, list[str]]:
    return {f"{label}:{name}": hits(key, data) for name, data in files.items() if hits(key, data)}


def stderr_leaks(key: str, stderr: str) -> dict[str, list[str]]:
    lines = [line for line in stderr.splitlines() if hits(key, line)]
    return {"stderr": lines} if lines else {}


def run_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tokengauge", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def presented_key(request: RecordedRequest) -> str | None:
    """The key a request carried (bearer token or `x-api-key`)."""
    auth = request.header("authorization") or ""
    return request.header("x-api-key") or (auth[7:] if auth.startswith("Bearer ") else None)


# Bodies an API might send back with the key in them.


def openai_error(message: str, code: str | None = None) -> str:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return json.dumps({"error": error})


def anthropic_error(kind: str, message: str) -> str:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}})


def sse(*events: dict[str, Any] | str, named: bool = False) -> str:
    """An event stream; with `named`, each event gets Anthropic's `event:` line from its type."""
    out = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        kind = event.get("type") if isinstance(event, dict) else None
        out.append((f"event: {kind}\n" if named and kind else "") + f"data: {data}\n\n")
    return "".join(out)


def openai_chunk(content: str) -> dict[str, Any]:
    choice = {"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [choice],
    }


def openai_midstream(error: dict[str, Any]) -> str:
    """A stream that starts answering, then carries an error chunk (OpenRouter's shape)."""
    failed = {**openai_chunk(""), "error": error}
    failed["choices"] = [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]
    return sse(openai_chunk("Hel"), failed)


def anthropic_midstream(error: dict[str, Any]) -> str:
    """A Messages stream that starts answering, then ends with an `error` event."""
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 12, "output_tokens": 1},
    }
    return sse(
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "He"}},
        {"type": "error", "error": error},
        named=True,
    )


def secrets_options(storage: Path, up: Upstream) -> dict[str, Any]:
    """Both dialects on the upstream, plus providers whose model listings fail."""
    options = chat_options(str(storage), up.base_url)
    options["providers"] = [
        *options["providers"],
        {"id": "listing-404", "dialect": "openai", "baseUrl": up.url("/replay/no-such-listing")},
        {
            "id": "listing-500",
            "dialect": "openai",
            "baseUrl": up.url("/replay/error-openai-context-length-exceeded?status=500"),
        },
        {"id": "listing-closed", "dialect": "openai", "baseUrl": "http://127.0.0.1:9/v1"},
    ]
    return options


async def test_the_key_reaches_the_api_and_nothing_else(tmp_path: Path, capfd):
    key = canary()
    storage = tmp_path / "storage"
    async with (
        running_upstream(UpstreamConfig()) as up,
        session(secrets_options(storage, up), key) as s,
    ):
        # Success in both dialects.
        for model_id in ("gpt-4o", "claude-sonnet-4-5"):
            result = await s.call("tokenGauge/chat", s.chat_params(model_id))
            assert result["usage"]["prompt_tokens"] > 0

        # 429 twice (the second body names the key), then success.
        up.script(
            faults.rate_limited("openai", retry_after=0.05),
            Scripted(
                body=openai_error(f"Rate limit reached for key {key} on tokens per min"),
                status=429,
                headers={"retry-after": "0.05"},
            ),
        )
        await s.call("tokenGauge/chat", s.chat_params("gpt-4o"))
        assert [r.status for r in up.model_requests[-3:]] == [429, 429, 200]
        assert s.notifications["tokenGauge/status"]  # the retry was announced

        # The upstream's own 401 (OpenAI's echoes the key redacted, like the real API) ...
        up.config.model.require_api_key = canary()
        for model_id in ("gpt-4o", "claude-sonnet-4-5"):
            error = await s.fails("tokenGauge/chat", s.chat_params(model_id))
            assert error.code == REQUEST_FAILED and plain(error.data) == {"kind": "auth"}
        up.config.model.require_api_key = None
        # ... and 401/403 bodies that echo the raw key.
        up.script(
            Scripted(
                body=openai_error(f"Incorrect API key provided: {key}.", "invalid_api_key"),
                status=401,
            ),
            Scripted(
                body=anthropic_error("authentication_error", f"invalid x-api-key: {key}"),
                status=401,
            ),
            Scripted(body=openai_error(f"Key {key} may not use gpt-4o"), status=403),
        )
        for model_id in ("gpt-4o", "claude-sonnet-4-5", "gpt-4o"):
            error = await s.fails("tokenGauge/chat", s.chat_params(model_id))
            assert "rejected the API key" in error.message

        # Other 4xx bodies whose message is shown to the user.
        up.script(
            Scripted(
                body=openai_error(f"Organization of key {key} is not verified for gpt-4o"),
                status=400,
            ),
            Scripted(
                body=anthropic_error("invalid_request_error", f"Key {key}: credit too low"),
                status=400,
            ),
        )
        error = await s.fails("tokenGauge/chat", s.chat_params("gpt-4o"))
        # The body's message is shown, around the key.
        assert "Organization of key " in error.message
        assert " is not verified for gpt-4o" in error.message
        error = await s.fails("tokenGauge/chat", s.chat_params("claude-sonnet-4-5"))
        assert "credit too low" in error.message

        # Overflow bodies naming the key (learned from, logged at warning).
        up.script(
            Scripted(
                body=openai_error(
                    "This model's maximum context length is 128000 tokens. However, your "
                    f"messages resulted in 130000 tokens (key {key}).",
                    "context_length_exceeded",
                ),
                status=400,
            ),
            Scripted(
                body=anthropic_error(
                    "invalid_request_error",
                    f"prompt is too long: 250000 tokens > 200000 maximum (key {key})",
                ),
                status=400,
            ),
        )
        for model_id in ("gpt-4o", "claude-sonnet-4-5"):
            error = await s.fails("tokenGauge/chat", s.chat_params(model_id))
            assert plain(error.data) == {"kind": "overflow"}

        # Mid-stream error events naming the key, an overflow among them.
        up.script(
            Scripted(body=openai_midstream({"message": f"Provider failed for {key}", "code": 502})),
            Scripted(
                body=openai_midstream(
                    {
                        "message": "This endpoint's maximum context length is 128000 tokens. "
                        f"However, you requested about 131000 tokens (key {key}).",
                        "code": 400,
                    }
                )
            ),
            Scripted(body=anthropic_midstream({"type": "api_error", "message": f"boom {key}"})),
            Scripted(body=sse(openai_chunk("Hel"), f'{{"broken": "{key}"')),  # not JSON
            Scripted(body=f"event: error\ndata: upstream rejected {key}\n\n"),  # plain text
            Scripted(body=json.dumps({"echo": key}), status=200),  # JSON, not a stream
        )
        for model_id in ("gpt-4o", "gpt-4o", "claude-sonnet-4-5", "gpt-4o", "gpt-4o", "gpt-4o"):
            await s.fails("tokenGauge/chat", s.chat_params(model_id))
        assert not up.pending_script

        # A real overflow from the model.
        up.config.model.context_window, up.config.model.check_max_tokens = 60, False
        error = await s.fails("tokenGauge/chat", s.chat_params("claude-sonnet-4-5", "word " * 200))
        assert plain(error.data) == {"kind": "overflow"}
        up.config.model.context_window = None

        # A cancelled chat.
        up.script(faults.stall(after_chunks=2, seconds=30))
        msg_id = str(uuid.uuid4())
        pending = asyncio.ensure_future(
            s.client.protocol.send_request_async(
                "tokenGauge/chat", s.chat_params("gpt-4o"), msg_id=msg_id
            )
        )
        chats = len([r for r in up.requests if r.route == "chat"])
        stalled = (await up.wait_for_requests(chats + 1, route="chat"))[-1]
        await asyncio.sleep(0.2)
        s.client.protocol.notify("$/cancelRequest", CancelParams(id=msg_id))
        await stalled.wait_disconnected(5)
        with pytest.raises(JsonRpcException) as cancelled:
            await asyncio.wait_for(pending, 5)
        s.errors.append(cancelled.value)

        # Malformed params next to a good key.
        bad = s.chat_params("gpt-4o", modelOptions={"temperature": "hot"})
        assert (await s.fails("tokenGauge/chat", bad)).code == INVALID_PARAMS

        # Discovery with the key: listings that work, answer 404 / 500, or cannot be reached.
        providers = ["up-openai", "up-anthropic", "listing-404", "listing-500", "listing-closed"]
        report = await s.call(
            "tokenGauge/discoverModels",
            {"credentials": {provider: {"apiKey": key} for provider in providers}},
        )
        errors = {item["providerId"]: item["error"] for item in report["providers"]}
        assert errors["up-openai"] is None and errors["up-anthropic"] is None
        assert all(errors[p] for p in ("listing-404", "listing-500", "listing-closed")), errors
        listings = [r for r in up.requests if r.method == "GET"]
        assert {r.path for r in listings} >= {
            "/v1/models",
            "/replay/no-such-listing/models",
            "/replay/error-openai-context-length-exceeded/models",
        }
        assert {r.status for r in listings} >= {200, 404, 500}

        # What the dashboard and the model picker are told.
        s.transcript.append(json.dumps(await s.call("tokenGauge/usage", {})))
        s.transcript.append(json.dumps(await s.call("tokenGauge/models", {})))
        while_running = storage_files(storage)

    # The key really went out, with every chat and listing request.
    assert len(up.requests) > 25
    assert all(presented_key(r) == key for r in up.requests)

    # The ledger was written while the server ran (a rollback journal: no -wal, no -shm).
    assert "ledger/cache.db" in while_running
    after = storage_files(storage)
    assert s.client.log_messages and s.notifications["tokenGauge/chatPart"]

    # The command line tool on the same ledger: reads the actuals the chats stored, shows no key.
    request = tmp_path / "request.json"
    request.write_text(
        json.dumps(
            {
                "model": "gpt-4o",
                "messages": [
                    {"role": "system", "content": "You are a helpful coding assistant."},
                    {"role": "user", "content": "Please explain what this code does."},
                ],
            }
        )
    )
    # `count --storage-dir` takes the server's storageDir and reads the chats' actuals from it.
    as_json = run_cli("count", "--storage-dir", storage, "--json", request)
    assert as_json.returncode == 0, as_json.stderr
    assert [m["source"] for m in json.loads(as_json.stdout)["messages"]] == ["actual"]
    cli = {
        "count --json": as_json,
        "count": run_cli("count", "--storage-dir", storage, request),
    }
    assert all(out.returncode == 0 for out in cli.values()), cli
    # `parse-error` is not searched: it prints the message of the body it is given, so all it can
    # show is what the user pasted into it, on the user's own terminal (no log, cache file or
    # notification), and it holds no key to redact. What tokengauge itself shows of such a body
    # is the redacted error checked above. It does classify such a body:
    body = tmp_path / "body.json"
    body.write_text(openai_error(f"Incorrect API key provided: {key}.", "invalid_api_key"))
    parsed = run_cli("parse-error", "--status", "401", body)
    assert parsed.returncode == 1 and json.loads(parsed.stdout)["kind"] == "auth"

    # The server's log (at debug) really is in the capture: as window/logMessage once the client
    # is attached, and stderr is searched too (it would carry a crash).
    stderr = capfd.readouterr().err
    logged = "\n".join(m.message for m in s.client.log_messages)
    assert re.search(r"^tokengauge \S+: \d+ models, ledger", logged, re.MULTILINE)
    assert "gpt-4o: POST http://127.0.0.1:" in logged
    assert "model discovery for listing-closed failed" in logged

    # Nowhere is the key: messages, notifications, errors, stderr, files, command line output.
    leaks = {
        **s.leaks(),
        **stderr_leaks(key, stderr),
        **file_leaks(key, while_running, "while running"),
        **file_leaks(key, after, "after shutdown"),
        **{
            name: hits(key, out.stdout + out.stderr)
            for name, out in cli.items()
            if hits(key, out.stdout + out.stderr)
        },
    }
    assert leaks == {}


# The key in a form the redaction cannot see until the body is decoded.
SLASHED = "sk-tg/CANARY+"  # a base64-style key: JSON encoders may write its "/" as "\/"


def escaped(key: str, body: str) -> str:
    """`body` with the key written as PHP's `json_encode` (and others) write it: `\\/` for `/`."""
    return body.replace(key, key.replace("/", "\\/"))


def sse_data(body: str) -> str:
    """The JSON of a plain body, or of the last `data:` line of an event stream."""
    lines = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
    return lines[-1] if lines else body


@pytest.mark.parametrize(
    ("model_id", "make_reply"),
    [
        pytest.param(
            "gpt-4o",
            lambda key: Scripted(
                body=escaped(key, openai_error(f"Key {key} has no access to gpt-4o")),
                status=404,
            ),
            id="404-message-shown",
        ),
        pytest.param(
            "claude-sonnet-4-5",
            lambda key: Scripted(
                body=escaped(
                    key,
                    anthropic_error(
                        "invalid_request_error",
                        f"prompt is too long: 250000 tokens > 200000 maximum (key {key})",
                    ),
                ),
                status=400,
            ),
            id="400-overflow-logged",
        ),
        pytest.param(
            "gpt-4o",
            lambda key: Scripted(
                body=escaped(
                    key,
                    openai_midstream(
                        {
                            "message": "This endpoint's maximum context length is 128000 tokens. "
                            f"However, you requested about 131000 tokens (key {key}).",
                            "code": 400,
                        }
                    ),
                )
            ),
            id="midstream-overflow-logged",
        ),
    ],
)
async def test_a_json_escaped_echo_of_the_key_is_redacted_too(
    tmp_path: Path, capfd, model_id: str, make_reply: Callable[[str], Scripted]
):
    """Redacting the raw body misses `sk-tg\\/…`; the message decoded from it has the key."""
    key = canary(SLASHED)
    reply = make_reply(key)
    body = reply.body or ""
    assert key not in body and key in json.dumps(json.loads(sse_data(body)))  # escaped, still it
    async with (
        running_upstream(UpstreamConfig()) as up,
        session(chat_options(str(tmp_path / "storage"), up.base_url), key) as s,
    ):
        up.script(reply)
        await s.fails("tokenGauge/chat", s.chat_params(model_id))
        assert presented_key(up.model_requests[0]) == key
    stderr = capfd.readouterr().err
    assert any(m.message.startswith("tokengauge ") for m in s.client.log_messages)  # its log
    assert {**s.leaks(), **stderr_leaks(key, stderr)} == {}


@pytest.mark.parametrize(
    ("method", "make_params"),
    [
        pytest.param(
            "tokenGauge/chat",
            lambda key: {
                "requestId": "req-bad-credentials",
                "modelId": "gpt-4o",
                "messages": conversation(),
                "credentials": key,
            },
            id="chat-credentials-a-string",
        ),
        pytest.param(
            "tokenGauge/discoverModels",
            lambda key: {"credentials": {"up-openai": key}},
            id="discover-credentials-a-string",
        ),
    ],
)
async def test_malformed_credentials_are_rejected_without_echoing_the_key(
    tmp_path: Path, method: str, make_params: Callable[[str], dict[str, Any]]
):
    """ARCHITECTURE §5.4: a key in the wrong shape is an InvalidParams error, never dropped."""
    key = canary()
    async with (
        running_upstream(UpstreamConfig()) as up,
        session(chat_options(str(tmp_path / "storage"), up.base_url), key) as s,
    ):
        try:
            result = await s.call(method, make_params(key))
        except JsonRpcException as exc:
            error = exc
        else:
            sent = [(r.path, presented_key(r)) for r in up.requests]
            pytest.fail(f"accepted: {result!r}; the upstream got (path, key): {sent}")
        s.errors.append(error)
        assert error.code == INVALID_PARAMS, (error.code, error.message)
        assert "credentials" in error.message
        assert up.requests == []  # nothing was sent without the key
    assert s.leaks() == {}


@pytest.mark.parametrize(
    "prefix",
    [
        pytest.param("sk-abcdefgh/", id="slash"),
        pytest.param('sk-abcdefgh"', id="quote"),
        pytest.param("sk-abcdefgh\\", id="backslash"),
    ],
)
async def test_a_key_with_special_characters_is_redacted_whole(tmp_path: Path, capfd, prefix):
    """Its spellings differ after the special character: none may be cut there, leaving the
    rest of the key in the message (`[redacted]/ijklmnop…`)."""
    key = canary(prefix)
    raw = openai_error(f"Key {key} has no access to gpt-4o; also seen as {json.dumps(key)}")
    async with (
        running_upstream(UpstreamConfig()) as up,
        session(chat_options(str(tmp_path / "storage"), up.base_url), key) as s,
    ):
        up.script(Scripted(body=raw, status=404), Scripted(body=escaped(key, raw), status=404))
        for _ in range(2):
            error = await s.fails("tokenGauge/chat", s.chat_params("gpt-4o"))
            assert "has no access to gpt-4o" in error.message
    stderr = capfd.readouterr().err
    assert {**s.leaks(), **stderr_leaks(key, stderr)} == {}


@pytest.mark.parametrize(
    "prefix",
    [
        pytest.param("sk-abcdefghé", id="non-ascii"),
        pytest.param("sk-abc\ndef", id="newline"),
        pytest.param("sk-abc\x00def", id="nul"),
    ],
)
async def test_a_key_no_header_can_carry_is_invalid_params(tmp_path: Path, capfd, prefix):
    """httpx cannot put it in a header (it raised UnicodeEncodeError: an internal error)."""
    key = canary(prefix)
    async with (
        running_upstream(UpstreamConfig()) as up,
        session(chat_options(str(tmp_path / "storage"), up.base_url), key) as s,
    ):
        error = await s.fails("tokenGauge/chat", s.chat_params("gpt-4o"))
        assert error.code == INVALID_PARAMS
        assert "Set API Key" in error.message
        assert up.requests == []
        ok = s.chat_params("gpt-4o")
        ok["credentials"] = {"apiKey": canary()}
        assert (await s.call("tokenGauge/chat", ok))["finishReason"] == "stop"
    stderr = capfd.readouterr().err
    assert {**s.leaks(), **stderr_leaks(key, stderr)} == {}


# Credentials other than the API key: a provider's own headers, a URL's user information and
# secret query parameters.


class Credentials:
    """Fresh canaries for every kind of credential a provider's settings can hold."""

    def __init__(self) -> None:
        self.key = canary()
        self.gateway_key = canary("gw-key-")
        self.cookie = canary("cookie-")
        self.custom = canary("custom-")  # a header no name marks as secret
        self.bearer = canary("bearer-")
        self.proxy = canary("proxy-")
        self.password = canary("pw-")
        self.query_key = canary("qk-")
        self.query_token = canary("qt-")
        self.closed_password = canary("pw2-")
        self.closed_key = canary("qk2-")

    def all(self) -> dict[str, str]:
        return {name: value for name, value in vars(self).items()}

    def providers(self, up: Upstream) -> list[dict[str, Any]]:
        host = f"127.0.0.1:{up.port}"
        return [
            {
                "id": "gw",
                "dialect": "openai",
                "baseUrl": f"http://gw-user:{self.password}@{host}/v1?api-key={self.query_key}",
                "headers": {
                    "X-Gateway-Key": self.gateway_key,
                    "Cookie": f"session={self.cookie}",
                    "X-Route": self.custom,
                    "X-Title": "Token Gauge tests",
                },
            },
            {
                "id": "gw-auth",
                "dialect": "anthropic",
                "baseUrl": f"http://{host}?token={self.query_token}",
                "headers": {
                    "Authorization": f"Bearer {self.bearer}",
                    "Proxy-Authorization": f"Basic {self.proxy}",
                },
            },
            {
                "id": "gw-closed",
                "dialect": "openai",
                "baseUrl": f"http://u:{self.closed_password}@127.0.0.1:9/v1?key={self.closed_key}",
                "headers": {"X-Api-Key": self.gateway_key},
            },
        ]


def echo(creds: Credentials, up: Upstream, provider: str) -> str:
    """A message naming every credential of `provider`, as a careless gateway might write one."""
    if provider == "gw-auth":
        return f"denied: {creds.bearer} via {creds.proxy} at ?token={creds.query_token}"
    return (
        f"denied for key {creds.gateway_key} (cookie session={creds.cookie}, route {creds.custom})"
        f" at http://gw-user:{creds.password}@127.0.0.1:{up.port}/v1?api-key={creds.query_key}"
    )


async def test_header_and_url_credentials_reach_the_api_and_nothing_else(tmp_path: Path, capfd):
    """A provider's headers, a password in its base URL and a key in its query string go to the
    API, and into no error, log line (at debug), notification or stderr, whatever failed: 4xx and
    5xx answers that echo them, a refused connection, a redirect elsewhere, a listing, a key
    check."""
    creds = Credentials()
    async with running_upstream(UpstreamConfig()) as up:
        options = chat_options(str(tmp_path / "storage"), up.base_url)
        options["providers"] = creds.providers(up)
        options["models"] = [
            {"id": "gpt-4o", "provider": "gw", "name": "GPT-4o (gateway)"},
            {"id": "claude-sonnet-4-5", "provider": "gw-auth", "contextWindow": 200_000},
            {"id": "gpt-4o-mini", "provider": "gw-closed", "contextWindow": 128_000},
        ]
        async with session(options, creds.key) as s:
            for model_id in ("gpt-4o", "claude-sonnet-4-5"):
                assert (await s.call("tokenGauge/chat", s.chat_params(model_id)))["usage"]
            said, said_auth = echo(creds, up, "gw"), echo(creds, up, "gw-auth")
            up.script(
                Scripted(body=openai_error(said, "invalid_api_key"), status=401),
                Scripted(body=anthropic_error("invalid_request_error", said_auth), status=400),
                Scripted(body=openai_error(said), status=500, times=3),
                Scripted(body=said_auth, status=502, times=3),  # not JSON
                faults.redirect(f"http://x:{creds.password}@127.0.0.2:{up.port}/v1?key={said}"),
                Scripted(body=openai_midstream({"message": said, "code": 502})),
            )
            models = ["gpt-4o", "claude-sonnet-4-5", "gpt-4o", "claude-sonnet-4-5", "gpt-4o"]
            for model_id in [*models, "gpt-4o"]:
                await s.fails("tokenGauge/chat", s.chat_params(model_id))
            assert not up.pending_script
            error = await s.fails("tokenGauge/chat", s.chat_params("gpt-4o-mini"))
            assert "connection refused" in error.message and REDACTED in error.message
            # Listings and key checks, failing and not.
            report = await s.call(
                "tokenGauge/discoverModels",
                {"credentials": {p: {"apiKey": creds.key} for p in ("gw", "gw-closed")}},
            )
            errors = {item["providerId"]: item["error"] for item in report["providers"]}
            assert errors["gw"] is None and errors["gw-closed"], errors
            checks = [
                await s.call("tokenGauge/checkKey", {"providerId": p, "apiKey": creds.key})
                for p in ("gw", "gw-auth", "gw-closed")
            ]
            s.transcript += [json.dumps(check) for check in checks]
            assert checks[0]["accepted"] is True and checks[2]["accepted"] is None, checks

    # They all really went out.
    sent = [r for r in up.requests if r.query.get("api-key") == creds.query_key]
    assert len(sent) >= 8
    assert all(r.header("x-gateway-key") == creds.gateway_key for r in sent)
    assert all(r.header("cookie") == f"session={creds.cookie}" for r in sent)
    assert all(
        creds.password in base64.b64decode(r.header("authorization")[6:]).decode() for r in sent
    )
    other = [r for r in up.requests if r.query.get("token") == creds.query_token]
    assert other and all(r.header("authorization") == f"Bearer {creds.bearer}" for r in other)

    stderr = capfd.readouterr().err
    logged = "\n".join(m.message for m in s.client.log_messages)
    assert (
        f"gpt-4o: POST http://{REDACTED}@127.0.0.1:{up.port}/v1/chat/completions?api-key={REDACTED}"
        in logged
    )
    assert "model discovery for gw-closed failed" in logged
    leaks = {
        name: found
        for name, secret in creds.all().items()
        if (found := {**s.leaks(secret), **stderr_leaks(secret, stderr)})
    }
    assert leaks == {}
