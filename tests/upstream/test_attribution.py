"""upstream.attribution: what each gateway is told of a request, where it reads it, and session
ids that stay a conversation's."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tokengauge.ledger.store import Ledger
from tokengauge.settings import (
    MAX_ATTRIBUTION_TEXT,
    AttributionSettings,
    DialectName,
    ProviderSettings,
)
from tokengauge.upstream.attribution import Attribution, Sessions, attribution_for, wants_session
from tokengauge.upstream.presets import resolve, resolve_all

EVERYTHING = AttributionSettings(
    user="ana-lopez",
    tags=("team:payments", "kind:${requestKind}", "ws:${workspaceName}"),
    session=True,
)
SESSION = "5f0c2a9e" * 4


def provider(preset: str, dialect: DialectName | None = None, **given: Any) -> ProviderSettings:
    attribution = given.pop("attribution", EVERYTHING)
    entry = ProviderSettings(
        id="gw", preset=preset, dialect=dialect, attribution=attribution, **given
    )
    return resolve(entry)


TAGS = ["team:payments", "kind:turn", "ws:payroll-service"]


@pytest.mark.parametrize(
    ("entry", "headers", "fields"),
    [
        pytest.param(
            provider("litellm"),
            {"x-litellm-customer-id": "ana-lopez", "x-litellm-session-id": SESSION},
            {"metadata": {"tags": TAGS}},
            id="litellm-chat-completions",
        ),
        pytest.param(
            provider("litellm", "anthropic"),
            {"x-litellm-customer-id": "ana-lopez", "x-litellm-session-id": SESSION},
            {"litellm_metadata": {"tags": TAGS}},
            id="litellm-messages",
        ),
        pytest.param(
            provider("litellm", "responses"),
            {"x-litellm-customer-id": "ana-lopez", "x-litellm-session-id": SESSION},
            {"litellm_metadata": {"tags": TAGS}},
            id="litellm-responses",
        ),
        pytest.param(
            provider("openrouter"),
            {},
            {"user": "ana-lopez", "session_id": SESSION},
            id="openrouter",
        ),
        pytest.param(
            resolve(
                ProviderSettings(
                    id="or", base_url="https://openrouter.ai/api/v1", attribution=EVERYTHING
                )
            ),
            {},
            {"user": "ana-lopez", "session_id": SESSION},
            id="openrouter-by-its-host",
        ),
        pytest.param(provider("openai"), {}, {}, id="an-api-that-reads-none"),
        pytest.param(provider("litellm", attribution=None), {}, {}, id="unset"),
        pytest.param(
            provider("litellm", attribution=AttributionSettings(tags=("team:payments",))),
            {},
            {"metadata": {"tags": ["team:payments"]}},
            id="tags-only",
        ),
    ],
)
def test_what_each_gateway_is_told(
    entry: ProviderSettings, headers: dict[str, str], fields: dict[str, Any]
):
    told = attribution_for(entry, kind="turn", session=SESSION, workspace_name="payroll-service")
    assert told == Attribution(headers, fields)


def test_a_tag_stays_within_the_bound_whatever_the_workspace_is_named():
    entry = provider("litellm", attribution=AttributionSettings(tags=("ws:${workspaceName}",)))
    told = attribution_for(entry, kind="turn", session=None, workspace_name="w" * 10_000)
    [tag] = told.fields["metadata"]["tags"]
    assert tag == ("ws:" + "w" * 10_000)[:MAX_ATTRIBUTION_TEXT]


def test_a_tag_that_names_no_workspace_is_left_out_and_kinds_vary():
    entry = provider("litellm")
    helper = attribution_for(entry, kind="helper", session=None, workspace_name=None)
    assert helper == Attribution(
        {"x-litellm-customer-id": "ana-lopez"},
        {"metadata": {"tags": ["team:payments", "kind:helper"]}},
    )


@pytest.mark.parametrize(
    ("body", "added"),
    [
        pytest.param(
            {"model": "m"}, {"model": "m", "user": "u", "metadata": {"tags": ["t"]}}, id="fresh"
        ),
        pytest.param(
            {"user": "set-in-options", "metadata": {"tags": ["mine"], "trace": "x"}},
            {"user": "set-in-options", "metadata": {"tags": ["mine", "t"], "trace": "x"}},
            id="options-win-tags-join",
        ),
        pytest.param(
            {"metadata": {"trace": "x"}},
            {"user": "u", "metadata": {"trace": "x", "tags": ["t"]}},
            id="an-object-without-tags",
        ),
    ],
)
def test_the_body_keeps_what_it_sets(body: dict[str, Any], added: dict[str, Any]):
    attribution = Attribution({}, {"user": "u", "metadata": {"tags": ["t"]}})
    assert attribution.add_to(body) == added


def test_a_session_is_a_conversations_across_restarts_and_no_other_installations(tmp_path: Path):
    ledger = Ledger(tmp_path / "a")
    first = Sessions(ledger).of("0a1b2c3d")
    ledger.close()
    again = Sessions(Ledger(tmp_path / "a"))
    elsewhere = Sessions(Ledger(tmp_path / "b"))
    assert again.of("0a1b2c3d") == first != again.of("0a1b2c3e")
    assert elsewhere.of("0a1b2c3d") != first
    assert len(first) == 32 and "0a1b2c3d" not in first


def test_a_session_only_where_asked_and_read():
    assert wants_session(provider("openrouter"))
    assert not wants_session(provider("openrouter", attribution=AttributionSettings(user="u")))
    assert not wants_session(provider("openai"))


def test_what_an_api_does_not_read_is_said(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.WARNING, logger="tokengauge.upstream.presets")
    resolve_all(
        [
            ProviderSettings(id="or", preset="openrouter", attribution=EVERYTHING),
            ProviderSettings(id="oa", preset="openai", attribution=AttributionSettings(user="u")),
            ProviderSettings(id="gw", preset="litellm", attribution=EVERYTHING),
        ]
    )
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 2
    assert said[0].startswith("provider or: its API reads no attribution tags")
    assert said[1].startswith("provider oa: its API reads no attribution user")
    assert "ana-lopez" not in " ".join(said)
