"""What a simulated conversation is made of, whichever scenario makes it.

A scenario gives Copilot's agent loop (`agent`) everything it sends that is not history:
the messages before the history (the system prompt, and in Copilot 0.67 an environment message),
the tool schemas, each turn (the user message as Copilot wraps it, the raw query its Simple-mode
summary lists, the model's rounds with the tool results the agent sends back, and Copilot's own
helper requests of that turn: progress messages, chat titles), and the texts of its summarization:
the background-compaction instruction, the Simple-mode summary prompt, and the summary the model
answers. Two scenarios: the seeded one (`conversation`) and the real Copilot host suite's
(`host_scenario`, from recorded dumps).
"""

from __future__ import annotations

from typing import Protocol

import attrs

from tokengauge.messages import Message, TextPart, Tool


@attrs.frozen
class RoundPlan:
    """One model response and the tool results the agent sent back (None for the answer)."""

    assistant: Message
    results: Message | None


@attrs.frozen
class TurnPlan:
    """A user request and every round of the model's work on it; the last round is the answer."""

    kind: str
    request: Message
    """The user message as Copilot renders it in the agent prompt."""
    query: str
    """The user's own text: what Copilot's Simple-mode summary lists for this turn."""
    rounds: tuple[RoundPlan, ...]
    helpers: tuple[tuple[Message, ...], ...] = ()
    """Requests Copilot sends through the model on its own before the turn's first render."""


class Scenario(Protocol):
    """A conversation Copilot's agent loop can run, turn by turn."""

    seed: int
    prefix: list[Message]
    """System prompt (and environment message): the start of every agent prompt."""
    tools: list[Tool]
    compaction: Message
    """The user message that ends a background compaction request (after the whole prompt)."""
    simple_system: Message
    """The system message of a Simple-mode summary request."""
    simple_ask: Message
    """The user message that ends a Simple-mode summary request."""
    simple_header: str
    """The first line of the Simple-mode history message."""

    def turn(self, index: int) -> TurnPlan:
        """Turn `index` (0-based); the same plan every time it is asked."""
        ...

    def summary(self, number: int, turns: int) -> str:
        """The model's summary text (the `number`-th, 0-based, after `turns` turns)."""
        ...


def summary_message(text: str) -> Message:
    """The user message that stands in for the summarized history (Copilot's `yHe` element)."""
    return Message("user", [TextPart(f"<conversation-summary>\n{text}\n</conversation-summary>\n")])
