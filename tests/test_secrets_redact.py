"""`redact`: the key in every form an API may echo it."""

from __future__ import annotations

import json

import pytest

from tokengauge.secrets import REDACTED, redact

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
