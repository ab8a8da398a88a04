"""Hypothesis over the params of every tokengauge method, against one long-lived server.

Every request gets an answer: a result, or an error with a readable message (InvalidParams for
input the client got wrong, RequestFailed with a kind for a chat that could not be carried out),
never InternalError or a traceback. The server stays alive, and a valid count is still exact
after all of it.
"""

from __future__ import annotations

import time
from typing import Any

from hypothesis import HealthCheck, given, settings

from tests.fuzz import strategies
from tests.fuzz.conftest import DERANDOMIZE, budget, report
from tests.fuzz.pipe_client import PipeServer
from tokengauge.counting.encodings import EncodingRegistry

EXPECTED_CODES = {-32602, -32803, -32800}
"""InvalidParams, RequestFailed, RequestCancelled."""
EXAMPLES = budget(1500)


def check(response: dict[str, Any]) -> str | None:
    """The error code's name if the response is an error; AssertionError if it is a bad one."""
    error = response.get("error")
    if error is None:
        assert "result" in response, response
        return None
    assert error["code"] in EXPECTED_CODES, error
    assert isinstance(error["message"], str) and error["message"].strip(), error
    assert "Traceback" not in error["message"], error["message"]
    return str(error["code"])


def exact_count_still_works(server: PipeServer) -> None:
    text = "Every request answered, the server alive."
    response = server.request(
        "tokenGauge/countTokens", {"modelId": "gpt-4o", "inputs": [text, text]}
    )
    expected = len(EncodingRegistry().get("o200k_base").encode_ordinary(text))
    assert response["result"]["raw"] == [expected, expected], response


def test_hostile_params_are_always_answered(server: PipeServer) -> None:
    outcomes: dict[str, int] = {}
    rss_before = server.rss()
    started = time.monotonic()

    @settings(
        max_examples=EXAMPLES,
        derandomize=DERANDOMIZE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(request=strategies.requests)
    def one(request: tuple[str, Any]) -> None:
        method, params = request
        response = server.request(method, params, timeout=60)
        kind = f"{method.removeprefix('tokenGauge/')} {check(response) or 'result'}"
        outcomes[kind] = outcomes.get(kind, 0) + 1

    one()
    exact_count_still_works(server)
    assert server.alive
    report(
        "params",
        {
            "requests": server.sent_requests,
            "outcomes": outcomes,
            "deaths": 0,
            "unanswered": 0,
            "internal_errors": 0,
            "seconds": round(time.monotonic() - started, 1),
            "rss_mb": [round(rss_before / 2**20), round(server.rss() / 2**20)],
        },
    )
