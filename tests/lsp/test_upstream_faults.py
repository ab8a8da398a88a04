"""Broken and hostile upstreams, end to end: real LSP over stdio, real HTTP on 127.0.0.1.

For every fault the user gets a clear error of a known kind within the fault's time bound, the
key never leaves for another origin (a second upstream on another port stands for it), the
server's memory stays bounded, and the next request is served. Chats get one attempt here
(`maxAttempts: 1`), so each bound is the fault's own, not multiplied by retries. One server and
its two upstreams serve the whole module, one fault after another, as a user's server would;
each fault's peak memory is measured from a reset of the process's peak (`clear_refs`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import pytest_asyncio
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.harness.fake_upstream import faults
from tests.harness.fake_upstream.config import Fault, ListedModel, Scripted, UpstreamConfig
from tests.harness.fake_upstream.helpers import closed_port
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tests.harness.lsp import call, plain, running_server
from tests.lsp.chat_helpers import API_KEY, chat_options, chat_params, conversation

IDLE = 1.5
RESPONSE = 4.0
SLACK = 1.5  # process, scheduling and loopback time on a busy 2-core machine
BOMB = 256 * 2**20  # decompressed bytes (~256 KB on the wire)
MEMORY_BOUND = 100 * 2**20  # most the server's peak RSS may grow during a fault


class Servers(NamedTuple):
    client: LanguageClient
    up: Upstream
    other: Upstream  # another origin: nothing may reach it


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    async with running_upstream(UpstreamConfig()) as up, running_upstream() as other:
        options = chat_options(
            str(tmp_path_factory.mktemp("faults") / "storage"),
            up.base_url,
            idleTimeout=IDLE,
            responseTimeout=RESPONSE,
            maxAttempts=1,
        )
        options["providers"][1]["discover"] = False  # one listing to time, not two in turn
        async with running_server(options) as client:
            for model_id in ("gpt-4o", "claude-sonnet-4-5"):  # both encodings loaded: RSS settles
                await call(client, "tokenGauge/countTokens", {"modelId": model_id, "inputs": ["x"]})
            yield Servers(client, up, other)


@pytest_asyncio.fixture(loop_scope="module")
async def servers(shared: Servers) -> AsyncIterator[Servers]:
    """The shared servers with a clean slate: no script, no listing fault, peak RSS reset."""
    shared.up.reset(config=True)
    process = shared.client._server
    assert process is not None
    Path(f"/proc/{process.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    yield shared
    assert shared.other.requests == []  # no key, no conversation, nothing at all, ever


def rss(client: LanguageClient, field: str) -> int:
    """The server process's `VmRSS` or `VmHWM` (peak) in bytes."""
    process = client._server
    assert process is not None
    status = Path(f"/proc/{process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


async def still_serving(client: LanguageClient) -> None:
    counted = await call(client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": ["ok"]})
    assert counted["raw"] == [1]


async def failed_chat(client: LanguageClient, model_id: str) -> tuple[JsonRpcException, float]:
    start = time.monotonic()
    with pytest.raises(JsonRpcException) as caught:
        await call(client, "tokenGauge/chat", chat_params(model_id, conversation()))
    return caught.value, time.monotonic() - start


class Case(NamedTuple):
    script: Any  # a Scripted, or a function of (this upstream, the other one) giving one
    model: str
    kind: str
    needle: str
    bound: float


CASES = [
    pytest.param(
        Case(
            lambda up, other: faults.redirect(other.url("/v1/chat/completions"), 307),
            "gpt-4o",
            "upstream",
            "another address",
            SLACK,
        ),
        id="307-to-another-origin",
    ),
    pytest.param(
        Case(
            lambda up, other: faults.redirect(other.url("/v1/messages"), 308),
            "claude-sonnet-4-5",
            "upstream",
            "another address",
            SLACK,
        ),
        id="308-to-another-origin-anthropic",
    ),
    pytest.param(
        Case(
            lambda up, other: faults.redirect(other.url("/v1/chat/completions"), 302),
            "gpt-4o",
            "upstream",
            "another address",
            SLACK,
        ),
        id="302-to-another-origin",
    ),
    pytest.param(
        Case(
            lambda up, other: faults.redirect(up.url("/v1/chat/completions"), 307, times=10),
            "gpt-4o",
            "upstream",
            "more than 5 times",
            SLACK,
        ),
        id="redirect-loop",
    ),
    pytest.param(
        Case(faults.bomb(BOMB), "gpt-4o", "upstream", "event over 16 MiB", SLACK + 3),
        id="gzip-bomb-stream",
    ),
    pytest.param(
        Case(
            faults.bomb(BOMB, prefix='{"error": {"message": "', status=400),
            "gpt-4o",
            "other",
            "(400 Bad Request)",
            SLACK,
        ),
        id="gzip-bomb-error-body",
    ),
    pytest.param(
        Case(
            Scripted(
                body='data: {"choices": []}\n\n', headers={"Content-Encoding": "gzip"}, status=200
            ),
            "gpt-4o",
            "upstream",
            "gzip-compressed, but it is not",
            SLACK,
        ),
        id="gzip-header-on-a-plain-body",
    ),
    pytest.param(
        Case(
            faults.keepalives_only("comment", 0.1),
            "gpt-4o",
            "connection",
            "keep-alives",
            IDLE + SLACK,
        ),
        id="comment-only-stream",
    ),
    pytest.param(
        Case(
            faults.keepalives_only("ping", 0.1),
            "claude-sonnet-4-5",
            "connection",
            "keep-alives",
            IDLE + SLACK,
        ),
        id="ping-only-stream",
    ),
    pytest.param(
        Case(faults.trickle(0.2), "gpt-4o", "connection", "keep-alives", IDLE + SLACK),
        id="one-byte-every-200ms",
    ),
    pytest.param(
        Case(
            faults.endless(event=1, every=0.2), "gpt-4o", "connection", "response", RESPONSE + SLACK
        ),
        id="endless-stream",
    ),
    pytest.param(
        Case(
            Scripted(fault=Fault(headers_delay=30)),
            "gpt-4o",
            "connection",
            "stopped sending",
            IDLE + SLACK,
        ),
        id="stall-before-headers",
    ),
    pytest.param(
        Case(faults.stall(after_chunks=3, seconds=30), "gpt-4o", "connection", "", IDLE + SLACK),
        id="stall-mid-stream",
    ),
    pytest.param(
        Case(
            Scripted(body="<html><body>Welcome</body></html>", content_type="text/html"),
            "gpt-4o",
            "upstream",
            "event stream",
            SLACK,
        ),
        id="html-200",
    ),
    pytest.param(
        Case(
            Scripted(
                body="<html><h1>502 Bad Gateway</h1></html>", status=502, content_type="text/html"
            ),
            "gpt-4o",
            "other",
            "(502 Bad Gateway)",
            SLACK,
        ),
        id="html-502",
    ),
    pytest.param(
        Case(faults.drop_after(chunks=3), "gpt-4o", "connection", "", SLACK),
        id="connection-dropped",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_a_broken_upstream_ends_the_chat_clearly(servers: Servers, case: Case):
    client, up, other = servers
    up.script(case.script(up, other) if callable(case.script) else case.script)
    before = rss(client, "VmRSS")
    error, elapsed = await failed_chat(client, case.model)
    assert error.code == -32803, (error.code, error.message)
    assert plain(error.data) == {"kind": case.kind}, error.message
    assert case.needle in error.message
    assert "Traceback" not in error.message
    assert elapsed <= case.bound, f"{elapsed:.1f} s"
    grown = rss(client, "VmHWM") - before
    assert grown < MEMORY_BOUND
    assert other.requests == []  # no key, no conversation, nothing at all
    await still_serving(client)
    print(f"\nfault {case.kind} in {elapsed:.2f} s, peak RSS +{grown / 2**20:.0f} MiB")


async def test_a_redirect_within_the_origin_is_followed(servers: Servers):
    client, up, _ = servers
    up.script(faults.redirect(up.url("/moved/v1/chat/completions"), 308))
    result = await call(client, "tokenGauge/chat", chat_params("gpt-4o", conversation()))
    assert result["finishReason"] == "stop"
    moved = up.model_requests[-1]
    assert moved.path == "/moved/v1/chat/completions"
    assert moved.header("authorization") == f"Bearer {API_KEY}"
    assert moved.json["messages"]  # 308 keeps the body


LISTING_CASES = [
    pytest.param(
        lambda other: faults.redirect(other.url("/v1/models"), 302),
        "another address",
        SLACK,
        id="redirect-to-another-origin",
    ),
    pytest.param(
        lambda other: faults.bomb(BOMB, prefix='{"data": ["'),
        "more than 16 MiB",
        SLACK + 3,
        id="gzip-bomb",
    ),
    pytest.param(
        lambda other: Scripted(body="[" * 100_000 + "]" * 100_000),
        "nests",
        SLACK,
        id="100k-deep-json",
    ),
    pytest.param(
        lambda other: Scripted(body="<html>Sign in</html>", content_type="text/html"),
        "not JSON",
        SLACK,
        id="html",
    ),
    pytest.param(
        lambda other: Scripted(body='{"data": []}', fault=Fault(trickle_seconds=0.5)),
        "within",
        RESPONSE + SLACK,
        id="trickle",
    ),
]


@pytest.mark.parametrize(("make", "needle", "bound"), LISTING_CASES)
async def test_a_broken_model_listing_is_reported_clearly(
    servers: Servers, make: Any, needle: str, bound: float
):
    client, up, other = servers
    up.config.listing_answer = make(other)
    before = rss(client, "VmRSS")
    start = time.monotonic()
    report = await call(
        client,
        "tokenGauge/discoverModels",
        {"credentials": {"up-openai": {"apiKey": API_KEY}}},
    )
    elapsed = time.monotonic() - start
    errors = {item["providerId"]: item["error"] for item in report["providers"]}
    assert needle in (errors["up-openai"] or ""), errors
    assert elapsed <= bound, f"{elapsed:.1f} s"
    grown = rss(client, "VmHWM") - before
    assert grown < MEMORY_BOUND
    assert other.requests == []
    await still_serving(client)
    print(f"\nlisting fault in {elapsed:.2f} s, peak RSS +{grown / 2**20:.0f} MiB")


OVERFLOW_BODIES = [
    pytest.param(
        '{"error":{"message":"prompt too long; exceeded max context length by 4021 tokens",'
        '"type":"api_error","param":null,"code":null}}',
        True,
        id="ollama",
    ),
    # Names the input (limit + excess): 139,326 tokens for this short request is not its size,
    # so nothing is learned from it and it is not sent again.
    pytest.param(
        '{"id":"c1","message":"too many tokens: size limit exceeded by 11326 tokens. Try using '
        'shorter or fewer inputs. The limit for this model is 128000 tokens."}',
        False,
        id="cohere",
    ),
    pytest.param(
        '{"error":{"message":"The total length of all messages is too long.",'
        '"type":"too_many_prompt_tokens","code":400}}',
        True,
        id="perplexity",
    ),
    pytest.param('{"message":"Input Tokens Exceeded"}', True, id="bedrock-converse"),
]


@pytest.mark.parametrize(("body", "retried"), OVERFLOW_BODIES)
async def test_overflows_without_full_numbers_are_overflows(
    servers: Servers, body: str, retried: bool
):
    """Classified as "other" before: nothing was learned and the safety net could not act. Now
    the request is counted larger and sent again once, fitted; if that overflows too, the chat
    fails as an overflow."""
    client, up, _ = servers
    messages = conversation()
    sent = len(up.model_requests)
    up.script(Scripted(body=body, status=400))
    if not retried:
        error, _elapsed = await failed_chat(client, "gpt-4o")
        assert plain(error.data) == {"kind": "overflow"}, error.message
        assert [r.status for r in up.model_requests[sent:]] == [400]
        return
    await call(client, "tokenGauge/chat", chat_params("gpt-4o", messages))
    assert [r.status for r in up.model_requests[sent:]] == [400, 200]
    before = await call(
        client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": messages[1:]}
    )
    up.script(Scripted(body=body, status=400, times=2))
    error, _elapsed = await failed_chat(client, "gpt-4o")
    assert plain(error.data) == {"kind": "overflow"}, error.message
    after = await call(
        client, "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": messages[1:]}
    )
    assert sum(after["tokens"]) > sum(before["tokens"])  # learned: the next count is larger


# --- errors a person can act on: each failure made for real, its whole text checked ---------


class Person(NamedTuple):
    client: LanguageClient
    up: Upstream  # requires a key, serves only the models it lists, and only under /v1
    port: int  # closed


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def person(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Person]:
    config = UpstreamConfig(api_root="/v1")
    config.model.require_api_key = API_KEY
    config.model.listed_only = True
    port = closed_port()
    async with running_upstream(config) as up:
        providers = {
            "refused": f"http://127.0.0.1:{port}/v1",
            "nowhere": "http://nonexistent.invalid/v1",
            "tls": f"https://127.0.0.1:{up.port}/v1",
            "nov1": up.base_url,
            "strict": up.url("/v1"),
        }
        options = {
            "storageDir": str(tmp_path_factory.mktemp("person") / "storage"),
            "providers": [{"id": pid, "baseUrl": url} for pid, url in providers.items()],
            "models": [
                {"id": f"{pid}-model", "provider": pid, "contextWindow": 8_000} for pid in providers
            ],
            "connectTimeout": 2,
            "maxAttempts": 1,
        }
        async with running_server(options) as client:
            yield Person(client, up, port)


async def chat_error(client: LanguageClient, model_id: str, **extra: Any) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await call(client, "tokenGauge/chat", chat_params(model_id, conversation(), **extra))
    assert API_KEY not in caught.value.message
    return caught.value.message


SETTING = "in the tokenGauge.providers setting"


async def test_nothing_listening(person: Person):
    url = f"http://127.0.0.1:{person.port}/v1/chat/completions"
    assert await chat_error(person.client, "refused-model") == (
        f"refused could not be reached at {url}: nothing is listening at 127.0.0.1:{person.port} "
        f"(connection refused). Start the server there, or correct refused's base URL {SETTING}."
    )


async def test_a_host_name_that_does_not_resolve(person: Person):
    url = "http://nonexistent.invalid/v1/chat/completions"
    assert await chat_error(person.client, "nowhere-model") == (
        f"nowhere could not be reached at {url}: the host name nonexistent.invalid was not "
        f"found. Check the host name in nowhere's base URL {SETTING}, and your network "
        "connection."
    )


async def test_tls_to_a_server_without_it(person: Person):
    url = f"https://127.0.0.1:{person.up.port}/v1/chat/completions"
    message = await chat_error(person.client, "tls-model")
    assert message.startswith(
        f"tls could not be reached at {url}: the TLS handshake with 127.0.0.1:{person.up.port} "
        "failed ("
    )
    assert message.endswith(
        f"). If the server speaks plain HTTP, use http:// in tls's base URL {SETTING}."
    )


async def test_a_base_url_without_v1(person: Person):
    base = person.up.base_url
    assert await chat_error(person.client, "nov1-model") == (
        f"nov1 answered 404 Not Found at {base}/chat/completions: its base URL {base} does not "
        f"end in /v1. Try {base}/v1 as nov1's base URL {SETTING}."
    )


async def test_a_rejected_key(person: Person):
    url = person.up.url("/v1/chat/completions")
    message = await chat_error(person.client, "strict-model", credentials={"apiKey": "sk-old"})
    assert message == (
        f"strict rejected the API key at {url} (401 Unauthorized). Run 'Token Gauge: Set API "
        "Key' to enter a valid key for strict."
    )


async def test_a_model_the_provider_does_not_serve(person: Person):
    url = person.up.url("/v1/chat/completions")
    assert await chat_error(person.client, "strict-model") == (
        f"strict has no model named strict-model at {url} (404 Not Found) (it said: The model "
        "`strict-model` does not exist or you do not have access to it). Choose another model, "
        "or check the model id strict expects."
    )


async def test_a_rate_limit_with_its_wait(person: Person):
    person.up.config.models = [ListedModel(id="strict-model")]
    person.up.script(Scripted(status=429, headers={"retry-after": "20"}))
    url = person.up.url("/v1/chat/completions")
    try:
        message = await chat_error(person.client, "strict-model")
    finally:
        person.up.reset(config=True)
    assert message == (
        f"strict is limiting requests at {url} (429 Too Many Requests) and asks to wait 20 s (it "
        "said: google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. Please "
        "retry shortly, or add your own key to accumulate your rate limits: "
        "https://openrouter.ai/settings/integrations). Wait 20 s before sending again; if it "
        "keeps happening, check your plan's limits with strict."
    )


async def test_a_proxy_that_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The server process inherits the proxy of the environment VS Code was started with."""
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy = closed_port()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy}")
    async with running_upstream(UpstreamConfig()) as up:
        options = chat_options(str(tmp_path / "storage"), up.base_url, maxAttempts=1)
        async with running_server(options) as client:
            message = await chat_error(client, "gpt-4o")
        assert up.requests == []
    url = up.url("/v1/chat/completions")
    assert message == (
        f"up-openai could not be reached at {url}: the proxy 127.0.0.1:{proxy} failed (connection "
        "refused). Check that proxy, or the HTTPS_PROXY, HTTP_PROXY and NO_PROXY environment "
        "variables VS Code was started with."
    )
