"""Which kind of failure an error of the HTTP layer is, as a person would tell them apart:
the connection refused, the host name not found, TLS, a proxy, a timeout, the key, the model, a
base URL without its `/v1`, … (`upstream.explain` says each in words)."""

from __future__ import annotations

import enum
import socket
import ssl
import urllib.request
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx

from tokengauge.settings import ProviderSettings
from tokengauge.upstream.errors import (
    KEY_REFUSED,
    ConnectionFailed,
    HttpStatusError,
    InvalidUrl,
    RedirectRefused,
    StreamStalled,
)
from tokengauge.upstream.presets import preset_of


class Kind(enum.Enum):
    """What kind of failure it was (each has its own text in `upstream.explain`); the value is
    its name in a few words, for the status bar."""

    REFUSED = "unreachable: connection refused"
    DNS = "unreachable: host not found"
    TLS = "unreachable: TLS failed"
    CERTIFICATE = "unreachable: certificate not accepted"
    PROXY = "unreachable: proxy failed"
    UNREACHABLE = "unreachable"
    CONNECT_TIMEOUT = "unreachable: no connection in time"
    DROPPED = "connection broken"
    STALLED = "timed out"
    MISSING_V1 = "wrong base URL"
    AUTH = "key rejected"
    NO_MODEL = "no such model"
    RATE_LIMIT = "rate limited"
    SERVER = "server error"
    REFUSED_REQUEST = "request refused"
    REDIRECT = "redirected elsewhere"
    BAD_URL = "invalid base URL"
    BAD_ANSWER = "unusable answer"


def kind_of(
    provider: ProviderSettings,
    url: str,
    failure: BaseException,
    model: str | None,
    said: str | None,
) -> Kind:
    """Which kind `failure` of a request to `url` is; `model` and the API's words (`said`) tell
    a model the provider does not serve from a base URL that lacks its `/v1`."""
    if isinstance(failure, HttpStatusError):
        return _status_kind(provider, url, failure.status, model, said)
    if isinstance(failure, StreamStalled):
        return Kind.STALLED
    if isinstance(failure, RedirectRefused):
        return Kind.REDIRECT
    if isinstance(failure, InvalidUrl):
        return Kind.BAD_URL
    if isinstance(failure, ConnectionFailed):
        return _connection_kind(url, failure)
    return Kind.BAD_ANSWER


def _status_kind(
    provider: ProviderSettings, url: str, status: int, model: str | None, said: str | None
) -> Kind:
    if status in KEY_REFUSED:
        return Kind.AUTH
    if status == 429:
        return Kind.RATE_LIMIT
    if status >= 500:
        return Kind.SERVER
    if status == 404:
        if _lacks_v1(provider, url) and not (model and said and model in said):
            return Kind.MISSING_V1
        if model is not None:
            return Kind.NO_MODEL
    return Kind.REFUSED_REQUEST


def _lacks_v1(provider: ProviderSettings, url: str) -> bool:
    """An OpenAI-style base URL (not Azure's) whose path does not end in `/v1`, asked at one of
    the paths that live under `/v1`."""
    preset = preset_of(provider)
    if provider.dialect == "anthropic" or (preset is not None and preset.id == "azure-openai"):
        return False
    path = urlsplit(url).path
    base = urlsplit(provider.base_url).path.rstrip("/")
    return path.endswith(("/chat/completions", "/models")) and not base.endswith("/v1")


def _connection_kind(url: str, failure: BaseException) -> Kind:
    chain = list(causes(failure))
    if any(isinstance(error, httpx.ProxyError) for error in chain):
        return Kind.PROXY
    if any(isinstance(error, ssl.SSLCertVerificationError) for error in chain):
        return Kind.CERTIFICATE
    if any(isinstance(error, ssl.SSLError) for error in chain):
        return Kind.TLS
    connecting = any(
        isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout)) for error in chain
    )
    if connecting and proxy_for(url) is not None:
        return Kind.PROXY
    if any(isinstance(error, socket.gaierror) for error in chain):
        return Kind.DNS
    if any(isinstance(error, httpx.ConnectTimeout) for error in chain):
        return Kind.CONNECT_TIMEOUT
    if any(isinstance(error, ConnectionRefusedError) for error in chain):
        return Kind.REFUSED
    if connecting:
        return Kind.UNREACHABLE
    return Kind.DROPPED


def causes(error: BaseException) -> Iterator[BaseException]:
    """`error` and what caused it, each once, nearest first."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def proxy_for(url: str) -> str | None:
    """`host:port` of the proxy the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, less
    `NO_PROXY`) puts between us and `url`, as httpx reads it; None without one."""
    proxies = urllib.request.getproxies()
    parts = urlsplit(url)
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    host = (parts.hostname or "").lower()
    for name in (item.strip().lower() for item in proxies.get("no", "").split(",")):
        if name == "*" or (name and (host == name or host.endswith("." + name.lstrip(".")))):
            return None
    if not proxy:
        return None
    return address(proxy if "://" in proxy else f"http://{proxy}")


def address(url: str) -> str:
    """`host:port` of `url` (the scheme's port if it names none)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = 443 if parts.scheme == "https" else 80
    host = parts.hostname or ""
    return f"{host}:{port or default}"
