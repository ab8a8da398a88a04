"""One request as the usage history keeps it: what was sent, what the API counted, what it cost,
and what became of it.

Every request the server sends or is told about leaves one `RequestRecord` in the ledger's usage
history (`Ledger.append_usage`), answered or not, priced or not: the status bar's daily cost, the
dashboard and `tokengauge report` all read them. Records hold counts, prices, model ids and times,
never message text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Literal

import attrs

from tokengauge.activity.cost import CostSource
from tokengauge.messages import camel, converter, unstructure

Outcome = Literal["answered", "failed", "cancelled"]
RequestKind = Literal["turn", "helper", "summarize"]

SUMMARIZE_MARKS: Final = (
    "Summarize the conversation history so far",  # Copilot's foreground summarization
    "must be compacted now",  # its background compaction
    "Please create a detailed summary of the conversation so far",  # the Agents window's runtime
)
"""Words of Copilot's instruction (in the last user message) when it asks for a summary."""
MAIN_PROMPT_MARK: Final = "AI programming assistant"
"""Words of the system prompt of Copilot's chat and agent requests, not of its helpers' (titles,
progress messages), which are just as short in ask mode: a system prompt and the user's message."""


@attrs.frozen
class RequestRecord:
    """One request, as stored (camelCase JSON) and as the dashboard lists it."""

    time: float
    """When it ended (Unix seconds)."""
    model_id: str
    kind: RequestKind
    outcome: Outcome
    estimated_tokens: int
    """Our estimate of the input sent."""
    window: int
    max_input_tokens: int
    conversation: str | None = None
    error: str | None = None
    """Why it failed or was cancelled, in a few words."""
    input_tokens: int | None = None
    """The API's count of all the input (fresh, cache reads, cache writes); None without usage."""
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int | None = None
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    cost_source: CostSource = "estimate"
    """Where `cost_usd` comes from: the API's own figure, or the price table (older records,
    which do not say, are estimates)."""
    cache_saved_usd: float | None = None
    """What its cache reads saved against fresh input at the model's prices (`cache_saving`);
    None: nothing read from the cache, or no cached-input price known."""
    trimmed_tokens: int = 0
    """Input tokens the recovery ladder removed to make the request fit."""
    ladder: dict[str, int] = attrs.field(factory=dict)
    """Tokens each rung of the ladder removed (`calibration.ladder.RUNGS`; `output`: room for
    the answer given up)."""
    tool_docs_saved: int = 0
    """Tokens the tools' reduced documentation left out (`toolDocs`), by our estimate."""
    retries: int = 0
    summarized: bool = False
    """It is the first request to carry the summary of a summarization."""
    ratios: dict[str, float] = attrs.field(factory=dict)
    """The model's learned ratios once this request was learned from."""
    cut: bool = False
    """The local server cut its prompt without an error: it read `input_tokens` of
    `estimated_tokens` (`Counts.silently_cut`)."""

    @property
    def seq(self) -> int:
        """A key that orders records and stays with one across reads (its time in µs)."""
        return round(self.time * 1_000_000)

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        data: dict[str, Any] = unstructure(self)
        return data


def stored(field: str) -> str:
    """The name a `RequestRecord` field has in the stored JSON (what the ledger selects and sums
    by)."""
    if field not in attrs.fields_dict(RequestRecord):
        raise AttributeError(f"RequestRecord has no field {field!r}")
    return camel(field)


def read_record(data: Mapping[str, object]) -> RequestRecord | None:
    """A stored record, or None for anything else (an older server's records, damage). A sum of
    money that is not finite (an absurd price made one infinite) is read as unknown, and a ratio
    that is not finite is left out: the dashboard's sums stay numbers."""
    try:
        record = converter.structure(dict(data), RequestRecord)
    except Exception:
        return None
    if not (math.isfinite(record.time) and record.window > 0):
        return None
    return attrs.evolve(
        record,
        cost_usd=_finite(record.cost_usd),
        cache_saved_usd=_finite(record.cache_saved_usd),
        ratios={name: value for name, value in record.ratios.items() if math.isfinite(value)},
    )


def _finite(amount: float | None) -> float | None:
    return amount if amount is not None and math.isfinite(amount) else None
