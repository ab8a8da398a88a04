"""The payloads of the models VS Code is offered and of the providers that serve them
(`tokenGauge/models`, `discoverModels`, `addProvider`, `checkKey`), and the credentials a request
carries."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import attrs

from tokengauge.messages import OMIT_WHEN_NONE


@attrs.frozen
class Capabilities:
    """What VS Code may send to the model."""

    tool_calling: bool
    image_input: bool


T_co = TypeVar("T_co", covariant=True)


@attrs.frozen
class Choice(Generic[T_co]):
    """The values a person may pick for one model option, and the one used when none is."""

    values: list[T_co]
    default: T_co


@attrs.frozen
class ModelChoices:
    """The options VS Code's model picker may offer for a model (`upstream.choices`)."""

    reasoning_effort: Choice[str] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    thinking_budget: Choice[int] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    context_size: Choice[int] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    compact_at: Choice[int] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    tool_docs: Choice[str] | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)


@attrs.frozen
class ModelInfo:
    """One entry of `tokenGauge/models`, ready for `LanguageModelChatInformation`."""

    id: str
    name: str
    family: str
    version: str
    provider_id: str
    max_input_tokens: int
    max_output_tokens: int
    context_window: int
    capabilities: Capabilities
    tooltip: str
    detail: str
    pricing: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The model's prices in words (VS Code's model picker shows it), when known."""
    is_byok: bool = True
    """The user's own key and API (VS Code 1.139 reads it from the model information)."""
    choices: ModelChoices | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """What the model picker may offer (the request's `contextSize`, `compactAt`,
    `reasoningEffort`, `thinkingBudget`, `toolDocs` then carry the pick); None when nothing."""


@attrs.frozen(repr=False)
class Credentials:
    """Secrets for one request; held in memory only, never logged or stored."""

    api_key: str | None = None

    def __repr__(self) -> str:
        return "Credentials(api_key=[redacted])"


@attrs.frozen
class DiscoverModelsParams:
    """`tokenGauge/discoverModels`: the keys of the providers to ask, by provider id."""

    credentials: dict[str, Credentials] = attrs.field(factory=dict)


@attrs.frozen
class ProviderDiscovery:
    """One provider's answer to discovery: how many models it lists, or why it could not say."""

    provider_id: str
    models: int | None
    error: str | None
    key_rejected: bool = False
    """The provider turned the key down or asked for one (401/403)."""


@attrs.frozen
class DiscoverModelsResult:
    """`tokenGauge/discoverModels`' answer: a report per provider with `discover` on."""

    providers: list[ProviderDiscovery]


@attrs.frozen(repr=False)
class AddProviderParams:
    """`tokenGauge/addProvider`: a provider configured in VS Code's Manage Models (its id is the
    group's name), as a `tokenGauge.providers` entry, and its key (held in memory only)."""

    provider: dict[str, Any]
    api_key: str | None = None

    def __repr__(self) -> str:
        return f"AddProviderParams(provider={self.provider!r}, api_key=[redacted])"


@attrs.frozen
class AddProviderResult:
    """The models the added provider serves, and why listing them failed, if it did."""

    provider_id: str
    models: list[ModelInfo]
    error: str | None


@attrs.frozen(repr=False)
class CheckKeyParams:
    """`tokenGauge/checkKey`: a key to try against a provider with one cheap request."""

    provider_id: str
    api_key: str

    def __repr__(self) -> str:
        return f"CheckKeyParams(provider_id={self.provider_id!r}, api_key=[redacted])"


@attrs.frozen
class CheckKeyResult:
    """True: accepted; False: rejected (401/403); None: could not tell. The message says why."""

    accepted: bool | None
    message: str
