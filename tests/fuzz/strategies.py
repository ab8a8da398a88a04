"""Hypothesis strategies for hostile LSP params: the wire shapes, nearly right and wholly wrong.

Values come from three pools mixed at every level: well-formed ones (so that requests get deep
into counting, chats and calibration), plausible mistakes (a wrong type, a missing field, NaN, an
id of 400 digits), and the pathological inputs the reliability campaign found (a million spaces,
Netpbm and SVG image headers, 500-deep nesting, lone surrogates).
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

from tests.strategies import any_text

MODELS = ("gpt-4o", "claude-sonnet-4-5", "local-small")

huge_ints = st.sampled_from([2**63, -(2**63) - 1, 10**30, 10**400, -1, 0])
numbers = st.one_of(
    st.integers(-(2**40), 2**40),
    huge_ints,
    st.floats(allow_nan=True, allow_infinity=True),
)
texts = st.one_of(
    any_text(40),
    st.sampled_from(["", " ", "\n", "<|endoftext|>", "\u2028", "日本語", "a\ud800b", "\udc00"]),
)
# Rare and expensive: each costs the server real work, so they are drawn one in many.
BIG_TEXTS = (
    lambda: " " * 1_000_100 + "x",
    lambda: "\t \u3000" * 400_000,
    lambda: "word " * 40_000,
    lambda: "{" * 20_000,
    lambda: "\ud800" * 5_000,
)
big_texts = st.sampled_from(range(len(BIG_TEXTS))).map(lambda index: BIG_TEXTS[index]())


def chance(one_in: int) -> st.SearchStrategy[bool]:
    """True about once in `one_in` draws (Hypothesis' own integers lean to their bounds, so a
    "rare" `integers(0, 59) == 0` would come up far more often than one in 60)."""
    return st.randoms(use_true_random=True).map(lambda r: r.random() * one_in < 1)


def rarely(value: st.SearchStrategy[Any], one_in: int = 40) -> st.SearchStrategy[Any]:
    """`value` about once in `one_in` draws, else ordinary text."""
    return chance(one_in).flatmap(lambda hit: value if hit else texts)


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.booleans(), numbers, texts)
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)
        ),
        max_leaves=max_leaves,
    )


def nested(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


deep_values = st.sampled_from([60, 70, 300]).map(nested)
junk = st.one_of(json_values(), deep_values)


def maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually `value`, now and then anything at all."""
    return chance(12).flatmap(lambda hit: junk if hit else value)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """An object with keys dropped, values replaced or junk keys added, now and then."""
    value = dict(draw(base))
    for key in list(value):
        if draw(chance(40)):
            del value[key]
        elif draw(chance(40)):
            value[key] = draw(junk)
    if draw(chance(20)):
        value[draw(texts)] = draw(junk)
    return value


IMAGES = [
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x04\x00\x00\x00\x03\x00\x08\x02\x00\x00\x00",
    b"P6\n" + b"1" * 200_000,
    b'<svg xmlns="http://www.w3.org/2000/svg" width="' + b"9" * 400 + b'" height="1"/>',
    b"GIF89a\xff\xff\xff\xff",
    b"\xff\xd8\xff\xc0\x00\x11\x08\xff\xff\xff\xff",
    b"RIFF\x00\x00\x00\x00WEBPVP8X",
    b"BM" + b"\xff" * 40,
]
data_parts = st.fixed_dictionaries(
    {
        "type": st.just("data"),
        "mimeType": st.one_of(
            st.sampled_from(
                [
                    "image/png",
                    "image/jpeg",
                    "image/svg+xml",
                    "image/x-portable-pixmap",
                    "text/plain",
                    "application/json",
                    "cache_control",
                    "usage",
                    "x/y",
                ]
            ),
            texts,
        ),
        "data": st.one_of(
            st.sampled_from(range(len(IMAGES))).map(lambda i: base64.b64encode(IMAGES[i]).decode()),
            st.binary(max_size=200).map(lambda raw: base64.b64encode(raw).decode()),
            texts,
        ),
    }
)


def parts() -> st.SearchStrategy[Any]:
    text_part = st.fixed_dictionaries({"type": st.just("text"), "value": texts})
    simple = st.one_of(
        text_part,
        text_part,
        st.fixed_dictionaries({"type": st.just("thinking"), "value": texts}),
        st.fixed_dictionaries(
            {"type": st.just("toolCall"), "callId": texts, "name": texts, "input": json_values()}
        ),
        st.fixed_dictionaries({"type": st.just("unknown"), "json": json_values()}),
        data_parts,
    )
    return st.recursive(
        mutated(simple),
        lambda children: mutated(
            st.fixed_dictionaries(
                {
                    "type": st.just("toolResult"),
                    "callId": texts,
                    "content": st.lists(children, max_size=3),
                }
            )
        ),
        max_leaves=6,
    )


roles = maybe(st.sampled_from(["system", "user", "assistant"]))
messages = mutated(
    st.fixed_dictionaries(
        {"role": roles, "content": maybe(st.lists(parts(), max_size=4))},
        optional={"name": texts},
    )
)
message_lists = maybe(st.lists(messages, max_size=4))
tools = mutated(
    st.fixed_dictionaries(
        {"name": texts, "description": texts, "inputSchema": json_values()},
    )
)
model_ids = maybe(st.sampled_from(MODELS))
keys = st.one_of(
    st.just("sk-fuzz-0123456789abcdef"),
    st.sampled_from(["", "sk-é-key", 'sk-a/b"c\\d', "sk-new\nline"]),
    texts,
)
model_options = maybe(
    st.dictionaries(
        st.sampled_from(
            [
                "temperature",
                "top_p",
                "maxTokens",
                "max_tokens",
                "reasoningEffort",
                "stop",
                "thinkingBudget",
                "seed",
                "_private",
                "stream",
                "messages",
            ]
        ),
        json_values(4),
        max_size=4,
    )
)
error_bodies = st.one_of(
    texts,
    st.builds(lambda a, b: f"prompt is too long: {a} tokens > {b} maximum", numbers, numbers),
    st.builds(
        lambda n: (
            '{"error":{"message":"prompt too long; exceeded max context length by '
            f'{n} tokens"}}}}'
        ),
        numbers,
    ),
    json_values().map(str),
)

PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "tokenGauge/countTokens": mutated(
        st.fixed_dictionaries(
            {
                "modelId": model_ids,
                "inputs": maybe(
                    st.lists(st.one_of(texts, messages, rarely(big_texts), junk), max_size=5)
                ),
            }
        )
    ),
    "tokenGauge/chat": mutated(
        st.fixed_dictionaries(
            {
                "requestId": maybe(texts),
                "modelId": model_ids,
                "messages": message_lists,
                "tools": maybe(st.lists(tools, max_size=2)),
                "toolMode": st.one_of(st.sampled_from(["auto", "required", 1, 2]), junk),
                "modelOptions": model_options,
                "credentials": maybe(st.fixed_dictionaries({"apiKey": keys})),
            }
        )
    ),
    "tokenGauge/recordUsage": mutated(
        st.fixed_dictionaries(
            {
                "modelId": model_ids,
                "messages": message_lists,
                "usage": maybe(
                    st.fixed_dictionaries(
                        {"totalInputTokens": numbers},
                        optional={"outputTokens": numbers, "cacheReadTokens": numbers},
                    )
                ),
            }
        )
    ),
    "tokenGauge/recordError": mutated(
        st.fixed_dictionaries(
            {
                "modelId": model_ids,
                "messages": message_lists,
                "body": maybe(error_bodies),
                "status": maybe(st.integers(100, 599)),
            }
        )
    ),
    "tokenGauge/warmCounts": mutated(
        st.fixed_dictionaries({"modelIds": maybe(st.lists(model_ids, max_size=5))})
    ),
    "tokenGauge/discoverModels": mutated(
        st.fixed_dictionaries(
            {
                "credentials": maybe(
                    st.dictionaries(
                        texts, maybe(st.fixed_dictionaries({"apiKey": keys})), max_size=3
                    )
                )
            }
        )
    ),
    "tokenGauge/models": junk,
    "tokenGauge/usage": junk,
}

requests = st.sampled_from(sorted(PARAMS)).flatmap(
    lambda method: st.tuples(st.just(method), maybe(PARAMS[method]))
)
