"""Copilot Chat's agent loop, as far as it decides what is sent and when history is summarized.

What we read in microsoft/vscode-copilot-chat (our own code below; nothing copied):
- `extChatTokenizer.ts` (`ExtensionContributedChatTokenizer`, what a third-party model gets): a
  message costs `countTokens(message) + 3` (BaseTokensPerMessage), a whole prompt adds 3
  (BaseTokensPerCompletion); tools cost `floor((16 + Σ(8 + countObject({name, description,
  parameters}))) × 1.1)`, where `countObject` counts every key and every string value (falsy values
  skipped, array items keyed "0", "1", …) with `countTokens(string)`.
- `agentIntent.ts` (`buildPrompt`): the render budget is `floor((min(threshold, maxInputTokens) −
  toolTokens) × 0.9)` (0.85 in older versions). When the render throws BudgetExceededError, it
  renders again with `triggerSummarize` against the full endpoint (`maxInputTokens`, no tool
  deduction); if summarizing fails, it renders without summarization against the full endpoint,
  and a render that still does not fit fails the turn ("Unable to build prompt"). A provider's
  "too long" error is not caught: the turn fails.
- `summarizedConversationHistory.tsx`: with more than one tool round in the current turn the
  summary covers everything up to the round before the last (the last round stays verbatim after
  it); otherwise it covers everything up to the last round of the previous turn (the current
  request stays). The summary request (Full mode) is a system message of instructions, the history
  since the last summary, and a user message asking for the summary, rendered against
  `maxInputTokens` (older items dropped first when it does not fit) and sent WITH the tools
  (`tool_choice: none`). If it fails, Simple mode sends one user message with the history as text
  (first item kept, older items dropped, long tool results truncated) and no tools. The summary
  replaces the covered history as a `<conversation-summary>` user message from then on.
Left out: prompt-tsx's own pruning of flexible elements, background compaction at ≥ 80% (newer,
behind settings), Anthropic context editing, the "summary too large" check, and the Simple
mode's exact truncation length (`SIMPLE_RESULT_CHARS` is ours). A turn that failed stays in the
history; summarizing after it attaches the summary to the newest round that exists (Copilot
would look only at the last turn's last round).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, Protocol

import attrs

from sim_conversation import (
    SUMMARIZE_REQUEST,
    ConversationGenerator,
    TurnPlan,
    describe,
    summary_instructions,
    summary_message,
)
from tokengauge.wire import Message, TextPart, Tool
from workload import Workload

BASE_TOKENS_PER_COMPLETION = 3
BASE_TOKENS_PER_MESSAGE = 3
TOOLS_BASE = 16
TOKENS_PER_TOOL = 8
TOOLS_MARGIN = 1.1
BUDGET_SHARE = 0.9
SIMPLE_RESULT_CHARS = 4_000
SIMPLE_HEADER = (
    "The following is a compressed version of the preceding history in the current conversation. "
    "The first message is kept, some history may be truncated after that:"
)

RequestKind = Literal["main", "summary", "simple-summary"]
SummaryOutcome = Literal["full", "simple", "failed", "nothing"]


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


class Sender(Protocol):
    """Sends one chat request to the upstream the way a variant does."""

    async def send(
        self, messages: Sequence[Message], tools: Sequence[Tool], estimate: int
    ) -> Outcome:
        """`estimate` is Copilot's own count of the request (messages + tools)."""
        ...


@attrs.frozen
class RequestRecord:
    """One request sent: where in the conversation, Copilot's count of it and the truth."""

    turn: int
    seq: int
    kind: RequestKind
    message_estimate: int
    """Copilot's count of the messages: 3 + Σ(3 + countTokens(message))."""
    tool_estimate: int
    """Copilot's count of the tools sent with it (0 when none were sent)."""
    outcome: Outcome

    @property
    def estimate(self) -> int:
        """Copilot's count of the whole request."""
        return self.message_estimate + self.tool_estimate


@attrs.frozen
class SummaryRecord:
    """One summarization: when, how it ended, and the true fill of the last request before it."""

    turn: int
    seq: int
    outcome: SummaryOutcome
    fill_before: float | None
    render: int
    budget: int


@attrs.define
class RunLog:
    """Everything a run did, for the report and the plot."""

    requests: list[RequestRecord] = attrs.field(factory=list)
    summaries: list[SummaryRecord] = attrs.field(factory=list)
    failed_turns: list[int] = attrs.field(factory=list)
    render_failures: int = 0


@attrs.define
class Round:
    """A round in the history; `summary` is set when a summary covers up to this round."""

    assistant: Message
    results: Message | None
    summary: str | None = None

    def messages(self) -> list[Message]:
        """The assistant message and, for a tool round, its results."""
        return [self.assistant] if self.results is None else [self.assistant, self.results]


@attrs.define
class Turn:
    """A request and the rounds completed so far."""

    request: Message
    rounds: list[Round] = attrs.field(factory=list)


Entry = Message | Round


def entry_messages(entry: Entry) -> list[Message]:
    """The messages of a history entry."""
    return [entry] if isinstance(entry, Message) else entry.messages()


def prompt_total(counts: Sequence[int]) -> int:
    """Copilot's count of a rendered prompt from its messages' counts."""
    return BASE_TOKENS_PER_COMPLETION + sum(BASE_TOKENS_PER_MESSAGE + c for c in counts)


class CopilotAgent:
    """Runs turns as Copilot's agent mode does, counting with `counter`, sending with `sender`."""

    def __init__(
        self,
        conversation: ConversationGenerator,
        counter: Counter,
        sender: Sender,
        max_input_tokens: Callable[[], Awaitable[int]],
        window: int,
    ) -> None:
        self.conversation = conversation
        self.counter = counter
        self.sender = sender
        self.max_input_tokens = max_input_tokens
        self.window = window
        self.tools = conversation.tools
        self.schema_strings = Workload([], self.tools).schema_strings()
        self.instructions = Message("system", [TextPart(summary_instructions(conversation.seed))])
        self.turns: list[Turn] = []
        self.log = RunLog()
        self.last_true: int | None = None
        self._turn = 0
        self._seq = 0

    async def tool_tokens(self) -> int:
        """`countToolTokens`: 16 + 8 per tool + every key and string value, × 1.1, floored."""
        counts = await self.counter.count(self.schema_strings)
        raw = TOOLS_BASE + TOKENS_PER_TOOL * len(self.tools) + sum(counts)
        return math.floor(raw * TOOLS_MARGIN)

    async def total(self, messages: Sequence[Message]) -> int:
        """The rendered prompt's count: 3 + Σ(3 + countTokens(message))."""
        return prompt_total(await self.counter.count(messages))

    async def run_turn(self, index: int, plan: TurnPlan) -> None:
        """One user request: render, maybe summarize, send; once per round until the answer."""
        self._turn, self._seq = index, 0
        turn = Turn(plan.request)
        self.turns.append(turn)
        for round_plan in plan.rounds:
            prompt = await self.build_prompt()
            if prompt is None:
                self.log.failed_turns.append(index)
                return
            messages, total, tool_tokens = prompt
            outcome = await self.send("main", messages, self.tools, total, tool_tokens)
            if not outcome.ok:
                self.log.failed_turns.append(index)
                return
            turn.rounds.append(Round(round_plan.assistant, round_plan.results))

    async def send(
        self,
        kind: RequestKind,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        message_tokens: int,
        tool_tokens: int,
    ) -> Outcome:
        """Send and record one request, with Copilot's counts of its messages and its tools."""
        outcome = await self.sender.send(messages, tools, message_tokens + tool_tokens)
        record = RequestRecord(self._turn, self._seq, kind, message_tokens, tool_tokens, outcome)
        self.log.requests.append(record)
        self._seq += 1
        if outcome.ok and kind == "main" and outcome.true_tokens is not None:
            self.last_true = outcome.true_tokens
        return outcome

    # --- rendering --------------------------------------------------------------------------------

    def entries(self, current_request: bool, current_rounds: int) -> list[Entry]:
        """History since the last summary, oldest first (the summary itself first, if any)."""
        items: list[Entry] = []
        for turn in self.turns[:-1]:
            items += [turn.request, *turn.rounds]
        current = self.turns[-1]
        if current_request:
            items.append(current.request)
        items += current.rounds[:current_rounds]
        for index in range(len(items) - 1, -1, -1):
            entry = items[index]
            if isinstance(entry, Round) and entry.summary is not None:
                return [summary_message(entry.summary), *items[index + 1 :]]
        return items

    def render(self) -> list[Message]:
        """The agent prompt: system message, then the history as `entries` gives it."""
        current = self.turns[-1]
        entries = self.entries(True, len(current.rounds))
        return [self.conversation.system, *(m for e in entries for m in entry_messages(e))]

    async def build_prompt(self) -> tuple[list[Message], int, int] | None:
        """The prompt to send with Copilot's counts of it and of the tools; None if it cannot
        be built."""
        tool_tokens = await self.tool_tokens()
        max_input = await self.max_input_tokens()
        budget = max(1, math.floor((max_input - tool_tokens) * BUDGET_SHARE))
        messages = self.render()
        total = await self.total(messages)
        if total <= budget:
            return messages, total, tool_tokens
        outcome = await self.summarize(max_input, tool_tokens)
        self.log.summaries.append(
            SummaryRecord(
                self._turn,
                self._seq,
                outcome,
                None if self.last_true is None else self.last_true / self.window,
                total,
                budget,
            )
        )
        messages = self.render()
        total = await self.total(messages)
        if total <= max_input:
            return messages, total, tool_tokens
        self.log.render_failures += 1
        return None

    # --- summarization ----------------------------------------------------------------------------

    def _summary_target(self) -> tuple[Round, list[Entry]] | None:
        """The round a summary will cover up to, and the history it summarizes."""
        current = self.turns[-1]
        if len(current.rounds) > 1:
            return current.rounds[-2], self.entries(True, len(current.rounds) - 1)
        for turn in reversed(self.turns[:-1]):
            if turn.rounds:
                return turn.rounds[-1], self.entries(False, 0)
        return None

    async def summarize(self, max_input: int, tool_tokens: int) -> SummaryOutcome:
        """Summarize the history: Full mode, then Simple mode; the summary goes on its round."""
        target = self._summary_target()
        if target is None:
            return "nothing"
        round_, entries = target
        if await self._full_summary(entries, max_input, tool_tokens):
            outcome: SummaryOutcome = "full"
        elif await self._simple_summary(entries, max_input):
            outcome = "simple"
        else:
            return "failed"
        made = sum(1 for s in self.log.summaries if s.outcome in ("full", "simple"))
        round_.summary = self.conversation.summary(made, self._turn)
        return outcome

    async def _full_summary(self, entries: list[Entry], max_input: int, tool_tokens: int) -> bool:
        ask = Message("user", [TextPart(SUMMARIZE_REQUEST)])
        groups = [entry_messages(e) for e in entries]
        counts = await self.counter.count([self.instructions, ask, *(m for g in groups for m in g)])
        fixed = prompt_total(counts[:2])
        costs: list[int] = []
        position = 2
        for group in groups:
            costs.append(
                sum(BASE_TOKENS_PER_MESSAGE + c for c in counts[position : position + len(group)])
            )
            position += len(group)
        dropped, kept = 0, sum(costs)
        while dropped < len(groups) and fixed + kept > max_input:
            kept -= costs[dropped]
            dropped += 1
        if dropped == len(groups):
            return False
        messages = [self.instructions, *(m for g in groups[dropped:] for m in g), ask]
        outcome = await self.send("summary", messages, self.tools, fixed + kept, tool_tokens)
        return outcome.ok

    async def _simple_summary(self, entries: list[Entry], max_input: int) -> bool:
        texts = [_entry_text(e) for e in entries]
        if not texts:
            return False

        def prompt(dropped: int) -> list[Message]:
            body = "\n".join([SIMPLE_HEADER, texts[0], *texts[1 + dropped :]])
            return [self.instructions, Message("user", [TextPart(body)])]

        low, high = 0, len(texts) - 1  # the fewest dropped items that fit, by bisection
        if await self.total(prompt(high)) > max_input:
            return False
        while low < high:
            middle = (low + high) // 2
            if await self.total(prompt(middle)) <= max_input:
                high = middle
            else:
                low = middle + 1
        messages = prompt(low)
        outcome = await self.send("simple-summary", messages, [], await self.total(messages), 0)
        return outcome.ok


def _entry_text(entry: Entry) -> str:
    """A history entry as Simple mode lists it: tagged text, long tool results truncated."""
    if isinstance(entry, Message):
        return f"<user>\n{describe(entry)}\n</user>"
    text = f"<assistant>\n{describe(entry.assistant)}\n</assistant>"
    if entry.results is not None:
        result = describe(entry.results)
        text += f"\n<tool>\n{result[:SIMPLE_RESULT_CHARS]}\n</tool>"
    return text
