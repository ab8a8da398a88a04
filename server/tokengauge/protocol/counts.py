"""The payloads of counting and calibration (`tokenGauge/countTokens`, `recordUsage`,
`recordError`, `warmCounts`, `calibration`), of the usage report (`tokenGauge/usage`) and of what
the person is shown (`tokenGauge/status`, `notice`)."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from tokengauge.counting.scales import Scales
from tokengauge.messages import OMIT_WHEN_NONE, CountInput, Message, Tool, Usage


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
    """The most asked strings per model, the epoch, each model's scales, and the models whose
    tools' strings the extension counts ahead of the first turn."""

    entries: list[WarmEntry]
    epoch: int
    scales: list[ModelScales]
    ahead: list[str]


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
