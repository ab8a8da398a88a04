"""What went wrong with a provider, said so that a person can act on it.

Chat errors, discovery errors and key checks share these texts. Each is two sentences: what
happened (naming the provider and the URL), then what to do. No exception class names, no stack,
no status code without its words. Every text is redacted here (`redact`): the API's own words,
`said`, may echo the key, and the URL may carry a password or a key of its own.
"""

from __future__ import annotations

import http
import ssl
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

import attrs
import httpx

from tokengauge.settings import ProviderSettings
from tokengauge.upstream.errors import HttpStatusError, RedirectRefused, StreamStalled
from tokengauge.upstream.failures import Kind, address, causes, kind_of, proxy_for
from tokengauge.upstream.http import MAX_REDIRECTS, join_url
from tokengauge.upstream.redact import provider_secrets, redact

SAID_LIMIT: Final = 300
"""Most characters of the API's own words quoted in a text."""
_PHRASES: Final = {529: "Overloaded"}


@attrs.frozen
class _Failure:
    """One failure with what its text needs."""

    provider: ProviderSettings
    url: str
    error: BaseException
    model: str | None
    said: str | None
    key_sent: bool

    @property
    def pid(self) -> str:
        return self.provider.id

    @property
    def where(self) -> str:
        """Where the person changes this provider's settings."""
        return (
            "in Manage Models" if self.provider.managed else "in the tokenGauge.providers setting"
        )

    @property
    def address(self) -> str:
        """`host:port` of the URL."""
        return address(self.url)

    @property
    def quoted(self) -> str:
        """` (it said: …)` with the API's own words, or nothing."""
        return f" (it said: {self.said})" if self.said else ""

    @property
    def status(self) -> str:
        """`404 Not Found`."""
        code = self.error.status if isinstance(self.error, HttpStatusError) else 0
        phrase = _PHRASES.get(code) or _phrase(code)
        return f"{code} {phrase}".strip()


def explain(
    provider: ProviderSettings,
    url: str,
    failure: BaseException,
    *,
    model: str | None = None,
    said: str | None = None,
    key: str | None = None,
    todo: str | None = None,
) -> str:
    """What happened and what to do, for `failure` of a request to `url` of `provider` (for
    `model`, if any; `said`: the API's own message, if any; `key`: the key sent, if any; `todo`:
    what to do, where the caller knows better), without any credential."""
    case = _Failure(provider, url, failure, model, _cleaned(said), bool(key))
    happened, usual = _TEXTS[kind_of(provider, url, failure, model, case.said)](case)
    return redact(f"{happened} {todo or usual}", *provider_secrets(provider, key))


def brief(provider: ProviderSettings, url: str, failure: BaseException) -> str:
    """A few words for the status bar: `rate limited`, `key rejected`, `unreachable`, …"""
    kind = kind_of(provider, url, failure, None, None)
    if isinstance(failure, HttpStatusError):
        return f"{kind.value} ({failure.status})"
    return kind.value


def _phrase(code: int) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return ""


def _cleaned(said: str | None) -> str | None:
    """The API's words on one line, at most `SAID_LIMIT` characters, without a closing period;
    None for none or for an HTML page."""
    if not said:
        return None
    text = " ".join(said.split())
    if not text or text.startswith("<"):
        return None
    if len(text) > SAID_LIMIT:
        text = text[: SAID_LIMIT - 1] + "…"
    return text.rstrip(".")


def _os_reason(error: BaseException, fallback: str) -> str:
    """The operating system's or the TLS library's words for the cause, in lower case."""
    for cause in causes(error):
        if isinstance(cause, ssl.SSLCertVerificationError) and cause.verify_message:
            return str(cause.verify_message)
        if isinstance(cause, ssl.SSLError) and cause.reason:
            return str(cause.reason).replace("_", " ").lower()
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, OSError) and cause.strerror:
            return cause.strerror[:1].lower() + cause.strerror[1:]
    return fallback


# --- the texts: (what happened, what to do) -----------------------------------------------


def _refused(f: _Failure) -> tuple[str, str]:
    return (
        f"{f.pid} could not be reached at {f.url}: nothing is listening at {f.address} "
        "(connection refused).",
        f"Start the server there, or correct {f.pid}'s base URL {f.where}.",
    )


def _dns(f: _Failure) -> tuple[str, str]:
    host = urlsplit(f.url).hostname
    return (
        f"{f.pid} could not be reached at {f.url}: the host name {host} was not found.",
        f"Check the host name in {f.pid}'s base URL {f.where}, and your network connection.",
    )


def _tls(f: _Failure) -> tuple[str, str]:
    reason = _os_reason(f.error, "handshake failure")
    return (
        f"{f.pid} could not be reached at {f.url}: the TLS handshake with {f.address} failed "
        f"({reason}).",
        f"If the server speaks plain HTTP, use http:// in {f.pid}'s base URL {f.where}.",
    )


def _certificate(f: _Failure) -> tuple[str, str]:
    reason = _os_reason(f.error, "certificate verify failed")
    return (
        f"{f.pid} could not be reached at {f.url}: its TLS certificate was not accepted "
        f"({reason}).",
        "If it comes from your own certificate authority, start VS Code with SSL_CERT_FILE "
        "naming that authority's certificate.",
    )


def _proxy(f: _Failure) -> tuple[str, str]:
    proxy = proxy_for(f.url) or "in between"
    answer = next((e for e in causes(f.error) if isinstance(e, httpx.ProxyError)), None)
    reason = f"answered {answer}" if answer else _os_reason(f.error, "connection failed")
    return (
        f"{f.pid} could not be reached at {f.url}: the proxy {proxy} failed ({reason}).",
        "Check that proxy, or the HTTPS_PROXY, HTTP_PROXY and NO_PROXY environment variables "
        "VS Code was started with.",
    )


def _unreachable(f: _Failure) -> tuple[str, str]:
    reason = _os_reason(f.error, "connection failed")
    return (
        f"{f.pid} could not be reached at {f.url} ({reason}).",
        f"Check {f.pid}'s base URL {f.where}, and your network connection.",
    )


def _connect_timeout(f: _Failure) -> tuple[str, str]:
    return (
        f"{f.pid} could not be reached at {f.url}: {f.address} did not accept a connection in "
        "time.",
        "Check that the server is running and that no firewall or VPN is in the way.",
    )


def _dropped(f: _Failure) -> tuple[str, str]:
    return (
        f"The response of {f.pid} at {f.url} is incomplete: the connection closed before its end.",
        "Send again; if it keeps happening, check the server's logs or your network.",
    )


def _stalled(f: _Failure) -> tuple[str, str]:
    setting = f.error.setting if isinstance(f.error, StreamStalled) else None
    raise_it = f", or raise tokenGauge.{setting}" if setting else ""
    return (
        f"{f.pid} {f.error} at {f.url}.",
        f"Send again; if it keeps happening, check the server{raise_it}.",
    )


def _missing_v1(f: _Failure) -> tuple[str, str]:
    base = f.provider.base_url
    return (
        f"{f.pid} answered {f.status} at {f.url}: its base URL {base} does not end in /v1.",
        f"Try {join_url(base, 'v1')} as {f.pid}'s base URL {f.where}.",
    )


def _auth(f: _Failure) -> tuple[str, str]:
    if f.key_sent:
        happened = f"{f.pid} rejected the API key at {f.url} ({f.status})."
    else:
        happened = f"{f.pid} asked for an API key at {f.url} ({f.status}), and none is set."
    # A provider of Manage Models too: VS Code offers no way to change the key of a group alone.
    return happened, f"Run 'Token Gauge: Set API Key' to enter a valid key for {f.pid}."


def _no_model(f: _Failure) -> tuple[str, str]:
    return (
        f"{f.pid} has no model named {f.model} at {f.url} ({f.status}){f.quoted}.",
        f"Choose another model, or check the model id {f.pid} expects.",
    )


def _rate_limit(f: _Failure) -> tuple[str, str]:
    wait = f.error.retry_after if isinstance(f.error, HttpStatusError) else None
    if wait is not None:
        return (
            f"{f.pid} is limiting requests at {f.url} ({f.status}) and asks to wait {wait:.0f} s"
            f"{f.quoted}.",
            f"Wait {wait:.0f} s before sending again; if it keeps happening, check your plan's "
            f"limits with {f.pid}.",
        )
    return (
        f"{f.pid} is limiting requests at {f.url} ({f.status}){f.quoted}.",
        f"Wait a little before sending again; if it keeps happening, check your plan's limits "
        f"with {f.pid}.",
    )


def _server(f: _Failure) -> tuple[str, str]:
    return (
        f"{f.pid} had a server error at {f.url} ({f.status}){f.quoted}.",
        f"Try again in a moment; if it persists, check {f.pid}'s service status.",
    )


def _refused_request(f: _Failure) -> tuple[str, str]:
    todo = (
        "Correct what it names, then try again."
        if f.said
        else f"Check {f.pid}'s base URL {f.where}."
    )
    return f"{f.pid} refused the request at {f.url} ({f.status}){f.quoted}.", todo


def _redirect(f: _Failure) -> tuple[str, str]:
    target = f.error.target if isinstance(f.error, RedirectRefused) else None
    if target is None:
        return (
            f"{f.pid} redirected the request at {f.url} more than {MAX_REDIRECTS} times.",
            f"Check {f.pid}'s base URL {f.where}; the server may be misconfigured.",
        )
    return (
        f"{f.pid} redirected the request at {f.url} to another address ({target}), where "
        "Token Gauge sends neither your key nor the conversation.",
        f"If that address is right, make it {f.pid}'s base URL {f.where}.",
    )


def _bad_url(f: _Failure) -> tuple[str, str]:
    return (
        f"{f.pid}'s base URL makes no valid URL ({f.url}: {f.error}).",
        f"Correct it {f.where}.",
    )


def _bad_answer(f: _Failure) -> tuple[str, str]:
    return (
        f"{f.pid} sent an answer Token Gauge cannot use at {f.url}: {f.error}.",
        f"Check that {f.pid}'s base URL {f.where} points at the API itself (not a web page or a "
        "sign-in proxy).",
    )


_TEXTS: Final[dict[Kind, Callable[[_Failure], tuple[str, str]]]] = {
    Kind.REFUSED: _refused,
    Kind.DNS: _dns,
    Kind.TLS: _tls,
    Kind.CERTIFICATE: _certificate,
    Kind.PROXY: _proxy,
    Kind.UNREACHABLE: _unreachable,
    Kind.CONNECT_TIMEOUT: _connect_timeout,
    Kind.DROPPED: _dropped,
    Kind.STALLED: _stalled,
    Kind.MISSING_V1: _missing_v1,
    Kind.AUTH: _auth,
    Kind.NO_MODEL: _no_model,
    Kind.RATE_LIMIT: _rate_limit,
    Kind.SERVER: _server,
    Kind.REFUSED_REQUEST: _refused_request,
    Kind.REDIRECT: _redirect,
    Kind.BAD_URL: _bad_url,
    Kind.BAD_ANSWER: _bad_answer,
}


def midstream(provider: ProviderSettings, url: str, message: str, key: str | None = None) -> str:
    """An error the API reported inside a stream that had begun well, without any credential."""
    text = (
        f"{provider.id} sent an error in the middle of the response at {url}: "
        f"{_cleaned(message) or 'no details'}. Send again; if it keeps happening, try another "
        "model or try later."
    )
    return redact(text, *provider_secrets(provider, key))
