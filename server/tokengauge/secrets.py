"""Keeping API keys out of everything tokengauge says: logs, errors, notifications.

The API may echo a key back (an "Incorrect API key provided: …" body), JSON-escaped, or cut
short in an excerpt. `redact` replaces the key in all those forms before the text goes anywhere.
"""

from __future__ import annotations

import json
from typing import Final

REDACTED: Final = "[redacted]"
MIN_PREFIX: Final = 8
"""A cut-off key is still recognised from this many leading characters."""


def _forms(secret: str) -> set[str]:
    escaped = json.dumps(secret, ensure_ascii=True)[1:-1]
    return {secret, escaped, escaped.replace("/", "\\/"), secret.replace("/", "\\/")}


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced wherever it (or a cut-off start of it) appears."""
    if not secret:
        return text
    for form in sorted(_forms(secret), key=len, reverse=True):
        text = text.replace(form, REDACTED)
        text = _redact_prefixes(text, form)
    return text


def _redact_prefixes(text: str, form: str) -> str:
    """Replace spans that match the start of `form` for at least `MIN_PREFIX` characters."""
    head = form[: min(MIN_PREFIX, len(form))]
    parts: list[str] = []
    position = 0
    while (start := text.find(head, position)) != -1:
        end = start + len(head)
        while end < len(text) and end - start < len(form) and text[end] == form[end - start]:
            end += 1
        parts += [text[position:start], REDACTED]
        position = end
    parts.append(text[position:])
    return "".join(parts)
