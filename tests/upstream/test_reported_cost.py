"""The cost a response states, read by the stream parsers from real captures (the repository's
own, `tests/data/wire`, with their sources): OpenRouter's `usage.cost`, xAI's
`cost_in_usd_ticks` in Chat Completions and Responses streams, a LiteLLM proxy's header."""

from __future__ import annotations

import json

import attrs
import httpx
import pytest

from tests.harness.fake_upstream.wire import WIRE_DIR
from tests.upstream.dialects.stream_cases import parse
from tokengauge.messages import Usage
from tokengauge.upstream.dialects.events import header_cost


@pytest.mark.parametrize(
    ("name", "dialect", "usage"),
    [
        pytest.param(
            "openrouter-chat-stream-cached-reasoning-usage.sse",
            "openai",
            Usage(687, 187, 687, cache_read_tokens=679, reasoning_tokens=118, cost_usd=0.00333825),
            id="openrouter-usage-cost",
        ),
        pytest.param(
            "xai-chat-stream-reasoning-cost.sse",
            "openai",
            Usage(12, 1, 12, cache_read_tokens=11, reasoning_tokens=290, cost_usd=0.000146625),
            id="xai-chat-ticks",
        ),
        pytest.param(
            "xai-responses-stream-completed-cost.sse",
            "responses",
            Usage(5467, 593, 5467, cache_read_tokens=1152, reasoning_tokens=575, cost_usd=0.017764),
            id="xai-responses-ticks",
        ),
        pytest.param(
            "litellm-chat-stream-cost-header.sse",
            "openai",
            Usage(87, 26, 87),  # the body says nothing of money: the header does
            id="litellm-body",
        ),
    ],
)
def test_the_parsers_read_the_cost_a_capture_states(name: str, dialect: str, usage: Usage):
    events, ended = parse(dialect, (WIRE_DIR / name).read_bytes())
    [reported] = [event for event in events if isinstance(event, Usage)]
    assert attrs.evolve(reported, cost_usd=None) == attrs.evolve(usage, cost_usd=None)
    if usage.cost_usd is None:
        assert reported.cost_usd is None
    else:  # ticks ÷ 10^10, to a float's rounding
        assert reported.cost_usd == pytest.approx(usage.cost_usd, rel=1e-12)
    assert ended


def test_the_litellm_headers_state_the_cost():
    recorded = json.loads((WIRE_DIR / "litellm-chat-stream-cost-header.headers.json").read_text())
    assert header_cost(httpx.Headers(recorded)) == pytest.approx(2.85e-05)
