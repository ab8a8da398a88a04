"""What can go wrong talking to an API, as exceptions the chat loop tells apart (and
`upstream.explain` puts in words a person can act on)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from tokengauge.upstream.retry import retry_after_seconds, should_retry_header

KEY_REFUSED: Final = frozenset({401, 403})
"""The statuses of an API that turns the key down (or wants one)."""


class UpstreamError(Exception):
    """Anything that went wrong talking to the API; the message says what the API did wrong."""


class HttpStatusError(UpstreamError):
    """The API answered with an error status; `body` is its text (trimmed)."""

    def __init__(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.retry_after = retry_after_seconds(headers)
        self.should_retry = should_retry_header(headers)

    @property
    def refuses_key(self) -> bool:
        """401 or 403: the API turned the key down, or wants one."""
        return self.status in KEY_REFUSED


class ConnectionFailed(UpstreamError):
    """The connection could not be made or broke before the response was complete; the httpx
    error that says why is its `__cause__` (none: the stream just ended early)."""


class StreamStalled(UpstreamError):
    """The API sent nothing useful for longer than the idle timeout, or took longer in all than
    the response timeout. The message is what the API did (`stopped sending data for 120 s`);
    `setting` names the timeout that ran out, if a person may raise it."""

    def __init__(self, message: str, setting: str | None = None) -> None:
        super().__init__(message)
        self.setting = setting


class RedirectRefused(UpstreamError):
    """The API redirected to another origin (where the key and the conversation must not go), or
    in circles; `target` is the other origin, if that was it."""

    def __init__(self, message: str, target: str | None = None) -> None:
        super().__init__(message)
        self.target = target


class InvalidUrl(UpstreamError):
    """The provider's base URL makes no valid URL."""
