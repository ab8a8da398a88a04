"""Reading the client's JSON strictly, and checking a value's shape before anything recurses on it.

Python's `json` accepts `NaN`, `Infinity` and `-Infinity`, which are not JSON, and turns `1e400`
into an infinite float: echoed back, or sent on to an API, they make invalid JSON. Here they become
`NotJsonNumber` markers instead, so the request that carries them can be refused with its place
named (`params.modelOptions.temperature: NaN is not a JSON number`) while a stray one in
settings falls back to its default. `check_tree` refuses those markers and nesting deeper than the
server's recursive code can follow.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

MAX_DEPTH: Final = 64
"""Deepest nesting of objects and arrays accepted in request params (real ones stay under 20)."""
_MAX_INT_DIGITS: Final = 4300
"""Python refuses to convert longer digit strings (`sys.get_int_max_str_digits`)."""


class NotJsonNumber:
    """Where the input had a number JSON cannot carry: NaN, ±Infinity, or one beyond a double."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text if len(text) <= 24 else text[:20] + "…"

    def __repr__(self) -> str:
        return self.text


class JsonSyntaxError(ValueError):
    """The input is not JSON; the message says why, for a person."""


class TreeError(ValueError):
    """A parsed value holds a `NotJsonNumber` or nests too deeply; the message names the place."""


def _float(text: str) -> float | NotJsonNumber:
    value = float(text)
    return value if math.isfinite(value) else NotJsonNumber(text)


def _int(text: str) -> int | NotJsonNumber:
    return int(text) if len(text.lstrip("-")) <= _MAX_INT_DIGITS else NotJsonNumber(text)


_DECODER: Final = json.JSONDecoder(parse_float=_float, parse_int=_int, parse_constant=NotJsonNumber)


def parse(data: bytes | bytearray | str) -> Any:
    """One JSON value from UTF-8 bytes (or text); `JsonSyntaxError` if it is not JSON."""
    try:
        text = data if isinstance(data, str) else data.decode("utf-8")
        return _DECODER.decode(text)
    except UnicodeDecodeError as exc:
        raise JsonSyntaxError(f"the message is not UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise JsonSyntaxError("the message nests objects or arrays too deeply") from None
    except ValueError as exc:
        raise JsonSyntaxError(f"the message is not JSON ({exc})") from None


Trail = tuple[Any, Any]
"""A value's place: (its parent's trail or None, its key or index)."""


def check_tree(value: Any, where: str = "params", max_depth: int = MAX_DEPTH) -> None:
    """`TreeError` if `value` holds a `NotJsonNumber` or more than `max_depth` levels of objects
    and arrays."""
    # Each entry: the value, its level, and its trail (parent trail, key), spelled out on error.
    stack: list[tuple[Any, int, Trail]] = [(value, 1, (None, where))]
    while stack:
        item, level, trail = stack.pop()
        if isinstance(item, NotJsonNumber):
            raise TreeError(f"{_spell(trail)}: {item.text} is not a JSON number")
        if isinstance(item, Mapping):
            children: Any = item.items()
        elif isinstance(item, list):
            children = enumerate(item)
        else:
            continue
        if level > max_depth:
            raise TreeError(f"{_spell(trail)}: nested more than {max_depth} levels deep")
        stack += [(child, level + 1, (trail, key)) for key, child in children]


def _spell(trail: Trail | None) -> str:
    keys: list[Any] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    root, *rest = reversed(keys)
    return str(root) + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in rest)
