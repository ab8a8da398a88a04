"""When a failed request is tried again, and after how long.

Retries happen only before the first part reached the user (the chat loop's rule): 408, 409, 429,
5xx and 529 back off, honouring the API's `retry-after(-ms)` and `x-should-retry`, for at most
`max_attempts` tries; a wait the API asks for beyond a minute is not worth holding a chat for.
"""

from __future__ import annotations

import contextlib
import email.utils
import random
import time
from collections.abc import Mapping
from typing import Final

import attrs

RETRYABLE_STATUSES: Final = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_RETRY_AFTER: Final = 60.0


@attrs.frozen
class RetryPolicy:
    """At most `max_attempts` tries; waits `base_delay × 2^n` (±20%) unless the API says more."""

    max_attempts: int = 3
    base_delay: float = 1.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before try number `attempt + 1`."""
        if retry_after is not None:
            return retry_after
        return float(self.base_delay * 2.0 ** (attempt - 1) * random.uniform(0.8, 1.2))

    def tries_left(self, attempt: int) -> bool:
        """Whether try number `attempt` may be followed by another."""
        return attempt < self.max_attempts

    def allows(
        self, attempt: int, status: int, retry_after: float | None, should_retry: bool | None
    ) -> bool:
        """Whether an HTTP error status after try number `attempt` is worth another try."""
        if not self.tries_left(attempt) or should_retry is False:
            return False
        if retry_after is not None and retry_after > MAX_RETRY_AFTER:
            return False
        return should_retry is True or status in RETRYABLE_STATUSES


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


def should_retry_header(headers: Mapping[str, str]) -> bool | None:
    """The API's own `x-should-retry` verdict, if it gave one."""
    value = headers.get("x-should-retry")
    return None if value is None else value.lower() == "true"
