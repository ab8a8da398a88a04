"""`redact`: the key in every form an API may echo it."""

from __future__ import annotations

import base64
import json
import re
import string
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokengauge.settings import ProviderSettings
from tokengauge.upstream.redact import (
    HARMLESS_HEADERS,
    MIN_PREFIX,
    REDACTED,
    SECRET_NAME,
    WHOLE_TOKEN,
    SentSecrets,
    header_secrets,
    provider_secrets,
    redact,
    url_secrets,
)

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


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        pytest.param("the model is thinking", "k", "the model is thinking", id="inside-a-word"),
        pytest.param('"version": "0.1.0"', "1", '"version": "0.1.0"', id="inside-a-version"),
        pytest.param("ollama-js and ollama_py", "ollama", "ollama-js and ollama_py", id="joined"),
        pytest.param("Incorrect API key: k.", "k", f"Incorrect API key: {REDACTED}.", id="alone"),
        pytest.param('{"key": "k-1"}', "k-1", f'{{"key": "{REDACTED}"}}', id="quoted"),
        pytest.param("key 'abc' (abc)", "abc", f"key '{REDACTED}' ({REDACTED})", id="twice"),
    ],
)
def test_a_short_key_is_redacted_only_as_a_whole_token(text: str, key: str, expected: str):
    assert redact(text, key) == expected


KEY_CHARACTERS = f"{string.ascii_letters}{string.digits}-_"


@settings(max_examples=300, deadline=None)
@given(
    key=st.text(st.sampled_from(KEY_CHARACTERS), min_size=1, max_size=7),
    before=st.sampled_from(["", " ", "'", '"', "(", ": ", "\n", "="]),
    after=st.sampled_from(["", " ", "'", '"', ")", ".", ",", "\n", ".\n"]),
)
def test_a_short_key_written_on_its_own_never_gets_through(key: str, before: str, after: str):
    assert redact(f"{before}{key}{after}", key) == f"{before}{REDACTED}{after}"


def test_our_own_name_is_not_a_secret_looking_field():
    """Copy Diagnostics' `"tokenGauge": "0.1.0"` is the extension's version, not a token."""
    assert redact('{"tokenGauge": "0.1.0", "token": "t-1"}') == (
        f'{{"tokenGauge": "0.1.0", "token": "{REDACTED}"}}'
    )


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


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param(
            "at https://me:hunter22@api.acme.test/v1: refused",
            f"at https://{REDACTED}@api.acme.test/v1: refused",
            id="url-userinfo",
        ),
        pytest.param(
            "GET https://x.test/v1?api-version=2024-10&key=AIzaSy123&api_key=k2, then",
            f"GET https://x.test/v1?api-version=2024-10&key={REDACTED}&api_key={REDACTED}, then",
            id="query-parameters",
        ),
        pytest.param(
            "/v1?access_token=abc.def&sig=Zm9v%3D&token=" + REDACTED,
            f"/v1?access_token={REDACTED}&sig={REDACTED}&token={REDACTED}",
            id="query-again-redacted-once",
        ),
        pytest.param(
            '{"headers": {"Authorization": "Bearer sk-1", "X-Api-Key": "k\\"1"}, "max_tokens": 9}',
            f'{{"headers": {{"Authorization": "{REDACTED}", "X-Api-Key": "{REDACTED}"}}, '
            '"max_tokens": 9}',
            id="json-fields",
        ),
        pytest.param(
            "sent Authorization: Bearer sk-ant-0123456789 and Basic dXNlcjpwYXNz",
            f"sent Authorization: Bearer {REDACTED} and Basic {REDACTED}",
            id="tokens",
        ),
        pytest.param(
            '{"author": "Ada", "id": "tok"} see https://acme.test/v1/models?page=2',
            '{"author": "Ada", "id": "tok"} see https://acme.test/v1/models?page=2',
            id="harmless-left-alone",
        ),
    ],
)
def test_what_looks_like_a_credential_is_redacted_whoever_it_belongs_to(text: str, shown: str):
    assert redact(text) == shown


def test_every_header_but_the_harmless_ones_is_a_credential():
    headers = {
        "Authorization": "Bearer sk-abcdef",
        "x-portkey-api-key": "pk-123456",
        "X-Route": "eu-west-7",
        "Cookie": "s=abcdef",
        "X-Title": "My App",
        "HTTP-Referer": "https://example.test",
        "Content-Type": "application/json",
        "X-Flag": "on",  # too short to be one
    }
    assert header_secrets(headers) == [
        "Bearer sk-abcdef",
        "sk-abcdef",
        "pk-123456",
        "pk-123456",
        "eu-west-7",
        "eu-west-7",
        "s=abcdef",
        "s=abcdef",
    ]


def test_a_urls_credentials_in_every_spelling():
    url = "https://us%40er:p%3Ass@h.test:8443/v1?api-version=1&key=a%2Fbcd&sig=zz&token=t0k3n#x"
    secrets = set(url_secrets(url))
    assert {"us%40er:p%3Ass", "us@er", "p:ss", "a%2Fbcd", "a/bcd", "t0k3n"} <= secrets
    assert base64.b64encode(b"us@er:p:ss").decode() in secrets  # the Basic header HTTP makes
    assert "1" not in secrets and "zz" not in secrets  # too short to redact everywhere
    provider = ProviderSettings(id="p", base_url=url, headers={"X-Key": "hk-98765"})
    text = redact(
        f"{url} with hk-98765, us@er and p:ss1", *provider_secrets(provider, "sk-1234567")
    )
    assert not any(
        s in text for s in ("us%40er", "p%3Ass", "a%2Fbcd", "hk-98765", "us@er", "t0k3n")
    )


def test_the_log_knows_every_credential_sent():
    sent = SentSecrets()
    sent.add(["sk-sent-0123456789"])
    sent.add(["sk-sent-0123456789", "hk-other-987654"])
    assert sent.redact("sk-sent-0123456789 hk-other-987654 http://u:pw@h") == (
        f"{REDACTED} {REDACTED} http://{REDACTED}@h"
    )


def test_the_extension_redacts_by_the_same_rules():
    """One rule on each side: the extension's harmless headers, secret-looking names and what
    makes a short key a whole token are the server's."""
    source = (Path(__file__).parents[2] / "extension" / "src" / "redact.ts").read_text("utf-8")
    harmless = re.search(r"HARMLESS_HEADERS = new Set\(\[(.*?)\]\)", source, re.DOTALL)
    name = re.search(r"const SECRET_NAME = String\.raw`(.*?)`;", source)
    below = re.search(r"const WHOLE_TOKEN_BELOW = (\d+);", source)
    whole = re.search(r"const WHOLE_TOKEN = \[String\.raw`(.*?)`, String\.raw`(.*?)`\];", source)
    assert harmless and name and below and whole
    assert set(re.findall(r"'([^']+)'", harmless.group(1))) == HARMLESS_HEADERS
    assert name.group(1) == SECRET_NAME
    assert int(below.group(1)) == MIN_PREFIX
    assert whole.groups() == WHOLE_TOKEN
