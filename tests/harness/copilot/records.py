"""What the simulated Copilot talks to (a counter, a sender) and what a run records.

`Counter` stands for `provideTokenCount` (one count per string or message), `Sender` for a chat
request through the provider; `RunLog` keeps every request sent (with what Copilot counted and the
truth the upstream reported) and every summarization, for the report, the plot and the check
against the real client.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import attrs

from tokengauge.messages import Message, Tool

RequestKind = Literal["main", "summary", "compaction", "helper"]
SummaryKind = Literal["foreground", "background"]


class Counter(Protocol):
    """What Copilot asks `provideTokenCount` for: one count per string or message."""

    async def count(self, inputs: Sequence[str | Message]) -> list[int]:
        """Counts in input order."""
        ...


@attrs.frozen
class Outcome:
    """What came of one request: its true prompt size when known, and whether it overflowed."""

    ok: bool
    overflow: bool = False
    true_tokens: int | None = None
    detail: str = ""
    resized: bool = False
    """The first try was refused for input + max_tokens > window; a smaller max_tokens fit."""
    trimmed: int = 0
    """Tokens the server's safety net cut from the request before sending it."""
    reported: int | None = None
    """`prompt_tokens` of the response's usage part, what the client reads (the provider's
    declared units); the true size where none was reported."""

    @property
    def usage_prompt(self) -> int | None:
        """What the client reads of the input from the usage part."""
        return self.reported if self.reported is not None else self.true_tokens


class Sender(Protocol):
    """Sends one chat request to the upstream the way a variant does."""

    async def send(
        self, messages: Sequence[Message], tools: Sequence[Tool], estimate: int
    ) -> Outcome:
        """`estimate` is Copilot's own count of the request (render + tools)."""
        ...


@attrs.frozen
class RequestRecord:
    """One request sent: where in the conversation, what Copilot counted, and the truth."""

    turn: int
    seq: int
    kind: RequestKind
    message_estimate: int
    """Main requests: Σ(3 + the provider's answer) over the messages (Copilot asks after it
    renders); 0 for the others."""
    tool_estimate: int
    """`toolTokens`, from the provider's string answers (0 when no tools were sent)."""
    render: int
    """Copilot's own (o200k_base) count of the messages: what its budget checks."""
    outcome: Outcome

    @property
    def estimate(self) -> int:
        """Copilot's sum of the provider's answers for the whole request."""
        return self.message_estimate + self.tool_estimate


@attrs.frozen
class SummaryRecord:
    """One summarization: which kind, whether its request went out and succeeded, and the true
    fill of the last main request before it."""

    turn: int
    seq: int
    kind: SummaryKind
    sent: bool
    ok: bool
    fill_before: float | None
    render: int
    budget: int
    ratio: float


@attrs.define
class RunLog:
    """Everything a run did, for the report and the plot."""

    requests: list[RequestRecord] = attrs.field(factory=list)
    summaries: list[SummaryRecord] = attrs.field(factory=list)
    failed_turns: list[int] = attrs.field(factory=list)
    render_failures: int = 0
    applied: int = 0
    """Background summaries applied (before a render or after one over budget)."""
    discarded: int = 0
