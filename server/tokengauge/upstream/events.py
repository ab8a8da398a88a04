"""What a streamed response is made of, whatever the dialect: the parsers' common output.

Parsers turn SSE events into these; the chat loop forwards the parts to the extension, learns from
the usage, and ends with the error or the finish reason.
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import attrs


@attrs.frozen
class TextDelta:
    """A piece of the answer's text."""

    value: str


@attrs.frozen
class ThinkingDelta:
    """A piece of the model's reasoning; `signature` closes an Anthropic thinking block."""

    value: str
    signature: str | None = None


@attrs.frozen
class ToolCall:
    """A complete tool call (arguments reassembled and parsed)."""

    call_id: str
    name: str
    input: Any


@attrs.frozen
class UsageReport:
    """Token usage as the API reported it; `total_input_tokens` is everything the model read."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    total_input_tokens: int = 0


@attrs.frozen
class StreamError:
    """The API reported an error inside an HTTP 200 stream; `body` is its raw JSON, if any."""

    message: str
    body: str | None = None


@attrs.frozen
class Finish:
    """The API said why it stopped (`stop`, `tool_calls`, `end_turn`, `length`, …)."""

    reason: str


StreamEvent = Union[TextDelta, ThinkingDelta, ToolCall, UsageReport, StreamError, Finish]  # noqa: UP007


class StreamParser(Protocol):
    """Turns one response's SSE events into stream events (both dialects' parsers)."""

    @property
    def ended(self) -> bool:
        """Whether the stream's terminal event (`[DONE]`, `message_stop`) has been seen."""
        ...

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        """The stream events of one SSE event."""
        ...

    def finish(self) -> list[StreamEvent]:
        """Whatever is still pending when the stream is over."""
        ...


def event_json(event: StreamEvent) -> dict[str, Any] | None:
    """The `parse-stream` / `tokenGauge/chatPart` JSON of an event (None for `Finish`)."""
    if isinstance(event, TextDelta):
        return {"type": "text", "value": event.value}
    if isinstance(event, ThinkingDelta):
        return {"type": "thinking", "value": event.value}
    if isinstance(event, ToolCall):
        return {
            "type": "toolCall",
            "callId": event.call_id,
            "name": event.name,
            "input": event.input,
        }
    if isinstance(event, UsageReport):
        return {
            "type": "usage",
            "inputTokens": event.input_tokens,
            "outputTokens": event.output_tokens,
            "cacheReadTokens": event.cache_read_tokens,
            "cacheWriteTokens": event.cache_write_tokens,
            "reasoningTokens": event.reasoning_tokens,
            "totalInputTokens": event.total_input_tokens,
        }
    if isinstance(event, StreamError):
        return {"type": "error", "message": event.message}
    return None
