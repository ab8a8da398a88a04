"""Tests for tokengauge.settings.parse_settings: camelCase input, defaults, and forgiving errors."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest

from tokengauge import jsontext
from tokengauge.activity.cost import request_cost
from tokengauge.messages import InvalidInput, Usage
from tokengauge.settings import (
    MAX_ATTEMPTS,
    MAX_PRICE_PER_M_TOK,
    MAX_RETENTION_DAYS,
    MAX_TOKENS,
    MIN_TOOL_RESULT_TOKENS,
    AttributionSettings,
    ModelSettings,
    Pricing,
    ProviderSettings,
    ServerSettings,
    parse_provider,
    parse_settings,
)

LOGGER = "tokengauge.settings"
OLLAMA = ProviderSettings(id="ollama", dialect="openai", base_url="http://localhost:11434/v1")


@pytest.fixture
def log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    return caplog


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING
    ]


@pytest.mark.parametrize(
    ("options", "warned"),
    [
        pytest.param(None, False, id="none"),
        pytest.param({}, False, id="empty-object"),
        pytest.param([], True, id="list"),
        pytest.param("tokenGauge", True, id="string"),
        pytest.param(42, True, id="number"),
    ],
)
def test_defaults(options: Any, warned: bool, log: pytest.LogCaptureFixture) -> None:
    settings = parse_settings(options)
    assert settings == ServerSettings()
    assert settings.providers == (OLLAMA,)
    assert settings.providers[0].discover is True
    assert settings.providers[0].headers == {}
    assert settings.models == ()
    assert settings.storage_dir is None
    assert settings.log_level == "info"
    assert bool(warnings_of(log)) is warned


def test_camel_case_keys(log: pytest.LogCaptureFixture) -> None:
    settings = parse_settings(
        {
            "storageDir": "/tmp/tg",
            "logLevel": "debug",
            "providers": [
                {
                    "id": "anthropic",
                    "dialect": "anthropic",
                    "baseUrl": "https://api.anthropic.com",
                    "headers": {"anthropic-beta": "context-1m-2025-08-07"},
                    "discover": False,
                },
                {"id": "openrouter", "baseUrl": "https://openrouter.ai/api/v1"},
            ],
            "models": [
                {
                    "id": "claude-sonnet-4-5",
                    "provider": "anthropic",
                    "name": "Sonnet",
                    "family": "claude-sonnet-4.5",
                    "contextWindow": 1_000_000,
                    "maxOutputTokens": 64_000,
                    "reservedOutputTokens": 8_000,
                    "pricing": {"inputPerMTok": 3, "outputPerMTok": 15, "cachedInputPerMTok": 0.3},
                },
                {"id": "openai/gpt-5", "provider": "openrouter"},
            ],
            "someFutureSetting": True,
        }
    )
    assert settings.storage_dir == "/tmp/tg"
    assert settings.log_level == "debug"
    assert settings.providers == (
        ProviderSettings(
            id="anthropic",
            dialect="anthropic",
            base_url="https://api.anthropic.com",
            headers={"anthropic-beta": "context-1m-2025-08-07"},
            discover=False,
        ),
        ProviderSettings(id="openrouter", base_url="https://openrouter.ai/api/v1"),
    )
    assert settings.models == (
        ModelSettings(
            id="claude-sonnet-4-5",
            provider="anthropic",
            name="Sonnet",
            family="claude-sonnet-4.5",
            context_window=1_000_000,
            max_output_tokens=64_000,
            reserved_output_tokens=8_000,
            pricing=Pricing(input_per_m_tok=3, output_per_m_tok=15, cached_input_per_m_tok=0.3),
        ),
        ModelSettings(id="openai/gpt-5", provider="openrouter"),
    )
    assert warnings_of(log) == []


@pytest.mark.parametrize(
    ("providers", "expected_ids", "bad_index"),
    [
        pytest.param([{"id": "a"}, {"dialect": "openai"}], ["a"], 1, id="missing-id"),
        pytest.param([{"id": "a", "dialect": "grpc"}, {"id": "b"}], ["b"], 0, id="bad-dialect"),
        pytest.param([5, {"id": "b"}], ["b"], 0, id="not-an-object"),
        # The string "false" is not a boolean: it must not be read as True.
        pytest.param([{"id": "a"}, {"id": "b", "discover": "false"}], ["a"], 1, id="bad-discover"),
    ],
)
def test_invalid_provider_skipped(
    providers: list[Any], expected_ids: list[str], bad_index: int, log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings({"providers": providers})
    assert [p.id for p in settings.providers] == expected_ids
    [warning] = warnings_of(log)
    assert f"providers[{bad_index}]" in warning


@pytest.mark.parametrize(
    ("model", "fragment"),
    [
        pytest.param({"id": "x"}, "provider", id="missing-provider"),
        pytest.param({"provider": "ollama"}, "id", id="missing-id"),
        pytest.param(
            {"id": "x", "provider": "ollama", "contextWindow": "big"}, "context", id="nan"
        ),
        pytest.param(
            {"id": "x", "provider": "ollama", "pricing": {"inputPerMTok": 1}}, "pricing", id="price"
        ),
        pytest.param("qwen3:8b", "models[1]", id="a-string"),
    ],
)
def test_invalid_model_skipped_valid_kept(
    model: Any, fragment: str, log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings(
        {
            "models": [
                {"id": "llama3.1:8b", "provider": "ollama"},
                model,
                {"id": "qwen3:8b", "provider": "ollama", "contextWindow": 40_960},
            ]
        }
    )
    assert settings.models == (
        ModelSettings(id="llama3.1:8b", provider="ollama"),
        ModelSettings(id="qwen3:8b", provider="ollama", context_window=40_960),
    )
    assert settings.providers == (OLLAMA,)
    [warning] = warnings_of(log)
    assert "models[1]" in warning
    assert fragment.lower() in warning.lower()


@pytest.mark.parametrize(
    ("key", "value", "attribute", "default"),
    [
        pytest.param("logLevel", "loud", "log_level", "info", id="log-level-unknown"),
        pytest.param("logLevel", 3, "log_level", "info", id="log-level-number"),
        pytest.param("storageDir", {"path": "/tmp"}, "storage_dir", None, id="storage-dir-object"),
    ],
)
def test_invalid_scalar_uses_default(
    key: str, value: Any, attribute: str, default: Any, log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings({key: value, "models": [{"id": "m", "provider": "ollama"}]})
    assert getattr(settings, attribute) == default
    assert settings.models == (ModelSettings(id="m", provider="ollama"),)
    [warning] = warnings_of(log)
    assert key in warning


@pytest.mark.parametrize("level", ["off", "error", "warning", "info", "debug", "trace"])
def test_every_log_level(level: str, log: pytest.LogCaptureFixture) -> None:
    assert parse_settings({"logLevel": level}).log_level == level
    assert warnings_of(log) == []


def test_empty_providers_means_no_providers(log: pytest.LogCaptureFixture) -> None:
    settings = parse_settings({"providers": []})
    assert settings.providers == ()
    assert warnings_of(log) == []


def test_all_providers_invalid_means_no_providers(log: pytest.LogCaptureFixture) -> None:
    settings = parse_settings({"providers": [{"dialect": "openai"}]})
    assert settings.providers == ()
    assert len(warnings_of(log)) == 1


@pytest.mark.parametrize(
    ("key", "value"),
    [
        pytest.param("providers", {"id": "a"}, id="providers-object"),
        pytest.param("models", "gpt-4o", id="models-string"),
    ],
)
def test_list_setting_that_is_not_a_list(
    key: str, value: Any, log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings({key: value})
    assert settings.models == ()
    [warning] = warnings_of(log)
    assert key in warning


@pytest.mark.parametrize(
    ("value", "expected", "warned"),
    [
        pytest.param(None, None, False, id="absent"),
        pytest.param(0, None, False, id="zero-no-cap"),
        pytest.param(4000, 4000, False, id="cap"),
        pytest.param(100, MIN_TOOL_RESULT_TOKENS, True, id="too-small"),
        pytest.param("lots", None, True, id="not-a-number"),
    ],
)
def test_tool_result_max_tokens(
    value: Any, expected: int | None, warned: bool, log: pytest.LogCaptureFixture
) -> None:
    options = {} if value is None else {"toolResultMaxTokens": value}
    assert parse_settings(options).tool_result_max_tokens == expected
    assert bool(warnings_of(log)) == warned


@pytest.mark.parametrize(
    ("value", "expected", "warned"),
    [
        pytest.param(None, True, False, id="absent-on"),
        pytest.param(False, False, False, id="off"),
        pytest.param("no", True, True, id="not-a-boolean"),
    ],
)
def test_deduplicate_tool_results(
    value: Any, expected: bool, warned: bool, log: pytest.LogCaptureFixture
) -> None:
    options = {} if value is None else {"deduplicateToolResults": value}
    assert parse_settings(options).deduplicate_tool_results is expected
    assert bool(warnings_of(log)) == warned


# Values that would make nonsense downstream are dropped with a warning (issue 11, item 8).


def test_headers_http_cannot_carry_are_dropped(log: pytest.LogCaptureFixture) -> None:
    headers = {"x-ok": "fine", "x-accent": "café", "bad name": "v", "x-nl": "a\r\nb", "": "v"}
    settings = parse_settings(
        {"providers": [{"id": "p", "baseUrl": "http://h", "headers": headers}]}
    )
    assert settings.providers[0].headers == {"x-ok": "fine"}
    assert len(warnings_of(log)) == 4


@pytest.mark.parametrize("base_url", ["ftp://host/v1", "localhost:11434/v1", "http://h:99999/v1"])
def test_a_base_url_that_is_not_one_is_warned_about(
    base_url: str, log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings({"providers": [{"id": "p", "baseUrl": base_url}]})
    assert [p.id for p in settings.providers] == ["p"]  # kept: its requests say what is wrong
    [warning] = warnings_of(log)
    assert "not an http(s) URL" in warning


@pytest.mark.parametrize("base_url", ["http://[::1", "http://[::1/v1", "https://[fe80::1/v1"])
def test_a_base_url_that_cannot_be_taken_apart_is_refused(
    base_url: str, log: pytest.LogCaptureFixture
) -> None:
    """Every request of such a provider failed with an internal error before it could say why
    (discovery, the chat, the key check): the entry is ignored, said in words."""
    providers = [{"id": "p", "baseUrl": base_url}, {"id": "q", "baseUrl": "http://h/v1"}]
    settings = parse_settings({"providers": providers})
    assert [p.id for p in settings.providers] == ["q"]
    [warning] = warnings_of(log)
    assert warning.startswith("invalid providers[0].baseUrl: it is not a URL (Invalid IPv6 URL)")
    assert base_url not in warning  # a URL may carry a password
    with pytest.raises(InvalidInput, match=r"params\.provider\.baseUrl: it is not a URL"):
        parse_provider({"id": "g", "baseUrl": base_url}, "params.provider", managed=True)


def test_a_provider_id_given_twice_keeps_its_first_entry(log: pytest.LogCaptureFixture) -> None:
    """The second silently replaced the first (its URL got the first one's key)."""
    providers = [
        {"id": "openai", "baseUrl": "https://api.openai.com/v1"},
        {"id": "local", "baseUrl": "http://127.0.0.1:8080/v1"},
        {"id": "openai", "baseUrl": "http://127.0.0.1:9/v1"},
    ]
    settings = parse_settings({"providers": providers})
    assert [(p.id, p.base_url) for p in settings.providers] == [
        ("openai", "https://api.openai.com/v1"),
        ("local", "http://127.0.0.1:8080/v1"),
    ]
    [warning] = warnings_of(log)
    assert "providers[0] and providers[2] both have the id 'openai'" in warning
    assert "providers[2] is ignored" in warning


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("contextWindow", -5, id="negative-window"),
        pytest.param("contextWindow", 0, id="zero-window"),
        pytest.param("maxOutputTokens", -1, id="negative-output"),
        pytest.param("reservedOutputTokens", -4096, id="negative-reserve"),
        pytest.param("contextWindow", 3, id="window-of-3"),  # it left 0 tokens of output
        pytest.param("contextWindow", 10**15, id="absurd-window"),  # offered to VS Code
        pytest.param("maxOutputTokens", MAX_TOKENS + 1, id="absurd-output"),
        pytest.param("compactAt", 100, id="compaction-window-of-100"),
    ],
)
def test_sizes_that_are_not_token_counts_are_dropped(
    field: str, value: int, log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings(
        {"models": [{"id": "m", "provider": "ollama", "contextWindow": 8192, field: value}]}
    )
    model = settings.models[0]
    snake = {
        "contextWindow": "context_window",
        "maxOutputTokens": "max_output_tokens",
        "compactAt": "compact_at",
    }
    assert getattr(model, snake.get(field, "reserved_output_tokens")) is None
    [warning] = warnings_of(log)
    assert field in warning


@pytest.mark.parametrize(
    "pricing",
    [
        pytest.param({"inputPerMTok": -3, "outputPerMTok": 15}, id="negative"),
        # Finite, but a request's cost at it was infinite, and JSON has no infinity.
        pytest.param({"inputPerMTok": 1e308, "outputPerMTok": 15}, id="1e308"),
        pytest.param(
            {"inputPerMTok": 3, "outputPerMTok": 15, "cacheWritePerMTok": MAX_PRICE_PER_M_TOK * 2},
            id="absurd-cache-write",
        ),
    ],
)
def test_prices_that_are_not_prices_are_dropped(
    pricing: dict[str, float], log: pytest.LogCaptureFixture
) -> None:
    settings = parse_settings({"models": [{"id": "m", "provider": "ollama", "pricing": pricing}]})
    assert settings.models[0].pricing is None
    [warning] = warnings_of(log)
    assert "pricing must be from 0 to 100,000 US dollars per million tokens" in warning


def test_the_highest_price_prices_the_most_tokens_finitely() -> None:
    top = Pricing(*(MAX_PRICE_PER_M_TOK,) * 5)
    most = 2**53 - 1  # the most tokens a JSON number carries exactly
    usage = Usage(most, most, most, most // 2, most // 2, most)
    cost = request_cost(usage, top)
    assert cost is not None and math.isfinite(cost) and cost > 0


def test_a_model_configured_twice_keeps_its_first_entry(log: pytest.LogCaptureFixture) -> None:
    models = [
        {"id": "m", "provider": "ollama", "contextWindow": 8192},
        {"id": "m", "provider": "ollama", "contextWindow": 4096},
    ]
    settings = parse_settings({"models": models})
    assert [m.context_window for m in settings.models] == [8192]
    assert "configured twice" in warnings_of(log)[0]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(jsontext.NotJsonNumber("NaN"), id="nan-from-the-wire"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(0.4, id="below-one"),
    ],
)
def test_max_attempts_is_a_sensible_count(value: Any, log: pytest.LogCaptureFixture) -> None:
    settings = parse_settings({"maxAttempts": value, "idleTimeout": value})
    assert settings.max_attempts in (1, 3)
    assert settings.idle_timeout in (0.4, 120.0)


@pytest.mark.parametrize(
    ("key", "attribute", "value", "expected"),
    [
        pytest.param("usageRetentionDays", "usage_retention_days", 1e308, 3650, id="days-1e308"),
        pytest.param("usageRetentionDays", "usage_retention_days", 10**15, 3650, id="days-10^15"),
        pytest.param("usageRetentionDays", "usage_retention_days", 0.5, 1, id="days-half"),
        pytest.param("maxAttempts", "max_attempts", 1e308, MAX_ATTEMPTS, id="attempts-1e308"),
    ],
)
def test_counts_are_bounded(
    key: str, attribute: str, value: float, expected: int, log: pytest.LogCaptureFixture
) -> None:
    """`usageRetentionDays: 1e308` failed the server's `initialize` (the oldest day kept
    overflowed)."""
    assert getattr(parse_settings({key: value}), attribute) == expected


def test_the_longest_retention_is_the_manifests() -> None:
    manifest = json.loads((Path(__file__).parents[1] / "package.json").read_text(encoding="utf-8"))
    setting = manifest["contributes"]["configuration"]["properties"][
        "tokenGauge.usageRetentionDays"
    ]
    assert (setting["minimum"], setting["maximum"]) == (1, MAX_RETENTION_DAYS)


def test_a_preset_entry_keeps_what_it_gives(log: pytest.LogCaptureFixture) -> None:
    """The preset's dialect and base URL are filled in by `upstream.presets.resolve`: the entry
    keeps only what it says, so that its own values can win."""
    settings = parse_settings(
        {
            "providers": [
                {"id": "router", "preset": "openrouter"},
                {"id": "raw", "baseUrl": "http://h/v1"},
            ]
        }
    )
    assert settings.providers == (
        ProviderSettings(id="router", preset="openrouter"),
        ProviderSettings(id="raw", base_url="http://h/v1"),
    )
    assert settings.providers[0].dialect is None and settings.providers[0].base_url == ""
    assert warnings_of(log) == []


def test_managed_is_never_taken_from_settings() -> None:
    settings = parse_settings({"providers": [{"id": "p", "managed": True}]})
    assert settings.providers[0].managed is False


def test_an_entry_of_manage_models() -> None:
    entry = {"id": "My Group", "preset": "groq", "headers": {"X-Ok": "1", "Bad Name": "x"}}
    assert parse_provider(entry, "params.provider", managed=True) == ProviderSettings(
        id="My Group", preset="groq", headers={"X-Ok": "1"}, managed=True
    )
    with pytest.raises(InvalidInput, match=r"params\.provider"):
        parse_provider({"preset": "groq"}, "params.provider", managed=True)


def test_cache_write_and_reasoning_prices():
    pricing = {
        "inputPerMTok": 3,
        "outputPerMTok": 15,
        "cacheWritePerMTok": 3.75,
        "reasoningPerMTok": 20,
    }
    settings = parse_settings({"models": [{"id": "m", "provider": "ollama", "pricing": pricing}]})
    assert settings.models[0].pricing == Pricing(
        input_per_m_tok=3, output_per_m_tok=15, cache_write_per_m_tok=3.75, reasoning_per_m_tok=20
    )
    negative = {**pricing, "cacheWritePerMTok": -1}
    settings = parse_settings({"models": [{"id": "m", "provider": "ollama", "pricing": negative}]})
    assert settings.models[0].pricing is None


def test_tags_given_as_one_string_are_refused_not_split_into_characters(
    log: pytest.LogCaptureFixture,
) -> None:
    attribution = {"user": "ana-lopez", "tags": "team-alpha"}
    settings = parse_settings(
        {"providers": [{"id": "gw", "preset": "litellm", "attribution": attribution}]}
    )
    assert settings.providers[0].attribution is None
    [warning] = warnings_of(log)
    assert "providers[0].attribution" in warning and "tags" in warning and "list" in warning
    assert "ana-lopez" not in warning and "team-alpha" not in warning


def test_attribution_is_off_unless_set(log: pytest.LogCaptureFixture) -> None:
    settings = parse_settings({"providers": [{"id": "gw", "preset": "litellm"}]})
    assert settings.providers[0].attribution is None and settings.workspace_name is None


def test_attribution_keeps_what_can_be_sent_and_never_says_its_values(
    log: pytest.LogCaptureFixture,
) -> None:
    tags = ["team:payments", "kind:${requestKind}", "ws:${workspaceName}", "${workspace}", " "]
    settings = parse_settings(
        {
            "providers": [
                {
                    "id": "gw",
                    "preset": "litellm",
                    "attribution": {"user": "ana-lopez", "tags": tags},
                },
                {"id": "or", "preset": "openrouter", "attribution": {"user": "Zoë Ünal"}},
                {"id": "bad", "preset": "openrouter", "attribution": {"session": "yes"}},
            ],
            "workspaceName": "payroll-service",
        }
    )
    gateway, openrouter, bad = settings.providers
    assert gateway.attribution == AttributionSettings(
        user="ana-lopez", tags=("team:payments", "kind:${requestKind}", "ws:${workspaceName}")
    )
    # A user no header can carry, and an attribution that is not one, are dropped: the entry stays.
    assert openrouter.attribution is None and bad.attribution is None
    assert (bad.id, bad.preset) == ("bad", "openrouter")
    assert settings.workspace_name == "payroll-service"
    warnings = warnings_of(log)
    assert len(warnings) == 4
    assert "${workspace}" in warnings[0] and "tags[4]" in warnings[1]
    assert "providers[1].attribution.user" in warnings[2]
    assert not any(value in " ".join(warnings) for value in ("Zoë", "ana-lopez", "payroll"))


@pytest.mark.parametrize(
    ("value", "expected", "warned"),
    [
        pytest.param(None, None, False, id="absent-never"),
        pytest.param(0, None, False, id="zero-never"),
        pytest.param(-3, None, False, id="negative-never"),
        pytest.param(6, 6, False, id="rounds"),
        pytest.param("6", None, True, id="not-a-number"),
    ],
)
def test_mask_tool_results_after(
    value: Any, expected: int | None, warned: bool, log: pytest.LogCaptureFixture
) -> None:
    options = {} if value is None else {"maskToolResultsAfter": value}
    assert parse_settings(options).mask_tool_results_after == expected
    assert bool(warnings_of(log)) == warned
