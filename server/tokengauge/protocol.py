"""The custom LSP methods (DESIGN §3) and their payloads: defined once, here.

Payloads are attrs classes in snake_case; `wire.converter` writes and reads them in camelCase.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from tokengauge.counting.scales import Scales
from tokengauge.messages import CountInput, Message, Tool, Usage

MODELS: Final = "tokenGauge/models"
COUNT_TOKENS: Final = "tokenGauge/countTokens"
USAGE: Final = "tokenGauge/usage"
RECORD_USAGE: Final = "tokenGauge/recordUsage"
RECORD_ERROR: Final = "tokenGauge/recordError"
CHAT: Final = "tokenGauge/chat"
CHAT_PART: Final = "tokenGauge/chatPart"
DISCOVER_MODELS: Final = "tokenGauge/discoverModels"
WARM_COUNTS: Final = "tokenGauge/warmCounts"
STATUS: Final = "tokenGauge/status"
MODELS_CHANGED: Final = "tokenGauge/modelsChanged"
CALIBRATION: Final = "tokenGauge/calibration"

REQUESTS: Final = frozenset(
    {MODELS, COUNT_TOKENS, USAGE, RECORD_USAGE, RECORD_ERROR, CHAT, DISCOVER_MODELS, WARM_COUNTS}
)


@attrs.frozen
class Capabilities:
    """What VS Code may send to the model."""

    tool_calling: bool
    image_input: bool


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
    is_byok: bool = True
    """The user's own key and API (VS Code 1.139 reads it from the model information)."""


@attrs.frozen
class CountTokensParams:
    """`tokenGauge/countTokens` request."""

    model_id: str
    inputs: list[CountInput]


@attrs.frozen
class CountTokensResult:
    """Counts in input order; `raw` are the unscaled tiktoken counts, `cjk` their CJK share.

    For a string of text, `tokens = ceil((raw − cjk) × scales.text + cjk × scales.cjk)`, and for a
    tool-schema string `ceil(raw × scales.tools)`, so the extension may keep raw string counts
    across epochs and rescale them; message counts come from API actuals and calibration, and
    must be re-asked when the epoch changes.
    """

    tokens: list[int]
    raw: list[int]
    cjk: list[int]
    epoch: int
    scales: Scales


@attrs.frozen
class RecordUsageParams:
    """`tokenGauge/recordUsage`: the usage the API reported for a request."""

    model_id: str
    messages: list[Message]
    usage: Usage
    tools: list[Tool] = attrs.field(factory=list)


@attrs.frozen
class RecordErrorParams:
    """`tokenGauge/recordError`: an error body the API returned for a request."""

    model_id: str
    messages: list[Message]
    body: str
    status: int | None = None
    tools: list[Tool] = attrs.field(factory=list)


@attrs.frozen
class Breakdown:
    """A whole request's count by category."""

    system: int
    tools: int
    fixed: int
    messages: list[int]
    sources: list[str]
    total: int
    raw_total: int
    ratios: dict[str, float]
    max_input_tokens: int


@attrs.frozen
class RecordResult:
    """What calibration made of a usage report or an error."""

    epoch: int
    estimate: Breakdown
    error: dict[str, Any] | None = None
    learned_limit: int | None = None


@attrs.frozen(repr=False)
class Credentials:
    """Secrets for one request; held in memory only, never logged or stored."""

    api_key: str | None = None

    def __repr__(self) -> str:
        return "Credentials(api_key=[redacted])"


@attrs.frozen
class ChatParams:
    """`tokenGauge/chat`: one request to stream."""

    request_id: str
    model_id: str
    messages: list[Message]
    tools: list[Tool] = attrs.field(factory=list)
    tool_mode: Any = None
    model_options: dict[str, Any] | None = None
    credentials: Credentials | None = None


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


@attrs.frozen
class DiscoverModelsResult:
    """`tokenGauge/discoverModels`' answer: a report per provider with `discover` on."""

    providers: list[ProviderDiscovery]


@attrs.frozen
class WarmCountsParams:
    """`tokenGauge/warmCounts`: the models whose memo the extension fills at activation."""

    model_ids: list[str]


@attrs.frozen
class WarmEntry:
    """One remembered string: its SHA-256 (UTF-8), raw count, and count under today's scale."""

    model_id: str
    sha256: str
    raw: int
    tokens: int


@attrs.frozen
class ModelScales:
    """What a model's raw string counts are multiplied by, now; also the
    `tokenGauge/calibration` notification, with the epoch, whenever they may have changed."""

    model_id: str
    scales: Scales
    epoch: int | None = None


@attrs.frozen
class WarmCountsResult:
    """The most asked strings per model, the epoch, and each model's scales."""

    entries: list[WarmEntry]
    epoch: int
    scales: list[ModelScales]
