"""upstream.retry: when a failed request is tried again, and after how long."""

from __future__ import annotations

import pytest

from tokengauge.upstream.retry import (
    MAX_RETRY_AFTER,
    RETRYABLE_STATUSES,
    RetryPolicy,
    retry_after_seconds,
    should_retry_header,
)


@pytest.mark.parametrize(
    ("attempt", "low", "high"),
    [pytest.param(1, 0.8, 1.2, id="first"), pytest.param(3, 3.2, 4.8, id="third")],
)
def test_backoff_doubles_with_jitter(attempt: int, low: float, high: float):
    delays = [RetryPolicy(base_delay=1.0).delay(attempt, None) for _ in range(200)]
    assert all(low <= d <= high for d in delays)
    assert len(set(delays)) > 1


def test_retry_after_wins():
    assert RetryPolicy().delay(1, 7.5) == 7.5


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"retry-after": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after-ms": "250"}, 0.25, id="millis"),
        pytest.param({"retry-after": "-4"}, 0.0, id="negative"),
        pytest.param({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0, id="past-date"),
        pytest.param({"retry-after": "soon"}, None, id="junk"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_retry_after_header(headers: dict[str, str], expected: float | None):
    assert retry_after_seconds(headers) == expected


@pytest.mark.parametrize("status", sorted(RETRYABLE_STATUSES))
def test_transient_statuses_are_retried_while_tries_remain(status: int):
    policy = RetryPolicy(max_attempts=3)
    assert policy.allows(1, status, None, None)
    assert policy.allows(2, status, None, None)
    assert not policy.allows(3, status, None, None)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_client_errors_are_not_retried_unless_the_api_says_so(status: int):
    policy = RetryPolicy()
    assert not policy.allows(1, status, None, None)
    assert policy.allows(1, status, None, True)


def test_the_apis_no_wins_and_a_long_wait_is_not_worth_it():
    policy = RetryPolicy()
    assert not policy.allows(1, 429, None, False)
    assert policy.allows(1, 429, MAX_RETRY_AFTER, None)
    assert not policy.allows(1, 429, MAX_RETRY_AFTER + 1, None)


def test_tries_left():
    policy = RetryPolicy(max_attempts=2)
    assert policy.tries_left(1) and not policy.tries_left(2)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param({"x-should-retry": "true"}, True, id="true"),
        pytest.param({"x-should-retry": "FALSE"}, False, id="false"),
        pytest.param({}, None, id="absent"),
    ],
)
def test_should_retry_header(headers: dict[str, str], expected: bool | None):
    assert should_retry_header(headers) is expected
