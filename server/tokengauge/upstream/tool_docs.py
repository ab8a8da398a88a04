"""How much of each tool's documentation a request carries (`tokenGauge.models[].toolDocs`).

- `full`: the tools as the caller gave them.
- `minimal`: each tool's name, the first sentence of its description, and its input schema without
  annotations (`description`, `title`, `examples`, `default`, …, at every depth). Names, types,
  enums, nesting, `$ref`s and which parameters are required stay as they were, so a call valid
  against the real schema is valid against this one and the other way round.
- `progressive`: the minimal form for a tool the conversation has not called yet; the full form
  once it holds a call to the tool (an error result, Copilot's "ERROR while calling tool: …",
  follows a call, so a tool that failed is always shown whole), so the model reads the whole
  documentation where it uses it. A tool the conversation's last request sent whole stays whole
  (`shown`), though a summary dropped its calls: the tools lead every request, and a form that
  changes back makes all of what the API cached of the conversation fresh again. Within a tool
  loop the tools stay as its last request sent them (`loop`): a tool first called there is shown
  whole from the next turn on, so that the tools change between turns, never within a loop.

No tool is ever left out or renamed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

import attrs

from tokengauge.messages import Message, Tool, ToolCallPart
from tokengauge.settings import ToolDocs

ANNOTATIONS: Final = frozenset(
    {"description", "title", "examples", "default", "markdownDescription", "$comment", "deprecated"}
)
"""JSON Schema keywords that document and never validate."""
_PROPERTY_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_VALUES: Final = frozenset({"enum", "const"})
"""Keywords whose value is data to match, not a schema: kept as they are."""
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s|\n")


def minimal_schema(schema: Any) -> Any:
    """A JSON schema without its annotations, at every depth (a property named like an
    annotation keyword stays: it is a name, not a keyword; `enum` and `const` values are data)."""
    if isinstance(schema, list):
        return [minimal_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ANNOTATIONS:
            continue
        if key in _VALUES:
            kept[key] = value
        elif key in _PROPERTY_MAPS and isinstance(value, dict):
            kept[key] = {name: minimal_schema(sub) for name, sub in value.items()}
        else:
            kept[key] = minimal_schema(value)
    return kept


def first_sentence(text: str) -> str:
    """The description's first sentence (or line)."""
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0].strip()


def minimal_tool(tool: Tool) -> Tool:
    """A tool's minimal signature."""
    return attrs.evolve(
        tool,
        description=first_sentence(tool.description),
        input_schema=minimal_schema(tool.input_schema),
    )


def tools_as_sent(
    tools: Sequence[Tool],
    messages: Sequence[Message],
    docs: ToolDocs,
    called: Iterable[str] = (),
    *,
    loop: bool = False,
) -> list[Tool]:
    """The tools in the form `docs` asks for, given the conversation so far (and `called`: the
    tools the conversation's last request sent whole; `loop`: the request goes on with that
    request's tool loop, and only those are whole)."""
    if docs == "full":
        return list(tools)
    full = (set() if loop else _in_use(messages)) | set(called) if docs == "progressive" else set()
    return [tool if tool.name in full else minimal_tool(tool) for tool in tools]


def tool_forms(
    tools: Sequence[Tool],
    messages: Sequence[Message],
    docs: ToolDocs,
    shown: Iterable[str] = (),
    *,
    loop: bool = False,
) -> list[tuple[ToolDocs, list[Tool]]]:
    """The tools as `docs` sends them, then each smaller form the recovery ladder may send
    instead for one request: `progressive` (after `full`), then `minimal`. A form the same as
    the one before is left out (a progressive form of tools none of which was called yet is
    named minimal; `shown` and `loop` as `tools_as_sent`'s)."""
    shown = frozenset(shown)
    first = tools_as_sent(tools, messages, docs, shown, loop=loop)
    forms: list[tuple[ToolDocs, list[Tool]]] = [(docs, first)]
    order: list[ToolDocs] = ["full", "progressive", "minimal"]
    for smaller in order[order.index(docs) + 1 :]:
        form = tools_as_sent(tools, messages, smaller, shown, loop=loop)
        if form != forms[-1][1]:
            forms.append((smaller, form))
        elif len(forms) > 1:
            forms[-1] = (smaller, form)
    return forms


def _in_use(messages: Sequence[Message]) -> set[str]:
    """The tools the conversation holds a call to."""
    return {
        part.name
        for message in messages
        for part in message.content
        if isinstance(part, ToolCallPart)
    }


def shown_whole(sent: Sequence[Tool], given: Sequence[Tool]) -> frozenset[str]:
    """The tools a request sent whole: those of `sent` (the forms it sent of `given`) that are
    as given."""
    if len(sent) != len(given):
        return frozenset()
    return frozenset(s.name for s, g in zip(sent, given, strict=True) if s == g)
