"""OpenAI Responses API streams (`/v1/responses`, `response.*` events) turned into stream events.

- `response.output_text.delta` is text; `response.reasoning_summary_text.delta` (the reasoning
  summary a request asks for) is thinking.
- A `function_call` output item becomes one `ToolCall` at its `response.output_item.done` (its
  arguments as the item has them, else the deltas gathered).
- `response.completed` carries the usage (`input_tokens` with `input_tokens_details.cached_tokens`,
  `output_tokens` with `output_tokens_details.reasoning_tokens`, and the cost xAI states in
  `cost_in_usd_ticks` or OpenRouter in `cost`) and ends the stream, with a
  `Finish` of `tool_calls` when the answer called tools, else `stop`; `response.incomplete` ends it
  with `length` (or the reason it names); `response.failed` and `error` events are `StreamError`s.
- A `reasoning` output item with `encrypted_content` (asked for with
  `include: ["reasoning.encrypted_content"]`) becomes a `ThinkingBlock` of its id and encrypted
  content at its `response.output_item.done`: what the next request sends back, so the model's
  reasoning survives its tool calls without anything stored at OpenAI.
- Other items (web search, reasoning without encrypted content) and events are the API's own
  business here.

As for the other parsers: usage and the finish are reported once, at the end; a finish after an
error is dropped; a function call still open when the stream is cut off is dropped.
"""

from __future__ import annotations

import logging
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
    reported_cost,
)

log = logging.getLogger(__name__)

_ENDS = {"response.completed": "stop", "response.incomplete": "length", "response.failed": None}


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: list[str] = field(default_factory=list)


class ResponsesStreamParser:
    """Feed it each SSE event of one response, then call `finish()` once."""

    def __init__(self) -> None:
        self._calls: dict[str, _Call] = {}  # by output item id
        self._called = False
        self._usage: Usage | None = None
        self._finish: str | None = None
        self._failed = False
        self._ended = False

    @property
    def ended(self) -> bool:
        """Whether the response's terminal event arrived."""
        return self._ended

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        """The stream events of one SSE event."""
        payload = json_object(data)
        if payload is None:
            return self._fail(StreamError(malformed(data), body=data))
        kind = payload.get("type")
        kind = kind if isinstance(kind, str) and kind else event
        if kind == "response.output_text.delta":
            return self._text(payload, TextDelta)
        if kind == "response.reasoning_summary_text.delta":
            return self._text(payload, ThinkingDelta)
        if kind == "response.output_item.added":
            self._item_added(as_dict(payload.get("item")))
            return []
        if kind == "response.function_call_arguments.delta":
            call = self._calls.get(str(payload.get("item_id")))
            delta = payload.get("delta")
            if call is not None and isinstance(delta, str):
                call.arguments.append(delta)
            return []
        if kind == "response.output_item.done":
            return self._item_done(as_dict(payload.get("item")))
        if kind == "error":
            error = payload.get("error", payload)
            return self._fail(StreamError(error_message(error, "the API reported an error"), data))
        if kind in _ENDS:
            return self._end(kind, as_dict(payload.get("response")), data)
        log.debug("ignoring stream event %r", kind)
        return []

    def finish(self) -> list[StreamEvent]:
        """What is left when the stream is over: the usage and why it stopped."""
        if self._calls:
            log.warning("the stream was cut off inside %d tool call(s): dropped", len(self._calls))
            self._calls.clear()
        events: list[StreamEvent] = [self._usage] if self._usage is not None else []
        if self._finish is not None and not self._failed:
            events.append(Finish(self._finish))
        self._usage = self._finish = None
        return events

    @staticmethod
    def _text(
        payload: dict[str, Any], kind: type[TextDelta] | type[ThinkingDelta]
    ) -> list[StreamEvent]:
        delta = payload.get("delta")
        return [kind(delta)] if isinstance(delta, str) and delta else []

    def _item_added(self, item: dict[str, Any]) -> None:
        if item.get("type") == "function_call" and isinstance(item.get("id"), str):
            self._calls[item["id"]] = _Call(
                str(item.get("call_id") or ""), str(item.get("name") or "")
            )

    def _item_done(self, item: dict[str, Any]) -> list[StreamEvent]:
        if item.get("type") == "reasoning":
            return _reasoning(item)
        if item.get("type") != "function_call":
            return []
        call = self._calls.pop(str(item.get("id")), None) or _Call("", "")
        call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else call.call_id
        name = item.get("name") if isinstance(item.get("name"), str) else call.name
        arguments = item.get("arguments")
        text = arguments if isinstance(arguments, str) else "".join(call.arguments)
        if not call_id or not name:
            return self._fail(StreamError(f"a function call without an id or a name: {item!r}"))
        self._called = True
        return [ToolCall(call_id, name, lenient_tool_input(text, name))]

    def _end(self, kind: str, response: dict[str, Any], data: str) -> list[StreamEvent]:
        self._ended = True
        usage = as_dict(response.get("usage"))
        if usage:
            output = as_int(usage, "output_tokens")
            self._usage = Usage(
                total_input_tokens=as_int(usage, "input_tokens"),
                input_tokens=as_int(usage, "input_tokens"),
                output_tokens=output,
                cache_read_tokens=as_int(
                    as_dict(usage.get("input_tokens_details")), "cached_tokens"
                ),
                reasoning_tokens=as_int(
                    as_dict(usage.get("output_tokens_details")), "reasoning_tokens"
                ),
                cost_usd=reported_cost(usage),
            )
        if kind == "response.failed":
            error = response.get("error")
            return self._fail(StreamError(error_message(error, "the response failed"), data))
        reason = as_dict(response.get("incomplete_details")).get("reason")
        if kind == "response.incomplete":
            self._finish = "length" if reason in (None, "max_output_tokens") else str(reason)
        else:
            self._finish = "tool_calls" if self._called else "stop"
        return []

    def _fail(self, error: StreamError) -> list[StreamEvent]:
        self._failed = True
        return [error]


def _reasoning(item: dict[str, Any]) -> list[StreamEvent]:
    """A finished reasoning item as the block to send back (none without encrypted content)."""
    item_id, encrypted = item.get("id"), item.get("encrypted_content")
    if isinstance(item_id, str) and item_id and isinstance(encrypted, str) and encrypted:
        return [ThinkingBlock(item_id=item_id, encrypted=encrypted)]
    return []
