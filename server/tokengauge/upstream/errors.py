"""What can go wrong talking to an API, as exceptions the chat loop tells apart."""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import Mapping


class UpstreamError(Exception):
    """Anything that went wrong talking to the API."""


class HttpStatusError(UpstreamError):
    """The API answered with an error status; `body` is its text (trimmed)."""

    def __init__(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.body = body
        self.retry_after = retry_after_seconds(headers)
        should_retry = headers.get("x-should-retry")
        self.should_retry = None if should_retry is None else should_retry.lower() == "true"


class ConnectionFailed(UpstreamError):
    """The connection could not be made or broke before the response was complete."""


class StreamStalled(UpstreamError):
    """The API sent nothing useful for longer than the idle timeout, or took longer in all than
    the response timeout."""


class RedirectRefused(UpstreamError):
    """The API redirected to another origin (where the key and the conversation must not go), or
    in circles."""


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds the API asks us to wait: `retry-after-ms`, `retry-after` (seconds or HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(millis) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError):
        moment = email.utils.parsedate_to_datetime(value)
        return max(0.0, moment.timestamp() - time.time())
    return None
