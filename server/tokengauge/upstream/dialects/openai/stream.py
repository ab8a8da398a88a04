"""OpenAI Chat Completions streams (and OpenAI-compatible ones) turned into stream events.

Handles OpenAI, OpenRouter, DeepSeek and the like: `delta.content` (and `delta.refusal`) is text;
reasoning, in whichever field the server streams it, is thinking, and is gathered to go back as it
came (`reasoning_stream`). Choices other than index 0 are ignored (we never ask for `n > 1`).

Decisions, all so that what reaches the user is complete and never looks better than it was:
- Tool calls are gathered by `index` (parallel calls interleave) and emitted whole, in index
  order, once the stream is over (`[DONE]` or `finish()`), after the reasoning's `ThinkingBlock`:
  the Agents window's runtime keeps an answer's items in the order they came, and a block after
  a call goes back with the next one (ARCHITECTURE §1). A later chunk repeating `id`/`name`
  (OpenRouter) does not duplicate them; a new `id` at a used index starts a new call.
- Arguments that are not JSON: if the stream ended properly they are passed on as the raw string
  (with a warning); if it was cut off (`finish()` before `[DONE]` or `finish_reason`) the call
  is dropped, since its arguments are truncated. `ended` tells the caller the stream was cut.
- Reasoning: each piece shown as it comes; once the message ends, a `ThinkingBlock` with all of
  it, the field it came in, its `reasoning_details` and the tool calls' `extra_content`.
- Usage: the latest non-null `usage` object, wherever it came, is reported once at the end, with
  the cost it states (`reported_cost`: OpenRouter's `cost`, xAI's `cost_in_usd_ticks`).
- `Finish` is held until the end and dropped if an error was reported: a stream that carried an
  error never ends with a success-looking finish. It is emitted once.
- A `data:` line that is not a JSON object is a `StreamError` ("malformed stream data: …"), and
  so is a chunk with a top-level `error` (OpenRouter mid-stream errors); parsing goes on.
- An OpenAI *Responses* API stream (`response.*` events) is not supported: one `StreamError`
  says so, rather than an empty answer that would look like a success.
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
    ToolCall,
    as_dict,
    as_int,
    error_message,
    json_object,
    lenient_tool_input,
    malformed,
    parse_arguments,
    reported_cost,
)
from tokengauge.upstream.dialects.openai.reasoning_stream import ReasoningCollector

log = logging.getLogger(__name__)

DONE = "[DONE]"
RESPONSES_API = (
    "the API answered with an OpenAI Responses API stream, which Token Gauge does not read; "
    "point the provider at an OpenAI-compatible Chat Completions API (/v1/chat/completions)"
)


@dataclass
class _PendingCall:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    extra: Any = None
    """The call's `extra_content` (Gemini's thought signature)."""


def usage_report(usage: dict[str, Any]) -> Usage:
    """A Chat Completions `usage` object; `prompt_tokens` already includes cached tokens."""
    prompt = as_int(usage, "prompt_tokens")
    prompt_details = as_dict(usage.get("prompt_tokens_details"))
    completion_details = as_dict(usage.get("completion_tokens_details"))
    cached = as_int(prompt_details, "cached_tokens") or as_int(usage, "prompt_cache_hit_tokens")
    return Usage(
        input_tokens=prompt,
        output_tokens=as_int(usage, "completion_tokens"),
        cache_read_tokens=cached,
        cache_write_tokens=as_int(prompt_details, "cache_write_tokens"),
        reasoning_tokens=as_int(completion_details, "reasoning_tokens"),
        total_input_tokens=prompt,
        cost_usd=reported_cost(usage),
    )


class OpenAIStreamParser:
    """Feed it each SSE event of one response, then call `finish()` once."""

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._usage: dict[str, Any] | None = None
        self._finish: str | None = None
        self._failed = False
        self._ended = False
        self._closed = False
        self._told_unsupported = False
        self._reasoning = ReasoningCollector()
        self._call_extras: dict[str, Any] = {}
        self._held: list[StreamEvent] = []
        """Whole tool calls (and errors of calls), handed on once the stream is over."""

    @property
    def ended(self) -> bool:
        """Whether `data: [DONE]` arrived (if not, the stream was cut off)."""
        return self._ended

    def feed(self, event: str, data: str) -> list[StreamEvent]:
        """The stream events of one SSE event."""
        if self._closed:
            log.debug("ignoring SSE event %r after the end of the stream", event)
            return []
        if event.startswith("response."):
            return self._unsupported()
        if event not in ("message", "error"):
            log.debug("ignoring SSE event %r", event)
            return []
        if data.strip() == DONE:
            self._ended = True
            return self._close(lenient=True)
        if not data.strip():
            log.debug("ignoring empty SSE data")
            return []
        chunk = json_object(data)
        if event == "error":
            error = chunk.get("error", chunk) if chunk is not None else None
            return self._fail(StreamError(error_message(error, data.strip()), body=data))
        if chunk is None:
            return self._fail(StreamError(malformed(data), body=data))
        kind = chunk.get("type")
        if isinstance(kind, str) and kind.startswith("response."):
            return self._unsupported()
        return self._chunk(chunk, data)

    def finish(self) -> list[StreamEvent]:
        """What is left when the stream is over: complete tool calls, usage, the finish reason."""
        return self._close(lenient=False)

    def _chunk(self, chunk: dict[str, Any], data: str) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = usage
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                out += self._choice(choice)
        error = chunk.get("error")
        if error is not None:
            out += self._fail(StreamError(error_message(error, data), body=data))
        return out

    def _choice(self, choice: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        delta = as_dict(choice.get("delta"))
        out += self._reasoning.delta(delta)
        content, refusal = delta.get("content"), delta.get("refusal")
        if isinstance(content, str) and content:
            out += self._reasoning.content(content)
        if isinstance(refusal, str) and refusal:
            out.append(TextDelta(refusal))
        tool_calls = delta.get("tool_calls")
        for call in tool_calls if isinstance(tool_calls, list) else []:
            if isinstance(call, dict):
                out += self._tool_delta(call)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._held += self._flush_calls(lenient=True)
            if self._finish is None:
                self._finish = reason
        return out

    def _tool_delta(self, delta: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        raw_id = delta.get("id")
        call_id = raw_id if isinstance(raw_id, str) else ""
        index = delta.get("index")
        if not isinstance(index, int):
            index = self._index_for(call_id)
        function = as_dict(delta.get("function"))
        pending = self._calls.get(index)
        if pending is not None and call_id and pending.call_id and call_id != pending.call_id:
            # Some servers put every call at index 0: a new id means the previous call is whole.
            self._held += self._emit(index, self._calls.pop(index), lenient=True)
            pending = None
        if pending is None:
            pending = self._calls[index] = _PendingCall()
        name = function.get("name")
        if call_id and not pending.call_id:
            pending.call_id = call_id
        if isinstance(name, str) and name and not pending.name:
            pending.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            pending.arguments.append(arguments)
        if isinstance(delta.get("extra_content"), dict):
            pending.extra = delta["extra_content"]
        return out

    def _index_for(self, call_id: str) -> int:
        """The index of a tool-call delta that has none: its id's call, a new one, or the last."""
        for index, pending in self._calls.items():
            if call_id and pending.call_id == call_id:
                return index
        if call_id or not self._calls:
            return max(self._calls, default=-1) + 1
        return max(self._calls)

    def _flush_calls(self, *, lenient: bool) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for index in sorted(self._calls):
            out += self._emit(index, self._calls[index], lenient=lenient)
        self._calls.clear()
        return out

    def _emit(self, index: int, pending: _PendingCall, *, lenient: bool) -> list[StreamEvent]:
        arguments = "".join(pending.arguments)
        if not pending.name:
            return self._fail(StreamError(f"tool call #{index} arrived without a function name"))
        call_id = pending.call_id or f"call_{index}"
        if pending.extra is not None:
            self._call_extras[call_id] = pending.extra
        if lenient:
            return [ToolCall(call_id, pending.name, lenient_tool_input(arguments, pending.name))]
        ok, value = parse_arguments(arguments)
        if not ok:
            log.warning("stream cut off inside tool call %r; dropping it", pending.name)
            return []
        return [ToolCall(call_id, pending.name, value)]

    def _close(self, *, lenient: bool) -> list[StreamEvent]:
        if self._closed:
            return []
        self._closed = True
        calls = self._held + self._flush_calls(lenient=lenient)
        out = self._reasoning.finish(self._call_extras) + calls
        if self._usage is not None:
            out.append(usage_report(self._usage))
        if self._finish is not None and not self._failed:
            out.append(Finish(self._finish))
        return out

    def _fail(self, error: StreamError) -> list[StreamEvent]:
        self._failed = True
        return [error]

    def _unsupported(self) -> list[StreamEvent]:
        if self._told_unsupported:
            return []
        self._told_unsupported = True
        return self._fail(StreamError(RESPONSES_API))
