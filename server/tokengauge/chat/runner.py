"""The chats of one gauge over one HTTP client: what lasts across requests (the retry policy, the
gateway sessions, the local servers' readings, the sink) and, for each `tokenGauge/chat`, a
`ChatRequest` that lives as long as it (ARCHITECTURE §3)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx

from tokengauge.chat.cached_summary import LastSent
from tokengauge.chat.compaction import CompactionAsks
from tokengauge.chat.local import LocalServers
from tokengauge.chat.output import ChatSink
from tokengauge.chat.reasoning import ReasoningMemory, Replays
from tokengauge.chat.request import ChatRequest, Shared
from tokengauge.gauge import Gauge
from tokengauge.protocol import ChatParams, ChatResult
from tokengauge.telemetry.request import EndedRequest
from tokengauge.upstream.attribution import Sessions
from tokengauge.upstream.retry import RetryPolicy


class ChatRunner:
    """Runs chats for one gauge over one HTTP client."""

    def __init__(
        self,
        gauge: Gauge,
        client: httpx.AsyncClient,
        sink: ChatSink,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        observer: Callable[[EndedRequest], None] | None = None,
        capture_content: bool = False,
    ) -> None:
        """`observer` hears of every request that ended (telemetry), with its prompt and answer
        when `capture_content`."""
        self.client = client
        self.local = LocalServers(gauge, client, sink)
        sessions = Sessions(gauge.ledger)
        self._shared = Shared(
            gauge,
            client,
            sink,
            retry,
            sleep,
            self.local,
            sessions,
            observer,
            capture_content,
            Replays(gauge.ledger),
            ReasoningMemory(),
            CompactionAsks(),
            LastSent(),
        )

    async def run(self, params: ChatParams) -> ChatResult:
        """Stream one response; its result, or `ChatError`."""
        return await ChatRequest.ask(self._shared, params).run()

    async def read_all_served(
        self, provider_id: str | None = None, api_key: str | None = None
    ) -> None:
        """Read every local model's served window (of one provider, if named, with its key): a
        new session, or models just listed, may have been loaded or reloaded since."""
        await self.local.read_all(provider_id, api_key)

    async def settled(self) -> None:
        """Wait for what the chats left running (the readings of a server after a response)."""
        await self.local.settled()
