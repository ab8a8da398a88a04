"""The identifiers a gateway attributes spend by, added to a request when its provider asks.

A LiteLLM proxy books a request's spend to a customer (`x-litellm-customer-id`) and to tags
(`metadata.tags`), and groups a session's requests (`x-litellm-session-id`); OpenRouter groups
by the body's `user` and `session_id`, which also keeps a conversation on the provider that
holds its prompt cache. Where a gateway reads them is its preset's (`presets.Gateway`); what goes
in them is the provider's `attribution` setting: a user name the person typed, tags of their
choosing (with the workspace's name or the request's kind where they wrote `${workspaceName}` or
`${requestKind}`), a session id per Copilot conversation if they ask for one. Nothing is added
unless set, and nothing to an API whose preset reads none of it. The user joins what the log
redacts (`redact.SENT`), in a body as in a header, should an API echo it.

OpenAI's API routes a request by its `prompt_cache_key` to the machine that holds the prefix
cached for that key: a request of a conversation carries the conversation's session id there
(`cache_keyed`), whatever its attribution setting, where its preset takes the field.

A session id is a hash of the conversation's id (the one its stateful marker carries back) with
a random salt kept in the ledger: the same for every request of the conversation, after a restart
too, unlike any other installation's for a conversation of the same id, and telling the gateway
nothing else.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
from typing import Any, Final

import attrs

from tokengauge.ledger.store import Ledger
from tokengauge.settings import MAX_ATTRIBUTION_TEXT, AttributionSettings, ProviderSettings
from tokengauge.upstream.presets import gateway_of, preset_of
from tokengauge.upstream.redact import MIN_SECRET, SENT

log = logging.getLogger(__name__)

CACHE_KEY: Final = "prompt_cache_key"
SALT_DOCUMENT: Final = "attribution/session-salt"
"""The ledger document that holds the salt of session ids."""
SESSION_CHARS: Final = 32
"""Hex characters of a session id (128 bits)."""
_SALT: Final = re.compile(r"[0-9a-f]{32}")
_VARIABLE: Final = re.compile(r"\$\{(workspaceName|requestKind)\}")


@attrs.frozen
class Attribution:
    """What one request carries for its gateway: headers, and body fields."""

    headers: dict[str, str] = attrs.field(factory=dict)
    fields: dict[str, Any] = attrs.field(factory=dict)
    """Top-level body fields; an object's fields join the body's object of that name."""

    def add_to(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` with the fields it does not set itself (a model's options win); tags join
        the tags it has."""
        for name, value in self.fields.items():
            present = body.get(name)
            if present is None:
                body[name] = value
            elif isinstance(present, dict) and isinstance(value, dict):
                merged = dict(present)
                tags = merged.get("tags")
                if isinstance(tags, list):
                    merged["tags"] = [*tags, *(t for t in value["tags"] if t not in tags)]
                else:
                    merged.setdefault("tags", value["tags"])
                body[name] = merged
        return body


NONE: Final = Attribution()


def wants_session(provider: ProviderSettings) -> bool:
    """Whether the provider's requests carry a session id (its gateway takes one, and the
    person asked for it)."""
    gateway = gateway_of(provider)
    return (
        provider.attribution is not None
        and provider.attribution.session
        and gateway is not None
        and bool(gateway.session_header or gateway.session_field)
    )


def takes_cache_key(provider: ProviderSettings) -> bool:
    """Whether the provider's API takes a `prompt_cache_key` (its preset says so)."""
    preset = preset_of(provider)
    return preset is not None and preset.cache_key


def cache_keyed(attribution: Attribution, session: str | None) -> Attribution:
    """`attribution` with the conversation's session id as the request's cache key."""
    if session is None:
        return attribution
    return attrs.evolve(attribution, fields={**attribution.fields, CACHE_KEY: session})


def attribution_for(
    provider: ProviderSettings, *, kind: str, session: str | None, workspace_name: str | None
) -> Attribution:
    """What a request of `kind` (`turn`, `helper`, `summarize`) to `provider` carries: its
    `attribution` setting as its gateway reads it, `session` if it has one. A tag naming the
    workspace is left out when there is none."""
    settings, gateway = provider.attribution, gateway_of(provider)
    if settings is None or gateway is None:
        return NONE
    headers: dict[str, str] = {}
    fields: dict[str, Any] = {}
    if settings.user is not None:
        if len(settings.user) >= MIN_SECRET:  # a person's name, maybe: the log never shows it
            SENT.add([settings.user])
        _place(headers, fields, gateway.user_header, gateway.user_field, settings.user)
    if session is not None and settings.session:
        _place(headers, fields, gateway.session_header, gateway.session_field, session)
    tags = _tags(settings, kind, workspace_name)
    tags_object = gateway.tags_object.get(provider.dialect or "openai")
    if tags and tags_object is not None:
        fields[tags_object] = {"tags": tags}
    return Attribution(headers, fields)


def described(attribution: Attribution) -> str:
    """What `attribution` adds, by name only (its values may be personal)."""
    names = [*attribution.headers, *attribution.fields]
    return ", ".join(names) if names else "nothing"


def _place(
    headers: dict[str, str],
    fields: dict[str, Any],
    header: str | None,
    field: str | None,
    value: str,
) -> None:
    if header is not None:
        headers[header] = value
    elif field is not None:
        fields[field] = value


def _tags(settings: AttributionSettings, kind: str, workspace_name: str | None) -> list[str]:
    values = {"requestKind": kind, "workspaceName": workspace_name}
    tags: list[str] = []
    for template in settings.tags:
        if "${workspaceName}" in template and not workspace_name:
            continue
        # within the bound once the workspace's name is in (a name may be any length)
        tag = _VARIABLE.sub(lambda match: values[match.group(1)] or "", template)
        tag = tag[:MAX_ATTRIBUTION_TEXT]
        if tag not in tags:
            tags.append(tag)
    return tags


class Sessions:
    """Session ids of conversations, salted with the ledger's salt (made on first use)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._salt: str | None = None

    def of(self, conversation: str) -> str:
        """The session id of `conversation`."""
        if self._salt is None:
            self._salt = self._read_salt()
        text = f"{self._salt}\x1f{conversation}".encode()
        return hashlib.sha256(text).hexdigest()[:SESSION_CHARS]

    def _read_salt(self) -> str:
        """The ledger's salt; a new one if it has none (another window's, if it made one
        first)."""

        def kept(stored: object) -> object:
            if isinstance(stored, str) and _SALT.fullmatch(stored):
                return stored
            return secrets.token_hex(16)

        try:
            salt = self._ledger.update_document(SALT_DOCUMENT, kept)
        except Exception:
            log.exception("the salt of session ids could not be kept: this session has its own")
            salt = None
        return salt if isinstance(salt, str) else secrets.token_hex(16)
