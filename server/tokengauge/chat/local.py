"""The local servers (Ollama, LM Studio, llama.cpp, vLLM) as the chats meet them (ARCHITECTURE
§8): the window each serves its model with, read again at most every `READ_SECONDS`; the
`num_ctx` Ollama is asked to load; the exact count of a request where the server gives one; and a
prompt a server cut without an error, told once per model."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Sequence
from typing import Any, Final

import attrs
import httpx

from tokengauge.chat.output import ChatSink
from tokengauge.chat.route import Route, larger_window
from tokengauge.gauge import Gauge
from tokengauge.messages import Message, Tool, Usage
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.served import Served
from tokengauge.status import request_ended
from tokengauge.upstream.dialects.dialect import provider_headers
from tokengauge.upstream.exact_count import count_request
from tokengauge.upstream.served import load_in_ollama, read_served, served_kind

log = logging.getLogger(__name__)

READ_SECONDS: Final = 30.0
"""How often, at most, a chat reads the window its local server serves the model with (a model
loaded, reloaded or evicted since shows up within this)."""


class LocalServers:
    """What the chats learn of the local servers, across requests."""

    def __init__(self, gauge: Gauge, client: httpx.AsyncClient, sink: ChatSink) -> None:
        self.gauge = gauge
        self.client = client
        self.sink = sink
        self._read_at: dict[str, float] = {}
        self._told_cut: set[str] = set()
        self._background: set[asyncio.Task[None]] = set()

    async def read(
        self, model: ModelSpec, api_key: str | None, *, force: bool = False
    ) -> Served | None:
        """Read the window the model's server serves it with (at most every `READ_SECONDS`
        unless `force`d); VS Code asks for the models again if it moved."""
        now = time.monotonic()
        last = self._read_at.get(model.id)
        if not force and last is not None and now - last < READ_SECONDS:
            return None
        self._read_at[model.id] = now
        served = await read_served(
            self.client,
            model,
            provider_headers(model.provider, api_key),
            self.gauge.windows.asked_num_ctx(model),
            self.gauge.windows.last_num_ctx(model),
        )
        if served is not None and self.gauge.windows.apply_served(model, served):
            self.sink.models_changed()
            self.sink.calibration_changed(model.id)
        return served

    async def read_all(self, provider_id: str | None = None, api_key: str | None = None) -> None:
        """Read every local model's served window (of one provider, if named, with its key): a
        new session, or models just listed, may have been loaded or reloaded since."""
        for model in list(self.gauge.catalog):
            if served_kind(model.provider) is not None and provider_id in (None, model.provider.id):
                await self.read(model, api_key, force=True)

    def read_later(self, route: Route) -> None:
        """Read the model's served window again in the background, after a response."""
        self._later(self.read(route.model, route.api_key, force=True))

    async def settled(self) -> None:
        """Wait for the readings left running in the background."""
        while pending := list(self._background):
            await asyncio.gather(*pending)

    def _later(self, work: Awaitable[Any]) -> None:
        """Run `work` in the background (a failure is logged)."""

        async def run() -> None:
            try:
                await work
            except Exception:
                log.exception("a background reading of a local server failed")

        task = asyncio.get_running_loop().create_task(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def prepare(self, route: Route) -> None:
        """Before a request: read the window the server has loaded the model with, ask Ollama
        for the window to load, and add the `num_ctx` to send to the route's options (the
        person's own wins)."""
        model, gauge = route.model, self.gauge
        await self.read(model, route.api_key)
        served = gauge.served.get(model.id)
        if route.local == "ollama" and (served is None or not served.loaded):
            await load_in_ollama(
                self.client, model, route.headers(), gauge.windows.asked_num_ctx(model)
            )
            gauge.windows.num_ctx_sent(model, gauge.windows.asked_num_ctx(model))
            await self.read(model, route.api_key, force=True)
        num_ctx = gauge.num_ctx(model)
        if num_ctx is None:
            return
        asked = route.options.extra.get("options")
        asked = dict(asked) if isinstance(asked, dict) else {}
        num_ctx = asked.setdefault("num_ctx", num_ctx)
        extra = {**route.options.extra, "options": asked}
        route.options = attrs.evolve(route.options, extra=extra)
        gauge.windows.num_ctx_sent(model, num_ctx if isinstance(num_ctx, int) else None)

    async def count(
        self, route: Route, messages: Sequence[Message], tools: Sequence[Tool], given: list[Tool]
    ) -> bool:
        """Count the request exactly where the server can, when the calibration is due an anchor
        (`given`: the tools in full); True if the count anchored it."""
        now = time.monotonic()
        if not self.gauge.counts.anchor_due(route.model, now):
            return False
        body = route.body(messages, tools, 1)
        count = await count_request(self.client, route.model, body, route.headers())
        self.gauge.counts.anchor(route.model, messages, tools, given, count, now)
        return count is not None

    async def learn_cut(self, route: Route, usage: Usage, size: int) -> None:
        """After a response the server gave to a prompt of about `size` tokens it cut: learn the
        window it really has, have VS Code ask for the models again, and tell the person once
        per model."""
        model = route.model
        served = await self.read(model, route.api_key, force=True)
        window = self.gauge.windows.learn_cut(model, usage, served)
        self.sink.models_changed()
        self.sink.calibration_changed(model.id)
        server = model.provider.id
        self.sink.status(request_ended(model.name, f"prompt cut by {server}", "warning"))
        if model.id in self._told_cut:
            return
        self._told_cut.add(model.id)
        message = (
            f"{server} cut a request to {model.name} without an error: it read "
            f"{usage.total_input_tokens:,} tokens of about {size:,}, so that answer missed the "
            f"start of the conversation. Token Gauge now keeps requests within the {window:,} "
            f"tokens it serves, and Copilot summarizes sooner. For a longer window, "
            f"{larger_window(model)}."
        )
        # Ollama's window is the model's numCtx; the other servers' are none of our settings.
        self.sink.notice(message, "tokenGauge.models" if route.local == "ollama" else None)
