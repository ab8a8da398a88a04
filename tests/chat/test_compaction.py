"""chat.compaction: the Agents window's runtime's requests refused so that it compacts."""

from __future__ import annotations

from tokengauge.calibration.ladder import Fitted
from tokengauge.chat.compaction import CompactionAsks
from tokengauge.messages import Message, TextPart, ToolCallPart, ToolResultPart


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


def test_a_turn_cut_from_earlier_rounds_is_refused_once():
    asks, messages = CompactionAsks(), turns(3)
    assert asks.ask(messages, fitted(messages, toolResults=900))
    # The runtime sent the very same request again: it will not compact now; it is fitted.
    assert not asks.ask(messages, fitted(messages, toolResults=900))
    # A later request of the conversation is asked again.
    later = turns(3, "And after that?")
    assert asks.ask(later, fitted(later, history=400))


def test_what_compaction_cannot_help_is_fitted():
    asks = CompactionAsks()
    first = turns(0)  # the conversation's first ask: nothing earlier to summarize
    assert not asks.ask(first, fitted(first, toolResults=900))
    summary = turns(3, "Please create a detailed summary of the conversation so far. The history")
    assert not asks.ask(summary, fitted(summary, history=900))  # the runtime's own request
    messages = turns(3)
    assert not asks.ask(
        messages, fitted(messages, toolDocs=300, output=500)
    )  # no earlier round cut
    assert not asks.ask(messages, fitted(messages))  # it fitted as it was
