"""VS Code's Agent Host (the Agents window; Copilot SDK runtime) driving a third-party model: what
it sends and when it compacts, as far as the source shows (a model, not the real runtime).

Read in microsoft/vscode, github/copilot-sdk and the runtime of @github/copilot 1.0.102:
- Window: the bridge (`AgentHostByokLmHandler.listModels`) hands the runtime
  `maxContextWindowTokens = maxInputTokens + maxOutputTokens` of the model's
  `LanguageModelChatInformation`, and lists the models again (debounced) whenever VS Code's
  models change. It never calls `provideTokenCount`.
- Meter: the runtime counts the context itself: system prompt + tool definitions + conversation
  (`session.usage_info`: `systemTokens`, `toolDefinitionsTokens`, `conversationTokens`,
  `tokenLimit`), with the tiktoken it picks by model name; a name it does not know (ours: the
  bridge gives no family) is counted as o200k_base. Per message: 3 + the role and every string
  (a tool result is a tool message of its own); + 3 for the reply; a tool costs its JSON.
- Infinite sessions: background compaction starts at 0.80 of the limit (`trigger: "threshold"`)
  and runs beside the session; at 0.95 the session blocks until a compaction is done. A done
  compaction replaces the history it covered with the summary; what came after stays.
- Usage: the bridge decodes our `usage` data part (`prompt_tokens` → `inputTokens`) and hands it
  on as the completion's usage; both thresholds evaluate the runtime's own count, not that usage
  (github/app#3862: 657,843 shown against 921,487 charged, no compaction). `use_usage` tries
  max(own count, last `prompt_tokens`) instead (that usage forgotten once a summary applies).
- History: of a response's data parts the bridge reads only `stateful_marker` and `usage`; what
  survives in the runtime's history is text, thinking, tool calls and data parts of four mime
  types (`cache_control`, `stateful_marker`, `thinking`, `context_management`).
- Errors: a provider's (or tokengauge's) refusal reaches the runtime as an HTTP 502 carrying the
  message: the turn fails. The runtime knows a `context_limit_retry` compaction (compact, then
  retry) for responses it recognises as context-limit ones; whether ours are recognised through
  the bridge is not known: `retry_overflow` tries it.
Modelled, not read: a background compaction's summary is applied before the next request (it
runs beside the request it started with, which goes out whole); a blocking compaction keeps the
latest exchange (the last request, or the last tool call and its results) and summarises the
rest; a compaction needs at least `MIN_MESSAGES` history messages; the runtime's own helper
requests (titles) are left out; the system prompt and tools are the scenario's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Final, Literal, Protocol

import attrs
from cachetools import LRUCache

from tests.harness.copilot.records import Outcome, Sender
from tests.harness.copilot.scenario import Scenario, TurnPlan, summary_message
from tests.harness.fake_upstream.model import encoding
from tokengauge.counting.images import ImageRule, image_tokens
from tokengauge.messages import (
    DataPart,
    Message,
    Part,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
)
from tokengauge.upstream.dialects.openai.request import openai_tool

RUNTIME_ENCODING: Final = "o200k_base"
BACKGROUND_COMPACTION: Final = 0.80
BUFFER_EXHAUSTION: Final = 0.95
HISTORY_MIME_TYPES: Final = frozenset(
    {"cache_control", "stateful_marker", "thinking", "context_management"}
)
TOKENS_PER_MESSAGE: Final = 3
REPLY_PRIMING: Final = 3
MIN_MESSAGES: Final = 2
TEXTS_KEPT: Final = 5_000
"""Strings whose count the meter keeps (a session's history comes again with every request)."""

Decision = Literal["none", "background", "block"]
RequestKind = Literal["main", "compaction"]
Trigger = Literal["threshold", "blocking", "overflow"]


def runtime_window(max_input_tokens: int, max_output_tokens: int) -> int:
    """The runtime's token limit: the bridge's `maxInputTokens + maxOutputTokens`."""
    return max_input_tokens + max_output_tokens


def decide(
    count: int,
    window: int,
    compacting: bool,
    background: float = BACKGROUND_COMPACTION,
    block: float = BUFFER_EXHAUSTION,
) -> Decision:
    """What the runtime does before a request that counts `count` in a `window`: block at 0.95,
    start a background compaction at 0.80 (unless one is running), else nothing."""
    ratio = count / window
    if ratio >= block:
        return "block"
    if ratio >= background and not compacting:
        return "background"
    return "none"


def _kept(part: Part, role: str) -> bool:
    if not isinstance(part, DataPart):
        return True
    # the user's and the tools' images go on to the model; any other data part is dropped
    return part.mime_type in HISTORY_MIME_TYPES or (
        role != "assistant" and part.mime_type.startswith("image/")
    )


def history_message(message: Message) -> Message:
    """A message as the runtime keeps it in its history: data parts of other mime types gone."""
    parts: list[Part] = []
    for part in message.content:
        if isinstance(part, ToolResultPart):
            inner = [p for p in part.content if _kept(p, message.role)]
            part = attrs.evolve(part, content=inner)
        if _kept(part, message.role):
            parts.append(part)
    return attrs.evolve(message, content=parts)


def _is_results(message: Message) -> bool:
    return any(isinstance(part, ToolResultPart) for part in message.content)


def latest_exchange(history: Sequence[Message]) -> int:
    """Where the latest exchange starts: the last tool call and its results, else the last
    message."""
    if len(history) >= 2 and _is_results(history[-1]):
        return len(history) - 2
    return max(0, len(history) - 1)


class RuntimeMeter:
    """The runtime's own count (tiktoken, o200k_base), × `factor` (a per-model correction)."""

    def __init__(self, encoding_name: str = RUNTIME_ENCODING, factor: float = 1.0) -> None:
        self.encoding = encoding(encoding_name)
        self.factor = factor
        self._texts: LRUCache[str, int] = LRUCache(TEXTS_KEPT)

    def text(self, value: str) -> int:
        """Tokens of a string."""
        if not value:
            return 0
        count = self._texts.get(value)
        if count is None:
            count = self._texts[value] = len(self.encoding.encode(value, disallowed_special=()))
        return count

    def _part(self, part: Part) -> int:
        if isinstance(part, (TextPart, ThinkingPart)):
            return self.text(part.value)
        if isinstance(part, ToolCallPart):
            arguments = json.dumps(part.input, separators=(",", ":"))
            return self.text(part.call_id) + self.text(part.name) + self.text(arguments)
        if isinstance(part, DataPart) and part.mime_type.startswith("image/"):
            return image_tokens(part.data, ImageRule.OPENAI)
        return 0

    def message(self, message: Message) -> int:
        """3 + role + strings; each tool result is a tool message of its own."""
        total = 0
        others: list[Part] = []
        for part in message.content:
            if isinstance(part, ToolResultPart):
                body = sum(self._part(p) for p in part.content)
                total += TOKENS_PER_MESSAGE + self.text("tool") + self.text(part.call_id) + body
            else:
                others.append(part)
        if others or not total:
            total += TOKENS_PER_MESSAGE + self.text(message.role)
            total += sum(self._part(p) for p in others) + self.text(message.name or "")
        return total

    def tools(self, tools: Sequence[Tool]) -> int:
        """Tool definitions: each tool's JSON as sent."""
        return sum(self.text(json.dumps(openai_tool(tool))) for tool in tools)

    def request(self, messages: Sequence[Message], tool_tokens: int) -> int:
        """A whole request: messages, the reply's 3, the tools; × the factor, rounded up."""
        raw = sum(self.message(m) for m in messages) + REPLY_PRIMING + tool_tokens
        return math.ceil(raw * self.factor)


@attrs.frozen
class Limits:
    """The model's limits as the bridge lists them."""

    max_input_tokens: int
    max_output_tokens: int

    @property
    def window(self) -> int:
        """The runtime's token limit."""
        return runtime_window(self.max_input_tokens, self.max_output_tokens)


class LimitsSource(Protocol):
    """Where the runtime reads the model's limits (the bridge's model list)."""

    announced: bool
    """Whether the provider announced a change of its models since the last read."""

    async def read(self) -> Limits:
        """The limits now."""
        ...


@attrs.frozen
class AhRequest:
    """One request the runtime sent: what it counted against what window, and the truth."""

    turn: int
    seq: int
    kind: RequestKind
    count: int
    """The runtime's own count of the request."""
    window: int
    """The runtime's token limit when it sent it (the declared input + output)."""
    outcome: Outcome
    compacted: bool = False
    """A compaction's summary replaced history just before this request."""
    blocked: bool = False
    """The count reached the blocking threshold: the request waited for a compaction."""
    started: bool = False
    """A background compaction started beside this request."""
    announced: bool = False
    """The server had announced a change of its models since the previous request."""

    @property
    def ratio(self) -> float:
        """The runtime's utilization."""
        return self.count / self.window


@attrs.frozen
class AhCompaction:
    """One compaction: what started it, whether its request went through, and the true fill of
    the last main request before it."""

    turn: int
    seq: int
    trigger: Trigger
    ok: bool
    count: int
    window: int
    fill_before: float | None

    @property
    def ratio(self) -> float:
        """The runtime's utilization when it started."""
        return self.count / self.window


@attrs.define
class AhLog:
    """Everything a run did."""

    requests: list[AhRequest] = attrs.field(factory=list)
    compactions: list[AhCompaction] = attrs.field(factory=list)
    failed_turns: list[int] = attrs.field(factory=list)
    windows: list[int] = attrs.field(factory=list)
    """Each token limit the runtime worked with, in order (a change adds one)."""
    unannounced: int = 0
    """Limit changes the runtime saw without a models-changed announcement before them."""
    applied: int = 0


@attrs.frozen
class _Done:
    """A finished compaction waiting to be applied: the summary of `history[:cut]`."""

    cut: int
    text: str


class AgentHostRuntime:
    """Runs turns as the Agent Host's runtime does, sending with `sender`."""

    def __init__(
        self,
        scenario: Scenario,
        sender: Sender,
        limits: LimitsSource,
        true_window: int,
        factor: float = 1.0,
        use_usage: bool = False,
        retry_overflow: bool = False,
    ) -> None:
        self.scenario = scenario
        self.sender = sender
        self.limits = limits
        self.true_window = true_window
        self.meter = RuntimeMeter(factor=factor)
        self.use_usage = use_usage
        self.retry_overflow = retry_overflow
        self.tools = scenario.tools
        self.tool_tokens = self.meter.tools(self.tools)
        self.history: list[Message] = []
        self.log = AhLog()
        self.last_usage = 0
        """`prompt_tokens` of the last usage part."""
        self._done: _Done | None = None
        self._made = 0
        self._turn = 0
        self._seq = 0

    def prompt(self) -> list[Message]:
        """What goes to the model: the system prompt, then the history."""
        return [*self.scenario.prefix, *self.history]

    def count(self, messages: Sequence[Message]) -> int:
        """The runtime's count of a request with these messages and the tools."""
        return self.meter.request(messages, self.tool_tokens)

    async def run_turn(self, index: int, plan: TurnPlan) -> None:
        """One user request: per round, meter (maybe compact) and send; a failure ends the turn."""
        self._turn, self._seq = index, 0
        self.history.append(history_message(plan.request))
        for round_plan in plan.rounds:
            outcome = await self.step()
            if not outcome.ok:
                self.log.failed_turns.append(index)
                return
            self.history.append(history_message(round_plan.assistant))
            if round_plan.results is not None:
                self.history.append(history_message(round_plan.results))

    async def _window(self) -> tuple[int, bool]:
        announced = self.limits.announced
        window = (await self.limits.read()).window
        if not self.log.windows or window != self.log.windows[-1]:
            if self.log.windows and not announced:
                self.log.unannounced += 1
            self.log.windows.append(window)
        return window, announced

    async def step(self) -> Outcome:
        """One main request: the limits read again, a finished compaction applied, the
        thresholds checked, then the request sent (once more after an overflow's compaction if
        `retry_overflow`)."""
        window, announced = await self._window()
        compacted = self._apply()
        count = self.count(self.prompt())
        measured = max(count, self.last_usage) if self.use_usage else count
        decision = decide(measured, window, self._done is not None)
        started = False
        if decision == "block":
            compacted = await self._compact("blocking", count, window) or compacted
            count = self.count(self.prompt())
        elif decision == "background":
            started = await self._compact("threshold", count, window)
        outcome = await self._send("main", self.prompt(), count, window)
        self.log.requests[-1] = attrs.evolve(
            self.log.requests[-1],
            compacted=compacted,
            blocked=decision == "block",
            started=started,
            announced=announced,
        )
        retry = outcome.overflow and self.retry_overflow
        if retry and await self._compact("overflow", count, window):
            count = self.count(self.prompt())
            outcome = await self._send("main", self.prompt(), count, window)
        if outcome.ok and outcome.true_tokens:
            self.last_usage = outcome.usage_prompt or 0
        return outcome

    async def _send(
        self, kind: RequestKind, messages: Sequence[Message], count: int, window: int
    ) -> Outcome:
        tools = self.tools
        outcome = await self.sender.send(messages, tools, count)
        self.log.requests.append(AhRequest(self._turn, self._seq, kind, count, window, outcome))
        self._seq += 1
        return outcome

    def _fill(self) -> float | None:
        """The true fill of the last main request that went through."""
        for record in reversed(self.log.requests):
            if record.kind == "main" and record.outcome.ok and record.outcome.true_tokens:
                return record.outcome.true_tokens / self.true_window
        return None

    async def _compact(self, trigger: Trigger, count: int, window: int) -> bool:
        """Summarise history up to the cut (all of it in the background, all but the latest
        exchange otherwise); a background summary waits for the next request."""
        background = trigger == "threshold"
        cut = len(self.history) if background else latest_exchange(self.history)
        if cut < MIN_MESSAGES:
            return False
        fill = self._fill()
        messages = [*self.scenario.prefix, *self.history[:cut], self.scenario.compaction]
        outcome = await self._send("compaction", messages, self.count(messages), window)
        self.log.compactions.append(
            AhCompaction(self._turn, self._seq - 1, trigger, outcome.ok, count, window, fill)
        )
        if not outcome.ok:
            return False
        self._done = _Done(cut, self.scenario.summary(self._made, self._turn))
        self._made += 1
        return True if background else self._apply()

    def _apply(self) -> bool:
        """Replace the summarised history with the summary; whether there was one."""
        done, self._done = self._done, None
        if done is None:
            return False
        self.history = [summary_message(done.text), *self.history[done.cut :]]
        self.log.applied += 1
        self.last_usage = 0  # it measured the history before the summary
        return True
