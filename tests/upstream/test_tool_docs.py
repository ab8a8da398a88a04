"""Tool documentation tiers: the minimal signature keeps everything that validates (names, types,
enums, nesting, `$ref`s, required parameters) and drops what only documents; progressive shows a
tool whole once the conversation holds a call to it. On Copilot's real tool set as well."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.request import tool_json
from tokengauge.messages import Message, TextPart, Tool, ToolCallPart, ToolResultPart
from tokengauge.upstream.tool_docs import (
    ANNOTATIONS,
    first_sentence,
    minimal_schema,
    minimal_tool,
    tool_forms,
    tools_as_sent,
)

COPILOT_TOOLS = Path(__file__).parents[2] / "bench" / "data" / "copilot-host-common.json.gz"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "title": "Edit",
    "description": "What to edit.",
    "properties": {
        "path": {"type": "string", "description": "The file.", "examples": ["a.py"]},
        "mode": {"type": "string", "enum": ["replace", "insert"], "default": "replace"},
        "edits": {
            "type": "array",
            "description": "The edits.",
            "items": {
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "minimum": 1, "description": "1-based."},
                    "text": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "T"},
                },
                "required": ["line"],
            },
        },
        "target": {"$ref": "#/$defs/target"},
        # Values to match are data, whatever their keys.
        "preset": {"const": {"title": "Fast", "description": "x"}},
        # A parameter whose name is a keyword: a name, kept.
        "description": {"type": "string", "description": "The commit message."},
    },
    "required": ["path", "edits"],
    "$defs": {
        "target": {
            "type": "object",
            "description": "Where.",
            "properties": {"symbol": {"type": "string", "$comment": "x"}},
            "additionalProperties": False,
        }
    },
}


def keywords(schema: Any) -> set[str]:
    """Every keyword used anywhere in a schema (property names and `enum`/`const` data left
    out)."""
    if isinstance(schema, list):
        return set().union(*(keywords(s) for s in schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        if key in ("enum", "const"):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            found |= set().union(*(keywords(v) for v in value.values())) if value else set()
        else:
            found |= keywords(value)
    return found


def test_the_minimal_schema_keeps_what_validates_and_drops_what_documents():
    minimal = minimal_schema(SCHEMA)
    assert minimal == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"type": "string", "enum": ["replace", "insert"]},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "line": {"type": "integer", "minimum": 1},
                        "text": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                    },
                    "required": ["line"],
                },
            },
            "target": {"$ref": "#/$defs/target"},
            "preset": {"const": {"title": "Fast", "description": "x"}},
            "description": {"type": "string"},
        },
        "required": ["path", "edits"],
        "$defs": {
            "target": {
                "type": "object",
                "properties": {"symbol": {"type": "string"}},
                "additionalProperties": False,
            }
        },
    }
    assert not keywords(minimal) & ANNOTATIONS
    assert keywords(minimal) == keywords(SCHEMA) - ANNOTATIONS


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Read a file. Lines are 1-based.", "Read a file."),
        ("Run a command\nin a terminal.", "Run a command"),
        ("Use v1.2 of the API! Then stop.", "Use v1.2 of the API!"),
        ("No full stop", "No full stop"),
        ("", ""),
    ],
)
def test_the_first_sentence(text: str, first: str):
    assert first_sentence(text) == first


CALL = ToolCallPart("c1", "read_file", {"path": "a.py"})
TOOLS = [
    Tool("read_file", "Read a file. Lines are 1-based.", SCHEMA),
    Tool("run", "Run a command. In a shell.", {"type": "object", "properties": {}}),
]


def conversation(*parts: Any) -> list[Message]:
    return [Message("user", [TextPart("Fix a.py")]), Message("assistant", list(parts))]


def test_full_sends_the_tools_as_given_and_minimal_never_more():
    assert tools_as_sent(TOOLS, conversation(CALL), "full") == TOOLS
    assert tools_as_sent(TOOLS, conversation(CALL), "minimal") == [minimal_tool(t) for t in TOOLS]


def test_progressive_shows_a_tool_whole_once_called():
    before = tools_as_sent(TOOLS, conversation(), "progressive")
    assert before == [minimal_tool(t) for t in TOOLS]
    called = conversation(CALL)
    failed = [
        *called,
        Message("user", [ToolResultPart("c1", [TextPart("ERROR while calling tool: no")])]),
    ]
    for messages in (called, failed):
        after = tools_as_sent(TOOLS, messages, "progressive")
        assert after == [TOOLS[0], minimal_tool(TOOLS[1])]
    assert [t.name for t in before] == [t.name for t in TOOLS]  # none left out, none renamed


@pytest.mark.parametrize(
    ("docs", "called", "names"),
    [
        pytest.param("full", True, ["full", "progressive", "minimal"], id="full-called"),
        pytest.param("full", False, ["full", "minimal"], id="full-nothing-called-yet"),
        pytest.param("progressive", True, ["progressive", "minimal"], id="progressive"),
        pytest.param("progressive", False, ["progressive"], id="progressive-already-minimal"),
        pytest.param("minimal", True, ["minimal"], id="minimal"),
    ],
)
def test_the_forms_the_ladder_may_send_smaller_each(docs: Any, called: bool, names: list[str]):
    messages = conversation(CALL) if called else conversation()
    forms = tool_forms(TOOLS, messages, docs)
    assert [name for name, _ in forms] == names
    assert forms[0][1] == tools_as_sent(TOOLS, messages, docs)
    assert forms[-1][1] == [minimal_tool(t) for t in TOOLS]
    sizes = [sum(len(tool_json(t)) for t in tools) for _, tools in forms]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)


def test_copilots_real_tools_keep_their_names_and_required_and_shrink():
    raw = json.loads(gzip.decompress(COPILOT_TOOLS.read_bytes()))["tools"]
    tools = [Tool(t["name"], t.get("description", ""), t.get("inputSchema")) for t in raw]
    minimal = [minimal_tool(t) for t in tools]
    for full, small in zip(tools, minimal, strict=True):
        assert small.name == full.name
        schema, kept = full.input_schema or {}, small.input_schema or {}
        assert kept.get("required") == schema.get("required")
        assert set(kept.get("properties", {})) == set(schema.get("properties", {}))
        assert keywords(kept) == keywords(schema) - ANNOTATIONS
    encoding = EncodingRegistry().get("o200k_base")
    before = sum(len(encoding.encode(tool_json(t))) for t in tools)
    after = sum(len(encoding.encode(tool_json(t))) for t in minimal)
    print(f"\nCopilot's {len(tools)} tools: {before} tokens whole, {after} minimal")
    assert after < before / 2


def test_progressive_after_an_answer_shows_what_it_called():
    """What the request after an answer that called `run` sends: `run` whole as well."""
    after = tools_as_sent(TOOLS, conversation(CALL), "progressive", called={"run"})
    assert after == TOOLS
    assert tools_as_sent(TOOLS, conversation(), "minimal", called={"run"}) == [
        minimal_tool(t) for t in TOOLS
    ]


MCP_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "description": "Query an issue tracker.",
    "properties": {
        "filter": {
            "oneOf": [
                {"type": "string", "title": "Text", "minLength": 1},
                {
                    "type": "object",
                    "properties": {"label": {"type": "string", "description": "A label."}},
                    "required": ["label"],
                    "additionalProperties": False,
                },
            ],
            "description": "Text, or a label.",
        },
        "state": {"enum": ["open", "closed", None], "default": "open"},
        "limit": {"type": ["integer", "null"], "minimum": 1, "maximum": 100, "examples": [10]},
        "range": {
            "type": "array",
            "prefixItems": [{"type": "string", "format": "date"}, {"type": "string"}],
            "items": False,
            "description": "From, to.",
        },
        "fields": {
            "type": "array",
            "items": {"allOf": [{"type": "string"}, {"not": {"const": "secret"}}]},
            "uniqueItems": True,
        },
        "extra": {
            "type": "object",
            "patternProperties": {"^x-": {"type": "string", "description": "A header."}},
            "additionalProperties": {"type": "number", "title": "Other"},
        },
        "sort": {
            "if": {"properties": {"by": {"const": "date"}}},
            "then": {"required": ["order"]},
            "else": {"not": {"required": ["order"]}},
            "properties": {"by": {"type": "string"}, "order": {"enum": ["asc", "desc"]}},
        },
        "target": {"$ref": "#/$defs/target"},
    },
    "required": ["filter"],
    "$defs": {
        "target": {
            "type": "object",
            "description": "Where.",
            "properties": {"repo": {"type": "string", "pattern": "^[^/]+/[^/]+$"}},
            "required": ["repo"],
        }
    },
}
MCP_INSTANCES: list[Any] = [
    {},
    {"filter": ""},
    {"filter": "bug"},
    {"filter": {"label": "bug"}},
    {"filter": {"label": "bug", "color": "red"}},
    {"filter": 3},
    {"filter": "bug", "state": None},
    {"filter": "bug", "state": "done"},
    {"filter": "bug", "limit": None},
    {"filter": "bug", "limit": 0},
    {"filter": "bug", "limit": 100},
    {"filter": "bug", "range": ["2026-11-01", "2026-11-24"]},
    {"filter": "bug", "range": ["2026-11-01", "b", "c"]},
    {"filter": "bug", "fields": ["title", "state"]},
    {"filter": "bug", "fields": ["title", "secret"]},
    {"filter": "bug", "fields": ["title", "title"]},
    {"filter": "bug", "extra": {"x-a": "1", "other": 2}},
    {"filter": "bug", "extra": {"x-a": 1}},
    {"filter": "bug", "extra": {"other": "2"}},
    {"filter": "bug", "sort": {"by": "date", "order": "asc"}},
    {"filter": "bug", "sort": {"by": "date"}},
    {"filter": "bug", "sort": {"by": "name", "order": "asc"}},
    {"filter": "bug", "target": {"repo": "a/b"}},
    {"filter": "bug", "target": {"repo": "a"}},
    {"filter": "bug", "target": {}},
]


def verdicts(schema: Any, instances: list[Any]) -> list[bool]:
    validator = jsonschema.Draft202012Validator(schema)
    return [validator.is_valid(instance) for instance in instances]


def test_the_minimal_schema_validates_exactly_what_the_whole_one_does():
    """The real validator's verdicts agree on every instance, valid or not, for every construct
    MCP tools use (oneOf, allOf, not, if/then/else, prefixItems, patternProperties, type lists,
    $ref into $defs)."""
    whole = verdicts(MCP_SCHEMA, MCP_INSTANCES)
    assert whole.count(True) >= 10 and whole.count(False) >= 10  # the probes probe both ways
    assert verdicts(minimal_schema(MCP_SCHEMA), MCP_INSTANCES) == whole


SAMPLES: dict[str, Any] = {
    "string": "x",
    "number": 1.5,
    "integer": 2,
    "boolean": True,
    "array": [],
    "object": {},
}


def sample(prop: dict[str, Any], wrong: bool = False) -> Any:
    """A value for a parameter: of its type (its first enum value), or of another type."""
    kind = prop.get("type")
    if wrong:
        return 0 if kind == "string" else "x"
    if "enum" in prop:
        return prop["enum"][0]
    return SAMPLES.get(kind, "x") if isinstance(kind, str) else "x"


def probes(schema: dict[str, Any]) -> list[Any]:
    """Instances around a tool's schema: nothing, the required parameters alone (of the right
    type, and of a wrong one), and every parameter."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    return [
        {},
        {name: sample(properties.get(name, {})) for name in required},
        {name: sample(properties.get(name, {}), wrong=True) for name in required},
        {name: sample(prop) for name, prop in properties.items()},
    ]


def test_copilots_real_tools_validate_the_same_minimal():
    raw = json.loads(gzip.decompress(COPILOT_TOOLS.read_bytes()))["tools"]
    checked = 0
    for tool in raw:
        schema = tool.get("inputSchema") or {"type": "object"}
        instances = probes(schema)
        assert verdicts(minimal_schema(schema), instances) == verdicts(schema, instances), tool[
            "name"
        ]
        checked += len(instances)
    assert checked == 4 * len(raw)
