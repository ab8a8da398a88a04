"""How Copilot Chat 0.67 measures what it renders, and the text of its Simple-mode summary prompt.

Copilot renders every prompt with prompt-tsx, and prompt-tsx counts with Copilot's *own* tiktoken,
whatever the model: the renderer takes its tokenizer from the tokenizer provider by the endpoint's
`tokenizer` name, and an extension-contributed endpoint (`Lk`) names `o200k_base`. So the render
that is checked against the agent budget, and the render size that background compaction compares
with `maxInputTokens`, never ask the provider; only `countToolTokens` (the tools' share deducted
from the budget) and the counts Copilot makes after a render (`countMessagesTokens` for its build
event and telemetry) go through `provideTokenCount`. Its count of a message is the one the product
reproduces for calibration, `tokengauge.counting.copilot_view` (ARCHITECTURE §4), and the stand-in
counts with that very code, so the two cannot drift apart; a rendered prompt costs the sum of its
messages (no per-completion 3). What the view cannot see, the stand-in adds: internal tool-call ids
carry a `__vscode-<n>` suffix while Copilot counts them (dropped on send, so a provider never
receives them).
The Simple-mode summary (what a foreground summarization sends in 0.67) lists the history as tagged
chunks: `<user>` queries, `<conversation-summary>`, `<assistant>` responses and one `<tool>` chunk
per call (`Used tool "name" with arguments: <first 200 chars>` and the result, cut to half of
`maxToolResultLength` = ½ × ½ × `maxInputTokens` tokens).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Final

import attrs

from tests.harness.fake_upstream.model import encoding
from tokengauge.counting.copilot_view import COPILOT_ENCODING, CopilotView
from tokengauge.counting.text import encode_ordinary
from tokengauge.messages import DataPart, Message, Part, TextPart, ToolCallPart, ToolResultPart

INTERNAL_ID_SUFFIX: Final = "__vscode-1795491211979"
ARGUMENTS_SHOWN: Final = 200
TOOL_RESULT_SHARE: Final = 0.5
"""`maxToolResultLength` = this share of `maxInputTokens` (`wto`); Simple mode keeps half of it."""


def arguments_json(value: object) -> str:
    """Tool-call arguments as the model streamed them (compact JSON)."""
    return json.dumps(value, separators=(",", ":"))


class CopilotTokenizer:
    """Copilot's own count of what it renders (`Bre`, o200k_base): the product's `CopilotView`
    over the messages as Copilot holds them."""

    def __init__(self) -> None:
        self.view = CopilotView(encoding(COPILOT_ENCODING))

    def truncate(self, value: str, tokens: int) -> str:
        """The first `tokens` tokens of `value` (all of it if it is that short)."""
        encoded = encode_ordinary(self.view.encoding, value)
        return value if len(encoded) <= tokens else self.view.encoding.decode(encoded[:tokens])

    def message(self, message: Message) -> int:
        """What one message adds to a render."""
        return self.view.message(as_held(message))

    def messages(self, messages: Sequence[Message]) -> int:
        """A rendered prompt's `tokenCount`: the sum of its messages."""
        return sum(self.message(m) for m in messages)


def internal_id(call_id: str) -> str:
    """A tool-call id as Copilot holds it while it counts."""
    return call_id if "__vscode-" in call_id else call_id + INTERNAL_ID_SUFFIX


def as_held(message: Message) -> Message:
    """`message` with its tool-call ids as Copilot holds them (`internal_id`)."""
    if not any(isinstance(p, (ToolCallPart, ToolResultPart)) for p in message.content):
        return message
    content = [
        attrs.evolve(p, call_id=internal_id(p.call_id))
        if isinstance(p, (ToolCallPart, ToolResultPart))
        else p
        for p in message.content
    ]
    return attrs.evolve(message, content=content)


# --- Simple-mode summary prompt -------------------------------------------------------------------


def chunk(name: str, body: str) -> str:
    """One tagged chunk of the Simple-mode history."""
    return f"<{name}>\n{body}\n</{name}>"


def _text_of(parts: Sequence[Part]) -> str:
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            pieces.append(part.value)
        elif isinstance(part, ToolResultPart):
            pieces.append(_text_of(part.content))
        elif isinstance(part, DataPart) and part.mime_type.startswith("image/"):
            pieces.append("[image]")
    return "\n".join(pieces)


def round_chunks(
    assistant: Message, results: Message | None, tokenizer: CopilotTokenizer, result_tokens: int
) -> list[str]:
    """A tool round as Simple mode lists it: the response, then one `<tool>` chunk per call."""
    text = "".join(p.value for p in assistant.content if isinstance(p, TextPart))
    chunks = [chunk("assistant", text)]
    outputs = {
        p.call_id: _text_of(p.content)
        for p in (results.content if results is not None else [])
        if isinstance(p, ToolResultPart)
    }
    for call in (p for p in assistant.content if isinstance(p, ToolCallPart)):
        shown = arguments_json(call.input)
        if len(shown) > ARGUMENTS_SHOWN:
            shown = shown[:ARGUMENTS_SHOWN] + "..."
        output = outputs.get(call.call_id)
        body = "Tool result empty" if output is None else tokenizer.truncate(output, result_tokens)
        chunks.append(chunk("tool", f'Used tool "{call.name}" with arguments: {shown}\n{body}'))
    return chunks


def simple_history(header: str, entries: Sequence[str]) -> Message:
    """The Simple-mode history message: the header, then the entries' chunks."""
    return Message("user", [TextPart(header + "\n" + "\n".join(entries) + "\n")])


def simple_result_tokens(max_input_tokens: int) -> int:
    """How much of a tool result Simple mode keeps: half of `maxToolResultLength`."""
    return math.floor(max_input_tokens * TOOL_RESULT_SHARE) // 2
