"""Copilot's summary of a conversation, asked over the conversation's last request as it was sent
(ARCHITECTURE §8, "Cache-aligned compaction").

When a render does not fit, Copilot Chat 0.67 asks for a summary in a request of its own: its
instructions as the system prompt, the conversation re-rendered (whole, or in Simple mode as one
user message of `<user>`, `<assistant>` and `<tool>` chunks) and an ask. Nothing of that is in the
API's prompt cache, while the conversation's last request (tools, system, messages) was cached a
moment before. So such a request is sent instead as that request, byte for byte, followed by one
user message: what Copilot's request holds that the last one did not (our answer to it and what
followed it: the calls' results or the person's next message, in Copilot's own words), then
Copilot's instructions and its ask. The model sees the whole conversation as it saw it (Copilot's
Simple mode keeps only its first message whole), and the answer asked for is the same. Copilot's
request goes unchanged when the conversation's last request is not known, when the tail does not
begin with that request's answer, or when the rewrite would not fit the window with the usual
room for the answer and nothing cut.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

import attrs
import cachetools

from tokengauge.activity.record import SUMMARIZE_MARKS
from tokengauge.calibration.precedent import Decisions
from tokengauge.messages import Message, TextPart, Tool, ToolCallPart, ToolResultPart

INSTRUCTIONS_MARK: Final = "Your task is to create a comprehensive, detailed summary"
"""How the system prompt of Copilot's foreground summary begins (0.67, Full and Simple mode)."""
ASK_MARK: Final = SUMMARIZE_MARKS[0]
"""How its last user message, the ask, begins."""
SIMPLE_MARK: Final = "The following is a compressed version of the preceeding history"
"""How Simple mode's one message of the conversation begins (Copilot's spelling)."""
ROUND_CHUNK: Final = "<assistant>"
"""Where Simple mode's chunk of one round (the answer, then its calls' results) begins."""
TAIL_LEAD: Final = "After the messages above, the conversation went on:"
"""What comes before the tail in the final user message."""
ANSWER_PROOF: Final = 40
"""Characters of the answer's beginning (whitespace aside) the tail must hold."""
CONVERSATIONS_KEPT: Final = 16
"""Conversations whose last request is remembered (LRU)."""


@attrs.frozen
class Sent:
    """A request as it was sent (after the send path's changes), and its answer."""

    messages: tuple[Message, ...]
    tools: tuple[Tool, ...]
    """In the form they were sent."""
    given: tuple[Tool, ...]
    """The tools as the client gave them."""
    answer_head: str
    calls: tuple[ToolCallPart, ...]
    model_id: str = ""
    """The model it went to (an API caches per model)."""
    decisions: Decisions | None = None
    """What the recovery ladder took for it, for the next request to take again."""


@attrs.frozen
class Summary:
    """Copilot's foreground summary request, taken apart."""

    instructions: str
    history: tuple[Message, ...]
    """The conversation as Copilot rendered it for the summary."""
    ask: str


class LastSent:
    """Each conversation's last request of a turn, as it was sent (bounded)."""

    def __init__(self) -> None:
        self._sent: cachetools.LRUCache[str, Sent] = cachetools.LRUCache(CONVERSATIONS_KEPT)

    def keep(self, conversation: str, sent: Sent) -> None:
        self._sent[conversation] = sent

    def of(self, conversation: str | None, model_id: str) -> Sent | None:
        """The conversation's last request, if it went to `model_id`."""
        sent = None if conversation is None else self._sent.get(conversation)
        return sent if sent is not None and sent.model_id == model_id else None


def foreground_summary(messages: Sequence[Message]) -> Summary | None:
    """The request taken apart, if it is Copilot's foreground summary (its instructions as the
    system prompt, its ask last); None for any other."""
    if len(messages) < 3:
        return None
    first, last = messages[0], messages[-1]
    instructions, ask = _text(first), _text(last)
    if first.role != "system" or not instructions.startswith(INSTRUCTIONS_MARK):
        return None
    if last.role != "user" or not ask.startswith(ASK_MARK):
        return None
    return Summary(instructions, tuple(messages[1:-1]), ask)


def aligned_messages(summary: Summary, previous: Sent) -> list[Message] | None:
    """The previous request's messages, then one user message: the tail of the conversation
    since (from the previous request's answer on), Copilot's instructions and its ask; None if
    the tail cannot be told or does not begin with that answer."""
    tail = _tail(summary.history)
    if tail is None or not _answers(tail, previous):
        return None
    text = f"{TAIL_LEAD}\n{tail}\n\n{summary.instructions}\n\n{summary.ask}"
    return [*previous.messages, Message("user", [TextPart(text)])]


def _tail(history: Sequence[Message]) -> str | None:
    """The conversation from its last answer on, as text: Simple mode's chunks as Copilot wrote
    them; in Full mode, the messages from the last assistant message on, in the same shape."""
    if len(history) == 1 and _text(history[0]).startswith(SIMPLE_MARK):
        compressed = _text(history[0])
        start = compressed.rfind(ROUND_CHUNK)
        return None if start < 0 else compressed[start:].strip()
    answers = [i for i, message in enumerate(history) if message.role == "assistant"]
    if not answers:
        return None
    return "\n".join(_chunks(history[answers[-1] :]))


def _chunks(messages: Sequence[Message]) -> list[str]:
    """Messages in Simple mode's shape: `<assistant>` with its calls as `<tool>` chunks, each with
    its result, and `<user>` for what the person wrote."""
    results = {
        part.call_id: _text_of(part.content)
        for message in messages
        for part in message.content
        if isinstance(part, ToolResultPart)
    }
    chunks = []
    for message in messages:
        text = _text(message)
        if message.role == "assistant":
            chunks.append(f"<assistant>\n{text}\n</assistant>")
            for call in (p for p in message.content if isinstance(p, ToolCallPart)):
                arguments = json.dumps(call.input, ensure_ascii=False)
                result = results.get(call.call_id, "Tool result empty")
                chunks.append(
                    f'<tool>\nUsed tool "{call.name}" with arguments: {arguments}\n'
                    f"{result}\n</tool>"
                )
        elif message.role == "user" and text:
            chunks.append(f"<user>\n{text}\n</user>")
    return chunks


def _answers(tail: str, previous: Sent) -> bool:
    """Whether the tail holds the previous request's answer: each of its calls, by name, and the
    beginning of its text."""
    if any(f'Used tool "{call.name}"' not in tail for call in previous.calls):
        return False
    head = "".join(previous.answer_head.split())[:ANSWER_PROOF]
    return head in "".join(tail.split())


def _text(message: Message) -> str:
    return _text_of(message.content)


def _text_of(parts: Sequence[object]) -> str:
    return "".join(part.value for part in parts if isinstance(part, TextPart))
