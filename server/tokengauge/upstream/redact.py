"""Keeping API keys out of everything tokengauge says: logs, errors, notifications.

The API may echo a key back (an "Incorrect API key provided: …" body), JSON-escaped (`"` as
`\\"`, `/` as `\\/`, non-ASCII as `\\uXXXX`; twice over in a body quoted inside another),
as a Python repr, percent-encoded in a URL, or cut short in an excerpt. `redact` replaces the
key in all those forms before the text goes anywhere: at each place where one of the forms
begins (its first `MIN_PREFIX` characters), the longest stretch that matches any form is
replaced, so a key whose forms differ after some character is never half removed.
"""

from __future__ import annotations

import json
import re
from typing import Final
from urllib.parse import quote, quote_plus

REDACTED: Final = "[redacted]"
MIN_PREFIX: Final = 8
"""A cut-off key is still recognised from this many leading characters."""


ESCAPE_LEVELS: Final = 2
"""JSON escaping applied up to this many times over (a body quoted inside another body, like
OpenRouter's `metadata.raw`)."""


def _forms(secret: str) -> set[str]:
    """Every spelling of `secret` an API or a log may use."""
    forms = {secret, repr(secret)[1:-1], quote(secret, safe=""), quote_plus(secret, safe="")}
    level = {secret}
    for _ in range(ESCAPE_LEVELS):
        level = {
            json.dumps(form, ensure_ascii=ascii)[1:-1] for form in level for ascii in (True, False)
        }
        forms |= level
    forms |= {form.replace("/", "\\/") for form in forms}
    return {form for form in forms if form}


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` replaced wherever it (or a cut-off start of it) appears."""
    if not secret:
        return text
    forms = _forms(secret)
    heads = re.compile("|".join(re.escape(form[:MIN_PREFIX]) for form in forms))
    parts: list[str] = []
    position = 0
    while (found := heads.search(text, position)) is not None:
        start = found.start()
        length = max(
            _common_prefix(text, start, form)
            for form in forms
            if text.startswith(form[:MIN_PREFIX], start)
        )
        parts += [text[position:start], REDACTED]
        position = start + length
    parts.append(text[position:])
    return "".join(parts)


def _common_prefix(text: str, start: int, form: str) -> int:
    """How many characters of `form` `text` repeats from `start`."""
    length = 0
    for expected, found in zip(form, text[start : start + len(form)], strict=False):
        if expected != found:
            break
        length += 1
    return length
