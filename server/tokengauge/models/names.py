"""The names people know models by, made from their ids ("qwen2.5-coder:7b" → "Qwen2.5 Coder 7B").

A model in the built-in table (`models.known`) is named from it, with the words its id adds
(a size, a date); any other id is spelled out word by word, and left as it is where a word is not
clear (a fine-tune, a hash).
"""

from __future__ import annotations

import re
from typing import Final

from tokengauge.models.known import BEDROCK_PREFIX, id_spellings, lookup_spelled, normalise

_WORD_SEPARATORS: Final = re.compile(r"[-\s:@/]+")
_SIZE: Final = re.compile(r"^(?:\d+x)?\d+(?:\.\d+)?[bmk]$")  # "7b", "1.5b", "135m", "8x7b"
_ACTIVE_SIZE: Final = re.compile(r"^a\d+(?:\.\d+)?b$")  # "a3b" (3B active parameters)
_QUANTISATION: Final = re.compile(r"^(?:i?q\d\w*|fp\d+|bf16|int\d+)$")  # "q4_k_m", "fp16"
_NUMBER: Final = re.compile(r"^\d+(?:\.\d+)*$")  # "3.3", "20250929", "0613"
_GLUED: Final = re.compile(r"^([a-z]+)(\d+(?:\.\d+)*)$")  # "qwen2.5", "phi4", "r1"
_WORD: Final = re.compile(r"^[a-z]{1,20}$")
_SPELLED: Final = {
    "deepseek": "DeepSeek",
    "free": "(free)",
    "glm": "GLM",
    "gpt": "GPT",
    "it": "IT",
    "moe": "MoE",
    "oss": "OSS",
    "vl": "VL",
}
"""Words written otherwise than capitalised."""
_DROPPED: Final = frozenset({"latest"})
_BEDROCK_VERSION: Final = re.compile(r"-v\d+(?::\d+)?$", re.IGNORECASE)  # "-v1:0"


def _word(token: str) -> str | None:
    """One word of an id as a name writes it; None if it does not look like a word."""
    if token in _SPELLED:
        return _SPELLED[token]
    if _SIZE.match(token) or _ACTIVE_SIZE.match(token):
        return token[:-1].upper().replace("X", "x") + token[-1].upper()
    if _QUANTISATION.match(token):
        return token.upper()
    if _NUMBER.match(token):
        return token
    if _WORD.match(token):
        return token.capitalize()
    glued = _GLUED.match(token)
    if glued is None:
        return None
    letters, version = glued.groups()
    spelled = _SPELLED.get(letters) or (letters.upper() if len(letters) == 1 else None)
    return (spelled or letters.capitalize()) + version


def _words(tokens: list[str]) -> str | None:
    """The words of an id as a name ("" for none); None if one of them is not clear."""
    words: list[str] = []
    for token in tokens:
        if token in _DROPPED:
            continue
        word = _word(token)
        if word is None:
            return None
        if (
            len(word) == 2
            and word.isdigit()
            and words
            and re.fullmatch(r"\d{4}(-\d\d)?", words[-1])
        ):
            words[-1] += f"-{word}"  # a date: "2024-08-06"
        else:
            words.append(word)
    return " ".join(words)


def _tail(spelling: str, rest: str) -> list[str] | None:
    """The words of `spelling` that make up `rest` (its normalised end, after a pattern)."""
    tokens = [token for token in _WORD_SEPARATORS.split(spelling) if token]
    wanted = rest.lstrip("-")
    for count in range(1, len(tokens) + 1):
        if normalise("-".join(tokens[-count:])) == wanted:
            return tokens[-count:]
    return None


def display_name(model_id: str) -> str:
    """The name people know a model by: the table's, with the words the id adds ("Llama 3.1
    70B", "GPT-4o 2024-08-06"); for an id not in the table, its words ("qwen2.5-coder:7b" →
    "Qwen2.5 Coder 7B"); the id itself where a word is not clear (a fine-tune, a hash)."""
    text = model_id.strip()
    if text.lower().startswith("ft:"):
        return model_id
    if BEDROCK_PREFIX.match(text.lower()):
        text = _BEDROCK_VERSION.sub("", text)
    spellings = id_spellings(text)
    found = lookup_spelled(text)
    if found is None:
        tokens = [t for t in _WORD_SEPARATORS.split(spellings[0]) if t] if spellings else []
        return _words(tokens) or model_id
    model, spelling, rest = found
    tail = _tail(spelling, rest) if rest else []
    if tail and tail[0] == "0" and model.pattern[-1].isdigit():
        tail = tail[1:]  # "claude-opus-4-0" is Claude Opus 4
    if tail is not None and spelling != spellings[0]:  # matched without its tag: keep the tag
        tail += [t for t in _WORD_SEPARATORS.split(spellings[0][len(spelling) :]) if t]
    words = None if tail is None else _words(tail)
    if words is None:
        return model_id
    return f"{model.name} {words}" if words else model.name
