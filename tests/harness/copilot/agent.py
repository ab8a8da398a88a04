"""Copilot Chat 0.67's agent loop, as far as it decides what is sent and when history is summarized.

Read in the extension.js bundled with code-server 1.139 (Copilot Chat 0.67; our own code below):
- Budget (`buildPrompt`): the tools cost `toolTokens = floor(1.1 × (16 + Σ(8 + every key and
  string value)))` over the provider's `provideTokenCount` answers, one call per string; the prompt
  renders against `max(1, floor((min(threshold, maxInputTokens) − toolTokens) × 0.9))`. The render
  is measured with Copilot's own o200k_base tokenizer, not the provider (`render`). After a
  render Copilot asks the provider for each message's count too (its build event and telemetry);
  the simulator does, and records that sum, which decides nothing. A turn's helper requests
  (progress messages, the chat title) go out before its first render, through the same model.
- Background compaction (on by default): after a render that applied no summary, `ratio =
  max(render + toolTokens, promptTokens of the last usage part) / maxInputTokens`; it starts when
  `ratio ≥ 0.78 + jitter × 0.04` (jitter uniform in [0, 1)) if the turn already has tool rounds,
  `ratio ≥ 0.9` otherwise, and the summarizer is idle or failed. Its request is the rendered prompt
  with the tools plus a user message asking for the summary now; the summary will cover up to the
  round before the last of the turn (its only round if it has one; else the previous turn's last
  round). Before a later render a completed summary is applied if the same ratio, with the
  previous render of the turn (0 at a turn's start), is ≥ 0.65, else dropped. A render over budget
  applies a completed summary and renders again (over budget again: the fallback below).
- Foreground summarization, when a render is over budget and no background summary is ready: the
  Simple mode only (`forceSimpleSummary`). It covers up to the round before the last when the turn
  has two or more rounds, else up to the previous turn's last round; its request is a system
  message of instructions, the history since the last summary as one tagged user message (current
  query included; the first entry kept, older entries dropped first until it fits
  `maxInputTokens`), and a user message asking for the summary; no tools. The prompt is then
  rendered against the whole `maxInputTokens` (no tool deduction). Nothing to summarize: the same
  render without a summary. A failure (and any later over-budget render in that turn) falls back.
- Fallback: render without summarization against `maxInputTokens`; what does not fit fails the turn
  ("Unable to build prompt"). A provider's "too long" error is not caught: the turn fails.
- Summaries replace the covered history with a `<conversation-summary>` user message; a summary on
  a round of the current turn drops the turn's query too.
Left out: prompt-tsx's pruning of flexible elements (cache breakpoints make the agent history
unprunable, so an over-budget render fails; the fallback's own layout is modelled as "drop the
oldest history entries"), the background request running concurrently with the main one (here it
completes before the main request is sent, so a render over budget never waits on it), Anthropic
context editing, tool-result truncation in the agent prompt (at ½ of `maxInputTokens`). A failed
turn stays in the history; a summary after it attaches to the newest round that exists.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Final, Literal

import attrs

from tests.harness.copilot.records import (
    Counter,
    Outcome,
    RequestKind,
    RequestRecord,
    RunLog,
    Sender,
    SummaryRecord,
)
from tests.harness.copilot.render import (
    CopilotTokenizer,
    chunk,
    round_chunks,
    simple_history,
    simple_result_tokens,
)
from tests.harness.copilot.scenario import Scenario, TurnPlan, summary_message
from tokengauge.counting.copilot_view import BASE_TOKENS_PER_MESSAGE
from tokengauge.counting.request import walk_strings
from tokengauge.counting.scales import copilot_tools_formula
from tokengauge.messages import Message, Tool

BUDGET_SHARE: Final = 0.9
WARM_MIN: Final = 0.78
WARM_SPAN: Final = 0.04
EMERGENCY: Final = 0.9
APPLY_MIN: Final = 0.65


@attrs.define(eq=False)
class Round:
    """A round in the history; `summary` is set when a summary covers up to this round."""

    assistant: Message
    results: Message | None
    summary: str | None = None

    def messages(self) -> list[Message]:
        """The assistant message and, for a tool round, its results."""
        return [self.assistant] if self.results is None else [self.assistant, self.results]


@attrs.define(eq=False)
class Turn:
    """A request and the rounds completed so far."""

    plan: TurnPlan
    rounds: list[Round] = attrs.field(factory=list)
    foreground_failed: bool = False


Item = Turn | Round
"""A history entry: a turn stands for its user request."""


@attrs.define
class Compaction:
    """The background summarizer: idle, or done (its summary waiting for a round), or failed."""

    state: Literal["idle", "completed", "failed"] = "idle"
    target: Round | None = None
    text: str = ""


class CopilotAgent:
    """Runs turns as Copilot's agent mode does, counting with `counter`, sending with `sender`."""

    def __init__(
        self,
        scenario: Scenario,
        counter: Counter,
        sender: Sender,
        max_input_tokens: Callable[[], Awaitable[int]],
        window: int,
    ) -> None:
        self.scenario = scenario
        self.counter = counter
        self.sender = sender
        self.max_input_tokens = max_input_tokens
        self.window = window
        self.tools = scenario.tools
        self.schema_strings = [s for tool in self.tools for s in walk_strings(tool)]
        self.tokenizer = CopilotTokenizer()
        self.rng = random.Random(f"{scenario.seed}:compaction-jitter")
        self.turns: list[Turn] = []
        self.log = RunLog()
        self.compaction = Compaction()
        self.last_usage: int | None = None
        """`prompt_tokens` of the last main request's usage part (any turn)."""
        self.last_render = 0
        self._made = 0
        self._turn = 0
        self._seq = 0

    async def tool_tokens(self) -> int:
        """`countToolTokens`: 16 + 8 per tool + every key and string value, × 1.1, floored."""
        counts = await self.counter.count(self.schema_strings)
        return copilot_tools_formula(len(self.tools), sum(counts))

    async def run_turn(self, index: int, plan: TurnPlan) -> None:
        """One user request: helpers, then per round render (maybe summarize) and send."""
        self._turn, self._seq = index, 0
        for helper in plan.helpers:
            await self.send("helper", helper, [], self.tokenizer.messages(helper))
        turn = Turn(plan)
        self.turns.append(turn)
        self.last_render = 0
        for round_plan in plan.rounds:
            prompt = await self.build_prompt()
            if prompt is None:
                self.log.failed_turns.append(index)
                return
            messages, tool_tokens = prompt
            answers = await self.counter.count(messages)
            estimate = sum(BASE_TOKENS_PER_MESSAGE + a for a in answers)
            outcome = await self.send(
                "main", messages, self.tools, self.last_render, tool_tokens, estimate
            )
            if not outcome.ok:
                self.log.failed_turns.append(index)
                return
            self.last_usage = outcome.usage_prompt
            turn.rounds.append(Round(round_plan.assistant, round_plan.results))

    async def send(
        self,
        kind: RequestKind,
        messages: Sequence[Message],
        tools: Sequence[Tool],
        render: int,
        tool_tokens: int = 0,
        message_estimate: int = 0,
    ) -> Outcome:
        """Send and record one request."""
        outcome = await self.sender.send(messages, tools, render + tool_tokens)
        record = RequestRecord(
            self._turn, self._seq, kind, message_estimate, tool_tokens, render, outcome
        )
        self.log.requests.append(record)
        self._seq += 1
        return outcome

    # --- rendering --------------------------------------------------------------------------------

    def items(self, current_rounds: int | None = None) -> list[Item]:
        """History since the last summary, oldest first (the summarized round first, if any), up to
        the current request and its first `current_rounds` rounds (all when None)."""
        items: list[Item] = []
        for turn in self.turns[:-1]:
            items += [turn, *turn.rounds]
        current = self.turns[-1]
        items += [current, *current.rounds[:current_rounds]]
        for index in range(len(items) - 1, -1, -1):
            entry = items[index]
            if isinstance(entry, Round) and entry.summary is not None:
                return items[index:]
        return items

    def render(self, items: Sequence[Item] | None = None) -> list[Message]:
        """The agent prompt: the scenario's prefix, then the history items."""
        messages = list(self.scenario.prefix)
        for item in self.items() if items is None else items:
            if isinstance(item, Turn):
                messages.append(item.plan.request)
            elif item.summary is not None:
                messages.append(summary_message(item.summary))
            else:
                messages += item.messages()
        return messages

    async def build_prompt(self) -> tuple[list[Message], int] | None:
        """The prompt to send and `toolTokens`; None if Copilot cannot build one."""
        tool_tokens = await self.tool_tokens()
        max_input = await self.max_input_tokens()
        budget = max(1, math.floor((max_input - tool_tokens) * BUDGET_SHARE))
        usage = self.last_usage or 0
        summarized = False
        if self.compaction.state == "completed":
            if max(self.last_render + tool_tokens, usage) / max_input >= APPLY_MIN:
                summarized = self._apply_compaction()
            else:
                self.compaction = Compaction()
                self.log.discarded += 1
        messages = self.render()
        count = self.tokenizer.messages(messages)
        if count > budget:
            summarized = True
            retry: list[Message] | None
            if self.compaction.state == "completed":
                self._apply_compaction()
                retry = self.render()
                if self.tokenizer.messages(retry) > budget:
                    retry = self.fallback(max_input)
            else:
                retry = await self.foreground(max_input, count, budget)
            if retry is None:
                self.log.render_failures += 1
                return None
            messages, count = retry, self.tokenizer.messages(retry)
        self.last_render = count
        if not summarized:
            await self.maybe_compact(messages, count, tool_tokens, usage, max_input, budget)
        return messages, tool_tokens

    def fallback(self, max_input: int) -> list[Message] | None:
        """Render without summarization against `maxInputTokens`, dropping the oldest history
        entries before the current request until it fits."""
        items = self.items()
        current = self.turns[-1]
        keep = items.index(current) if current in items else 0
        for dropped in range(keep + 1):
            messages = self.render(items[dropped:])
            if self.tokenizer.messages(messages) <= max_input:
                return messages
        return None

    # --- background compaction --------------------------------------------------------------------

    def _warm(self, ratio: float, has_rounds: bool) -> bool:
        if not has_rounds:
            return ratio >= EMERGENCY
        return ratio >= WARM_MIN + self.rng.random() * WARM_SPAN

    def _compaction_target(self) -> Round | None:
        rounds = self.turns[-1].rounds
        if len(rounds) >= 2:
            return rounds[-2]
        if rounds:
            return rounds[0]
        for turn in reversed(self.turns[:-1]):
            if turn.rounds:
                return turn.rounds[-1]
        return None

    async def maybe_compact(
        self,
        messages: list[Message],
        count: int,
        tool_tokens: int,
        usage: int,
        max_input: int,
        budget: int,
    ) -> None:
        """Start a background compaction if the render is large enough (and there is a round)."""
        ratio = max(count + tool_tokens, usage) / max_input
        warm = self._warm(ratio, bool(self.turns[-1].rounds))
        if not warm or self.compaction.state not in ("idle", "failed"):
            return
        target = self._compaction_target()
        if target is None:
            return
        request = [*messages, self.scenario.compaction]
        render = count + self.tokenizer.message(self.scenario.compaction)
        fill = self._fill()
        outcome = await self.send("compaction", request, self.tools, render, tool_tokens)
        self.log.summaries.append(
            SummaryRecord(
                self._turn,
                self._seq - 1,
                "background",
                True,
                outcome.ok,
                fill,
                count,
                budget,
                ratio,
            )
        )
        if outcome.ok:
            text = self.scenario.summary(self._made, self._turn)
            self._made += 1
            self.compaction = Compaction("completed", target, text)
        else:
            self.compaction = Compaction("failed")

    def _apply_compaction(self) -> bool:
        target = self.compaction.target
        if target is not None:
            target.summary = self.compaction.text
            self.log.applied += 1
        self.compaction = Compaction()
        return True

    def _fill(self) -> float | None:
        """The true fill of the last main request that went through."""
        for record in reversed(self.log.requests):
            if record.kind == "main" and record.outcome.ok and record.outcome.true_tokens:
                return record.outcome.true_tokens / self.window
        return None

    # --- foreground summarization (Simple mode) ---------------------------------------------------

    def _foreground_target(self) -> tuple[Round, list[Item]] | None:
        current = self.turns[-1]
        if len(current.rounds) > 1:
            return current.rounds[-2], self.items(len(current.rounds) - 1)
        for turn in reversed(self.turns[:-1]):
            if turn.rounds:
                return turn.rounds[-1], self.items(0)
        return None

    async def foreground(self, max_input: int, count: int, budget: int) -> list[Message] | None:
        """Summarize in the foreground, then render against `maxInputTokens`; the fallback if that
        fails."""
        current = self.turns[-1]
        if current.foreground_failed:
            return self.fallback(max_input)
        target = self._foreground_target()
        if target is not None:
            round_, items = target
            fill = self._fill()
            sent, ok = await self._simple_summary(items, max_input)
            self.log.summaries.append(
                SummaryRecord(
                    self._turn,
                    self._seq - (1 if sent else 0),
                    "foreground",
                    sent,
                    ok,
                    fill,
                    count,
                    budget,
                    count / max_input,
                )
            )
            if not ok:
                current.foreground_failed = True
                return self.fallback(max_input)
            round_.summary = self.scenario.summary(self._made, self._turn)
            self._made += 1
        messages = self.render()
        if self.tokenizer.messages(messages) > max_input:
            current.foreground_failed = True
            return self.fallback(max_input)
        return messages

    def _simple_entries(self, items: Sequence[Item], max_input: int) -> list[str]:
        result_tokens = simple_result_tokens(max_input)
        entries: list[str] = []
        for item in items:
            if isinstance(item, Turn):
                entries.append(chunk("user", item.plan.query))
            elif item.summary is not None:
                entries.append(chunk("conversation-summary", item.summary))
            else:
                entries.append(
                    "\n".join(
                        round_chunks(item.assistant, item.results, self.tokenizer, result_tokens)
                    )
                )
        return entries

    async def _simple_summary(self, items: Sequence[Item], max_input: int) -> tuple[bool, bool]:
        """(sent, succeeded): the Simple-mode request, oldest entries dropped until it fits."""
        entries = self._simple_entries(items, max_input)
        if not entries:
            return False, False
        scenario = self.scenario

        def prompt(dropped: int) -> list[Message]:
            history = simple_history(scenario.simple_header, [entries[0], *entries[1 + dropped :]])
            return [scenario.simple_system, history, scenario.simple_ask]

        def fits(dropped: int) -> bool:
            return self.tokenizer.messages(prompt(dropped)) <= max_input

        low, high = 0, len(entries) - 1  # the fewest dropped entries that fit, by bisection
        if not fits(high):
            return False, False
        while low < high:
            middle = (low + high) // 2
            if fits(middle):
                high = middle
            else:
                low = middle + 1
        messages = prompt(low)
        outcome = await self.send("summary", messages, [], self.tokenizer.messages(messages))
        return True, outcome.ok
