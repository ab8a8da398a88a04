"""The chat loop's pure parts: backoff policy and the usage JSON Copilot reads."""

from __future__ import annotations

import pytest

from tokengauge.chat import RetryPolicy, openai_usage
from tokengauge.upstream.events import UsageReport
from tokengauge.upstream.http import retry_after_seconds


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


def test_openai_usage_shape():
    usage = UsageReport(
        input_tokens=100,
        output_tokens=20,
        cache_read_tokens=900,
        cache_write_tokens=50,
        reasoning_tokens=7,
        total_input_tokens=1050,
    )
    assert openai_usage(usage) == {
        "prompt_tokens": 1050,
        "completion_tokens": 20,
        "total_tokens": 1070,
        "prompt_tokens_details": {"cached_tokens": 900},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
