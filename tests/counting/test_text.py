"""Tests for tokengauge.counting.text: family → encoding, exact counts, the LRU (bounded by bytes),
lone surrogates."""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from typing import Any

import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings

from tests.strategies import any_text
from tokengauge.counting.encodings import EncodingRegistry
from tokengauge.counting.text import (
    ENTRY_BYTES,
    TEXT_CACHE_BYTES,
    TEXT_CACHE_SIZE,
    WHITESPACE_PIECE,
    TextCounter,
    TextCounters,
    TextMemo,
    TokenizerError,
    encode_ordinary,
    encoding_for_family,
    whitespace_pieces,
)

ENCODINGS = ("cl100k_base", "o200k_base")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@pytest.fixture(scope="module")
def registry() -> EncodingRegistry:
    return EncodingRegistry()


@pytest.fixture(scope="module", params=ENCODINGS)
def encoding(request: pytest.FixtureRequest, registry: EncodingRegistry) -> tiktoken.Encoding:
    return registry.get(request.param)


@pytest.mark.parametrize(
    ("family", "expected"),
    [
        pytest.param("gpt-4o", "o200k_base", id="gpt-4o"),
        pytest.param("gpt-4o-mini", "o200k_base", id="gpt-4o-mini"),
        pytest.param("gpt-4.1", "o200k_base", id="gpt-4.1"),
        pytest.param("gpt-5", "o200k_base", id="gpt-5"),
        pytest.param("o1", "o200k_base", id="o1"),
        pytest.param("o3-mini", "o200k_base", id="o3-mini"),
        pytest.param("o4-mini", "o200k_base", id="o4-mini"),
        pytest.param("gpt-oss", "o200k_base", id="gpt-oss"),
        pytest.param("GPT-4o", "o200k_base", id="upper-case"),
        pytest.param("gpt-4", "cl100k_base", id="gpt-4"),
        pytest.param("gpt-4-turbo", "cl100k_base", id="gpt-4-turbo"),
        pytest.param("gpt-3.5-turbo", "cl100k_base", id="gpt-3.5-turbo"),
        pytest.param("claude-sonnet-4.5", "cl100k_base", id="claude"),
        pytest.param("gemini-2.5-pro", "cl100k_base", id="gemini"),
        pytest.param("llama-3.1", "cl100k_base", id="llama"),
        pytest.param("", "cl100k_base", id="empty"),
    ],
)
def test_encoding_for_family(family: str, expected: str) -> None:
    assert encoding_for_family(family) == expected


TEXTS = [
    pytest.param("Hello, world! How are you today?", id="ascii"),
    pytest.param("日本語のテキストを数えます。中文也可以。한국어도.", id="cjk"),
    pytest.param("party 🎉🎉 family 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 skin 👍🏽", id="emoji"),
    pytest.param(
        "def fib(n: int) -> int:\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
        id="code",
    ),
    pytest.param(
        json.dumps({"type": "object", "properties": {"path": {"type": "string"}}}, indent=2),
        id="json",
    ),
    pytest.param("   \n\n\t  trailing spaces   \r\n", id="whitespace"),
    pytest.param("<|endoftext|> is ordinary text here", id="special-token-text"),
    pytest.param("x" * 5000, id="long-run"),
]


@pytest.mark.parametrize("text", TEXTS)
def test_count_is_exact_tiktoken(encoding: tiktoken.Encoding, text: str) -> None:
    counter = TextCounter(encoding)
    assert counter.count(text) == len(encoding.encode_ordinary(text))
    assert counter.count(text) > 0


def test_empty_text_is_zero_and_not_cached(encoding: tiktoken.Encoding) -> None:
    counter = TextCounter(encoding)
    assert counter.count("") == 0
    assert len(counter._cache) == 0


def test_counter_name_is_the_encoding(encoding: tiktoken.Encoding) -> None:
    assert TextCounter(encoding).name == encoding.name


def test_cache_is_consulted(registry: EncodingRegistry) -> None:
    counter = TextCounter(registry.get("cl100k_base"))
    text = "the same string, twice"
    first = counter.count(text)
    assert counter._cache[text][0] == first
    # A planted value proves the second call is answered from the cache, not re-encoded.
    counter._cache[text] = (999_999, 1)
    assert counter.count(text) == 999_999


def test_default_cache_holds_5000_and_evicts_the_oldest(registry: EncodingRegistry) -> None:
    assert TEXT_CACHE_SIZE == 5000
    counter = TextCounter(registry.get("cl100k_base"))
    texts = [f"text number {i}" for i in range(TEXT_CACHE_SIZE)]
    for text in texts:
        counter.count(text)
    assert len(counter._cache) == TEXT_CACHE_SIZE
    assert texts[0] in counter._cache

    counter.count("one more, the 5001st")
    assert len(counter._cache) == TEXT_CACHE_SIZE
    assert texts[0] not in counter._cache
    assert texts[1] in counter._cache
    assert "one more, the 5001st" in counter._cache


def test_recent_use_protects_from_eviction(registry: EncodingRegistry) -> None:
    counter = TextCounter(registry.get("cl100k_base"), cache_size=3)
    for text in ("a1", "b2", "c3"):
        counter.count(text)
    counter.count("a1")  # now the most recently used
    counter.count("d4")
    assert set(counter._cache) == {"a1", "c3", "d4"}


def test_the_cache_is_bounded_by_bytes_too(registry: EncodingRegistry) -> None:
    counter = TextCounter(registry.get("cl100k_base"))
    big = [f"{i} " + "word " * 200_000 for i in range(20)]  # 1 Mi characters each
    for text in big:
        counter.count(text)
    held = sum(sys.getsizeof(text) for text in counter._cache)
    assert held <= TEXT_CACHE_BYTES
    assert big[-1] in counter._cache and big[0] not in counter._cache
    huge = "x " * (TEXT_CACHE_BYTES // 2 + 1)  # more than the whole budget: counted, not kept
    assert counter.count(huge) > 0 and huge not in counter._cache


@pytest.mark.parametrize("char", ["a", "é", "語", "🙂"], ids=["ascii", "latin-1", "ucs-2", "ucs-4"])
def test_a_text_is_charged_the_bytes_python_holds_it_in(char: str) -> None:
    # A character takes 1, 2 or 4 bytes by the text's widest: 16 Mi characters of emoji were
    # 64 MiB when the budget counted characters.
    memo: TextMemo[int] = TextMemo(max_bytes=2**20, max_entries=1000)
    texts = [f"{i:04d}" + char * 10_000 for i in range(1000)]
    for i, text in enumerate(texts):
        memo.remember(text, i)
    held = sum(sys.getsizeof(text) + ENTRY_BYTES for text in memo)
    assert held <= 2**20
    assert len(memo) == 2**20 // (sys.getsizeof(texts[0]) + ENTRY_BYTES)
    assert memo.recall(texts[-1]) == 999 and memo.recall(texts[0]) is None


def test_short_texts_are_bounded_by_their_number() -> None:
    memo: TextMemo[int] = TextMemo(max_bytes=2**20, max_entries=10)
    for i in range(100):
        memo.remember(f"t{i}", i)
    assert len(memo) == 10 and memo.recall("t99") == 99 and memo.recall("t89") is None


def test_text_counters_share_one_counter_per_encoding(registry: EncodingRegistry) -> None:
    counters = TextCounters(registry)

    def for_family(family: str) -> TextCounter:
        return counters.for_encoding(encoding_for_family(family))

    assert for_family("gpt-4o") is counters.for_encoding("o200k_base")
    assert for_family("gpt-5") is for_family("o3")
    assert for_family("claude-sonnet-4.5") is counters.for_encoding("cl100k_base")
    assert for_family("gpt-4o").name == "o200k_base"
    assert for_family("gemini-2.5-pro").name == "cl100k_base"


def _escaped(text: str) -> str:
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _replaced(text: str) -> str:
    return LONE_SURROGATE.sub("\ufffd", text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("\ud800", id="high-alone"),
        pytest.param("\udfff", id="low-alone"),
        pytest.param("before \ud83d after", id="high-in-text"),
        pytest.param("中文\udc00中文", id="low-in-cjk"),
        pytest.param("\udc00\ud800 reversed pair", id="reversed-pair"),
        pytest.param("emoji 🎉 and a stray \ud83c", id="with-real-emoji"),
        pytest.param("\ud800" * 50, id="many"),
    ],
)
def test_lone_surrogates_are_never_under_counted(encoding: tiktoken.Encoding, text: str) -> None:
    count = TextCounter(encoding).count(text)
    exact = len(encoding.encode_ordinary(text))
    assert count >= math.ceil(1.10 * exact)
    assert count >= len(encoding.encode_ordinary(_replaced(text)))
    # The API receives lone surrogates as `\uXXXX` escapes in the JSON body.
    assert count >= len(encoding.encode_ordinary(_escaped(text)))


# `st.characters()` leaves out surrogates (category Cs) even with no exclusions: add them.
ANY_TEXT = any_text(max_size=2000)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=ANY_TEXT)
def test_count_never_below_tiktoken(registry: EncodingRegistry, text: str) -> None:
    for name in ENCODINGS:
        encoding = registry.get(name)
        assert TextCounter(encoding).count(text) >= len(encoding.encode_ordinary(text))


def test_hypothesis_alphabet_reaches_surrogates() -> None:
    """Guard for the property above: the strategy really produces lone surrogates."""
    found = []

    @settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
    @given(text=ANY_TEXT)
    def probe(text: str) -> None:
        if LONE_SURROGATE.search(text):
            found.append(text)

    probe()
    assert found


WHITESPACE_RUNS = [
    pytest.param(" " * 1_000_000, id="spaces"),
    pytest.param(" " * 1_000_000 + "x", id="spaces-then-word"),
    pytest.param("\t" * 1_200_000 + "x", id="tabs"),
    pytest.param("\u00a0" * 1_000_000 + "x", id="no-break-spaces"),
    pytest.param("a" + " \t\u3000" * 400_000 + "b", id="mixed"),
    pytest.param("text " + " " * 2_500_000 + " text \ud800", id="with-surrogate"),
]


@pytest.mark.parametrize("text", WHITESPACE_RUNS)
def test_whitespace_runs_that_make_tiktoken_panic_are_counted(
    encoding: tiktoken.Encoding, text: str
) -> None:
    """tiktoken's regex panics (a BaseException, the process dies) on ~1,000,000 whitespace
    characters in a row; the counter cuts such runs and counts the pieces, with the margin."""
    pieces = whitespace_pieces(text)
    assert pieces is not None and "".join(pieces) == text
    runs = [len(run) for piece in pieces for run in re.findall(r"\s+", piece)]
    assert max(runs) <= WHITESPACE_PIECE
    count = TextCounter(encoding).count(text)
    exact_pieces = sum(len(encoding.encode_ordinary(_replaced(p))) for p in pieces)
    assert exact_pieces <= count <= math.ceil(exact_pieces * 1.10 * 1.10) + 1


@pytest.mark.parametrize("run", [WHITESPACE_PIECE + 1, 3 * WHITESPACE_PIECE + 7])
def test_cut_whitespace_runs_still_count_at_least_tiktoken(
    encoding: tiktoken.Encoding, run: int
) -> None:
    text = "before" + " " * run + "after\n" + "\t" * run
    assert TextCounter(encoding).count(text) >= len(encoding.encode_ordinary(text))


def test_texts_without_long_runs_are_not_cut() -> None:
    assert whitespace_pieces("word " * 100_000) is None
    assert whitespace_pieces(" " * WHITESPACE_PIECE + "x" * 10) is None


@pytest.mark.parametrize("text", WHITESPACE_RUNS[:-1])
def test_encode_ordinary_takes_the_runs_tiktoken_panics_on(
    encoding: tiktoken.Encoding, text: str
) -> None:
    """Every other user of an encoding (Copilot's view, the CJK share, the truncator) goes through
    `encode_ordinary`: its tokens decode to the text, whole."""
    tokens = encode_ordinary(encoding, text)
    assert encoding.decode(tokens) == text


@pytest.mark.parametrize("text", [str(param.values[0]) for param in TEXTS[:-1]])
def test_encode_ordinary_is_tiktoken_itself_for_other_text(
    encoding: tiktoken.Encoding, text: str
) -> None:
    long = (text + " ") * (WHITESPACE_PIECE // len(text) + 2)
    assert encode_ordinary(encoding, long) == encoding.encode_ordinary(long)


class Panic(BaseException):
    """What a Rust panic in tiktoken raises (pyo3's PanicException is a BaseException)."""


class PanickingEncoding:
    name = "o200k_base"

    def encode_ordinary(self, text: str) -> list[int]:
        raise Panic("called `Result::unwrap()` on an `Err` value")


def test_a_panic_of_the_tokenizer_is_an_ordinary_error() -> None:
    """A BaseException passes every `except Exception` and ended the server; an ordinary error
    is answered as one."""
    fake: Any = PanickingEncoding()
    with pytest.raises(TokenizerError, match="o200k_base tokenizer failed on a text of 5 char"):
        encode_ordinary(fake, "hello")
    with pytest.raises(TokenizerError):
        TextCounter(fake).count("hello")


@pytest.mark.parametrize(
    ("text", "cut_at"),
    [
        pytest.param(" " * (WHITESPACE_PIECE + 5), [WHITESPACE_PIECE], id="run-at-start"),
        pytest.param(
            "x" * 7 + "\u3000" * (2 * WHITESPACE_PIECE + 1),
            [7 + WHITESPACE_PIECE, 7 + 2 * WHITESPACE_PIECE],
            id="run-after-text",
        ),
        pytest.param(
            " " * WHITESPACE_PIECE + "x" + " " * (WHITESPACE_PIECE + 1),
            [2 * WHITESPACE_PIECE + 1],
            id="short-run-then-long",
        ),
    ],
)
def test_long_runs_are_cut_every_piece_from_their_start(text: str, cut_at: list[int]) -> None:
    pieces = whitespace_pieces(text)
    assert pieces is not None and "".join(pieces) == text
    assert list(itertools.accumulate(map(len, pieces)))[:-1] == cut_at
