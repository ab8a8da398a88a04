"""Calibration: actuals by digest, the correction factor, learning from overflow errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import any_text
from tokengauge.calibration import (
    ACTUAL_MARGIN,
    FACTOR_MAX,
    FACTOR_MIN,
    Usage,
    largest_remainder,
    scaled,
)
from tokengauge.gauge import Gauge
from tokengauge.ledger import Ledger
from tokengauge.overflow import parse_overflow_error
from tokengauge.protocol import RecordErrorParams, RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings
from tokengauge.wire import Message, TextPart, Tool, ToolCallPart, ToolResultPart

PROVIDER = ProviderSettings(id="test")
SETTINGS = ServerSettings(
    providers=(PROVIDER,),
    models=(
        ModelSettings(id="gpt-4o", provider="test"),
        ModelSettings(id="claude-sonnet-4-5", provider="test", context_window=200_000),
        ModelSettings(id="small", provider="test", context_window=8192, max_output_tokens=2048),
    ),
)
TOOLS = [
    Tool(
        name="read_file",
        description="Read a file.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    )
]


def conversation(turns: int = 6, size: int = 40) -> list[Message]:
    messages = [Message(role="system", content=[TextPart("You are a careful assistant. " * 10)])]
    for turn in range(turns):
        messages.append(Message(role="user", content=[TextPart(f"question {turn} " * size)]))
        messages.append(
            Message(
                role="assistant",
                content=[ToolCallPart(call_id=f"c{turn}", name="read_file", input={"path": "a"})],
            )
        )
        messages.append(
            Message(
                role="user",
                content=[ToolResultPart(call_id=f"c{turn}", content=[TextPart("x = 1\n" * size)])],
            )
        )
    return messages


@pytest.fixture
def gauge(tmp_path: Path) -> Gauge:
    return Gauge(SETTINGS, Ledger(tmp_path / "ledger"))


def estimate_total(gauge: Gauge, model_id: str, messages: list[Message]) -> int:
    return gauge.estimate(gauge.model(model_id), messages, TOOLS).total


@given(total=st.integers(0, 10**7), weights=st.lists(st.integers(0, 10**5), max_size=50))
def test_largest_remainder_adds_up_and_is_proportional(total: int, weights: list[int]):
    shares = largest_remainder(total, weights)
    assert len(shares) == len(weights)
    if weights and total > 0:
        assert sum(shares) == total
        weight_sum = sum(weights) or len(weights)
        for share, weight in zip(shares, weights or [1], strict=False):
            quota = total * (weight if sum(weights) else 1) / weight_sum
            assert math.floor(quota) <= share <= math.floor(quota) + 1


@pytest.mark.parametrize(
    ("raw", "scale", "expected"),
    [
        pytest.param(100, 1.05, 105, id="float-noise"),
        pytest.param(101, 1.05, 107, id="rounds-up"),
        pytest.param(0, 3.0, 0, id="zero"),
    ],
)
def test_scaled(raw: int, scale: float, expected: int):
    assert scaled(raw, scale) == expected


def test_before_calibration_estimate_is_at_least_tiktoken(gauge: Gauge):
    messages = conversation()
    estimate = gauge.estimate(gauge.model("gpt-4o"), messages, TOOLS)
    assert all(m.source == "estimate" and m.tokens >= m.raw for m in estimate.messages)
    assert estimate.total >= estimate.raw.total


@pytest.mark.parametrize(
    "ratio",
    [pytest.param(0.8, id="api-counts-less"), pytest.param(1.3, id="api-counts-more")],
)
def test_usage_makes_the_same_conversation_follow_the_actual(gauge: Gauge, ratio: float):
    messages = conversation()
    model = gauge.model("claude-sonnet-4-5")
    before = gauge.estimate(model, messages, TOOLS)
    actual = round(before.raw.total * ratio)
    epoch = gauge.epoch
    gauge.record_usage(
        RecordUsageParams(
            model_id=model.id, messages=messages, tools=TOOLS, usage=Usage(actual, 50)
        )
    )
    assert gauge.epoch > epoch
    after = gauge.estimate(model, messages, TOOLS)
    assert all(m.source == "actual" for m in after.messages)
    # Never below the API's count, and no more than the margins above it.
    assert actual <= after.total <= math.ceil(actual * 1.06) + len(messages)
    expected_factor = 0.7 * 1.0 + 0.3 * actual / before.raw.total
    assert gauge.calibration.factor(model.id) == pytest.approx(expected_factor)


def test_actuals_follow_the_family_and_outlive_the_process(tmp_path: Path):
    messages = conversation()
    first = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    model = first.model("claude-sonnet-4-5")
    raw_total = first.estimate(model, messages, TOOLS).raw.total
    first.record_usage(RecordUsageParams(model.id, messages, Usage(raw_total * 2), TOOLS))
    factor = first.calibration.factor(model.id)
    first.ledger.close()

    second = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    again = second.estimate(second.model(model.id), messages, TOOLS)
    assert all(m.source == "actual" for m in again.messages)
    assert second.calibration.factor(model.id) == pytest.approx(factor)
    other_family = second.estimate(second.model("gpt-4o"), messages, TOOLS)
    assert all(m.source == "estimate" for m in other_family.messages)


def test_a_new_message_is_estimated_with_the_factor(gauge: Gauge):
    messages = conversation()
    model = gauge.model("gpt-4o")
    raw_total = gauge.estimate(model, messages, TOOLS).raw.total
    for _ in range(30):
        gauge.record_usage(RecordUsageParams(model.id, messages, Usage(raw_total * 2), TOOLS))
    assert gauge.calibration.factor(model.id) == pytest.approx(2.0, rel=0.01)
    new = Message(role="user", content=[TextPart("a brand new question " * 30)])
    counted = gauge.count(model.id, [new]).tokens[0]
    raw = gauge.counter(model).message(new)
    assert counted >= 2 * raw


@pytest.mark.parametrize(
    ("ratio", "bound"),
    [pytest.param(100.0, FACTOR_MAX, id="clamped-high"), pytest.param(0.01, FACTOR_MIN, id="low")],
)
def test_factor_is_clamped(gauge: Gauge, ratio: float, bound: float):
    messages = conversation()
    model = gauge.model("gpt-4o")
    raw_total = gauge.estimate(model, messages, TOOLS).raw.total
    for _ in range(40):
        gauge.record_usage(
            RecordUsageParams(model.id, messages, Usage(max(1, round(raw_total * ratio))), TOOLS)
        )
    assert gauge.calibration.factor(model.id) == pytest.approx(bound)


def test_zero_usage_teaches_nothing(gauge: Gauge):
    epoch = gauge.epoch
    gauge.record_usage(RecordUsageParams("gpt-4o", conversation(), Usage(0), TOOLS))
    assert gauge.epoch == epoch
    assert gauge.calibration.factor("gpt-4o") == 1.0


def test_cached_actual_gets_two_percent(gauge: Gauge):
    message = Message(role="user", content=[TextPart("hello " * 100)])
    model = gauge.model("gpt-4o")
    digest = gauge.estimate(model, [message], []).raw.digests[0]
    gauge.ledger.put_actuals(model.family, {digest: 1000})
    assert gauge.count(model.id, [message]).tokens == [math.ceil(1000 * ACTUAL_MARGIN)]


OVERFLOWS = [
    pytest.param(400, "error-anthropic-prompt-too-long.json", "claude-sonnet-4-5", id="anthropic"),
    pytest.param(
        400,
        "error-anthropic-prompt-too-long-no-request-id.json",
        "claude-sonnet-4-5",
        id="anthropic-199999",
    ),
    pytest.param(400, "error-openai-context-length-exceeded.json", "gpt-4o", id="openai"),
    pytest.param(400, "error-gemini-input-token-count-exceeded.json", "gpt-4o", id="gemini"),
    pytest.param(
        400, "error-gemini-input-token-count-exceeded-no-count.json", "gpt-4o", id="gemini-nocount"
    ),
    pytest.param(400, "error-llamacpp-exceed-context-size.json", "small", id="llamacpp"),
    pytest.param(
        400,
        "error-openai-responses-context-length-exceeded-stream-event.json",
        "gpt-4o",
        id="responses-no-numbers",
    ),
]


@pytest.mark.parametrize(("status", "fixture", "model_id"), OVERFLOWS)
def test_overflow_makes_the_next_count_exceed_the_limit(
    gauge: Gauge, wire: Path, status: int, fixture: str, model_id: str
):
    body = (wire / fixture).read_text()
    error = parse_overflow_error(status, body)
    model = gauge.model(model_id)
    messages = conversation()
    before = estimate_total(gauge, model_id, messages)
    max_input_before = gauge.max_input_tokens(model)
    result = gauge.record_error(RecordErrorParams(model_id, messages, body, status, TOOLS))
    assert result.error is not None and result.error["kind"] == "overflow"
    after = estimate_total(gauge, model_id, messages)
    limit = error.limit_tokens or model.context_window
    assert before <= limit < after
    if error.input_tokens is not None:
        assert after >= error.input_tokens
    if error.limit_tokens is not None and error.limit_tokens < model.context_window:
        assert result.learned_limit == error.limit_tokens
        assert gauge.max_input_tokens(model) < error.limit_tokens
        assert gauge.max_input_tokens(model) < max_input_before


@pytest.mark.parametrize(
    ("body", "excess"),
    [
        pytest.param(
            '{"error":{"message":"prompt too long; exceeded max context length by 3000 tokens"}}',
            3000,
            id="ollama",
        ),
        pytest.param(
            '{"message":"too many tokens: size limit exceeded by 2500 tokens. Try using shorter '
            'or fewer inputs."}',
            2500,
            id="cohere",
        ),
    ],
)
def test_an_overflow_that_names_only_its_excess_is_learned(gauge: Gauge, body: str, excess: int):
    """The request was too big by `excess` over the window: the next count says so."""
    model = gauge.model("small")
    messages = conversation(turns=12, size=60)
    before = estimate_total(gauge, model.id, messages)
    gauge.record_error(RecordErrorParams(model.id, messages, body, 400, TOOLS))
    after = estimate_total(gauge, model.id, messages)
    assert after >= model.context_window + excess > before


def test_input_plus_max_tokens_learns_the_true_input(gauge: Gauge, wire: Path):
    body = (wire / "error-anthropic-input-plus-max-tokens-exceed-context.json").read_text()
    model = gauge.model("claude-sonnet-4-5")
    messages = conversation()
    result = gauge.record_error(RecordErrorParams(model.id, messages, body, 400, TOOLS))
    assert result.error == {
        "kind": "overflow",
        "inputTokens": 143653,
        "limitTokens": 200000,
        "outputTokens": 64000,
        "excessTokens": None,
        "message": result.error["message"] if result.error else None,
    }
    after = estimate_total(gauge, model.id, messages)
    assert 143653 <= after <= math.ceil(143653 * 1.03)


@pytest.mark.parametrize(
    ("status", "fixture"),
    [
        pytest.param(400, "error-anthropic-max-tokens-over-model-output-limit.json", id="output"),
        pytest.param(429, "error-anthropic-429-rate-limit.json", id="rate"),
        pytest.param(401, "error-anthropic-401-invalid-api-key.json", id="auth"),
        pytest.param(529, "error-anthropic-529-overloaded.json", id="overloaded"),
    ],
)
def test_other_errors_teach_nothing(gauge: Gauge, wire: Path, status: int, fixture: str):
    messages = conversation()
    before = estimate_total(gauge, "gpt-4o", messages)
    epoch = gauge.epoch
    result = gauge.record_error(
        RecordErrorParams("gpt-4o", messages, (wire / fixture).read_text(), status, TOOLS)
    )
    assert result.error is not None and result.error["kind"] != "overflow"
    assert result.learned_limit is None
    assert gauge.epoch == epoch
    assert estimate_total(gauge, "gpt-4o", messages) == before


ANY_TEXT = any_text(max_size=400)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=4))
def test_uncalibrated_counts_never_fall_below_tiktoken(texts: list[str]):
    """DESIGN §5.2 through the same path the server answers with, for strings and messages."""
    gauge = UNCALIBRATED
    for model_id, encoding_name in (("gpt-4o", "o200k_base"), ("claude-sonnet-4-5", "cl100k_base")):
        encoding = gauge.encodings.get(encoding_name)
        exact = [len(encoding.encode_ordinary(text)) for text in texts]
        message = Message(role="user", content=[TextPart(text) for text in texts])
        result = gauge.count(model_id, [*texts, message])
        assert all(t >= e for t, e in zip(result.tokens, exact, strict=False))
        assert result.tokens[-1] >= 4 + sum(exact)


UNCALIBRATED = Gauge(SETTINGS, Ledger(None))
