"""The send path's safety net: head + tail truncation, levelling tool results, dropping history."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tokengauge.calibration.estimates import RequestEstimate
from tokengauge.calibration.trim import (
    MIN_KEPT_TOKENS,
    CannotFit,
    Truncator,
    cap_tool_results,
    marker,
    shrink,
)
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, TextPart, ToolCallPart, ToolResultPart
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

ENCODING = EncodingRegistry().get("cl100k_base")
TRUNCATOR = Truncator(ENCODING)
SETTINGS = ServerSettings(
    providers=(ProviderSettings(id="test"),),
    models=(ModelSettings(id="claude-sonnet-4-5", provider="test"),),
)


@pytest.fixture
def estimate(tmp_path: Path):
    gauge = Gauge(SETTINGS, Ledger(tmp_path / "ledger"))
    model = gauge.model("claude-sonnet-4-5")

    def estimate(messages: Sequence[Message]) -> RequestEstimate:
        return gauge.estimate(model, messages, [])

    return estimate


def log(tag: str, lines: int) -> str:
    return "".join(f"{tag} line {i}: request served in {i * 7 % 300} ms\n" for i in range(lines))


def agent_turn(*results: str, history: int = 0) -> list[Message]:
    """A system prompt, `history` earlier exchanges, then a turn with one tool call per result."""
    messages = [Message(role="system", content=[TextPart("You are a careful assistant.")])]
    for i in range(history):
        messages.append(Message(role="user", content=[TextPart(f"old question {i} " * 40)]))
        messages.append(Message(role="assistant", content=[TextPart(f"old answer {i} " * 40)]))
    messages.append(Message(role="user", content=[TextPart("Why did the service fail?")]))
    for i, result in enumerate(results):
        call = ToolCallPart(f"c{i}", "read_file", {"path": f"logs/{i}.log"})
        messages.append(Message(role="assistant", content=[call]))
        messages.append(Message(role="user", content=[ToolResultPart(f"c{i}", [TextPart(result)])]))
    return messages


def result_texts(messages: Sequence[Message]) -> list[str]:
    return [
        inner.value
        for message in messages
        for part in message.content
        if isinstance(part, ToolResultPart)
        for inner in part.content
        if isinstance(inner, TextPart)
    ]


def tokens(text: str) -> int:
    return len(ENCODING.encode_ordinary(text))


def test_cut_keeps_the_beginning_and_the_end_on_token_boundaries():
    text = log("x", 400)
    cut, omitted = TRUNCATOR.cut(text, 300)
    total = tokens(text)
    assert omitted == total - 300
    head, tail = cut.split(marker(omitted))
    assert text.startswith(head) and text.endswith(tail)
    assert tokens(head) + tokens(tail) == pytest.approx(300, abs=2)
    assert "x line 0:" in head and "x line 399:" in tail


def test_cut_leaves_short_text_alone_and_never_splits_a_character():
    assert TRUNCATOR.cut("short", 10) == ("short", 0)
    text = "日本語のテキスト、" * 300
    cut, omitted = TRUNCATOR.cut(text, 101)
    assert omitted > 0 and "\ufffd" not in cut
    head, tail = cut.split(marker(omitted))
    assert text.startswith(head) and text.endswith(tail)


def test_a_request_that_fits_is_left_alone(estimate):
    messages = agent_turn(log("a", 50))
    trimmed = shrink(messages, TRUNCATOR, estimate, estimate(messages).total)
    assert not trimmed.changed and trimmed.messages == messages


def test_the_largest_tool_results_are_levelled_first(estimate):
    big, bigger, small = log("b", 600), log("c", 900), log("s", 40)
    messages = agent_turn(big, bigger, small)
    target = estimate(messages).total - 8_000
    trimmed = shrink(messages, TRUNCATOR, estimate, target)
    assert estimate(trimmed.messages).total <= target
    assert trimmed.tool_results == 2 and trimmed.dropped == 0
    assert trimmed.tokens >= 8_000
    cut_big, cut_bigger, kept_small = result_texts(trimmed.messages)
    assert kept_small == small
    # Cut to about the same length, the ends kept.
    assert tokens(cut_big) == pytest.approx(tokens(cut_bigger), rel=0.1)
    assert cut_bigger.endswith(bigger[-200:]) and cut_bigger.startswith(bigger[:200])
    # Not cut much more than needed.
    assert estimate(trimmed.messages).total >= target - 600


def test_then_the_oldest_history_goes_in_whole_exchanges(estimate):
    messages = agent_turn(log("a", 300), history=6)
    shortest = cap_tool_results(messages, TRUNCATOR, MIN_KEPT_TOKENS).messages
    target = estimate(shortest).total - 1_000  # cutting the tool result is not enough
    trimmed = shrink(messages, TRUNCATOR, estimate, target)
    assert estimate(trimmed.messages).total <= target
    assert trimmed.dropped > 0 and trimmed.dropped % 2 == 0
    kept = trimmed.messages
    assert kept[0] == messages[0]  # the system prompt
    assert kept[1].role == "user"  # history still starts with a user message
    turn = messages.index(next(m for m in messages if "Why did" in str(m.content)))
    assert kept[-(len(messages) - turn) :][0] == messages[turn]  # the turn's question, and after
    text = result_texts(kept)[0]
    assert tokens(text) <= MIN_KEPT_TOKENS + 20 and text.endswith(log("a", 300)[-100:])


def test_what_can_never_go_raises_cannot_fit(estimate):
    messages = agent_turn(log("a", 300), history=2)
    with pytest.raises(CannotFit) as caught:
        shrink(messages, TRUNCATOR, estimate, 50)
    assert caught.value.target == 50 and caught.value.estimate > 50


def test_the_cap_cuts_every_longer_tool_result():
    long, short = log("l", 500), log("s", 10)
    capped = cap_tool_results(agent_turn(long, short), TRUNCATOR, 256)
    cut, kept = result_texts(capped.messages)
    assert kept == short
    assert tokens(cut) == pytest.approx(256 + tokens(marker(capped.tokens)), abs=3)
    assert capped.tool_results == 1 and capped.tokens == tokens(long) - 256
