"""Anthropic Messages streams turned into stream events.

`text` blocks become text; `thinking` blocks become thinking deltas (empty ones are skipped), and
their `signature_delta` a `ThinkingBlock` of the whole block's text and signature, which later
requests must send back unchanged; a `redacted_thinking` block is a `ThinkingBlock` of its data;
`tool_use` blocks become one `ToolCall` at their `content_block_stop`, with the concatenated
`input_json_delta`s parsed (none or empty: the block's initial `input`, else `{}`). Server-tool
and unknown blocks (e.g. the `compaction` beta) are skipped.
Events are dispatched on the payload's `type` (the SSE event name if it has none).

Decisions, as for the OpenAI parser:
- Usage is `message_start`'s, updated by every field `message_delta` carries, and is reported once,
  at `message_stop` or `finish()`; `total_input_tokens = input + cache read + cache write`. When
  `message_delta.usage.iterations` is present (server-side compaction), the top-level input side
  describes the compacted context, not the prompt we sent: the input side is taken from the
  first iteration, the pass that read our prompt as sent (what calibration must compare with).
- `Finish` (the `stop_reason`) is held until the end and dropped if an error was reported.
- `event: error` and `data:` that is not a JSON object are `StreamError`s; parsing goes on.
- A `tool_use` block still open at `finish()` was cut off: it is dropped (with a warning).
  `ended` tells the caller whether `message_stop` arrived.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tokengauge.messages import Usage
from tokengauge.upstream.dialects.events import (
    Finish,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    as_dict,
    as_int,
    error_message,
    json_object,
    lenient_tool_input,
    malformed,
)

log = logging.getLogger(__name__)

_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_INPUT_SIDE = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_BLOCKS = ("text", "thinking", "redacted_thinking", "tool_use")


@dataclass
class _Block:
    kind: str
    call_id: str = ""
    name: str = ""
    initial_input: Any = None
    parts: list[str] = field(default_factory=list)


class AnthropicStreamParser:
    """Feed it each SSE event of one response, then call `finish()` once."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, int] = {}
        self._finish: str | None = None
        self._failed = False
        self._ended = False
        self._closed = False
        self._handlers: dict[str, Callable[[dict[str, Any]], list[StreamEvent]]] = {
            "message_start": self._message_start,
            "content_block_start": self._block_start,
            "content_block_delta": self._block_delta,
            "content_block_stop": self._block_stop,
            "message_delta": self._message_delta,
        }

    @property
    def ended(self) -> bool:
        """Whether `message_stop` arrived (if not, the stream was cut off)."""
        return self._ended

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        """The stream events of one SSE event."""
        if self._closed:
            log.debug("ignoring SSE event %r after the end of the stream", event)
            return []
        if not data.strip():
            log.debug("ignoring SSE event %r without data", event)
            return []
        payload = json_object(data)
        if payload is None:
            if event == "error":
                return self._fail(StreamError(data.strip(), body=data))
            return self._fail(StreamError(malformed(data), body=data))
        kind = payload.get("type")
        kind = kind if isinstance(kind, str) and kind else event
        if kind == "error":
            message = error_message(payload.get("error"), "the API reported an error")
            return self._fail(StreamError(message, body=data))
        if kind == "message_stop":
            self._ended = True
            return self._close()
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler(payload)
        if kind != "ping":
            log.debug("ignoring stream event %r", kind)
        return []

    def finish(self) -> list[StreamEvent]:
        """What is left when the stream is over: the usage and the stop reason."""
        return self._close()

    def _message_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        self._merge_usage(as_dict(as_dict(payload.get("message")).get("usage")))
        return []

    def _block_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index, block = payload.get("index"), as_dict(payload.get("content_block"))
        kind = block.get("type")
        if not isinstance(index, int) or kind not in _BLOCKS:
            log.debug("skipping content block of type %r", kind)
            return []
        if kind == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            self._blocks[index] = _Block(
                "tool_use",
                call_id if isinstance(call_id, str) else "",
                name if isinstance(name, str) else "",
                block.get("input"),
            )
            return []
        if kind == "redacted_thinking":
            data = block.get("data")
            return [ThinkingBlock(redacted=data)] if isinstance(data, str) and data else []
        self._blocks[index] = _Block(str(kind))
        # Blocks start empty in practice; should one not, its text is part of the answer.
        initial = block.get(kind)
        if isinstance(initial, str) and initial:
            self._blocks[index].parts.append(initial)
            return [TextDelta(initial) if kind == "text" else ThinkingDelta(initial)]
        return []

    def _block_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        delta = as_dict(payload.get("delta"))
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            return [TextDelta(text)] if isinstance(text, str) and text else []
        if kind == "thinking_delta":
            thinking = delta.get("thinking")
            if not (isinstance(thinking, str) and thinking):
                return []
            block = self._block(payload)
            if block is not None:
                block.parts.append(thinking)
            return [ThinkingDelta(thinking)]
        if kind == "signature_delta":
            signature = delta.get("signature")
            block = self._block(payload)
            text = "".join(block.parts) if block is not None else ""
            return [ThinkingBlock(text, signature)] if isinstance(signature, str) else []
        if kind == "input_json_delta":
            block = self._block(payload)
            partial = delta.get("partial_json")
            if block is not None and block.kind == "tool_use" and isinstance(partial, str):
                block.parts.append(partial)
            return []
        log.debug("ignoring content delta of type %r", kind)
        return []

    def _block(self, payload: dict[str, Any]) -> _Block | None:
        index = payload.get("index")
        return self._blocks.get(index) if isinstance(index, int) else None

    def _block_stop(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = payload.get("index")
        block = self._blocks.pop(index, None) if isinstance(index, int) else None
        if block is None or block.kind != "tool_use":
            return []
        if not block.call_id or not block.name:
            return self._fail(StreamError("a tool_use block arrived without its id or name"))
        arguments = "".join(block.parts)
        if arguments.strip():
            value = lenient_tool_input(arguments, block.name)
        else:
            value = block.initial_input if isinstance(block.initial_input, dict) else {}
        return [ToolCall(block.call_id, block.name, value)]

    def _message_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        reason = as_dict(payload.get("delta")).get("stop_reason")
        if isinstance(reason, str) and reason and self._finish is None:
            self._finish = reason
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self._merge_usage(usage)
        return []

    def _merge_usage(self, usage: dict[str, Any]) -> None:
        for key in _USAGE_KEYS:
            if isinstance(usage.get(key), int):
                self._usage[key] = as_int(usage, key)
        details = as_dict(usage.get("output_tokens_details"))
        if isinstance(details.get("thinking_tokens"), int):
            self._usage["thinking_tokens"] = as_int(details, "thinking_tokens")
        iterations = usage.get("iterations")
        if isinstance(iterations, list) and iterations and isinstance(iterations[0], dict):
            for key in _INPUT_SIDE:
                self._usage[key] = as_int(iterations[0], key)

    def _usage_report(self) -> Usage:
        usage = self._usage
        inputs = [usage.get(key, 0) for key in _INPUT_SIDE]
        return Usage(
            input_tokens=inputs[0],
            output_tokens=usage.get("output_tokens", 0),
            cache_read_tokens=inputs[1],
            cache_write_tokens=inputs[2],
            reasoning_tokens=usage.get("thinking_tokens", 0),
            total_input_tokens=sum(inputs),
        )

    def _close(self) -> list[StreamEvent]:
        if self._closed:
            return []
        self._closed = True
        for block in self._blocks.values():
            if block.kind == "tool_use":
                log.warning("stream cut off inside tool call %r; dropping it", block.name)
        self._blocks.clear()
        out: list[StreamEvent] = []
        if self._usage:
            out.append(self._usage_report())
        if self._finish is not None and not self._failed:
            out.append(Finish(self._finish))
        return out

    def _fail(self, error: StreamError) -> list[StreamEvent]:
        self._failed = True
        return [error]
