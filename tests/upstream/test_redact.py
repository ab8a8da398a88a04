"""`redact`: the key in every form an API may echo it."""

from __future__ import annotations

import json
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokengauge.upstream.redact import MIN_PREFIX, REDACTED, redact

KEY = "sk-tg/CANARY+0123456789abcdef"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(f"Incorrect API key provided: {KEY}.", id="plain"),
        pytest.param(json.dumps({"message": f"bad key {KEY}"}), id="json"),
        pytest.param('{"message": "bad key ' + KEY.replace("/", "\\/") + '"}', id="php-escaped"),
        pytest.param(f"malformed stream data: 'xx {KEY[:12]}…'", id="cut-short"),
        pytest.param(f"{KEY}{KEY}", id="twice"),
    ],
)
def test_every_form_of_the_key_is_redacted(text: str):
    result = redact(text, KEY)
    assert KEY[:8] not in result
    assert REDACTED in result
    # What the JSON decodes to is clean too.
    assert KEY not in (json.loads(result)["message"] if result.startswith("{") else result)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param("nothing secret here", KEY, id="absent"),
        pytest.param("sk-tg/C is too short to be the key", KEY, id="short-prefix"),
        pytest.param("anything", None, id="no-key"),
        pytest.param("anything", "", id="empty-key"),
    ],
)
def test_other_text_is_left_alone(text: str, secret: str | None):
    assert redact(text, secret) == text


def test_a_key_with_a_slash_is_redacted_whole():
    """The forms of a key differ after its `/` (`\\/` in JSON): the longest match wins."""
    text = "key sk-abcdefgh/ijklmnop rejected"
    assert redact(text, "sk-abcdefgh/ijklmnop") == "key [redacted] rejected"


SPECIAL_KEYS = [
    pytest.param("sk-abcdefgh/ijklmnop", id="slash"),
    pytest.param('sk-abcdefgh"ijklmnop', id="quote"),
    pytest.param("sk-abcdefgh\\ijklmnop", id="backslash"),
    pytest.param("sk-abcdefghéijklmnop", id="non-ascii"),
    pytest.param("sk-abcd+efgh=ij/kl%mn op", id="url-specials"),
    pytest.param("sk-\u2028abcdefgh\tijkl", id="separators"),
]


def spellings(key: str) -> list[str]:
    """How an API or a log may echo the key."""
    json_ascii = json.dumps(key)[1:-1]
    return [
        key,
        json_ascii,
        json.dumps(key, ensure_ascii=False)[1:-1],
        json_ascii.replace("/", "\\/"),
        quote(key, safe=""),
        quote_plus(key),
    ]


@pytest.mark.parametrize("key", SPECIAL_KEYS)
@pytest.mark.parametrize("cut", [None, 9, 12, 15])
def test_every_spelling_of_a_key_with_special_characters_is_redacted_whole(key: str, cut):
    for spelling in spellings(key):
        shown = spelling if cut is None else spelling[:cut]
        result = redact(f"<<{shown}>>", key)
        assert result == f"<<{REDACTED}>>", (spelling, result)


KEY_ALPHABET = st.characters(
    codec="utf-8", exclude_categories=["Cs"], exclude_characters="<>[]redactREDACT"
)


@settings(max_examples=300)
@given(
    key=st.text(KEY_ALPHABET, min_size=MIN_PREFIX, max_size=40),
    which=st.integers(0, 5),
    cut=st.integers(MIN_PREFIX, 200),
)
def test_no_piece_of_any_spelling_survives(key: str, which: int, cut: int):
    spelling = spellings(key)[which][:cut]
    assert redact(f"<<{spelling}>> and <<{spelling}>>", key) == f"<<{REDACTED}>> and <<{REDACTED}>>"
