"""Strict JSON for what LSP messages carry: numbers JSON cannot carry and nesting too deep are
refused, naming the place; what is not JSON says so."""

from __future__ import annotations

import json

import pytest

from tokengauge import jsontext


@pytest.mark.parametrize(
    "text",
    ["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "1" * 5000, '{"a": [1, NaN]}'],
)
def test_numbers_json_cannot_carry_are_marked(text: str) -> None:
    value = jsontext.parse(text)
    with pytest.raises(jsontext.TreeError, match="is not a JSON number"):
        jsontext.check_tree(value)


def test_tree_errors_name_the_place() -> None:
    value = jsontext.parse('{"modelOptions": {"stop": ["a", NaN]}}')
    with pytest.raises(jsontext.TreeError) as caught:
        jsontext.check_tree(value)
    assert str(caught.value) == "params.modelOptions.stop[1]: NaN is not a JSON number"


@pytest.mark.parametrize(("depth", "ok"), [(64, True), (65, False), (100_000, False)])
def test_nesting_depth(depth: int, ok: bool) -> None:
    text = "[" * depth + "]" * depth
    try:
        value = jsontext.parse(text)
        jsontext.check_tree(value)
    except (jsontext.JsonSyntaxError, jsontext.TreeError):
        assert not ok
    else:
        assert ok


@pytest.mark.parametrize(
    "data",
    [b"\xff\xfe{}", b'{"a": 1', b"", b"{'single': 1}", b'{"a": 1} trailing'],
)
def test_what_is_not_json_says_so(data: bytes) -> None:
    with pytest.raises(jsontext.JsonSyntaxError, match="the message"):
        jsontext.parse(data)


def test_ordinary_json_is_unchanged() -> None:
    text = '{"a": [1, 2.5, -3, "x\\ud800", true, null, {"b": 1e300}]}'
    assert jsontext.parse(text) == json.loads(text)
    jsontext.check_tree(jsontext.parse(text))
