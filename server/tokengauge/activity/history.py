"""The usage history as a session keeps and reads it: each request logged, its conversation, the
last request reported, and the sums and costs the status bar and the dashboard show.

Every request leaves a `RequestRecord` in the ledger (`log`); records older than the retention
are forgotten, at most once an hour. A request whose usage the API reported is the latest
(`latest`: the dashboard's); a conversation request is also the last (`last`: the status bar's),
which outlives the server as a ledger document (`LAST_CONVERSATION`), so a new session starts
from it. Copilot's helpers (a chat title, progress messages) are recorded but never the last.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeGuard

import attrs

from tokengauge.activity import dashboard
from tokengauge.activity.conversations import Conversations, request_kind
from tokengauge.activity.cost import (
    CostSource,
    CostSum,
    cache_saving,
    cost_totals,
    request_cost_of,
    start_of_day,
)
from tokengauge.activity.record import Outcome, RequestKind, RequestRecord, read_record
from tokengauge.activity.record import stored as record_field
from tokengauge.calibration.estimates import Calibration
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.counting.request import message_digest
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, Tool, ToolCallPart, Usage
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.windows import Windows
from tokengauge.protocol import ModelCost

HISTORY_IN_REPORT: Final = 100
"""The most recent records the usage report carries."""
HELPER_MAX_MESSAGES: Final = 2
"""A request without tools and with at most this many messages, not Copilot's chat prompt, is one
of Copilot's helpers (a chat title, progress messages): it does not move the status bar."""
DROP_INTERVAL: Final = 3_600.0
"""How often a long session forgets the usage records older than the retention."""
LAST_CONVERSATION: Final = "status/last-conversation"
"""Ledger document name of the last conversation request (`LastConversation`)."""


@attrs.frozen
class LastRequest:
    """A request the API reported usage for, with its estimate: the status bar and the dashboard
    show it."""

    model_id: str
    estimate: RequestEstimate
    input_tokens: int
    output_tokens: int | None
    cost_usd: float | None = None
    cost_source: CostSource = "estimate"
    cached_tokens: int = 0
    """Input tokens the API read from its cache, as it reported them."""
    cache_saved_usd: float | None = None
    """What those saved against fresh input at the model's prices (`cache_saving`)."""


@attrs.frozen
class LastConversation:
    """What the ledger keeps of the last conversation request: enough for the next session's
    first status."""

    model_id: str
    input_tokens: int
    output_tokens: int | None = None

    def to_document(self) -> dict[str, Any]:
        """As a JSON document."""
        return {
            "modelId": self.model_id,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
        }

    @classmethod
    def from_document(cls, document: object) -> LastConversation | None:
        """Back from the ledger; None for anything that is not such a document."""
        if not isinstance(document, Mapping):
            return None
        model_id, used, output = (
            document.get("modelId"),
            document.get("inputTokens"),
            document.get("outputTokens"),
        )
        if not isinstance(model_id, str) or not _is_count(used):
            return None
        return cls(model_id, used, output if _is_count(output) else None)


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class History:
    """The requests of this session and the usage history's sums."""

    def __init__(
        self,
        ledger: Ledger,
        retention_days: int,
        windows: Windows,
        calibration: Calibration,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`windows`, `calibration`: where a request's record reads the model's sizes and ratios
        when it is logged."""
        self.ledger = ledger
        self.retention_days = retention_days
        self.windows = windows
        self.calibration = calibration
        self.clock = clock
        self.conversations = Conversations()
        self.latest: LastRequest | None = None
        """The last request reported, helpers included (the dashboard's)."""
        self.last: LastRequest | None = None
        """The last conversation request reported (the status bar's)."""
        self.conversation: str | None = None
        """The conversation of the last request logged that had one (the status bar's)."""
        self._dropped = 0.0
        self._drop_old_usage()

    def answered(
        self,
        model: ModelSpec,
        estimate: RequestEstimate,
        usage: Usage,
        messages: Sequence[Message],
        tools: Sequence[Tool],
    ) -> None:
        """The API reported `usage` for a request: it is the latest, and the last unless it is
        one of Copilot's helpers."""
        cost, source = request_cost_of(usage, model.pricing)
        used, output = usage.total_input_tokens, usage.output_tokens
        self.latest = LastRequest(
            model.id,
            estimate,
            used,
            output,
            cost,
            source,
            usage.cache_read_tokens,
            cache_saving(usage, model.pricing),
        )
        if request_kind(messages, len(tools), HELPER_MAX_MESSAGES) != "helper":
            self.last = self.latest
            remembered = LastConversation(model.id, used, output)
            self.ledger.set_document(LAST_CONVERSATION, remembered.to_document())

    def earlier(self) -> LastConversation | None:
        """The last conversation request of an earlier session, as the ledger remembers it."""
        return LastConversation.from_document(self.ledger.get_document(LAST_CONVERSATION))

    def ahead(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        held: Sequence[Message] | None,
        *,
        conversation: bool,
    ) -> tuple[RequestKind, str | None]:
        """A request's kind and, if asked, the conversation it will be placed in (`log` given it
        keeps it), told before it is sent (arguments as `log`'s)."""
        kind, held, digests = self._placing(messages, tools, estimate, held)
        return kind, self.conversations.ahead(held, digests, kind) if conversation else None

    def _placing(
        self,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        held: Sequence[Message] | None,
    ) -> tuple[RequestKind, Sequence[Message], list[str]]:
        """The request's kind, and the messages its conversation holds with their digests."""
        kind = request_kind(messages, len(tools), HELPER_MAX_MESSAGES)
        if held is None:
            return kind, messages, list(estimate.features.digests)
        return kind, held, [message_digest(message) for message in held]

    def log(
        self,
        model: ModelSpec,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        estimate: RequestEstimate,
        outcome: Outcome,
        *,
        usage: Usage | None = None,
        error: str | None = None,
        trimmed_tokens: int = 0,
        ladder: Mapping[str, int] | None = None,
        retries: int = 0,
        answer_text: str = "",
        answer_calls: Sequence[ToolCallPart] = (),
        held: Sequence[Message] | None = None,
        cut: bool = False,
        ahead: str | None = None,
    ) -> RequestRecord:
        """Add a request to the usage history: its conversation, sizes, usage, cost and fate,
        with the model's sizes and ratios now (`answer_text`, `answer_calls`: the beginning of
        its answer and its tool calls; `held`: the messages the conversation holds, when
        the recovery ladder sent fewer; `cut`: the server cut the prompt without an error;
        `ahead`: the conversation `ahead` told)."""
        kind, held, digests = self._placing(messages, tools, estimate, held)
        placement = self.conversations.place(
            held, digests, kind, answer_text, answer_calls, ahead=ahead
        )
        sizes = self.windows.sizes(model)
        cost, source = request_cost_of(usage, model.pricing) if usage else (None, "estimate")
        record = RequestRecord(
            time=self.clock(),
            model_id=model.id,
            kind=kind,
            outcome=outcome,
            estimated_tokens=estimate.total,
            window=sizes.window,
            max_input_tokens=sizes.max_input,
            conversation=placement.conversation,
            error=error,
            input_tokens=None if usage is None else usage.total_input_tokens,
            cached_tokens=0 if usage is None else usage.cache_read_tokens,
            cache_write_tokens=0 if usage is None else usage.cache_write_tokens,
            output_tokens=None if usage is None else usage.output_tokens,
            reasoning_tokens=0 if usage is None else usage.reasoning_tokens,
            cost_usd=cost,
            cost_source=source,
            cache_saved_usd=cache_saving(usage, model.pricing) if usage else None,
            trimmed_tokens=trimmed_tokens,
            ladder=dict(ladder or {}),
            tool_docs_saved=estimate.tools_saved,
            retries=retries,
            summarized=placement.summarized,
            ratios=self.calibration.ratios(model),
            cut=cut,
        )
        self.ledger.append_usage(record.to_json())
        self._drop_old_usage()
        if record.conversation is not None:
            self.conversation = record.conversation
        return record

    def _drop_old_usage(self) -> None:
        """Forget the usage records older than the retention (at most once an hour)."""
        now = self.clock()
        if now - self._dropped >= DROP_INTERVAL:
            self._dropped = now
            self.ledger.drop_usage_before(dashboard.kept_since(now, self.retention_days))

    def requests(self) -> list[RequestRecord]:
        """The usage history's requests within the retention, oldest first."""
        since = dashboard.kept_since(self.clock(), self.retention_days)
        records = (read_record(data) for data in self.ledger.recent_usage(since=since))
        return [record for record in records if record is not None and record.time >= since]

    def recent(self) -> list[dict[str, Any]]:
        """The most recent records, as stored, for the usage report."""
        return self.ledger.recent_usage(HISTORY_IN_REPORT)

    def dashboard(self, models: list[dashboard.ModelRow]) -> Callable[[], dashboard.DashboardData]:
        """The dashboard's data, to be made: reading the requests kept and summing them per day,
        model and conversation is left to the caller's thread (it reads only the ledger, which
        any thread may)."""
        now, days = self.clock(), self.retention_days
        return lambda: dashboard.build(self.requests(), models, now, days)

    def tool_docs_saved(self) -> int:
        """The tokens reduced tool documentation saved over the usage history."""
        return round(self._sum("tool_docs_saved") or 0)

    def cost_today(self, model_id: str) -> CostSum | None:
        """The known costs of today's requests to the model; None when none is known."""
        return self._cost_sum(start_of_day(self.clock()), model_id=model_id)

    def conversation_cost(self) -> CostSum | None:
        """The known costs of the last conversation's requests; None when none is known."""
        if self.conversation is None:
            return None
        return self._cost_sum(conversation=self.conversation)

    def costs(self) -> tuple[list[ModelCost], CostSum | None]:
        """Known costs per model over the history's requests and since local midnight, and
        today's over all models (None when no cost is known)."""
        records = [record.to_json() for record in self.requests()]
        totals = cost_totals(records, start_of_day(self.clock()))
        costs = [
            ModelCost(
                model_id,
                total.total_usd,
                total.today_usd,
                total.requests,
                total.reported_usd,
                total.today_reported_usd,
            )
            for model_id, total in totals.items()
        ]
        if not totals:
            return costs, None
        today = sum(total.today_usd for total in totals.values())
        return costs, CostSum(today, sum(total.today_reported_usd for total in totals.values()))

    def _sum(self, field: str, since: float = 0.0, **fields: str) -> float | None:
        """The sum of a numeric field of the usage history's records within the retention (and
        since `since`) whose named fields have the given values; None if none has a number."""
        kept = dashboard.kept_since(self.clock(), self.retention_days)
        where = {record_field(name): value for name, value in fields.items()}
        name = record_field(field)
        return self.ledger.usage_sums([name], since=max(kept, since), fields=where)[name]

    def _cost_sum(self, since: float = 0.0, **fields: str) -> CostSum | None:
        """The known costs of the usage history's records `_sum` would take, with the part of
        them the API reported; None when none is known."""
        total = self._sum("cost_usd", since, **fields)
        if total is None:
            return None
        reported = self._sum("cost_usd", since, cost_source="reported", **fields)
        return CostSum(total, reported)
