"""How Copilot Chat itself counts a request's messages, which is not through us.

Copilot's agent renders its prompt with prompt-tsx and a tokenizer from its own tokenizer
provider, chosen by the endpoint's `tokenizer` — `o200k_base` for every extension-contributed
model — so its render budget counts messages with its bundled o200k_base, whatever
`provideTokenCount` says. Only the tools go through the provider (`countToolTokens`). Its count of
one message (`BPETokenizer.countMessageTokens` on the OpenAI form): 3, plus every string value —
the role, the text, a tool result's `tool_call_id` — plus its tool calls' strings × 1.5, plus 1
for a name; images by OpenAI's tile rule. `CopilotView` reproduces that count, so calibration can
learn how far it is from what the API charges, and the tool scale can make up the difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from tokengauge.counting.images import ImageRule, image_tokens
from tokengauge.counting.request import tool_json
from tokengauge.counting.text import TextMemo, encode_ordinary
from tokengauge.messages import (
    DataPart,
    Message,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    countable_parts,
    to_json_text,
)

if TYPE_CHECKING:
    import tiktoken

COPILOT_ENCODING: Final = "o200k_base"
BASE_TOKENS_PER_MESSAGE: Final = 3
BASE_TOKENS_PER_NAME: Final = 1
TOOL_CALLS_MARGIN: Final = 1.5
CACHE_SIZE: Final = 2000
"""Texts whose count is kept (a conversation's messages come again with every request)."""
CACHE_BYTES: Final = 4 * 2**20
"""Most bytes those texts hold."""


class CopilotView:
    """Copilot's own count of messages, with its o200k_base."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self.encoding = encoding
        self._cache: TextMemo[int] = TextMemo(CACHE_BYTES, CACHE_SIZE)

    def _tokens(self, text: str) -> int:
        if not text:
            return 0
        count = self._cache.recall(text)
        if count is None:
            count = len(encode_ordinary(self.encoding, text))
            self._cache.remember(text, count)
        return count

    def _text(self, parts: Sequence[object]) -> int:
        total = 0
        for part in parts:
            if isinstance(part, TextPart):
                total += self._tokens(part.value)
            elif isinstance(part, DataPart) and part.mime_type.startswith("image/"):
                total += image_tokens(part.data, ImageRule.OPENAI)
        return total

    def _openai_message(self, role: str, text: int, extra: int = 0) -> int:
        return BASE_TOKENS_PER_MESSAGE + self._tokens(role) + text + extra

    def message(self, message: Message) -> int:
        """One of our messages as Copilot counts it (a message with tool results is one tool
        message per result, as the API receives it)."""
        parts = countable_parts(message.content)
        results = [p for p in parts if isinstance(p, ToolResultPart)]
        calls = [p for p in parts if isinstance(p, ToolCallPart)]
        rest = [p for p in parts if not isinstance(p, (ToolResultPart, ToolCallPart))]
        total = sum(
            self._openai_message("tool", self._text(r.content), self._tokens(r.call_id))
            for r in results
        )
        if rest or calls or not results:
            extra = 0
            if calls:
                call_tokens = sum(
                    self._tokens(c.call_id)
                    + self._tokens("function")
                    + self._tokens(c.name)
                    + self._tokens(to_json_text(c.input))
                    for c in calls
                )
                extra += math.floor(call_tokens * TOOL_CALLS_MARGIN)
            if message.name:
                extra += self._tokens(message.name) + BASE_TOKENS_PER_NAME
            total += self._openai_message(message.role, self._text(rest), extra)
        return total

    def messages(self, messages: Sequence[Message]) -> int:
        """A request's messages as Copilot counts them (without the 3 of the completion)."""
        return sum(self.message(m) for m in messages)

    def tools(self, tools: Sequence[Tool]) -> int:
        """The tools' JSON in o200k_base (how a runtime that counts whole requests itself, as the
        Agent Host does, counts them)."""
        return sum(self._tokens(tool_json(tool)) for tool in tools)
