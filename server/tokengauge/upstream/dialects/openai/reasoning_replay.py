"""An assistant message's reasoning as its Chat Completions server reads it back: in the field it
came in, as it came (text, `reasoning_details`, Gemini's signatures on the calls and on the
message), and nothing else (ARCHITECTURE §8).

Which messages carry their reasoning is decided before (`chat.reasoning`: every thinking part a
message still has when it is built is meant to go); here it is only written. The text is the
block's, else the message's thinking parts joined (the pieces shown, as a client may keep them
apart from the block that closed them); the field is the one the block says it came in, else the
rule's. A block that says its field goes back even empty: DeepSeek refuses a tool-call message
without the field. `think` goes back as it came, `<think>` tags opening the content.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from tokengauge.messages import ThinkingPart
from tokengauge.upstream.dialects.openai.reasoning_rules import ReasoningRule
from tokengauge.upstream.dialects.openai.reasoning_stream import CLOSE_TAG, OPEN_TAG

JsonObject = dict[str, Any]


@attrs.frozen
class Replay:
    """What goes back of one assistant message's reasoning."""

    fields: JsonObject = attrs.field(factory=dict)
    """The message's own fields (`reasoning_content`, `reasoning`, `reasoning_details`,
    `extra_content`)."""
    calls: dict[str, Any] = attrs.field(factory=dict)
    """Each tool call's `extra_content`, by call id."""
    think: str | None = None
    """The `<think>` block that opens the content, where the reasoning came so."""

    def content(self, text: str) -> str:
        """The message's content with its reasoning where it came."""
        return text if self.think is None else self.think + text


def replay(thinking: Sequence[ThinkingPart], rule: ReasoningRule) -> Replay:
    """What of `thinking` (one message's thinking parts) goes back, and where."""
    if not thinking:
        return Replay()
    carried = next((part for part in reversed(thinking) if part.carried), None)
    shown = "".join(part.value for part in thinking if part is not carried)
    text = carried.value if carried is not None and carried.value else shown
    given = carried.field if carried is not None else None
    field = given or (rule.field if text else None)
    fields: JsonObject = {}
    think = None
    if field == "think":
        think = f"{OPEN_TAG}{text}{CLOSE_TAG}"
    elif field is not None and (text or given):
        fields[field] = text
    if carried is not None and carried.details is not None:
        fields["reasoning_details"] = carried.details
    if carried is not None and carried.extra is not None:
        fields["extra_content"] = carried.extra
    calls = dict(carried.calls) if carried is not None and carried.calls else {}
    return Replay(fields, calls, think)
