"""Building endpoint URLs from a provider's base URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def join_url(base_url: str, path: str) -> str:
    """`base_url` + `/path`, keeping a query string (Azure's `?api-version=`) at the end."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/" + path.lstrip("/")))


def server_root(base_url: str) -> str:
    """The base URL without a trailing `/v1` (where Ollama's and LiteLLM's own APIs live)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    return urlunsplit(parts._replace(path=path, query=""))
