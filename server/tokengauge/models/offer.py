"""What VS Code is offered: the providers, the models they serve, and each model's info.

The providers are those of settings and of Manage Models (a provider of settings wins over one of
Manage Models with its id); the models, the catalog merged from settings, what each provider
listed (kept in the ledger, so a new session offers them at once) and the built-in table. A
model's info gives VS Code its sizes in Copilot's units (`declared`), and the true ones in its
tooltip with what lowered them (`windows`).
"""

from __future__ import annotations

import attrs

from tokengauge.formatting import compact
from tokengauge.ledger.store import Ledger
from tokengauge.messages import InvalidInput
from tokengauge.models.catalog import (
    DiscoveredModel,
    ModelCatalog,
    ModelSpec,
    from_documents,
    to_documents,
)
from tokengauge.models.declared import Declarations, Learning
from tokengauge.models.prices import price_text
from tokengauge.models.served import Served
from tokengauge.models.windows import Windows
from tokengauge.protocol import Capabilities, ModelChoices, ModelInfo
from tokengauge.settings import ProviderSettings, ServerSettings

CLIENT_UNITS_SHOWN = 0.02
"""The tooltip says the sizes Copilot is told once they are this far from the true ones."""


def discovery_key(provider_id: str) -> str:
    """Ledger document name of a provider's discovered models."""
    return f"discovery/{provider_id}"


class Offer:
    """The providers and models offered, their windows and their declarations."""

    def __init__(self, settings: ServerSettings, ledger: Ledger, learning: Learning) -> None:
        """`settings`: with every provider's preset resolved."""
        self.settings = settings
        self.ledger = ledger
        self.discovered: dict[str, list[DiscoveredModel]] = {
            provider.id: from_documents(ledger.get_document(discovery_key(provider.id)))
            for provider in settings.providers
            if provider.discover
        }
        self.catalog = ModelCatalog.from_settings(settings, self.discovered)
        self.windows = Windows(ledger, learning.changed)
        self.declarations = Declarations(ledger, self.windows, learning)

    def model(self, model_id: str) -> ModelSpec:
        """The configured model, or `UnknownModelError`."""
        return self.catalog.get(model_id)

    def provider(self, provider_id: str) -> ProviderSettings:
        """The provider with this id (of settings or Manage Models), or `InvalidInput`."""
        for provider in self.settings.providers:
            if provider.id == provider_id:
                return provider
        known = ", ".join(provider.id for provider in self.settings.providers) or "none"
        raise InvalidInput(f"unknown provider {provider_id!r}; configured providers: {known}")

    def of_settings(self, provider_id: str) -> ProviderSettings | None:
        """The provider of settings with this id, if there is one (not one of Manage Models)."""
        known = {provider.id: provider for provider in self.settings.providers}.get(provider_id)
        return known if known is not None and not known.managed else None

    def apply_discovery(self, provider_id: str, models: list[DiscoveredModel]) -> bool:
        """Remember what a provider lists (in the ledger too); True if the models changed."""
        self.ledger.set_document(discovery_key(provider_id), to_documents(models))
        if self.discovered.get(provider_id) == models:
            return False
        self.discovered[provider_id] = models
        self.catalog = ModelCatalog.from_settings(self.settings, self.discovered)
        return True

    def add_provider(self, provider: ProviderSettings) -> None:
        """Add (or replace) a provider of Manage Models, its preset resolved, with what it listed
        before."""
        providers = {known.id: known for known in self.settings.providers}
        providers[provider.id] = provider
        self.settings = attrs.evolve(self.settings, providers=tuple(providers.values()))
        if provider.id not in self.discovered:
            document = self.ledger.get_document(discovery_key(provider.id))
            self.discovered[provider.id] = from_documents(document)
        self.catalog = ModelCatalog.from_settings(self.settings, self.discovered)

    def model_info(
        self, model: ModelSpec, *, local: bool, choices: ModelChoices | None
    ) -> ModelInfo:
        """The model as VS Code should see it: its sizes in Copilot's units (`declared`), the
        true ones in the tooltip (`local`: a local server serves it; `choices`: its options)."""
        sizes = self.windows.sizes(model)
        limit, window = sizes.limit, sizes.window
        declared = self.declarations.get(model)
        shown = f"{compact(window)}-token window"
        served = self.windows.served.get(model.id) if local else None
        if limit is not None and limit < model.context_window:
            listed = compact(model.context_window)
            if limit == self.windows.context_sizes.limit(model):
                shown += f" (picked in the model's options; {listed} listed)"
            elif served is not None and limit == served.window:  # read, or learned from a cut
                shown += f" ({served.source}; the model's own is {listed})"
            else:
                shown += f" (smaller than the {listed} listed: the provider's errors showed it)"
        elif served is not None and not model.window_set:
            shown += f" ({served.source})"
        tooltip = (
            f"{model.name} via {model.provider.id} · {shown}, "
            f"up to {compact(min(model.max_output_tokens, window - 1))} output tokens"
        )
        if served is not None and model.window_set and served.window != window:
            tooltip += served_beside_setting(served, window)
        compaction = self.windows.compaction(model)
        if compaction is not None:
            tooltip += (
                f". Copilot is told of a {compact(compaction)} window, so that it summarizes a "
                f"chat before its requests get dear; a request may still use the whole "
                f"{compact(window)}"
            )
        if abs(declared.scale - 1) > CLIENT_UNITS_SHOWN:
            tooltip += (
                f". Copilot counts with its own tokenizer: it is told of "
                f"{compact(declared.max_input)} input tokens in a {compact(declared.window)} "
                "window of its count"
            )
        return ModelInfo(
            id=model.id,
            name=model.name,
            family=model.family,
            version=model.id,
            provider_id=model.provider.id,
            max_input_tokens=declared.max_input,
            # VS Code's Agent Host takes maxInputTokens + maxOutputTokens as the window.
            max_output_tokens=declared.max_output,
            context_window=window,
            capabilities=Capabilities(
                tool_calling=model.tool_calling, image_input=model.image_input
            ),
            tooltip=tooltip,
            detail=f"Token Gauge · {model.provider.id}",
            pricing=price_text(model.pricing),
            choices=choices,
        )


def served_beside_setting(served: Served, window: int) -> str:
    """The tooltip's word on a server's window that differs from the `contextWindow` set."""
    if served.window < window:
        return (
            f". ⚠ The server has it loaded with only {compact(served.window)} tokens "
            f"({served.source}): longer requests are cut or refused; set contextWindow to "
            f"{served.window} or load the model with more"
        )
    return f". The server has it loaded with {compact(served.window)} tokens ({served.source})"
