"""How each variant counts and sends: the real server over LSP, or the simulator itself.

Counting: `LspCounter` asks a running `python -m tokengauge` (`tokenGauge/countTokens`, one
batched request per render, as the extension batches what Copilot asks concurrently) and answers
as the extension's memo does: a tool-schema string `ceil(raw × scales.tools)`, any other string
the server's count (its text scales), a message the server's count; `ExactCounter` gives Copilot
the true tokenizer's numbers ("perfect counts": strings and messages as the upstream counts them,
tool-schema strings scaled so that Copilot's tool formula lands on the tools' true cost);
`CharsCounter` is a plain provider's `ceil(len / 4)`.
Sending: `LspChatSender` goes through `tokenGauge/chat`, so the server sets `max_tokens`, retries
an "input + max_tokens > window" refusal once and learns from every usage report and overflow
exactly as in production. `DirectSender` posts to the upstream from this process with
tokengauge's own request builder and stream parser and teaches nobody anything. With policy
"tokengauge" (the calibration-off variant) it does what the server does minus the learning:
`max_tokens` clamped to what fits beside the uncalibrated whole-request estimate, and the one-off
resize retry. With policy "plain" (the chars/4 variant) it does what a simple provider does:
`max_tokens` is the model's output cap, and an error is an error.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal

import httpx
from pygls.exceptions import JsonRpcException

from tests.harness.copilot.records import Outcome
from tests.harness.fake_upstream.config import ModelBehavior
from tests.harness.fake_upstream.model import tokens
from tests.harness.fake_upstream.server import Upstream
from tests.harness.lsp import LspServer
from tokengauge.calibration.classify import ErrorKind, classify_error
from tokengauge.counting.request import walk_strings
from tokengauge.gauge import Gauge
from tokengauge.messages import (
    DataPart,
    Message,
    Part,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from tokengauge.messages import unstructure as to_json
from tokengauge.models import budget
from tokengauge.protocol import CHAT, COUNT_TOKENS, MODELS
from tokengauge.upstream.dialects.dialect import dialect_for, provider_headers
from tokengauge.upstream.errors import HttpStatusError, UpstreamError
from tokengauge.upstream.http import drain, open_sse
from tokengauge.upstream.options import ChatOptions

CHARS_PER_TOKEN: Final = 4
TEXTS_KEPT: Final = 5_000
_EPSILON: Final = 1e-9
_request_ids = itertools.count(1)


class LspCounter:
    """Counts through the server, as `provideTokenCount` does through the extension's memo."""

    def __init__(self, server: LspServer, model_id: str, tool_strings: Iterable[str] = ()) -> None:
        self.server = server
        self.model_id = model_id
        self.tool_strings = frozenset(tool_strings)

    async def count(self, inputs: Sequence[str | Message]) -> list[int]:
        """One `tokenGauge/countTokens` request for all inputs; tool-schema strings scaled with
        the tool scale, as the extension does."""
        payload = [item if isinstance(item, str) else to_json(item) for item in inputs]
        result = await self.server.request(
            COUNT_TOKENS, {"modelId": self.model_id, "inputs": payload}
        )
        tools = float(result["scales"]["tools"])
        return [
            copilot_scaled(int(raw), tools)
            if isinstance(item, str) and item in self.tool_strings
            else int(tokens)
            for item, tokens, raw in zip(inputs, result["tokens"], result["raw"], strict=True)
        ]

    async def max_input_tokens(self) -> int:
        """The model's `maxInputTokens` as the server reports it now."""
        models = await self.server.request(MODELS, {})
        return int(next(m for m in models if m["id"] == self.model_id)["maxInputTokens"])


def copilot_scaled(raw: int, scale: float) -> int:
    """`ceil(raw × scale)`, as the extension computes a tool-schema string's count."""
    return math.ceil(raw * scale - _EPSILON) if raw > 0 else 0


class ExactCounter:
    """Perfect counts: the true tokenizer's numbers, in the shape Copilot adds them up.

    A string: `ceil(scale × tokens)`; a tool-schema string: `ceil(tokens × m)`, the smallest `m`
    with which Copilot's tool formula reaches `true_tools` (the tools' true cost); a message: its
    true cost (each tool result is a message of its own upstream) less the 3 Copilot adds.
    """

    def __init__(self, true: ModelBehavior, tools: Sequence[Tool], true_tools: int) -> None:
        self.true = true
        self.text = functools.lru_cache(maxsize=TEXTS_KEPT)(
            functools.partial(tokens, encoding_name=true.encoding)
        )
        """The true tokenizer's count of a string, the upstream's own."""
        self.walk = [s for tool in tools for s in walk_strings(tool)]
        self.tool_strings = frozenset(self.walk)
        self.tools = len(tools)
        self.tool_scale = self._tool_scale(true_tools)

    def _formula(self, scale: float) -> int:
        strings = sum(copilot_scaled(self.text(s), scale) for s in self.walk)
        return math.floor(1.1 * (16 + 8 * self.tools + strings)) if self.tools else 0

    def _tool_scale(self, target: int) -> float:
        low, high = 0.0, 16.0
        for _ in range(40):
            middle = (low + high) / 2
            low, high = (low, middle) if self._formula(middle) >= target else (middle, high)
        return high

    async def count(self, inputs: Sequence[str | Message]) -> list[int]:
        """Counts in input order."""
        return [self._one(item) for item in inputs]

    def _one(self, item: str | Message) -> int:
        if isinstance(item, str):
            raw = self.text(item)
            if item in self.tool_strings:
                return copilot_scaled(raw, self.tool_scale)
            return copilot_scaled(raw, self.true.scale)
        results = [p for p in item.content if isinstance(p, ToolResultPart)]
        others = [p for p in item.content if not isinstance(p, ToolResultPart)]
        costs = [self._pieces(p.content) for p in results]
        if others or not results:
            costs.append(self._pieces(others) + (self.text(item.name or "")))
        total = sum(copilot_scaled(c, self.true.scale) for c in costs)
        total += self.true.per_message_overhead * len(costs)
        if item.role == "system":
            total += self.true.fixed_overhead
        return max(0, total - 3)

    def _pieces(self, parts: Sequence[Part]) -> int:
        total = 0
        for part in parts:
            if isinstance(part, TextPart):
                total += self.text(part.value)
            elif isinstance(part, ToolCallPart):
                total += self.text(part.name) + self.text(json.dumps(part.input))
            elif isinstance(part, ToolResultPart):
                total += self._pieces(part.content)
            elif isinstance(part, DataPart) and part.mime_type.startswith("image/"):
                total += self.true.image_tokens
        return total


def _part_chars(part: Part) -> int:
    if isinstance(part, TextPart):
        return len(part.value)
    if isinstance(part, ToolCallPart):
        return len(part.name) + len(json.dumps(part.input, ensure_ascii=False))
    if isinstance(part, ToolResultPart):
        return sum(_part_chars(inner) for inner in part.content)
    if isinstance(part, DataPart):
        return len(part.data)  # a naive counter sees the base64 text
    return 0


def message_chars(message: Message) -> int:
    """Characters a naive counter sees in a message: texts, tool calls, results, data."""
    name = len(message.name) if message.name else 0
    return name + sum(_part_chars(part) for part in message.content)


class CharsCounter:
    """`ceil(characters / 4)`: what many providers return from `provideTokenCount`."""

    async def count(self, inputs: Sequence[str | Message]) -> list[int]:
        """Counts in input order."""
        return [
            math.ceil(
                (len(item) if isinstance(item, str) else message_chars(item)) / CHARS_PER_TOKEN
            )
            for item in inputs
        ]


def true_sizes(upstream: Upstream) -> list[int]:
    """The true prompt size of each model request since the upstream's reset (a retry makes two)."""
    return [r.prompt_tokens for r in upstream.model_requests if r.prompt_tokens is not None]


class LspChatSender:
    """`tokenGauge/chat`: the server counts, sends, retries and learns."""

    def __init__(self, server: LspServer, model_id: str, upstream: Upstream) -> None:
        self.server = server
        self.model_id = model_id
        self.upstream = upstream

    async def send(
        self, messages: Sequence[Message], tools: Sequence[Tool], estimate: int
    ) -> Outcome:
        """One chat; an overflow comes back as RequestFailed with `data.kind == "overflow"`."""
        self.upstream.reset()
        params = {
            "requestId": f"sim-{next(_request_ids)}",
            "modelId": self.model_id,
            "messages": to_json(list(messages)),
            "tools": to_json(list(tools)),
        }
        try:
            result = await self.server.request(CHAT, params)
        except JsonRpcException as exc:
            kind = exc.data.get("kind") if isinstance(exc.data, dict) else None
            tries = true_sizes(self.upstream)
            true = tries[-1] if tries else None
            overflow = kind == "overflow"
            return Outcome(False, overflow, true, f"{kind}: {exc.message}", len(tries) > 1)
        tries = true_sizes(self.upstream)
        trimmed = int((result.get("trimmed") or {}).get("tokens", 0))
        reported = int(result["usage"]["prompt_tokens"])  # in the units the server declares
        return Outcome(
            True, False, tries[-1], resized=len(tries) > 1, trimmed=trimmed, reported=reported
        )


class DirectSender:
    """Posts to the upstream from here, with the `max_tokens` policy of a variant.

    "tokengauge": clamped to the whole request as a never-calibrated server counts it (an
    in-process `Gauge` on an in-memory ledger that never records anything), with the server's
    one-off resize retry; "plain": the model's output cap, no retry.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        gauge: Gauge,
        model_id: str,
        upstream: Upstream,
        policy: Literal["tokengauge", "plain"],
    ) -> None:
        self.client = client
        self.gauge = gauge
        self.model = gauge.offer.model(model_id)
        self.upstream = upstream
        self.policy = policy

    def _max_tokens(self, messages: Sequence[Message], tools: Sequence[Tool]) -> int:
        if self.policy == "plain":
            return self.model.max_output_tokens
        estimate = self.gauge.counts.estimate(self.model, messages, tools).total
        return budget.clamp_max_tokens(self.model, estimate)

    async def send(
        self, messages: Sequence[Message], tools: Sequence[Tool], estimate: int
    ) -> Outcome:
        """Stream one request; retry once with a `max_tokens` that fits if only that overflowed
        (policy "tokengauge")."""
        self.upstream.reset()
        max_tokens = self._max_tokens(messages, tools)
        resized = False
        while True:
            try:
                usage = await self._stream(messages, tools, max_tokens)
            except HttpStatusError as exc:
                error = classify_error(exc.status, exc.body)
                if error.kind is not ErrorKind.OVERFLOW:
                    return Outcome(False, False, None, f"HTTP {exc.status}: {error.message}")
                room = _fitting_max_tokens(
                    error.input_tokens, error.output_tokens, error.limit_tokens
                )
                if room is None or resized or self.policy == "plain":
                    return Outcome(False, True, error.input_tokens, error.message, resized)
                resized, max_tokens = True, room
                continue
            except UpstreamError as exc:
                return Outcome(False, False, None, str(exc))
            if usage is None:
                return Outcome(False, False, None, "no usage in the response")
            return Outcome(True, False, usage.total_input_tokens, resized=resized)

    async def _stream(
        self, messages: Sequence[Message], tools: Sequence[Tool], max_tokens: int
    ) -> Usage | None:
        dialect = dialect_for(self.model)
        body: Any = dialect.body(self.model, messages, tools, ChatOptions(), max_tokens)
        url = dialect.url(self.model.provider.base_url)
        parser = dialect.parser()
        usage: Usage | None = None
        headers = provider_headers(self.model.provider, None)
        async with open_sse(self.client, url, headers, body) as events:
            async for sse in events:
                for event in parser.feed(sse.event, sse.data):
                    if isinstance(event, Usage):
                        usage = event
                if parser.ended:
                    await drain(events)
                    break
        for event in parser.finish():
            if isinstance(event, Usage):
                usage = event
        return usage


def _fitting_max_tokens(prompt: int | None, output: int | None, limit: int | None) -> int | None:
    """As the server does: the output room left beside the prompt, if only the output overflowed."""
    if prompt is None or output is None or limit is None:
        return None
    room = limit - prompt - budget.safety_tokens(limit)
    return room if 0 < room < output else None
