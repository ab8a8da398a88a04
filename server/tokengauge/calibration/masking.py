"""Observation masking, opt-in (`tokenGauge.maskToolResultsAfter`): tool results of older tool
rounds go as a one-line stub that says how to get them again, keeping their error lines.

An agent reads a file, edits it, runs the tests, and each result stays in every later request
though the model acted on it long ago (JetBrains' 2025 study of agent context found hiding old
observations halves the cost at an equal solve rate). With the setting at N, the rounds
(assistant messages that call tools) are hidden in steps of N: the first N × ⌊(R − N) / N⌋ of
R rounds, so between N and 2N − 1 of the latest rounds are whole. A stub changes an earlier
message, and all after it is fresh to the API's prompt cache: in steps, the prefix breaks once
every N rounds, not at every round. Only a tool result's text is replaced: never a user message,
a result with images or data, or a short one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from tokengauge.calibration.repeats import LEAST_CHARS, Replaced, replace_results
from tokengauge.messages import Message, ToolCallPart, ToolResultPart

ERROR_LINE: Final = re.compile(r"\b(error|exception|traceback|failed|failure|fatal)\b", re.I)
"""A line a stub keeps: it reports a failure the model may still need to know of."""
MOST_ERROR_LINES: Final = 12
ERROR_LINE_CHARS: Final = 240


def hidden_rounds(rounds: int, keep: int) -> int:
    """How many of the first `rounds` tool rounds are hidden when `keep` are kept (in steps)."""
    if keep <= 0 or rounds <= keep:
        return 0
    return keep * ((rounds - keep) // keep)


def stub(call: ToolCallPart, text: str) -> str:
    """What a hidden result goes as: which call it was, how to see it again, its error lines.
    The same in every later request (nothing in it counts rounds), so the prefix holds."""
    errors = [
        line.strip()[:ERROR_LINE_CHARS] for line in text.splitlines() if ERROR_LINE.search(line)
    ]
    head = (
        f"[The result of the {call.name} call {call.call_id} ({len(text):,} characters), from an "
        f"older tool round, is hidden to save tokens (Token Gauge): call {call.name} again if it "
        "is needed.]"
    )
    if not errors:
        return head
    kept = errors[:MOST_ERROR_LINES]
    more = len(errors) - len(kept)
    lines = "\n".join(kept) + (f"\n… and {more} more error lines" if more else "")
    return f"{head}\nIts error lines:\n{lines}"


def mask_old_results(messages: Sequence[Message], keep: int) -> Replaced:
    """`messages` with the long text results of all but the latest `keep` to 2 × `keep` − 1 tool
    rounds as stubs (see the module docstring)."""
    rounds = [
        [part for part in message.content if isinstance(part, ToolCallPart)]
        for message in messages
        if message.role == "assistant"
        and any(isinstance(part, ToolCallPart) for part in message.content)
    ]
    hidden = hidden_rounds(len(rounds), keep)
    if not hidden:
        return Replaced(list(messages))
    calls = {call.call_id: call for calls in rounds[:hidden] for call in calls}

    def line_for(part: ToolResultPart, text: str) -> str | None:
        call = calls.get(part.call_id)
        return None if call is None or len(text) < LEAST_CHARS else stub(call, text)

    return replace_results(messages, line_for)
