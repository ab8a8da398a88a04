"""What a streamed response is made of, whatever the dialect: the parsers' common output.

Parsers turn SSE events into these; the chat loop forwards the parts to the extension, learns from
the usage, and ends with the error or the finish reason. Also here: the JSON helpers both parsers
use to read an event's data.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Final, Protocol, Union

import attrs

from tokengauge import jsontext
from tokengauge.messages import (
    MAX_SAFE_INTEGER,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    Usage,
    unstructure,
)
from tokengauge.models.prices import USD_TICKS, reported_usd

log = logging.getLogger(__name__)

_EXCERPT: Final = 200
COST_HEADER: Final = "x-litellm-response-cost"
"""The response header a LiteLLM proxy states the response's cost in (US dollars)."""
MAX_INPUT_DEPTH: Final = jsontext.MAX_DEPTH // 2
"""Deepest nesting taken in a tool call's arguments: real tools stay under 20 levels, and the
call comes back in the conversation's next request, which may nest `jsontext.MAX_DEPTH` in all."""


@attrs.frozen
class TextDelta:
    """A piece of the answer's text."""

    value: str


@attrs.frozen
class ThinkingDelta:
    """A piece of the model's reasoning."""

    value: str


@attrs.frozen
class ThinkingBlock:
    """A whole Anthropic thinking block once signed (`thinking`, `signature`), a redacted one
    (`redacted`: its data), an OpenAI Responses reasoning item (`item_id`, `encrypted`), or a
    Chat Completions message's reasoning (`thinking`, the `field` it came in, its `details`, the
    `calls`' extra content and its own): what the API must be sent back, unchanged, in later
    requests."""

    thinking: str = ""
    signature: str | None = None
    redacted: str | None = None
    item_id: str | None = None
    encrypted: str | None = None
    field: str | None = None
    details: list[Any] | None = None
    calls: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None


@attrs.frozen
class ToolCall:
    """A complete tool call (arguments reassembled and parsed)."""

    call_id: str
    name: str
    input: Any


@attrs.frozen
class StreamError:
    """The API reported an error inside an HTTP 200 stream; `body` is its raw JSON, if any."""

    message: str
    body: str | None = None


@attrs.frozen
class Finish:
    """The API said why it stopped (`stop`, `tool_calls`, `end_turn`, `length`, …)."""

    reason: str


StreamEvent = Union[  # noqa: UP007
    TextDelta, ThinkingDelta, ThinkingBlock, ToolCall, Usage, StreamError, Finish
]


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


def message_part(event: StreamEvent) -> TextPart | ThinkingPart | ToolCallPart | None:
    """The ARCHITECTURE §3 part a piece of the answer is (None for usage, errors and the finish)."""
    if isinstance(event, TextDelta):
        return TextPart(event.value)
    if isinstance(event, ThinkingDelta):
        return ThinkingPart(event.value)
    if isinstance(event, ThinkingBlock):
        return ThinkingPart(
            event.thinking,
            event.signature,
            event.redacted,
            event.item_id,
            event.encrypted,
            event.field,
            event.details,
            event.calls,
            event.extra,
        )
    if isinstance(event, ToolCall):
        return ToolCallPart(event.call_id, event.name, event.input)
    return None


def event_json(event: StreamEvent) -> dict[str, Any] | None:
    """An event as `tokengauge parse-stream` prints it: its part as `tokenGauge/chatPart` carries
    it, the usage as the API reported it, an error's message (None for `Finish`)."""
    part = message_part(event)
    if part is not None:
        return dict(unstructure(part, Part))
    if isinstance(event, Usage):
        return {"type": "usage", **unstructure(event)}
    if isinstance(event, StreamError):
        return {"type": "error", "message": event.message}
    return None


def json_object(data: str) -> dict[str, Any] | None:
    """`data` parsed as a JSON object (surrounding whitespace allowed), or None."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):  # nested deeper than the parser follows
        return None
    return value if isinstance(value, dict) else None


def as_dict(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one (for `null` and wrong types)."""
    return value if isinstance(value, dict) else {}


def as_int(obj: dict[str, Any], key: str) -> int:
    """`obj[key]` if it is a count JSON carries exactly (0 to 2^53 − 1), else 0: a usage of 400
    digits failed the answer it ended (no float holds it)."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return value if 0 <= value <= MAX_SAFE_INTEGER else 0


def reported_cost(usage: dict[str, Any]) -> float | None:
    """The cost a `usage` object states, in US dollars (None when it states none we can take):
    xAI's `cost_in_usd_ticks` (10^10 to the dollar), or OpenRouter's `cost`.

    Under BYOK (`is_byok`) OpenRouter's `cost` is only its own fee, and
    `cost_details.upstream_inference_cost` what the user's own key was charged: the request cost
    the user both, so its cost is their sum; without the upstream figure the fee alone would
    understate it, so none is reported (the price table's estimate stands in).
    """
    ticks = reported_usd(usage.get("cost_in_usd_ticks"), USD_TICKS)
    if ticks is not None:
        return ticks
    cost = reported_usd(usage.get("cost"))
    if cost is None or usage.get("is_byok") is not True:
        return cost
    upstream = reported_usd(as_dict(usage.get("cost_details")).get("upstream_inference_cost"))
    return None if upstream is None else reported_usd(cost + upstream)


def header_cost(headers: Mapping[str, str]) -> float | None:
    """The cost a response's headers state (a LiteLLM proxy's), in US dollars; None without one
    we can take (LiteLLM writes `None` when it knows none)."""
    return reported_usd(headers.get(COST_HEADER))


def malformed(data: str) -> str:
    """The message for a `data:` line that is not the JSON object the dialect promises."""
    excerpt = data if len(data) <= _EXCERPT else data[:_EXCERPT] + "…"
    return f"malformed stream data: {excerpt!r}"


def error_message(error: Any, fallback: str) -> str:
    """The human message of an error object (`{"message": …}`), a string, or `fallback`."""
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, str) and message:
            return message
        kind = error.get("type") or error.get("code")
        if kind is not None:
            return str(kind)
    if isinstance(error, str) and error:
        return error
    return fallback


def parse_arguments(arguments: str) -> tuple[bool, Any]:
    """A tool call's JSON arguments: `(True, value)`, `{}` for none; `(False, why)` if they are
    not JSON, nest deeper than `MAX_INPUT_DEPTH` or hold a number JSON cannot carry."""
    if not arguments.strip():
        return True, {}
    try:
        value = jsontext.parse(arguments)
        jsontext.check_tree(value, "arguments", MAX_INPUT_DEPTH)
    except (jsontext.JsonSyntaxError, jsontext.TreeError) as exc:
        return False, f"are not JSON we can take ({exc})"
    return True, value


def lenient_tool_input(arguments: str, name: str) -> Any:
    """The tool input of a call the API says is complete: arguments `parse_arguments` does not
    take are passed on as the string.

    The model wrote those arguments; the tool (and then the model) is best placed to deal with
    them, so we pass them on rather than drop the call, or fail the answer it ends.
    """
    ok, value = parse_arguments(arguments)
    if ok:
        return value
    log.warning("tool call %r: its arguments %s; passed on as a string", name, value)
    return arguments
