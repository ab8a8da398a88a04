"""The wire's JSON shapes (ARCHITECTURE §3) as attrs classes, and the converter for them.

Python names are snake_case; on the wire every field is camelCase. Input from the extension is
structured with `structure`, which turns any mismatch into `InvalidInput` with a readable path;
what goes out through `unstructure` carries no NaN or infinity (JSON has none: VS Code's client
cannot read such a message, and stops the server), a last guard behind the sources' own bounds.
Also here: the rules every reader of parts shares (VS Code's ephemeral data parts, text-like MIME
types, JSON as an API sees it) and the token usage an API reports for a response.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeVar, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.cols import list_structure_factory
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from cattrs.strategies import configure_tagged_union

from tokengauge.jsontext import NotJsonNumber

log = logging.getLogger(__name__)

_OMIT_KEY: Final = "omit_when_none"
OMIT_WHEN_NONE: Final = {_OMIT_KEY: True}
"""Field metadata: a payload field (default None) left out of the JSON while it is None."""

T = TypeVar("T")

Role = Literal["system", "user", "assistant"]


@attrs.frozen
class TextPart:
    """Plain text."""

    value: str


@attrs.frozen
class ToolCallPart:
    """A tool call the assistant made; `input` is the parsed JSON arguments."""

    call_id: str
    name: str
    input: Any = attrs.field(factory=dict)

    def key(self) -> str:
        """The call by id, name and arguments (a digest): some APIs number their calls rather
        than give them unique ids (Kimi K2's `functions.<name>:<index>`, the same in every chat)."""
        arguments = json.dumps(self.input, sort_keys=True, separators=(",", ":"), default=str)
        called = "\x1f".join((self.call_id, self.name, arguments))
        return hashlib.sha256(called.encode("utf-8", "surrogatepass")).hexdigest()


@attrs.frozen
class ToolResultPart:
    """The result of a tool call, itself made of parts."""

    call_id: str
    content: list[Part] = attrs.field(factory=list)


@attrs.frozen
class DataPart:
    """Binary data (base64) with a MIME type: images, documents, or VS Code's ephemeral markers."""

    mime_type: str
    data: str = ""


@attrs.frozen
class ThinkingPart:
    """The model's reasoning text. With a `signature` (Anthropic's, for the thinking block it
    closes) `value` is that whole block, to be replayed as it was; `redacted` is the data of an
    Anthropic `redacted_thinking` block; `encrypted` is an OpenAI Responses reasoning item's
    encrypted content, `id` that item's id. A Chat Completions server's reasoning, once the
    message is whole, says where it came (`field`) and what came with it (`details`, `calls`), so
    that it goes back as it came. Parts with none of these are what was shown while streaming."""

    value: str
    signature: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    redacted: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    id: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    encrypted: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    field: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """Where a Chat Completions server streamed the reasoning (`reasoning_content`, `reasoning`,
    or `think`: `<think>` tags in the content), and so where it goes back."""
    details: list[Any] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The message's `reasoning_details` (OpenRouter, MiniMax), merged by type and index as
    their documentation says, otherwise as they came: texts, signatures, encrypted data, ids."""
    calls: dict[str, Any] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """Per tool call id, the `extra_content` the call came with (Gemini's thought signature)."""
    extra: dict[str, Any] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The message's own `extra_content` (Gemini's signature of an answer without calls)."""

    @property
    def carried(self) -> bool:
        """Whether it is a Chat Completions message's reasoning, as its stream left it (what
        goes back as it came)."""
        return any(v is not None for v in (self.field, self.details, self.calls, self.extra))


@attrs.frozen
class UnknownPart:
    """A part the extension could not classify, carried as its JSON."""

    json: Any = None


Part = Union[TextPart, ToolCallPart, ToolResultPart, DataPart, ThinkingPart, UnknownPart]  # noqa: UP007

PART_TAGS: dict[type, str] = {
    TextPart: "text",
    ToolCallPart: "toolCall",
    ToolResultPart: "toolResult",
    DataPart: "data",
    ThinkingPart: "thinking",
    UnknownPart: "unknown",
}


@attrs.frozen
class Message:
    """One chat message."""

    role: Role
    content: list[Part] = attrs.field(factory=list)
    name: str | None = None

    @property
    def tool_results_only(self) -> bool:
        """Whether it holds tool results and nothing else (a tool loop's next round)."""
        return bool(self.content) and all(isinstance(p, ToolResultPart) for p in self.content)


@attrs.frozen
class Tool:
    """A tool the model may call."""

    name: str
    description: str = ""
    input_schema: Any = None


CountInput = Union[str, Message]  # noqa: UP007


@attrs.frozen
class Usage:
    """Token usage of one response as the API reported it.

    `total_input_tokens` is everything the model read (Anthropic: input + cache read + cache
    write); `input_tokens` is what the API itself calls input (Anthropic leaves cache reads and
    writes out of it, Chat Completions does not). `cost_usd` is what the API said the response
    cost, in US dollars (OpenRouter's `usage.cost`, xAI's `cost_in_usd_ticks`, a LiteLLM
    proxy's `x-litellm-response-cost`); None when it said nothing.
    """

    total_input_tokens: int
    output_tokens: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)


STATEFUL_MARKER: Final = "stateful_marker"
"""The mime type of the one data part a provider may give that comes back with the next request in
both of Copilot's runtimes (`modelId\\marker`): per-conversation state rides in it."""
EPHEMERAL_MIME_TYPES: Final = frozenset({"cache_control", STATEFUL_MARKER, "usage"})
TEXT_MIME_PREFIXES: Final = ("text/", "application/json", "application/xml", "application/x-yaml")


def is_ephemeral(part: Part) -> bool:
    """True for data parts that only carry VS Code bookkeeping."""
    return isinstance(part, DataPart) and part.mime_type in EPHEMERAL_MIME_TYPES


def countable_parts(parts: Sequence[Part]) -> list[Part]:
    """The parts with ephemeral data parts removed, also inside tool results."""
    kept: list[Part] = []
    for part in parts:
        if is_ephemeral(part):
            continue
        if isinstance(part, ToolResultPart):
            part = attrs.evolve(part, content=countable_parts(part.content))
        kept.append(part)
    return kept


def to_json_text(value: Any) -> str:
    """JSON as an API would see it; keys unsorted, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, default=str)


class InvalidInput(ValueError):
    """Input that does not have the shape ARCHITECTURE §3 gives; the message says where and why."""


def camel(name: str) -> str:
    """`call_id` → `callId`."""
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


MAX_SAFE_INTEGER = 2**53 - 1
"""JavaScript's largest exact integer: the extension (and JSON parsers like it) cannot say more."""


class _ScalarError(ValueError):
    """A JSON scalar with the right type but a value the protocol cannot take (said as is)."""


def _strict_scalar(kind: type, accepted: tuple[type, ...]) -> Callable[[Any, Any], Any]:
    """cattrs would turn `5` into `"5"` and `"false"` into True; JSON types must match instead,
    and integers stay within what JSON carries exactly (a 400-digit count overflowed floats)."""

    def structure_scalar(value: Any, _: Any) -> Any:
        if isinstance(value, NotJsonNumber):
            raise _ScalarError(f"{value.text} is not a JSON number")
        if isinstance(value, bool) and kind is not bool:
            raise ValueError(f"expected {kind.__name__}, got a boolean")
        if not isinstance(value, accepted):
            raise ValueError(f"expected {kind.__name__}, got {type(value).__name__}")
        if isinstance(value, int) and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise _ScalarError(f"{str(value)[:12]}… is beyond ±{MAX_SAFE_INTEGER:,}")
        return kind(value)

    return structure_scalar


def _is_list_type(kind: Any) -> bool:
    return get_origin(kind) is list


def _is_tuple_type(kind: Any) -> bool:
    return get_origin(kind) is tuple


def _json_number(value: float) -> float | None:
    """A float as JSON can carry it: NaN and ±infinity become null (logged)."""
    if math.isfinite(value):
        return value
    log.warning("%r is not a JSON number: sent as null", value)
    return None


def _make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False)

    def structure_factory(cls: type) -> Callable[[Any, type], Any]:
        renames = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
        structure_fields: Callable[[Any, type], Any] = make_dict_structure_fn(
            cls,
            conv,
            **renames,  # type: ignore[arg-type]
        )

        def structure_object(value: Any, kind: type) -> Any:
            if not isinstance(value, dict):  # cattrs would test `"key" in value` on a string
                raise ValueError(f"expected an object, got {type(value).__name__}")
            return structure_fields(value, kind)

        return structure_object

    def unstructure_factory(cls: type) -> Callable[[Any], Any]:
        renames = {
            a.name: override(rename=camel(a.name), omit_if_default=a.metadata.get(_OMIT_KEY, False))
            for a in attrs.fields(cls)
        }
        return make_dict_unstructure_fn(cls, conv, **renames)  # type: ignore[arg-type]

    conv.register_structure_hook(str, _strict_scalar(str, (str,)))
    conv.register_structure_hook(bool, _strict_scalar(bool, (bool,)))
    conv.register_structure_hook(int, _strict_scalar(int, (int,)))
    conv.register_structure_hook(float, _strict_scalar(float, (int, float)))
    conv.register_structure_hook_factory(attrs.has, structure_factory)
    conv.register_unstructure_hook_factory(attrs.has, unstructure_factory)
    conv.register_unstructure_hook(float, _json_number)
    attrs.resolve_types(ToolResultPart, globals(), locals())
    configure_tagged_union(
        Part,
        conv,
        tag_generator=lambda cls: PART_TAGS[cls],
        tag_name="type",
    )

    def structure_count_input(value: Any, _: type) -> CountInput:
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return conv.structure(value, Message)
        raise InvalidInput(f"expected a string or a message object, got {type(value).__name__}")

    conv.register_structure_hook(CountInput, structure_count_input)

    def strict_list_factory(kind: Any) -> Callable[[Any, Any], list[Any]]:
        structure_items = list_structure_factory(kind, conv)

        def structure_list(value: Any, _: Any) -> list[Any]:
            if not isinstance(value, list):
                raise ValueError(f"expected a list, got {type(value).__name__}")
            items: list[Any] = structure_items(value, kind)
            return items

        return structure_list

    def strict_tuple_factory(kind: Any) -> Callable[[Any, Any], tuple[Any, ...]]:
        items = get_args(kind)
        variadic = len(items) == 2 and items[1] is Ellipsis

        def structure_tuple(value: Any, _: Any) -> tuple[Any, ...]:
            # cattrs would take a string as the tuple of its characters: `"team"` as 4 tags
            if not isinstance(value, list | tuple):
                raise ValueError(f"expected a list, got {type(value).__name__}")
            if variadic:
                return tuple(conv.structure(item, items[0]) for item in value)
            if len(value) != len(items):
                raise ValueError(f"expected {len(items)} items, got {len(value)}")
            return tuple(conv.structure(v, item) for v, item in zip(value, items, strict=True))

        return structure_tuple

    conv.register_structure_hook_factory(_is_list_type, strict_list_factory)
    conv.register_structure_hook_factory(_is_tuple_type, strict_tuple_factory)
    return conv


converter = _make_converter()


def _describe_type(kind: Any) -> str:
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(repr(choice) for choice in get_args(kind))
    if kind == Part:
        return "a part whose type is one of " + ", ".join(PART_TAGS.values())
    if kind == CountInput:
        return "a string or a message object"
    if get_origin(kind) in (list, tuple):
        return "a list"
    if attrs.has(kind):
        return f"an object ({kind.__name__})"
    names = {str: "a string", int: "an integer", bool: "true or false", float: "a number"}
    return names.get(kind) or getattr(kind, "__name__", None) or str(kind)


def _format_error(exc: BaseException, kind: Any) -> str:
    if isinstance(exc, _ScalarError):
        return str(exc)
    if kind == Part:
        return f"must be {_describe_type(kind)}"
    if isinstance(exc, KeyError):
        return "required field missing"
    if kind is not None:
        return f"must be {_describe_type(kind)}"
    return str(exc)


_SNAKE_SEGMENT = re.compile(r"\.([a-z]+(?:_[a-z0-9]+)+)")


def structure(value: Any, cls: type[T], what: str = "params") -> T:
    """Structure `value` as `cls`, raising `InvalidInput` with a message a person can act on."""
    if attrs.has(cls) and not isinstance(value, dict):
        raise InvalidInput(f"invalid {what}: expected an object, got {type(value).__name__}")
    try:
        return converter.structure(value, cls)
    except InvalidInput:
        raise
    except cattrs.BaseValidationError as exc:
        details = "; ".join(cattrs.transform_error(exc, what, _format_error))
        details = _SNAKE_SEGMENT.sub(lambda m: "." + camel(m.group(1)), details)
        raise InvalidInput(f"invalid {what}: {details}") from None
    except (cattrs.errors.CattrsError, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InvalidInput(f"invalid {what}: {exc}") from None


def unstructure(value: Any, as_type: Any = None) -> Any:
    """Turn attrs payloads into camelCase JSON-able data (`as_type`: a union it belongs to, for
    the tag)."""
    return converter.unstructure(value, as_type)
