"""How each variant counts and sends: the real server over LSP, or the simulator itself.

Counting: `LspCounter` asks a running `python -m tokengauge` (`tokenGauge/countTokens`, one
batched request per render, as the extension batches what Copilot asks concurrently);
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

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any, Final, Literal

import httpx
from pygls.exceptions import JsonRpcException

from benchlib import LspServer
from sim_copilot import Outcome
from sim_upstream import Upstream
from tokengauge import budget
from tokengauge.gauge import Gauge
from tokengauge.overflow import ErrorKind, parse_overflow_error
from tokengauge.protocol import CHAT, COUNT_TOKENS, MODELS
from tokengauge.upstream.dialects import dialect_for, provider_headers
from tokengauge.upstream.events import UsageReport
from tokengauge.upstream.http import HttpStatusError, UpstreamError, drain, open_sse
from tokengauge.upstream.options import ChatOptions
from tokengauge.wire import DataPart, Message, Part, TextPart, Tool, ToolCallPart, ToolResultPart
from tokengauge.wire import unstructure as to_json

CHARS_PER_TOKEN: Final = 4
_request_ids = itertools.count(1)


class LspCounter:
    """Counts through the server, as `provideTokenCount` does."""

    def __init__(self, server: LspServer, model_id: str) -> None:
        self.server = server
        self.model_id = model_id

    async def count(self, inputs: Sequence[str | Message]) -> list[int]:
        """One `tokenGauge/countTokens` request for all inputs."""
        payload = [item if isinstance(item, str) else to_json(item) for item in inputs]
        result = await self.server.request(
            COUNT_TOKENS, {"modelId": self.model_id, "inputs": payload}
        )
        return [int(n) for n in result["tokens"]]

    async def max_input_tokens(self) -> int:
        """The model's `maxInputTokens` as the server reports it now."""
        models = await self.server.request(MODELS, {})
        return int(next(m for m in models if m["id"] == self.model_id)["maxInputTokens"])


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
        await self.upstream.forget()
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
            tries = await self.upstream.model_requests()
            true = tries[-1] if tries else None
            overflow = kind == "overflow"
            return Outcome(False, overflow, true, f"{kind}: {exc.message}", len(tries) > 1)
        tries = await self.upstream.model_requests()
        return Outcome(True, False, int(result["usage"]["prompt_tokens"]), resized=len(tries) > 1)


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
        self.model = gauge.model(model_id)
        self.upstream = upstream
        self.policy = policy

    def _max_tokens(self, messages: Sequence[Message], tools: Sequence[Tool]) -> int:
        if self.policy == "plain":
            return self.model.max_output_tokens
        estimate = self.gauge.estimate(self.model, messages, tools).total
        return budget.clamp_max_tokens(self.model, estimate)

    async def send(
        self, messages: Sequence[Message], tools: Sequence[Tool], estimate: int
    ) -> Outcome:
        """Stream one request; retry once with a `max_tokens` that fits if only that overflowed
        (policy "tokengauge")."""
        await self.upstream.forget()
        max_tokens = self._max_tokens(messages, tools)
        resized = False
        while True:
            try:
                usage = await self._stream(messages, tools, max_tokens)
            except HttpStatusError as exc:
                error = parse_overflow_error(exc.status, exc.body)
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
    ) -> UsageReport | None:
        dialect = dialect_for(self.model)
        body: Any = dialect.body(self.model, messages, tools, ChatOptions(), max_tokens)
        url = dialect.url(self.model.provider.base_url)
        parser = dialect.parser()
        usage: UsageReport | None = None
        headers = provider_headers(self.model.provider, None)
        async with open_sse(self.client, url, headers, body) as events:
            async for sse in events:
                for event in parser.feed(sse.event, sse.data):
                    if isinstance(event, UsageReport):
                        usage = event
                if parser.ended:
                    await drain(events)
                    break
        for event in parser.finish():
            if isinstance(event, UsageReport):
                usage = event
        return usage


def _fitting_max_tokens(prompt: int | None, output: int | None, limit: int | None) -> int | None:
    """As the server does: the output room left beside the prompt, if only the output overflowed."""
    if prompt is None or output is None or limit is None:
        return None
    room = limit - prompt - budget.safety_tokens(limit)
    return room if 0 < room < output else None
