"""What can go wrong talking to an API, as exceptions the chat loop tells apart."""

from __future__ import annotations

from collections.abc import Mapping

from tokengauge.upstream.retry import retry_after_seconds, should_retry_header


class UpstreamError(Exception):
    """Anything that went wrong talking to the API."""


class HttpStatusError(UpstreamError):
    """The API answered with an error status; `body` is its text (trimmed)."""

    def __init__(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.retry_after = retry_after_seconds(headers)
        self.should_retry = should_retry_header(headers)


class ConnectionFailed(UpstreamError):
    """The connection could not be made or broke before the response was complete."""


class StreamStalled(UpstreamError):
    """The API sent nothing useful for longer than the idle timeout, or took longer in all than
    the response timeout."""


class RedirectRefused(UpstreamError):
    """The API redirected to another origin (where the key and the conversation must not go), or
    in circles."""
