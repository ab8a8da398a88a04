"""Keeping credentials out of everything tokengauge says: logs, errors, notifications.

A credential is the API key, the value of any header a provider sends (its `headers` setting and
the key's own header) unless the header is clearly harmless, and a URL's user name, password and
secret-looking query parameters (`?key=`, `api-key=`, `token=`, `sig=` …).

The API may echo a secret back (an "Incorrect API key provided: …" body), JSON-escaped (`"` as
`\\"`, `/` as `\\/`, non-ASCII as `\\uXXXX`; twice over in a body quoted inside another),
as a Python repr, percent-encoded in a URL, or cut short in an excerpt. `redact` replaces every
known secret in all those forms: at each place where one of the forms begins (its first
`MIN_PREFIX` characters), the longest stretch that matches any form is replaced, so a secret
whose forms differ after some character is never half removed. A secret shorter than
`MIN_PREFIX` (a test key, `ollama`) is replaced only where it stands as a whole token (no letter,
digit or `_` beside it, nor a `.` or `-` joining it to one), so that it never garbles a word
("thinking" for the key `k`) or a version, and is still never let through where it is written
on its own. It then removes what looks like a
credential whoever's it is: a URL's user information, the value of a secret-looking query
parameter or JSON field, a `Bearer`/`Basic` token.

`SENT` learns the secrets of every request as it is built (`upstream.http`): the log's formatter
redacts them from every line, whatever logged it.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from tokengauge.settings import ProviderSettings

REDACTED: Final = "[redacted]"
MIN_PREFIX: Final = 8
"""A cut-off secret is still recognised from this many leading characters."""
MIN_SECRET: Final = 4
"""A header value or URL part shorter than this is no credential (`1`, `on`); replacing it
everywhere would only garble the text."""

WHOLE_TOKEN: Final = (r"(?<!\w)(?<!\w[.\-])", r"(?!\w)(?![.\-]\w)")
"""What may not stand before and after a short secret for it to be a whole token: a word
character, nor a `.` or `-` that joins it to one (`0.1.0` holds no token `1`; `key 1.` does)."""

ESCAPE_LEVELS: Final = 2
"""JSON escaping applied up to this many times over (a body quoted inside another body, like
OpenRouter's `metadata.raw`)."""

HARMLESS_HEADERS: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "anthropic-beta",
        "anthropic-version",
        "content-type",
        "http-referer",
        "openai-beta",
        "referer",
        "user-agent",
        "x-title",
    }
)
"""Headers whose values are never credentials; any other header's value is treated as one."""

SECRET_NAME: Final = (
    r"[\w.\-]*(?:key|token(?!gauge)|secret|passw|pwd|auth(?!ors?\b)|cookie|credential|sig|session)"
    r"[\w.\-]*"
)
_USERINFO: Final = re.compile(r"(?i)[a-z][a-z0-9+.\-]*://([^/?#]*)@")
_PATTERNS: Final = (
    # user information in a URL: scheme://user:password@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@\"'<>\[\]]+@"), rf"\1{REDACTED}@"),
    # a secret-looking query parameter: ?key=…, &api-key=…, &access_token=…
    (
        re.compile(
            rf"(?i)([?&;]{SECRET_NAME}=)(?!{re.escape(REDACTED)})[^&#\s\"'<>]*[^&#\s\"'<>.,:;)\]]"
        ),
        rf"\1{REDACTED}",
    ),
    # a secret-looking JSON or header field: "apiKey": "…", Authorization: …
    (
        re.compile(rf'(?i)("{SECRET_NAME}"\s*:\s*")(?:[^"\\]|\\.)+(")'),
        rf"\1{REDACTED}\2",
    ),
    (re.compile(r"(?i)\b((?:bearer|basic)\s+)[\w.~+/=\-]{6,}"), rf"\1{REDACTED}"),
)


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


class Redactor:
    """Removes a set of secrets, in every spelling, and whatever looks like a credential."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = frozenset(secret for secret in secrets if secret)
        long = {secret for secret in self.secrets if len(secret) >= MIN_PREFIX}
        self._forms = {form for secret in long for form in _forms(secret)}
        self._heads = (
            re.compile("|".join(re.escape(form[:MIN_PREFIX]) for form in self._forms))
            if self._forms
            else None
        )
        short = {form for secret in self.secrets - long for form in _forms(secret)}
        self._short = _whole_tokens(short) if short else None

    def __call__(self, text: str) -> str:
        """`text` with the secrets (or a cut-off start of one) and anything credential-like
        replaced."""
        known = self._known(text)
        return _scrub(known if self._short is None else self._short.sub(REDACTED, known))

    def _known(self, text: str) -> str:
        if self._heads is None:
            return text
        parts: list[str] = []
        position = 0
        while (found := self._heads.search(text, position)) is not None:
            start = found.start()
            length = max(
                _common_prefix(text, start, form)
                for form in self._forms
                if text.startswith(form[:MIN_PREFIX], start)
            )
            parts += [text[position:start], REDACTED]
            position = start + length
        parts.append(text[position:])
        return "".join(parts)


def redact(text: str, *secrets: str | None) -> str:
    """`text` with each of `secrets` (an API key, `provider_secrets`) and anything that looks
    like a credential replaced."""
    return Redactor(secrets)(text)


def _scrub(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _whole_tokens(forms: Iterable[str]) -> re.Pattern[str]:
    """Any of `forms` where it stands as a whole token (`WHOLE_TOKEN`)."""
    alternatives = "|".join(re.escape(form) for form in sorted(forms, key=len, reverse=True))
    before, after = WHOLE_TOKEN
    return re.compile(f"{before}(?:{alternatives}){after}")


def _common_prefix(text: str, start: int, form: str) -> int:
    """How many characters of `form` `text` repeats from `start`."""
    length = 0
    for expected, found in zip(form, text[start : start + len(form)], strict=False):
        if expected != found:
            break
        length += 1
    return length


def secret_header(name: str) -> bool:
    """Whether a header's value counts as a credential: any header not clearly harmless."""
    return name.strip().lower() not in HARMLESS_HEADERS


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The credentials among `headers`' values: each secret header's value, and its last word
    on its own (`Bearer sk-…` may be echoed as `sk-…`)."""
    found: list[str] = []
    for name, value in headers.items():
        if secret_header(name):
            found += [value, *value.split()[-1:]]
    return [secret for secret in found if len(secret) >= MIN_SECRET]


def url_secrets(url: str) -> list[str]:
    """The credentials in `url`: its user information (user name, password, and both as the
    Basic authorization HTTP makes of them) and the values of its secret-looking query
    parameters, as written and decoded."""
    found: list[str] = []
    match = _USERINFO.match(url.strip())
    if match and (userinfo := match.group(1)):
        user, _, password = (unquote(part) for part in userinfo.partition(":"))
        basic = base64.b64encode(f"{user}:{password}".encode()).decode()
        found += [userinfo, *userinfo.split(":", 1), basic]
    query = url.partition("?")[2].partition("#")[0]
    for pair in re.split("[&;]", query):
        name, _, value = pair.partition("=")
        if re.fullmatch(SECRET_NAME, unquote_plus(name), re.IGNORECASE):
            found.append(value)
    found += [unquote_plus(secret) for secret in found]
    return [secret for secret in found if len(secret) >= MIN_SECRET]


def provider_secrets(provider: ProviderSettings, key: str | None = None) -> list[str]:
    """Every credential a request to `provider` with `key` carries."""
    return [
        *([key] if key else []),
        *header_secrets(provider.headers),
        *url_secrets(provider.base_url),
    ]


class SentSecrets:
    """The credentials of every request built so far, for the log to redact (thread-safe: the
    log may be written from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._redactor = Redactor(())

    def add(self, secrets: Iterable[str]) -> None:
        """Remember `secrets` (a new one rebuilds the redactor; a known one costs a set lookup)."""
        wanted = frozenset(secrets)
        with self._lock:
            known = self._redactor.secrets
            if not known.issuperset(wanted):
                self._redactor = Redactor(known | wanted)

    def redact(self, text: str) -> str:
        """`text` without any secret sent so far, nor anything that looks like a credential."""
        return self._redactor(text)


SENT: Final = SentSecrets()
