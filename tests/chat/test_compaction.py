"""chat.compaction: the Agents window's runtime's requests refused so that it compacts."""

from __future__ import annotations

from tokengauge.calibration.ladder import Fitted
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.chat.compaction import SUMMARY_INSTRUCTIONS, CompactionAsks
from tokengauge.counting.request import RequestFeatures, ToolWalk
from tokengauge.messages import Message, TextPart, ToolCallPart, ToolResultPart

TARGET = 30_000
"""The input a request may have (the window less the output floor and the safety margin)."""
RATIO = 1.8
"""The model's true tokens per o200k token of text."""
SUMMARY = round(SUMMARY_INSTRUCTIONS * RATIO)
"""The runtime's instructions for a summary, in the model's tokens."""


def turns(n: int, last: str = "And now?") -> list[Message]:
    """A conversation of `n` earlier turns (each a read and its result), then one more ask."""
    messages = [Message("system", [TextPart("You are the runtime's agent.")])]
    for i in range(n):
        messages += [
            Message("user", [TextPart(f"Read part {i}.")]),
            Message("assistant", [ToolCallPart(f"call-{i}", "view", {"path": f"p{i}"})]),
            Message("user", [ToolResultPart(f"call-{i}", [TextPart("notes " * 50)])]),
            Message("assistant", [TextPart("Read it.")]),
        ]
    return [*messages, Message("user", [TextPart(last)])]


def fitted(messages: list[Message], **removed: int) -> Fitted:
    return Fitted(messages, [], 0, removed=removed)


def estimated(total: int) -> RequestEstimate:
    """A request estimated at `total` tokens, its text at RATIO."""
    ratios = {"text": RATIO, "cjk": 1.0, "tools": RATIO, "message": 3.0, "fixed": 3.0}
    features = RequestFeatures(messages=(), roles=(), digests=(), walk=ToolWalk(tools=0, json=0))
    return RequestEstimate(tools=0, fixed=total, messages=(), features=features, ratios=ratios)


OVER = estimated(TARGET + 2_000)
"""A request that does not fit as it is."""


def test_a_turn_cut_from_earlier_rounds_is_refused_once():
    asks, messages = CompactionAsks(), turns(3)
    assert asks.ask(messages, fitted(messages, toolResults=900), OVER, TARGET)
    # The runtime sent the very same request again: it will not compact now; it is fitted.
    assert not asks.ask(messages, fitted(messages, toolResults=900), OVER, TARGET)
    # A later request of the conversation is asked again.
    later = turns(3, "And after that?")
    assert asks.ask(later, fitted(later, history=400), OVER, TARGET)


def test_what_compaction_cannot_help_is_fitted():
    asks = CompactionAsks()
    first = turns(0)  # the conversation's first ask: nothing earlier to summarize
    assert not asks.ask(first, fitted(first, toolResults=900), OVER, TARGET)
    summary = turns(3, "Please create a detailed summary of the conversation so far. The history")
    # The runtime's own request for a summary:
    assert not asks.ask(summary, fitted(summary, history=900), OVER, TARGET)
    messages = turns(3)
    roomy = estimated(TARGET - SUMMARY)  # it fits, and so would the runtime's summary of it
    assert not asks.ask(messages, fitted(messages, toolDocs=300, output=500), roomy, TARGET)
    assert not asks.ask(messages, fitted(messages), roomy, TARGET)  # it fitted as it was


def test_a_turn_that_fits_but_whose_summary_would_not_is_refused_once():
    """The runtime's request for a summary is the conversation and its instructions: a turn
    that leaves less room than they need is refused, so that the summary sees it all."""
    asks, messages = CompactionAsks(), turns(3)
    near = estimated(TARGET - SUMMARY + 1)
    assert asks.ask(messages, fitted(messages), near, TARGET)
    assert not asks.ask(messages, fitted(messages), near, TARGET)  # sent again: fitted
    first = turns(0)
    assert not asks.ask(first, fitted(first), near, TARGET)  # nothing earlier to summarize
