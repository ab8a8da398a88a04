"""How Copilot Chat 0.67 measures what it renders, and the text of its Simple-mode summary prompt.

Copilot renders every prompt with prompt-tsx, and prompt-tsx counts with Copilot's *own* tiktoken,
whatever the model: the renderer takes its tokenizer from the tokenizer provider by the endpoint's
`tokenizer` name, and an extension-contributed endpoint (`Lk`) names `o200k_base`. So the render
that is checked against the agent budget, and the render size that background compaction compares
with `maxInputTokens`, never ask the provider; only `countToolTokens` (the tools' share deducted
from the budget) and the counts Copilot makes after a render (`countMessagesTokens` for its build
event and telemetry) go through `provideTokenCount`. Read in the bundled extension.js of 0.67
(`Bre.countMessageTokens`, `countMessageObjectTokens`, `MaterializedContainer.tokenCount`):
- a message costs 3 + the tokens of each string value of its OpenAI form: the role, each text part,
  the tool-call id of a tool message; its `tool_calls` count 1.5× (floored) the tokens of their
  ids, the word "function", names and argument strings; a name adds 1; an image costs OpenAI's tile
  formula (85 + 170 per 512-px tile after scaling the short side to 768);
- a rendered prompt costs the sum of its messages (no per-completion 3);
- internal tool-call ids carry a `__vscode-<n>` suffix while Copilot counts them (dropped on send).
The Simple-mode summary (what a foreground summarization sends in 0.67) lists the history as tagged
chunks: `<user>` queries, `<conversation-summary>`, `<assistant>` responses and one `<tool>` chunk
per call (`Used tool "name" with arguments: <first 200 chars>` and the result, cut to half of
`maxToolResultLength` = ½ × ½ × `maxInputTokens` tokens).
"""

from __future__ import annotations

import base64
import functools
import json
import math
import struct
from collections.abc import Sequence
from typing import Final

import cachetools
import tiktoken

from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.messages import DataPart, Message, Part, TextPart, ToolCallPart, ToolResultPart

COPILOT_ENCODING: Final = "o200k_base"
BASE_TOKENS_PER_MESSAGE: Final = 3
BASE_TOKENS_PER_NAME: Final = 1
TOOL_CALLS_FACTOR: Final = 1.5
INTERNAL_ID_SUFFIX: Final = "__vscode-1795491211979"
ARGUMENTS_SHOWN: Final = 200
TOOL_RESULT_SHARE: Final = 0.5
"""`maxToolResultLength` = this share of `maxInputTokens` (`wto`); Simple mode keeps half of it."""


@functools.lru_cache(maxsize=2)
def _encoding(name: str) -> tiktoken.Encoding:
    return EncodingRegistry().get(name)


def arguments_json(value: object) -> str:
    """Tool-call arguments as the model streamed them (compact JSON)."""
    return json.dumps(value, separators=(",", ":"))


class CopilotTokenizer:
    """Copilot's own count of what it renders (`Bre`, o200k_base, LRU of 5,000 strings)."""

    def __init__(self, encoding: str = COPILOT_ENCODING) -> None:
        self._encoding = _encoding(encoding)
        self._cache: cachetools.LRUCache[str, int] = cachetools.LRUCache(5_000)

    def text(self, value: str) -> int:
        """Tokens of a string (special-token text counted as text)."""
        if not value:
            return 0
        cached = self._cache.get(value)
        if cached is None:
            cached = len(self._encoding.encode(value, disallowed_special=()))
            self._cache[value] = cached
        return cached

    def truncate(self, value: str, tokens: int) -> str:
        """The first `tokens` tokens of `value` (all of it if it is that short)."""
        if self.text(value) <= tokens:
            return value
        return self._encoding.decode(self._encoding.encode(value, disallowed_special=())[:tokens])

    def message(self, message: Message) -> int:
        """What one message adds to a render (a user message of tool results is one tool message
        per result in Copilot's own prompt)."""
        results = [p for p in message.content if isinstance(p, ToolResultPart)]
        others = [p for p in message.content if not isinstance(p, ToolResultPart)]
        total = sum(self._tool_message(p) for p in results)
        if others or not results:
            total += BASE_TOKENS_PER_MESSAGE + self.text(message.role)
            total += sum(self._part(p) for p in others)
            calls = [p for p in others if isinstance(p, ToolCallPart)]
            if calls:
                total += math.floor(TOOL_CALLS_FACTOR * sum(self._call(p) for p in calls))
            if message.name:
                total += self.text(message.name) + BASE_TOKENS_PER_NAME
        return total

    def messages(self, messages: Sequence[Message]) -> int:
        """A rendered prompt's `tokenCount`: the sum of its messages."""
        return sum(self.message(m) for m in messages)

    def _part(self, part: Part) -> int:
        if isinstance(part, TextPart):
            return self.text(part.value)
        if isinstance(part, DataPart) and part.mime_type.startswith("image/"):
            return image_tokens(part.data)
        return 0

    def _call(self, part: ToolCallPart) -> int:
        return (
            self.text(internal_id(part.call_id))
            + self.text("function")
            + self.text(part.name)
            + self.text(arguments_json(part.input))
        )

    def _tool_message(self, part: ToolResultPart) -> int:
        body = sum(self._part(p) for p in part.content)
        return (
            BASE_TOKENS_PER_MESSAGE
            + self.text("tool")
            + body
            + self.text(internal_id(part.call_id))
        )


def internal_id(call_id: str) -> str:
    """A tool-call id as Copilot holds it while it counts."""
    return call_id if "__vscode-" in call_id else call_id + INTERNAL_ID_SUFFIX


def image_tokens(data_base64: str) -> int:
    """Copilot's `k5e` for a PNG data URL: scaled into 2048², short side to 768, 85 + 170/tile."""
    try:
        header = base64.b64decode(data_base64[:64] + "=" * (-len(data_base64[:64]) % 4))
        width, height = struct.unpack(">II", header[16:24])
    except (ValueError, struct.error):
        return 85
    if width <= 0 or height <= 0:
        return 85
    if max(width, height) > 2048:
        scale = 2048 / max(width, height)
        width, height = round(width * scale), round(height * scale)
    scale = 768 / min(width, height)
    width, height = round(width * scale), round(height * scale)
    tiles: int = math.ceil(width / 512) * math.ceil(height / 512)
    return tiles * 170 + 85


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
