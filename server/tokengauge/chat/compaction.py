"""Asking the Agents window's runtime to compact (ARCHITECTURE §1).

The runtime summarizes a conversation and sends the turn again when a request fails with "prompt
is too long", and for no other error. So a request of its is refused in those words instead, once,
when the send path would have to cut it from earlier rounds, or when it fits but the runtime's own
request for a summary (the same conversation and its instructions after it) would not: VS Code
1.139.1's runtime (1.0.85) takes no reported prompt count above its own, and on a skewed tokenizer
this is what makes it compact, with the whole conversation in view. When it sends the very same
request again (it compacts once per turn, then retries), the request is fitted as the chat
panel's are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Final

import cachetools

from tokengauge.activity.conversations import is_summary
from tokengauge.calibration.ladder import Fitted
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.formatting import compact
from tokengauge.messages import Message, ToolResultPart, unstructure
from tokengauge.models.catalog import ModelSpec

RUNTIME_OVERFLOW: Final = "The prompt is too long"
"""How an overflow error begins for the runtime (any other error is retried five times, then the
turn fails: measured)."""
EARLIER_RUNGS: Final = ("reasoning", "toolResults", "history")
"""The ladder's rungs that take from what the runtime's compaction would summarize."""
SUMMARY_INSTRUCTIONS: Final = 1_000
"""The runtime's instructions when it asks for a summary, in o200k tokens, about: 964 in VS Code
1.139.1's (measured); they follow the whole conversation, tools and all."""
ASKS_KEPT: Final = 256
"""Requests refused so remembered (LRU): the runtime sends one again at once, if at all."""


class CompactionAsks:
    """The runtime's requests refused with "prompt is too long", by their messages."""

    def __init__(self) -> None:
        self._asked: cachetools.LRUCache[str, bool] = cachetools.LRUCache(ASKS_KEPT)

    def ask(
        self, messages: Sequence[Message], fitted: Fitted, estimate: RequestEstimate, target: int
    ) -> bool:
        """Whether to refuse a request of `messages` (`estimate`d, at most `target` tokens of
        input allowed) that the ladder fitted as `fitted`, asking the runtime to compact: it would
        be cut from earlier rounds, or the runtime's request for a summary of it would not fit,
        in a conversation with more than one user message (a compaction leaves one, and the
        runtime's own request for a summary is one); and it was not refused so before."""
        summary = estimate.total + round(SUMMARY_INSTRUCTIONS * estimate.ratios["text"])
        cut = any(fitted.removed.get(rung) for rung in EARLIER_RUNGS)
        if not cut and summary <= target:
            return False
        asked = [m for m in messages if m.role == "user" and not _only_results(m)]
        if len(asked) < 2 or is_summary(messages):
            return False
        key = _digest(messages)
        if key in self._asked:
            return False
        self._asked[key] = True
        return True


def compact_first_message(model: ModelSpec, estimate: RequestEstimate, window: int) -> str:
    """The refusal: in the runtime's words first, then what a person should know."""
    return (
        f"{RUNTIME_OVERFLOW} for {model.name}: the conversation comes to about "
        f"{compact(estimate.total)} tokens of its {compact(window)}-token window, too near its "
        "end to go on (or to be summarized later) without cutting earlier messages; the "
        "conversation is compacted and the turn sent again instead."
    )


def _only_results(message: Message) -> bool:
    return all(isinstance(part, ToolResultPart) for part in message.content)


def _digest(messages: Sequence[Message]) -> str:
    text = json.dumps(unstructure(list(messages)), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()
