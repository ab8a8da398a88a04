"""The APIs tokengauge knows by name: a provider entry's `preset` and what it stands for.

A preset gives an entry its dialect and base URL (the entry's own win), and says how the API
takes its key (`Authorization: Bearer`, Anthropic's `x-api-key`, Azure's `api-key`), whether it
needs one, which cheap request checks a key (the model list; OpenRouter's `GET /key`, since its
model list needs no key) and how its models are sized (the list alone, Ollama's `/api/show`, a
LiteLLM proxy's `/model/info`), and, for a gateway that meters spend, where it reads whom and
what a request is for (`Gateway`). An entry without a preset is recognised as before: Azure by
its host, Ollama by its id or port, and OpenRouter by its host.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Final, Literal
from urllib.parse import urlsplit

import attrs

from tokengauge.messages import InvalidInput
from tokengauge.settings import DialectName, ProviderSettings

log = logging.getLogger(__name__)

Auth = Literal["bearer", "x-api-key", "api-key"]
KeyCheck = Literal["models", "key"]
Sizing = Literal["plain", "ollama", "litellm", "lmstudio", "llamacpp", "vllm"]
OLLAMA_PORT: Final = 11434


@attrs.frozen
class Gateway:
    """Where a gateway reads the identifiers it attributes spend by (`upstream.attribution`);
    None: it reads none of that kind."""

    user_header: str | None = None
    """The header that names whom the spend is booked to."""
    user_field: str | None = None
    """The body field that does."""
    session_header: str | None = None
    """The header that groups a conversation's requests."""
    session_field: str | None = None
    """The body field that does."""
    tags_object: Mapping[DialectName, str] = attrs.field(factory=dict, hash=False)
    """The body object whose `tags` list it reads, by dialect (none: it takes no tags)."""


LITELLM: Final = Gateway(
    user_header="x-litellm-customer-id",
    session_header="x-litellm-session-id",
    # Its Messages and Responses routes read `litellm_metadata`: their APIs own `metadata`.
    tags_object={
        "openai": "metadata",
        "responses": "litellm_metadata",
        "anthropic": "litellm_metadata",
    },
)
"""A LiteLLM proxy: the customer's header, its session header, `metadata.tags`."""
OPENROUTER: Final = Gateway(user_field="user", session_field="session_id")
"""OpenRouter: the body's `user` and `session_id` (which also keeps a conversation on the
provider that holds its prompt cache)."""


@attrs.frozen
class Preset:
    """One API by name."""

    id: str
    label: str
    """The name a person knows it by."""
    dialect: DialectName
    base_url: str | None
    """None: the entry must give its own (each Azure resource and other server has its own)."""
    auth: Auth
    """How the key travels: `Authorization: Bearer`, `x-api-key` or `api-key`."""
    needs_key: bool
    key_check: KeyCheck = "models"
    """The cheap request that checks a key: `GET {base}/models`, or `GET {base}/key`."""
    sizing: Sizing = "plain"
    """Where model windows come from besides the list: nowhere, `/api/show`, `/model/info`; a
    local server's own reading of what it has loaded (`upstream.served`)."""
    gateway: Gateway | None = None
    """Where it reads whom and what a request is for; None: nowhere."""
    cache_key: bool = False
    """It takes `prompt_cache_key`, which sends requests that share one to the machine holding
    their cached prefix (OpenAI's prompt caching guide)."""
    cache_marked: tuple[str, ...] = ()
    """The beginnings of the model ids it caches only where a request marks `cache_control`."""


PRESETS: Final = {
    preset.id: preset
    for preset in (
        Preset(
            "openai",
            "OpenAI",
            "openai",
            "https://api.openai.com/v1",
            "bearer",
            True,
            cache_key=True,
        ),
        Preset(
            "openai-responses",
            "OpenAI, Responses API",
            "responses",
            "https://api.openai.com/v1",
            "bearer",
            True,
            cache_key=True,
        ),
        Preset(
            "anthropic", "Anthropic", "anthropic", "https://api.anthropic.com", "x-api-key", True
        ),
        Preset(
            "openrouter",
            "OpenRouter",
            "openai",
            "https://openrouter.ai/api/v1",
            "bearer",
            True,
            key_check="key",
            gateway=OPENROUTER,
            cache_marked=("anthropic/",),
        ),
        Preset("azure-openai", "Azure OpenAI", "openai", None, "api-key", True),
        Preset("deepseek", "DeepSeek", "openai", "https://api.deepseek.com/v1", "bearer", True),
        Preset(
            "gemini",
            "Google Gemini (OpenAI-compatible API)",
            "openai",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            "bearer",
            True,
        ),
        Preset("moonshot", "Moonshot Kimi", "openai", "https://api.moonshot.ai/v1", "bearer", True),
        Preset("zai", "Z.ai GLM", "openai", "https://api.z.ai/api/paas/v4", "bearer", True),
        Preset("minimax", "MiniMax", "openai", "https://api.minimax.io/v1", "bearer", True),
        Preset("groq", "Groq", "openai", "https://api.groq.com/openai/v1", "bearer", True),
        Preset(
            "ollama",
            "Ollama",
            "openai",
            "http://localhost:11434/v1",
            "bearer",
            False,
            sizing="ollama",
        ),
        Preset(
            "lmstudio",
            "LM Studio",
            "openai",
            "http://localhost:1234/v1",
            "bearer",
            False,
            sizing="lmstudio",
        ),
        Preset(
            "vllm", "vLLM", "openai", "http://localhost:8000/v1", "bearer", False, sizing="vllm"
        ),
        Preset(
            "llamacpp",
            "llama.cpp",
            "openai",
            "http://localhost:8080/v1",
            "bearer",
            False,
            sizing="llamacpp",
        ),
        Preset(
            "litellm",
            "LiteLLM proxy",
            "openai",
            "http://localhost:4000/v1",
            "bearer",
            True,
            sizing="litellm",
            gateway=LITELLM,
        ),
        Preset("openai-compatible", "Other OpenAI-compatible API", "openai", None, "bearer", False),
    )
}


def resolve(provider: ProviderSettings) -> ProviderSettings:
    """The entry with its preset's dialect and base URL where it gives none (dialect `openai`
    without a preset); `InvalidInput` for an unknown preset or a base URL nobody gave."""
    if provider.preset is None:
        return attrs.evolve(provider, dialect=provider.dialect or "openai")
    preset = PRESETS.get(provider.preset)
    if preset is None:
        known = ", ".join(PRESETS)
        raise InvalidInput(
            f"provider {provider.id}: unknown preset {provider.preset!r} (known: {known})"
        )
    base_url = provider.base_url or preset.base_url
    if not base_url:
        raise InvalidInput(
            f"provider {provider.id}: preset {preset.id!r} ({preset.label}) needs a baseUrl"
        )
    return attrs.evolve(provider, dialect=provider.dialect or preset.dialect, base_url=base_url)


def resolve_all(providers: Iterable[ProviderSettings]) -> tuple[ProviderSettings, ...]:
    """Every entry resolved; one that cannot be is logged and left out, and what an entry's
    `attribution` sets that its API does not read is said."""
    resolved = []
    for provider in providers:
        try:
            resolved.append(resolve(provider))
        except InvalidInput as exc:
            log.warning("%s: entry ignored", exc)
            continue
        unread = unread_attribution(resolved[-1])
        if unread:
            log.warning(
                "provider %s: its API reads no attribution %s (a LiteLLM proxy reads user, tags "
                "and session; OpenRouter user and session): not sent",
                provider.id,
                " or ".join(unread),
            )
    return tuple(resolved)


def gateway_of(provider: ProviderSettings) -> Gateway | None:
    """Where the provider's API reads attribution, if it does."""
    preset = preset_of(provider)
    return preset.gateway if preset is not None else None


def unread_attribution(provider: ProviderSettings) -> list[str]:
    """What the provider's `attribution` sets (`user`, `tags`, `session`) that its API does
    not read."""
    settings, gateway = provider.attribution, gateway_of(provider)
    if settings is None:
        return []
    given = {
        "user": settings.user is not None,
        "tags": bool(settings.tags),
        "session": settings.session,
    }
    read = {
        "user": gateway is not None and bool(gateway.user_header or gateway.user_field),
        "tags": gateway is not None and bool(gateway.tags_object),
        "session": gateway is not None and bool(gateway.session_header or gateway.session_field),
    }
    return [name for name, wanted in given.items() if wanted and not read[name]]


def preset_of(provider: ProviderSettings) -> Preset | None:
    """The entry's preset, or the one its address or id shows (Azure and OpenRouter by host,
    Ollama by id or port), or None."""
    if provider.preset is not None:
        return PRESETS.get(provider.preset)
    try:
        url = urlsplit(provider.base_url)
        host, port = url.hostname or "", url.port
    except ValueError:  # a bad port: the requests will say so
        host, port = "", None
    if host.endswith(".openai.azure.com"):
        return PRESETS["azure-openai"]
    if host == "openrouter.ai":
        return PRESETS["openrouter"]
    if provider.id.lower().startswith("ollama") or port == OLLAMA_PORT:
        return PRESETS["ollama"]
    return None


def auth_of(provider: ProviderSettings) -> Auth:
    """How the provider takes its key."""
    preset = preset_of(provider)
    if preset is not None:
        return preset.auth
    return "x-api-key" if provider.dialect == "anthropic" else "bearer"


def caches_where_marked(provider: ProviderSettings, model_id: str) -> bool:
    """Whether the model's API caches only where a request marks `cache_control` (the
    provider's preset says so by the model id's beginning)."""
    preset = preset_of(provider)
    return preset is not None and model_id.startswith(preset.cache_marked)
