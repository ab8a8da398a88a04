"""upstream.explain: the text a person reads for each way a request can fail, word for word.

Failures are real where a test can make them so: a closed loopback port, a host name that cannot
resolve (`.invalid` never does), TLS to a plain-HTTP port, a self-signed certificate, a proxy
that is not there, the test upstream's 401s, 404s and dropped connections. The rest are built
as the HTTP layer raises them.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import httpx
import pytest

from tests.harness.fake_upstream.config import Fault, Scripted, UpstreamConfig
from tests.harness.fake_upstream.helpers import closed_port
from tests.harness.fake_upstream.server import Upstream, running_upstream
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.errors import (
    ConnectionFailed,
    HttpStatusError,
    InvalidUrl,
    RedirectRefused,
    StreamStalled,
    UpstreamError,
)
from tokengauge.upstream.explain import brief, explain, midstream
from tokengauge.upstream.http import Timeouts, get_json, make_client

SELF_SIGNED = Path(__file__).parent / "tls" / "self-signed.pem"
SETTINGS = "in the tokenGauge.providers setting"


def acme(base_url: str, **changes: object) -> ProviderSettings:
    return attrs.evolve(ProviderSettings(id="acme", dialect="openai", base_url=base_url), **changes)


async def failure_of(url: str, headers: dict[str, str] | None = None) -> UpstreamError:
    """What the HTTP layer raises asking `url` for JSON."""
    async with make_client(Timeouts(connect=2, idle=2)) as client:
        with pytest.raises(UpstreamError) as caught:
            await get_json(client, "GET", url, headers=headers or {})
    return caught.value


@pytest.fixture
async def up() -> AsyncIterator[Upstream]:
    async with running_upstream(UpstreamConfig()) as upstream:
        yield upstream


async def test_connection_refused():
    port = closed_port()
    url = f"http://127.0.0.1:{port}/v1/models"
    text = explain(acme(f"http://127.0.0.1:{port}/v1"), url, await failure_of(url))
    assert text == (
        f"acme could not be reached at {url}: nothing is listening at 127.0.0.1:{port} "
        f"(connection refused). Start the server there, or correct acme's base URL {SETTINGS}."
    )


async def test_host_name_not_found():
    url = "http://nonexistent.invalid/v1/models"
    error = await failure_of(url)
    assert explain(acme("http://nonexistent.invalid/v1"), url, error) == (
        f"acme could not be reached at {url}: the host name nonexistent.invalid was not found. "
        f"Check the host name in acme's base URL {SETTINGS}, and your network connection."
    )
    assert brief(acme(""), url, error) == "unreachable: host not found"


async def test_tls_to_a_plain_http_server(up: Upstream):
    url = f"https://127.0.0.1:{up.port}/v1/models"
    text = explain(acme(f"https://127.0.0.1:{up.port}/v1"), url, await failure_of(url))
    # The reason is OpenSSL's (`wrong version number` in OpenSSL 3.0), in its words.
    happened = f"acme could not be reached at {url}: the TLS handshake with 127.0.0.1:{up.port} "
    todo = f"If the server speaks plain HTTP, use http:// in acme's base URL {SETTINGS}."
    pattern = re.escape(happened) + r"failed \([a-z0-9 ]+\)\. " + re.escape(todo)
    assert re.fullmatch(pattern, text), text


@contextlib.asynccontextmanager
async def self_signed_server() -> AsyncIterator[int]:
    """A TLS server on 127.0.0.1 whose certificate nobody vouches for."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(SELF_SIGNED)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def test_a_certificate_that_is_not_accepted():
    async with self_signed_server() as port:
        url = f"https://127.0.0.1:{port}/v1/models"
        error = await failure_of(url)
    assert explain(acme(f"https://127.0.0.1:{port}/v1"), url, error) == (
        f"acme could not be reached at {url}: its TLS certificate was not accepted "
        "(self-signed certificate). If it comes from your own certificate authority, start VS "
        "Code with SSL_CERT_FILE naming that authority's certificate."
    )


async def test_a_proxy_that_is_not_there(up: Upstream, monkeypatch: pytest.MonkeyPatch):
    proxy = closed_port()
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy}")
    url = up.url("/v1/models")
    error = await failure_of(url)
    assert up.requests == []  # it went to the proxy, not to the server
    assert explain(acme(up.url("/v1")), url, error) == (
        f"acme could not be reached at {url}: the proxy 127.0.0.1:{proxy} failed (connection "
        "refused). Check that proxy, or the HTTPS_PROXY, HTTP_PROXY and NO_PROXY environment "
        "variables VS Code was started with."
    )
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the server is asked directly again
    answer = await failure_of(up.url("/nowhere"))
    assert isinstance(answer, HttpStatusError) and answer.status == 404


async def test_a_connection_that_drops(up: Upstream):
    up.config.listing_answer = Scripted(body='{"data": []}', fault=Fault(drop_before_headers=True))
    url = up.url("/v1/models")
    error = await failure_of(url)
    assert explain(acme(up.url("/v1")), url, error) == (
        f"The response of acme at {url} is incomplete: the connection closed before its end. "
        "Send again; if it keeps happening, check the server's logs or your network."
    )
    assert brief(acme(""), url, error) == "connection broken"


def test_a_connect_timeout():
    cause = httpx.ConnectTimeout("timed out")
    try:
        raise ConnectionFailed("timed out") from cause
    except ConnectionFailed as exc:
        error = exc
    url = "http://10.1.2.3:8000/v1/chat/completions"
    assert explain(acme("http://10.1.2.3:8000/v1"), url, error) == (
        f"acme could not be reached at {url}: 10.1.2.3:8000 did not accept a connection in time. "
        "Check that the server is running and that no firewall or VPN is in the way."
    )


@pytest.mark.parametrize(
    ("error", "text"),
    [
        pytest.param(
            StreamStalled("stopped sending data for 120 s", "idleTimeout"),
            "acme stopped sending data for 120 s at {url}. Send again; if it keeps happening, "
            "check the server, or raise tokenGauge.idleTimeout.",
            id="idle",
        ),
        pytest.param(
            StreamStalled("was still sending when the response timeout ran out", "responseTimeout"),
            "acme was still sending when the response timeout ran out at {url}. Send again; if it "
            "keeps happening, check the server, or raise tokenGauge.responseTimeout.",
            id="response-timeout",
        ),
        pytest.param(
            StreamStalled("did not list its models within 60 s"),
            "acme did not list its models within 60 s at {url}. Send again; if it keeps "
            "happening, check the server.",
            id="listing",
        ),
    ],
)
def test_timeouts_and_stalled_streams(error: StreamStalled, text: str):
    url = "https://api.acme.test/v1/chat/completions"
    assert explain(acme("https://api.acme.test/v1"), url, error) == text.format(url=url)
    assert brief(acme(""), url, error) == "timed out"


async def test_a_base_url_without_its_v1():
    async with running_upstream(UpstreamConfig(api_root="/v1")) as strict:
        url = strict.url("/models")
        error = await failure_of(url)
        base = strict.base_url
    assert explain(acme(base), url, error) == (
        f"acme answered 404 Not Found at {url}: its base URL {base} does not end in /v1. "
        f"Try {base}/v1 as acme's base URL {SETTINGS}."
    )
    # Under /v1 a 404 is something else; so it is on Azure, whose base URLs have no /v1.
    azure = acme(base, preset="azure-openai")
    assert "does not end in /v1" not in explain(azure, url, error)
    assert "does not end in /v1" not in explain(acme(base + "/v1"), url + "x", error)


@pytest.mark.parametrize(
    ("managed", "key", "text"),
    [
        pytest.param(
            False,
            "sk-wrong-0123456789",
            "acme rejected the API key at {url} (401 Unauthorized). Run 'Token Gauge: Set API "
            "Key' to enter a valid key for acme.",
            id="settings",
        ),
        pytest.param(
            True,
            "sk-wrong-0123456789",
            # VS Code offers no way to change the key of a group alone: the command does.
            "acme rejected the API key at {url} (401 Unauthorized). Run 'Token Gauge: Set API "
            "Key' to enter a valid key for acme.",
            id="manage-models",
        ),
        pytest.param(
            False,
            None,
            "acme asked for an API key at {url} (401 Unauthorized), and none is set. Run 'Token "
            "Gauge: Set API Key' to enter a valid key for acme.",
            id="no-key",
        ),
    ],
)
async def test_a_rejected_key(managed: bool, key: str | None, text: str):
    config = UpstreamConfig()
    config.model.require_api_key = "sk-right-0123456789"
    async with running_upstream(config) as strict:
        url = strict.url("/v1/models")
        error = await failure_of(url, {"Authorization": f"Bearer {key}"} if key else {})
    provider = acme(strict.url("/v1"), managed=managed)
    assert explain(provider, url, error, key=key) == text.format(url=url)
    assert brief(provider, url, error) == "key rejected (401)"


URL = "https://api.acme.test/v1/chat/completions"


@pytest.mark.parametrize(
    ("error", "model", "said", "text"),
    [
        pytest.param(
            HttpStatusError(404, "", {}),
            "gpt-9",
            "The model `gpt-9` does not exist or you do not have access to it.",
            "acme has no model named gpt-9 at {url} (404 Not Found) (it said: The model `gpt-9` "
            "does not exist or you do not have access to it). Choose another model, or check the "
            "model id acme expects.",
            id="404-model",
        ),
        pytest.param(
            HttpStatusError(429, "", {"retry-after": "20"}),
            None,
            None,
            "acme is limiting requests at {url} (429 Too Many Requests) and asks to wait 20 s. "
            "Wait 20 s before sending again; if it keeps happening, check your plan's limits "
            "with acme.",
            id="429-retry-after",
        ),
        pytest.param(
            HttpStatusError(429, "", {}),
            None,
            "Rate limit reached for gpt-4o",
            "acme is limiting requests at {url} (429 Too Many Requests) (it said: Rate limit "
            "reached for gpt-4o). Wait a little before sending again; if it keeps happening, "
            "check your plan's limits with acme.",
            id="429",
        ),
        pytest.param(
            HttpStatusError(502, "<html>Bad Gateway</html>", {}),
            None,
            "<html>Bad Gateway</html>",
            "acme had a server error at {url} (502 Bad Gateway). Try again in a moment; if it "
            "persists, check acme's service status.",
            id="502",
        ),
        pytest.param(
            HttpStatusError(529, "", {}),
            None,
            "Overloaded",
            "acme had a server error at {url} (529 Overloaded) (it said: Overloaded). Try again "
            "in a moment; if it persists, check acme's service status.",
            id="529",
        ),
        pytest.param(
            HttpStatusError(400, "", {}),
            None,
            "Organization is not verified for gpt-4o.",
            "acme refused the request at {url} (400 Bad Request) (it said: Organization is not "
            "verified for gpt-4o). Correct what it names, then try again.",
            id="400",
        ),
        pytest.param(
            HttpStatusError(405, "", {}),
            None,
            None,
            "acme refused the request at {url} (405 Method Not Allowed). Check acme's base URL "
            "in the tokenGauge.providers setting.",
            id="405",
        ),
        pytest.param(
            RedirectRefused(
                "redirected to another address (https://evil.test)", "https://evil.test"
            ),
            None,
            None,
            "acme redirected the request at {url} to another address (https://evil.test), where "
            "Token Gauge sends neither your key nor the conversation. If that address is right, "
            "make it acme's base URL in the tokenGauge.providers setting.",
            id="redirect",
        ),
        pytest.param(
            RedirectRefused("redirected more than 5 times"),
            None,
            None,
            "acme redirected the request at {url} more than 5 times. Check acme's base URL in the "
            "tokenGauge.providers setting; the server may be misconfigured.",
            id="redirect-loop",
        ),
        pytest.param(
            InvalidUrl("Invalid port: '99999'"),
            None,
            None,
            "acme's base URL makes no valid URL ({url}: Invalid port: '99999'). Correct it in "
            "the tokenGauge.providers setting.",
            id="invalid-url",
        ),
        pytest.param(
            UpstreamError("the API sent an event over 16 MiB"),
            None,
            None,
            "acme sent an answer Token Gauge cannot use at {url}: the API sent an event over 16 "
            "MiB. Check that acme's base URL in the tokenGauge.providers setting points at the "
            "API itself (not a web page or a sign-in proxy).",
            id="unusable",
        ),
    ],
)
def test_what_the_api_said(error: UpstreamError, model: str | None, said: str | None, text: str):
    assert explain(acme("https://api.acme.test/v1"), URL, error, model=model, said=said) == (
        text.format(url=URL)
    )


def test_the_apis_words_are_cut_short_on_one_line():
    said = "word " * 200 + "\n\nend."
    text = explain(acme(""), URL, HttpStatusError(400, "", {}), said=said)
    quoted = text.split("(it said: ")[1].split(")")[0]
    assert len(quoted) == 300 and quoted.endswith("…") and "\n" not in quoted


def test_an_error_in_the_middle_of_a_stream():
    assert midstream(acme(""), URL, "Overloaded.") == (
        f"acme sent an error in the middle of the response at {URL}: Overloaded. Send again; "
        "if it keeps happening, try another model or try later."
    )


def test_anthropic_404_is_a_model_not_a_missing_v1():
    provider = ProviderSettings(
        id="claude", dialect="anthropic", base_url="https://api.anthropic.com"
    )
    url = "https://api.anthropic.com/v1/messages"
    text = explain(
        provider, url, HttpStatusError(404, "", {}), model="claude-9", said="model: claude-9"
    )
    assert text.startswith(f"claude has no model named claude-9 at {url} (404 Not Found)")


@pytest.mark.parametrize("base", ["", "localhost:11434/v1", "ftp://h/v1"])
async def test_a_base_url_that_makes_no_url(base: str):
    provider = acme(base)
    url = f"{base}/models"
    assert explain(provider, url, await failure_of(url)) == (
        f"acme's base URL makes no valid URL ({url}: it must start with http:// or https:// and "
        f"name a host). Correct it {SETTINGS}."
    )
