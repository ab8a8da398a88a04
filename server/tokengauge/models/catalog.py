"""The models tokengauge offers: configured models merged over the built-in table.

A configured field wins; a missing one comes from what the provider's API said (discovery), then
from `models.known` (prices: from `models.prices`; without any, a model has no cost); a model
that is in none of them gets conservative defaults (and a logged warning), since a too-large
window would overflow. Discovered models that are not configured are offered too when their
provider has `discover` on; what discovery found is kept in the ledger as documents
(`to_documents`, `from_documents`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from tokengauge.counting.images import ImageRule
from tokengauge.counting.text import encoding_for_family
from tokengauge.models.known import KnownModel, lookup_known_model
from tokengauge.models.names import display_name
from tokengauge.models.prices import known_pricing
from tokengauge.settings import (
    MIN_WINDOW,
    ModelSettings,
    Pricing,
    ProviderSettings,
    ReasoningReplay,
    ServerSettings,
    ToolDocs,
    is_price,
    token_count,
)

log = logging.getLogger(__name__)

FALLBACK_CONTEXT_WINDOW: Final = 32_768
FALLBACK_MAX_OUTPUT_TOKENS: Final = 4_096
ASSUMPTIONS_WARNED: Final = 10
"""Models whose sizes were assumed, warned about one by one when the catalog is built; the rest
are counted in one warning (a listing of 100,000 unknown models sent as many)."""


@attrs.frozen
class DiscoveredModel:
    """A model the provider lists, with whatever sizes and prices it told us."""

    id: str
    name: str | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    pricing: Pricing | None = None


def to_documents(models: Iterable[DiscoveredModel]) -> list[dict[str, Any]]:
    """Discovered models as JSON for the ledger (`pricing` left out when there is none)."""
    return [
        attrs.asdict(model, filter=lambda field, value: field.name != "pricing" or value)
        for model in models
    ]


def from_documents(documents: Any) -> list[DiscoveredModel]:
    """Discovered models back from the ledger (bad entries dropped; sizes and prices beyond
    `settings`' bounds forgotten, as discovery now leaves them out; documents from before prices
    were kept have none)."""
    if not isinstance(documents, list):
        return []
    models = []
    for document in documents:
        try:
            model = DiscoveredModel(**dict(document))
        except (TypeError, ValueError):
            continue
        if not isinstance(model.id, str):
            continue
        models.append(
            attrs.evolve(
                model,
                name=model.name if isinstance(model.name, str) else None,
                context_window=token_count(model.context_window, MIN_WINDOW),
                max_output_tokens=token_count(model.max_output_tokens, 1),
                pricing=_pricing_of(model.pricing),
            )
        )
    return models


def _pricing_of(document: Any) -> Pricing | None:
    if not isinstance(document, dict):
        return None
    try:
        pricing = Pricing(**document)
    except TypeError:
        return None
    prices = attrs.astuple(pricing)
    return pricing if all(price is None or is_price(price) for price in prices) else None


class UnknownModelError(LookupError):
    """A request named a model id that is not configured."""

    def __init__(self, model_id: str, known: Iterable[str]) -> None:
        names = ", ".join(sorted(known)) or "none"
        super().__init__(f"unknown model {model_id!r}; configured models: {names}")
        self.model_id = model_id


@attrs.frozen
class ModelSpec:
    """Everything tokengauge knows about one model."""

    id: str
    name: str
    family: str
    provider: ProviderSettings
    context_window: int
    max_output_tokens: int
    reserved_output_tokens: int | None = None
    compact_at: int | None = None
    """The window Copilot is told of instead (settings' `compactAt`; `Windows.compaction`)."""
    image_input: bool = True
    tool_calling: bool = True
    pricing: Pricing | None = None
    known: bool = True
    options: dict[str, Any] = attrs.field(factory=dict, hash=False)
    """Model options of settings: every request's, unless it sets them."""
    tool_docs: ToolDocs = "full"
    """How much of each tool's documentation requests carry."""
    window_set: bool = False
    """The person set `contextWindow`: it wins over what a server says it has loaded."""
    num_ctx: int | None = None
    """Ollama: the window to ask it to load the model with (settings' `numCtx`)."""
    reasoning: str | None = None
    """Whose rule its reasoning follows over Chat Completions (the built-in table's kind)."""
    reasoning_replay: ReasoningReplay = "auto"
    """Whether its reasoning goes back to a Chat Completions server (settings'
    `reasoningReplay`)."""

    @property
    def encoding(self) -> str:
        """The tiktoken encoding that counts for this model."""
        return encoding_for_family(self.family)

    @property
    def image_rule(self) -> ImageRule:
        """Which provider's rule prices images for this model."""
        if self.provider.dialect == "anthropic" or self.family.startswith("claude"):
            return ImageRule.ANTHROPIC
        if self.family.startswith("gemini"):
            return ImageRule.GEMINI
        return ImageRule.OPENAI


def resolve_model(
    config: ModelSettings,
    provider: ProviderSettings,
    discovered: DiscoveredModel | None = None,
    assumed: list[str] | None = None,
) -> ModelSpec:
    """Merge one configured model over what discovery found and its built-in entry. The name
    is the configured one, else the provider's, else the one people know it by (`display_name`);
    images only where the built-in table says the model takes them. Sizes assumed for a model
    nobody described are warned about, or said in `assumed` if given."""
    known: KnownModel | None = lookup_known_model(config.id)
    window_set = config.context_window is not None
    if discovered is not None:
        config = attrs.evolve(
            config,
            name=config.name or discovered.name,
            context_window=config.context_window or discovered.context_window,
            max_output_tokens=config.max_output_tokens or discovered.max_output_tokens,
        )
    if known is None:
        guessed = [
            f"{name} {value:,}"
            for name, given, value in (
                ("contextWindow", config.context_window, FALLBACK_CONTEXT_WINDOW),
                ("maxOutputTokens", config.max_output_tokens, FALLBACK_MAX_OUTPUT_TOKENS),
            )
            if given is None
        ]
        if guessed:
            said = f"model {config.id} is not in the built-in table and its provider did not say: "
            said += f"assuming {' and '.join(guessed)} (configure it to be exact)"
            if assumed is None:
                log.warning("%s", said)
            else:
                assumed.append(said)
    window = config.context_window or (known.context_window if known else FALLBACK_CONTEXT_WINDOW)
    output = config.max_output_tokens or (
        known.max_output_tokens if known else FALLBACK_MAX_OUTPUT_TOKENS
    )
    return ModelSpec(
        id=config.id,
        name=config.name or display_name(config.id),
        family=config.family or (known.family if known else config.id),
        provider=provider,
        context_window=window,
        max_output_tokens=min(output, window - 1),
        reserved_output_tokens=config.reserved_output_tokens,
        compact_at=config.compact_at,
        image_input=known.image_input if known else False,
        tool_calling=known.tool_calling if known else True,
        pricing=config.pricing
        or (discovered.pricing if discovered is not None else None)
        or known_pricing(config.id),
        known=known is not None,
        options=config.options,
        tool_docs=config.tool_docs,
        window_set=window_set,
        num_ctx=config.num_ctx,
        reasoning=known.reasoning if known else None,
        reasoning_replay=config.reasoning_replay,
    )


class ModelCatalog:
    """The configured models by id."""

    def __init__(self, models: Iterable[ModelSpec]) -> None:
        self._models = {model.id: model for model in models}

    @classmethod
    def from_settings(
        cls,
        settings: ServerSettings,
        discovered: Mapping[str, Sequence[DiscoveredModel]] | None = None,
    ) -> ModelCatalog:
        """Configured models, then discovered ones; models of unknown providers are skipped."""
        providers = {provider.id: provider for provider in settings.providers}
        found = {
            (provider_id, model.id): model
            for provider_id, models in (discovered or {}).items()
            for model in models
        }
        configs = list(settings.models)
        configured = {config.id for config in configs}
        for (provider_id, model_id), _ in found.items():
            provider = providers.get(provider_id)
            if provider is not None and provider.discover and model_id not in configured:
                configs.append(ModelSettings(id=model_id, provider=provider_id))
                configured.add(model_id)
        specs = []
        assumed: list[str] = []
        for config in configs:
            provider = providers.get(config.provider)
            if provider is None:
                log.warning(
                    "model %s names provider %r, which is not configured: skipped",
                    config.id,
                    config.provider,
                )
                continue
            discovered_model = found.get((provider.id, config.id))
            specs.append(resolve_model(config, provider, discovered_model, assumed))
        for said in assumed[:ASSUMPTIONS_WARNED]:
            log.warning("%s", said)
        if len(assumed) > ASSUMPTIONS_WARNED:
            log.warning(
                "%s more models are not in the built-in table and their providers did not say "
                "their sizes: assumed as above",
                f"{len(assumed) - ASSUMPTIONS_WARNED:,}",
            )
        return cls(specs)

    def get(self, model_id: str) -> ModelSpec:
        """The model with this id, or `UnknownModelError`."""
        try:
            return self._models[model_id]
        except KeyError:
            raise UnknownModelError(model_id, self._models) from None

    def __iter__(self) -> Iterator[ModelSpec]:
        return iter(self._models.values())

    def __len__(self) -> int:
        return len(self._models)
