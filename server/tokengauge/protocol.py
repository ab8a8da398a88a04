"""The custom LSP methods (ARCHITECTURE §3) and their payloads: defined once, here.

Payloads are attrs classes in snake_case; `messages.converter` writes and reads them in
camelCase (a field with `OMIT_WHEN_NONE` metadata is left out while it is None).
"""

from __future__ import annotations

from typing import Any, Final, Literal, Union

import attrs
from cattrs.strategies import configure_tagged_union

from tokengauge.counting.scales import Scales
from tokengauge.messages import (
    OMIT_WHEN_NONE,
    PART_TAGS,
    CountInput,
    Message,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    Usage,
    converter,
)

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
ADD_PROVIDER: Final = "tokenGauge/addProvider"
CHECK_KEY: Final = "tokenGauge/checkKey"
DASHBOARD: Final = "tokenGauge/dashboard"
ACTIVITY: Final = "tokenGauge/activity"
"""Notification: a request was added to the usage history (the dashboard reads it again)."""
NOTICE: Final = "tokenGauge/notice"
"""Notification: something a person must know and can fix (`Notice`), shown once."""

REQUESTS: Final = frozenset(
    {
        MODELS,
        COUNT_TOKENS,
        USAGE,
        RECORD_USAGE,
        RECORD_ERROR,
        CHAT,
        DISCOVER_MODELS,
        WARM_COUNTS,
        ADD_PROVIDER,
        CHECK_KEY,
        DASHBOARD,
    }
)


@attrs.frozen
class Capabilities:
    """What VS Code may send to the model."""

    tool_calling: bool
    image_input: bool


@attrs.frozen
class Choice:
    """The values a person may pick for one model option, and the one used when none is."""

    values: list[Any]
    default: Any


@attrs.frozen
class ModelChoices:
    """The options VS Code's model picker may offer for a model (`upstream.choices`)."""

    reasoning_effort: Choice | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    thinking_budget: Choice | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    context_size: Choice | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    tool_docs: Choice | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)


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
    """What the model picker may offer (the request's `contextSize`, `reasoningEffort`,
    `thinkingBudget` then carry the pick); None when nothing."""


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
class ErrorReport:
    """How an API error was classified (`rate_limit`, `auth`, `output_limit`, `other`)."""

    kind: str
    message: str


@attrs.frozen
class OverflowReport:
    """A context overflow and the numbers its error gave, where it gave them."""

    kind: str
    input_tokens: int | None
    limit_tokens: int | None
    output_tokens: int | None
    excess_tokens: int | None
    message: str


@attrs.frozen
class RecordResult:
    """What calibration made of a usage report or an error."""

    epoch: int
    estimate: Breakdown
    error: ErrorReport | OverflowReport | None = None
    learned_limit: int | None = None
    models_changed: bool = False
    """VS Code must ask for the models again: a limit was learned, or what it is told of the
    model's window moved."""
    client_prompt: int | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The request's input in the units the model's window is declared in (what the usage part
    tells Copilot)."""


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
    key_rejected: bool = False
    """The provider turned the key down or asked for one (401/403)."""


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


Severity = Literal["info", "warning", "error"]


@attrs.frozen
class Notice:
    """A warning for the person, with the setting that fixes it (if one of ours does)."""

    message: str
    setting: str | None = None


@attrs.frozen
class Status:
    """What the extension shows in its status-bar item."""

    text: str
    tooltip: str
    severity: Severity


@attrs.frozen
class TrimReport:
    """What the send path's recovery ladder did to a request to make it fit."""

    tool_results: int
    messages: int
    """Earlier messages left out."""
    tokens: int
    """Input tokens removed, every rung together."""
    tool_docs: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The tools' reduced form sent, if the ladder reduced them."""
    output_floor: int | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The smaller room kept for the answer, if the ladder lowered it."""
    removed: dict[str, int] = attrs.field(factory=dict)
    """Tokens each rung removed (`calibration.ladder.RUNGS`)."""


@attrs.frozen
class UsagePart:
    """A response's last `tokenGauge/chatPart`: the usage the API reported (our estimate where it
    reported none: `estimated`), the same in OpenAI's form (`data`, what Copilot reads), and what
    was trimmed, if anything."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    total_input_tokens: int
    estimated: bool
    data: dict[str, Any]
    trimmed: TrimReport | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)


@attrs.frozen
class StatefulMarkerPart:
    """State the next request of the conversation brings back: the extension reports it as a
    `stateful_marker` data part (`modelId\\value`), the one kind both of Copilot's runtimes keep
    in their history."""

    value: str


_STREAM_TAGS: dict[type, str] = {**PART_TAGS, StatefulMarkerPart: "statefulMarker"}
ChatPart = Union[TextPart, ThinkingPart, ToolCallPart, StatefulMarkerPart, UsagePart]  # noqa: UP007
configure_tagged_union(
    ChatPart,
    converter,
    tag_name="type",
    tag_generator=lambda cls: _STREAM_TAGS.get(cls, "usage"),
)


@attrs.frozen
class ChatPartParams:
    """`tokenGauge/chatPart`: one piece of a streamed response, as soon as it is known."""

    request_id: str
    part: ChatPart


@attrs.frozen
class ChatResult:
    """`tokenGauge/chat`'s answer once the response is complete."""

    usage: dict[str, Any]
    """OpenAI's usage form (the extension reads nothing of it: the parts carry the response)."""
    finish_reason: str
    trimmed: TrimReport | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)


@attrs.frozen
class LatestRequest:
    """The last conversation request calibrated: its usage and our breakdown of it."""

    model_id: str
    input_tokens: int
    output_tokens: int | None
    estimate: Breakdown


@attrs.frozen
class ModelCalibration:
    """What calibration holds for one model now."""

    id: str
    ratios: dict[str, float]
    scales: Scales
    copilot_ratio: float
    learned_limit: int | None
    max_input_tokens: int


@attrs.frozen
class ModelCost:
    """The known costs of one model's requests in the ledger's usage history."""

    model_id: str
    total_usd: float
    today_usd: float
    requests: int
    """Requests with a known cost (those without one are not counted in either sum)."""
    reported_usd: float = 0.0
    """The part of `total_usd` the API reported (the rest: the price table's estimate)."""
    today_reported_usd: float = 0.0
    """The part of `today_usd` the API reported."""


@attrs.frozen
class UsageResult:
    """`tokenGauge/usage`: the latest breakdown, per-model calibration and recent history."""

    epoch: int
    pid: int
    persistent: bool
    latest: LatestRequest | None
    status: Status | None
    models: list[ModelCalibration]
    history: list[dict[str, Any]]
    """The ledger's latest request records (`activity.record.RequestRecord`), as stored."""
    costs: list[ModelCost] = attrs.field(factory=list)
    """Per model with a known cost, over the ledger's whole usage history."""
    today_usd: float | None = None
    """The known costs of today's requests (local time), all models; None: none known."""
    today_reported_usd: float | None = None
    """The part of `today_usd` the API reported (the rest: the price table's estimate)."""


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
