"""Calibration: actuals by digest and by difference, the component fit, overflow learning, and
what Copilot Chat's sum of our answers comes to.

The API in these tests is the test upstream's model
(`tests.harness.fake_upstream.model.count_prompt`) reading the very body tokengauge would send: its
true tokenizer is o200k_base × a skew for text and for the tools' JSON, plus a per-message and a
per-request overhead, while tokengauge counts a `claude` model with cl100k_base.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness.fake_upstream.config import ModelBehavior
from tests.harness.fake_upstream.model import count_prompt
from tests.strategies import any_text
from tokengauge.calibration.classify import classify_error
from tokengauge.calibration.estimates import ACTUAL_MARGIN
from tokengauge.calibration.fit import BOUNDS, COMPONENTS
from tokengauge.calibration.request_estimate import largest_remainder, scaled
from tokengauge.counting.scales import copilot_tools
from tokengauge.gauge import COPILOT_MESSAGE_OVERHEAD, Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import (
    Message,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    Usage,
    unstructure,
)
from tokengauge.models import budget
from tokengauge.protocol import RecordErrorParams, RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings
from tokengauge.upstream.dialects.dialect import dialect_for
from tokengauge.upstream.options import parse_model_options

PROVIDER = ProviderSettings(id="test")
SETTINGS = ServerSettings(
    providers=(PROVIDER,),
    models=(
        ModelSettings(id="gpt-4o", provider="test"),
        ModelSettings(id="claude-sonnet-4-5", provider="test", context_window=200_000),
        ModelSettings(id="small", provider="test", context_window=8192, max_output_tokens=2048),
        ModelSettings(
            id="claude-small",
            provider="test",
            family="claude-sonnet-4",
            context_window=16_000,
            max_output_tokens=2_000,
        ),
    ),
)
TOOLS = [
    Tool(
        name="read_file",
        description="Read a file of the workspace, from one line to another.",
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute path."},
                "startLine": {"type": "number", "description": "First line, 1-based."},
                "endLine": {"type": "number", "description": "Last line, inclusive."},
            },
            "required": ["path", "startLine", "endLine"],
        },
    ),
    Tool(name="list_dir", description="List a directory.", input_schema={"type": "object"}),
]
CJK = "请审阅这份中文事故报告，并指出最早出现的问题。缓存分片副本窗口预算令牌数据流解析器。"


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


def api_count(gauge: Gauge, model_id: str, messages: list[Message], skew: float) -> int:
    """What the test API counts for the body tokengauge would send."""
    model = gauge.offer.model(model_id)
    options = parse_model_options(None, {})
    body = dialect_for(model).body(model, messages, TOOLS, options, 1000)
    behavior = ModelBehavior(
        encoding="o200k_base", scale=skew, tool_scale=skew, per_message_overhead=7
    )
    return count_prompt(body, "openai", behavior).total


def record(gauge: Gauge, model_id: str, messages: list[Message], actual: int) -> None:
    gauge.record_usage(RecordUsageParams(model_id, messages, Usage(actual, 50), TOOLS))


@pytest.fixture
def gauge(tmp_path: Path) -> Gauge:
    return Gauge(SETTINGS, Ledger(tmp_path / "ledger"))


def in_true_tokens(gauge: Gauge, model_id: str, tokens: int) -> float:
    """A count answer (in the units VS Code is told) as true tokens."""
    return tokens / gauge.offer.declarations.get(gauge.offer.model(model_id)).scale


def estimate_total(gauge: Gauge, model_id: str, messages: list[Message]) -> int:
    return gauge.counts.estimate(gauge.offer.model(model_id), messages, TOOLS).total


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


@pytest.mark.parametrize("model_id", ["gpt-4o", "claude-sonnet-4-5"])
def test_before_calibration_estimate_is_at_least_tiktoken(gauge: Gauge, model_id: str):
    estimate = gauge.counts.estimate(gauge.offer.model(model_id), conversation(), TOOLS)
    raws = [count.total for count in estimate.features.messages]
    assert all(m.source == "estimate" for m in estimate.messages)
    assert all(m.tokens >= raw for m, raw in zip(estimate.messages, raws, strict=True))
    assert estimate.total >= estimate.raw_total


@pytest.mark.parametrize(
    "skew", [pytest.param(0.7, id="api-counts-less"), pytest.param(1.45, id="api-counts-more")]
)
def test_usage_makes_the_same_conversation_follow_the_actual(gauge: Gauge, skew: float):
    messages = conversation()
    model = gauge.offer.model("claude-sonnet-4-5")
    actual = api_count(gauge, model.id, messages, skew)
    epoch = gauge.epoch
    record(gauge, model.id, messages, actual)
    assert gauge.epoch > epoch
    after = gauge.counts.estimate(model, messages, TOOLS)
    assert all(m.source == "actual" for m in after.messages)
    # Never below the API's count; above it by the 2% on actuals and the margin the tools' share
    # still carries after a single report (the tools are a tenth of this request).
    assert actual <= after.total <= math.ceil(actual * 1.06)


@pytest.mark.parametrize("skew", [0.7, 1.0, 1.3, 1.6])
def test_ratios_converge_within_a_few_requests(gauge: Gauge, skew: float):
    """A growing conversation with CJK and tools: after 4 reports the next, unseen request is
    estimated within 3% of the API, and never below it by more than 1%."""
    model = gauge.offer.model("claude-sonnet-4-5")
    messages = conversation(turns=1)
    errors = []
    for turn in range(10):
        text = CJK * 20 if turn % 3 == 1 else f"turn {turn}: review this code\n" + "x = 1\n" * 300
        messages = [*messages, Message(role="user", content=[TextPart(text)])]
        actual = api_count(gauge, model.id, messages, skew)
        errors.append(estimate_total(gauge, model.id, messages) / actual - 1)
        record(gauge, model.id, messages, actual)
        messages = [*messages, Message(role="assistant", content=[TextPart("Reviewed.")])]
    late = errors[4:]
    assert max(abs(e) for e in late) <= 0.03, errors
    assert min(late) >= -0.01, errors
    ratios = gauge.calibration.ratios(model)
    assert ratios["text"] == pytest.approx(skew, rel=0.1)


def test_new_messages_get_what_the_api_charged_for_them(gauge: Gauge):
    """Actuals by difference: each message added to a conversation is stored at its true cost."""
    model = gauge.offer.model("claude-sonnet-4-5")
    messages = conversation(turns=2)
    record(gauge, model.id, messages, api_count(gauge, model.id, messages, 1.45))
    for turn in range(4):
        new = Message(role="user", content=[TextPart(f"new question {turn} " * (50 + 40 * turn))])
        grown = [*messages, new]
        cost = api_count(gauge, model.id, grown, 1.45) - api_count(gauge, model.id, messages, 1.45)
        record(gauge, model.id, grown, api_count(gauge, model.id, grown, 1.45))
        stored = gauge.counts.estimate(model, grown, TOOLS).messages[-1]
        assert stored.source == "actual"
        assert stored.actual == pytest.approx(cost, rel=0.03, abs=4)
        messages = grown


@pytest.mark.parametrize("skew", [0.7, 1.0, 1.45, 1.6])
def test_copilots_budget_edge_holds_what_the_api_takes(gauge: Gauge, skew: float):
    """Copilot fits its own o200k count of the messages within `0.9 × (maxInputTokens − tools)`,
    the tools counted through us: at that edge, what the API charges must fit the window, and
    not fall far short of what an exact count would allow."""
    model = gauge.offer.model("claude-small")
    for turns in range(1, 7):
        messages = conversation(turns=turns, size=30)
        record(gauge, model.id, messages, api_count(gauge, model.id, messages, skew))
    walk = gauge.counts.estimate(model, conversation(), TOOLS).features.walk
    copilot_tools_count = copilot_tools(walk, gauge.counts.scales(model).tools)
    max_input = gauge.max_input_tokens(model)  # the true one
    told = gauge.model_info(model).max_input_tokens  # what Copilot is told, in its units
    edge = math.floor(0.9 * (told - copilot_tools_count))
    turns = 1
    while gauge.copilot_view.messages(conversation(turns + 1, size=30)) <= edge:
        turns += 1  # the longest conversation (of the kind calibration saw) Copilot admits
    api = api_count(gauge, model.id, conversation(turns, size=30), skew)
    assert api <= budget.input_target(model, None)
    step = api_count(gauge, model.id, conversation(turns + 1, size=30), skew) - api
    tools_true = api_count(gauge, model.id, [], skew)  # the tools alone (and the overhead)
    exact_edge = 0.9 * max_input + 0.1 * tools_true
    if copilot_tools_count > copilot_tools(walk, 0.0):  # not at the formula's floor
        assert exact_edge - step - 0.04 * exact_edge <= api <= exact_edge + 0.02 * exact_edge
    else:  # Copilot's own count runs high (skew < 1): the tools claim as little as they can
        assert skew < 1


def test_actuals_follow_the_family_and_outlive_the_process(tmp_path: Path):
    messages = conversation()
    first = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    model = first.offer.model("claude-sonnet-4-5")
    record(first, model.id, messages, api_count(first, model.id, messages, 1.3))
    ratios = first.calibration.ratios(model)
    first.ledger.close()

    second = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    again = second.counts.estimate(second.offer.model(model.id), messages, TOOLS)
    assert all(m.source == "actual" for m in again.messages)
    assert second.calibration.ratios(model) == pytest.approx(ratios)
    other_family = second.counts.estimate(second.offer.model("gpt-4o"), messages, TOOLS)
    assert all(m.source == "estimate" for m in other_family.messages)


def test_a_new_message_is_estimated_with_the_learned_ratio(gauge: Gauge):
    model = gauge.offer.model("claude-sonnet-4-5")
    for turns in range(2, 12):
        messages = conversation(turns=turns)
        raw = gauge.counts.estimate(model, messages, TOOLS).raw_total
        record(gauge, model.id, messages, raw * 2)
    assert gauge.calibration.ratios(model)["text"] == pytest.approx(2.0, rel=0.1)
    new = Message(role="user", content=[TextPart("a brand new question " * 30)])
    estimated = gauge.counts.estimate(model, [new], []).messages[-1].tokens
    raw = gauge.counts.counter(model).message(new).total
    assert estimated >= 1.9 * raw
    # The count answered is the same in the units VS Code is told (within their rounding).
    counted = gauge.count(model.id, [new]).tokens[0] + COPILOT_MESSAGE_OVERHEAD
    assert in_true_tokens(gauge, model.id, counted) == pytest.approx(estimated, abs=2 / 0.4)


@pytest.mark.parametrize("actual", [1_000_000, 1], ids=["huge", "tiny"])
def test_one_odd_report_moves_nothing_far(gauge: Gauge, actual: int):
    """A settled model: one absurd usage report neither swings the ratios nor stores an absurd
    actual for a small message."""
    model = gauge.offer.model("claude-sonnet-4-5")
    for turns in range(2, 8):
        messages = conversation(turns=turns)
        record(gauge, model.id, messages, api_count(gauge, model.id, messages, 1.2))
    settled = gauge.calibration.ratios(model)
    small = [conversation(turns=1)[0], Message(role="user", content=[TextPart("hello there")])]
    record(gauge, model.id, small, actual)
    ratios = gauge.calibration.ratios(model)
    assert ratios["text"] == pytest.approx(settled["text"], rel=0.05)
    assert ratios["tools"] == pytest.approx(settled["tools"], rel=0.05)
    assert gauge.counts.estimate(model, small, TOOLS).messages[-1].tokens < 100


@pytest.mark.parametrize("ratio", [100.0, 0.01], ids=["high", "low"])
def test_ratios_stay_within_bounds(gauge: Gauge, ratio: float):
    model = gauge.offer.model("gpt-4o")
    for turns in range(1, 40):
        messages = conversation(turns=1 + turns % 5)
        raw = gauge.counts.estimate(model, messages, TOOLS).raw_total
        record(gauge, model.id, messages, max(1, round(raw * ratio)))
    mean = gauge.calibration.fit(model).mean
    for value, (low, high) in zip(mean, BOUNDS, strict=True):
        assert low <= value <= high
    assert set(gauge.calibration.ratios(model)) == set(COMPONENTS)


def test_zero_usage_teaches_nothing(gauge: Gauge):
    model = gauge.offer.model("gpt-4o")
    gauge.counts.estimate(model, conversation(), TOOLS)  # the tools are known: their scale is set
    epoch = gauge.epoch
    before = gauge.calibration.ratios(model)
    record(gauge, "gpt-4o", conversation(), 0)
    assert gauge.epoch == epoch
    assert gauge.calibration.ratios(model) == before


def test_cached_actual_gets_two_percent_less_copilots_three(gauge: Gauge):
    message = Message(role="user", content=[TextPart("hello " * 100)])
    model = gauge.offer.model("gpt-4o")
    digest = gauge.counts.estimate(model, [message], []).features.digests[0]
    gauge.ledger.put_actuals(model.family, {digest: 1000})
    scale = gauge.offer.declarations.get(model).scale  # in the units VS Code is told
    expected = math.ceil(math.ceil(1000 * ACTUAL_MARGIN) * scale) - COPILOT_MESSAGE_OVERHEAD
    assert gauge.count(model.id, [message]).tokens == [expected]


def test_tool_call_ids_do_not_change_a_digest(gauge: Gauge):
    """Copilot counts a message with its internal call id and sends it without."""
    model = gauge.offer.model("gpt-4o")
    counted = Message(
        role="assistant", content=[ToolCallPart(call_id="c1__vscode-17", name="f", input={})]
    )
    sent = Message(role="assistant", content=[ToolCallPart(call_id="c1", name="f", input={})])
    digests = gauge.counts.estimate(model, [counted, sent], []).features.digests
    assert digests[0] == digests[1]


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
    error = classify_error(status, body)
    model = gauge.offer.model(model_id)
    # A conversation that fits the limit and is not far from the size the error names (a count
    # 8× off would be ignored).
    limit = error.limit_tokens or model.context_window
    raw = min((error.input_tokens or limit) // 2, limit * 6 // 10)
    messages = conversation(size=max(40, 40 * raw // 2_400))
    before = estimate_total(gauge, model_id, messages)
    max_input_before = gauge.max_input_tokens(model)
    result = gauge.record_error(RecordErrorParams(model_id, messages, body, status, TOOLS))
    assert result.error is not None and result.error.kind == "overflow"
    after = estimate_total(gauge, model_id, messages)
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
    model = gauge.offer.model("small")
    messages = conversation(turns=12, size=60)
    before = estimate_total(gauge, model.id, messages)
    gauge.record_error(RecordErrorParams(model.id, messages, body, 400, TOOLS))
    after = estimate_total(gauge, model.id, messages)
    assert after >= model.context_window + excess > before


def test_input_plus_max_tokens_learns_the_true_input(gauge: Gauge, wire: Path):
    body = (wire / "error-anthropic-input-plus-max-tokens-exceed-context.json").read_text()
    model = gauge.offer.model("claude-sonnet-4-5")
    messages = conversation(size=40 * 143653 // 2 // 2_400)
    result = gauge.record_error(RecordErrorParams(model.id, messages, body, 400, TOOLS))
    assert unstructure(result.error) == {
        "kind": "overflow",
        "inputTokens": 143653,
        "limitTokens": 200000,
        "outputTokens": 64000,
        "excessTokens": None,
        "message": result.error.message if result.error else None,
    }
    after = estimate_total(gauge, model.id, messages)
    assert 143653 <= after <= math.ceil(143653 * 1.03)


def test_an_overflow_without_numbers_far_below_the_window_learns_a_smaller_window(
    gauge: Gauge, wire: Path
):
    """OpenAI's count-less overflow for a request of a few thousand tokens, where we believed in
    128k: no counting error explains it, a smaller window does (90% of what was sent)."""
    body = (wire / "error-openai-responses-context-length-exceeded-stream-event.json").read_text()
    model = gauge.offer.model("gpt-4o")
    messages = conversation(size=150)
    before = estimate_total(gauge, model.id, messages)
    assert 4_096 / 0.9 < before < model.context_window / 8
    result = gauge.record_error(RecordErrorParams(model.id, messages, body, None, TOOLS))
    assert result.learned_limit == math.floor(before * 0.9)
    assert gauge.max_input_tokens(model) < before
    # A tiny request "overflowing" teaches no window that would refuse everything.
    tiny = conversation(turns=1, size=5)
    small = gauge.record_error(RecordErrorParams(model.id, tiny, body, None, TOOLS))
    assert small.learned_limit is None


def test_an_overflow_that_names_an_absurd_size_teaches_nothing(gauge: Gauge, wire: Path):
    """200,000 tokens for a request of a few thousand: not this request's size."""
    body = (wire / "error-anthropic-prompt-too-long.json").read_text()
    messages = conversation()
    before = estimate_total(gauge, "claude-sonnet-4-5", messages)
    epoch = gauge.epoch
    result = gauge.record_error(RecordErrorParams("claude-sonnet-4-5", messages, body, 400, TOOLS))
    assert result.error is not None and result.error.kind == "overflow"
    assert gauge.epoch == epoch
    assert estimate_total(gauge, "claude-sonnet-4-5", messages) == before


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
    assert result.error is not None and result.error.kind != "overflow"
    assert result.learned_limit is None
    assert gauge.epoch == epoch
    assert estimate_total(gauge, "gpt-4o", messages) == before


ANY_TEXT = any_text(max_size=400)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(ANY_TEXT, min_size=1, max_size=4))
def test_uncalibrated_counts_never_fall_below_tiktoken(texts: list[str]):
    """ARCHITECTURE §5.2 through the same path the server answers with, for strings and messages
    (a message's answer plus the 3 Copilot adds to it), in true tokens: the answers are in the
    units VS Code is told of the window (`Declared.scale`)."""
    gauge = UNCALIBRATED
    for model_id, encoding_name in (("gpt-4o", "o200k_base"), ("claude-sonnet-4-5", "cl100k_base")):
        encoding = gauge.encodings.get(encoding_name)
        exact = [len(encoding.encode_ordinary(text)) for text in texts]
        message = Message(role="user", content=[TextPart(text) for text in texts])
        result = gauge.count(model_id, [*texts, message])
        tokens = [in_true_tokens(gauge, model_id, t) for t in result.tokens[:-1]]
        assert all(t >= e for t, e in zip(tokens, exact, strict=True))
        answer = result.tokens[-1] + COPILOT_MESSAGE_OVERHEAD
        assert in_true_tokens(gauge, model_id, answer) >= sum(exact)


@pytest.mark.parametrize("model_id", ["gpt-4o", "claude-sonnet-4-5", "small"])
def test_uncalibrated_cjk_text_is_never_below_tiktoken(model_id: str):
    model = UNCALIBRATED.offer.model(model_id)
    text = CJK * 30
    exact = len(UNCALIBRATED.encodings.get(model.encoding).encode_ordinary(text))
    [answer] = UNCALIBRATED.count(model_id, [text]).tokens
    assert in_true_tokens(UNCALIBRATED, model_id, answer) == pytest.approx(exact, rel=0.5)
    assert in_true_tokens(UNCALIBRATED, model_id, answer) >= exact


UNCALIBRATED = Gauge(SETTINGS, Ledger(None))
