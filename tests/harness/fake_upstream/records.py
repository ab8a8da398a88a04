"""What the test upstream saw: one record per request, with disconnect and finish events."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

# How a request ended.
PENDING = "pending"
COMPLETED = "completed"  # the whole response was written
DROPPED = "dropped"  # a fault made the server abort the connection
DISCONNECTED = "client_disconnected"  # the client closed the connection first

MODEL_ROUTES = ("chat", "messages", "responses", "ollama_chat")  # requests the model answers


@dataclass
class RecordedRequest:
    """One request (control requests are not recorded). Times are ``time.monotonic()``.

    ``headers`` keys are lower-cased. ``disconnected`` is set when the client closed the
    connection before the response was complete (``disconnected_at`` says when); ``finished`` is
    set when the handler is done, whatever the outcome.
    """

    id: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    json: Any
    route: str  # "chat", "messages", "responses", "ollama_chat", "count_tokens", "tokenize",
    # "models", "key", "replay" or "other"
    answer: int = 0  # the serial in the ids of what it is answered with (tool calls, messages):
    # unique across upstreams, as the APIs' random ids are
    received_at: float = field(default_factory=time.monotonic)
    status: int | None = None
    outcome: str = PENDING
    peer: str = ""  # the client's address and port: one per TCP connection
    bytes_sent: int = 0
    write_times: list[float] = field(default_factory=list)  # after each write of the body
    prompt_tokens: int | None = None  # the model's true count (model routes)
    prompt_tools: int | None = None  # ... of it, the tools
    prompt_messages: list[int] | None = None  # ... and each message, its overhead included
    prompt_encoded: int | None = None  # the encoder's count of all of it, unscaled
    prompt_text_ratio: float | None = None  # true ÷ encoder tokens of the messages' text
    output_tokens: int | None = None
    cached_tokens: int | None = None  # what the prompt cache served (``prompt_cache.py``)
    cache_written: int | None = None  # ... and took in (Anthropic)
    num_ctx: int | None = None  # the ``options.num_ctx`` the request asked for (Ollama)
    served_window: int | None = None  # the window the model was served with (local servers)
    load: str | None = None  # "loaded" / "reloaded" when this request (re)loaded the model
    # Set when the prompt was cut silently to the served window: {"prompt": true tokens,
    # "evaluated": what the model evaluated and the usage reports}.
    truncated: dict[str, int] | None = None
    refused: str | None = None  # why a reasoning model's server refused it (``reasoning.py``)
    scripted: bool = False
    finished_at: float | None = None
    disconnected_at: float | None = None
    disconnected: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    finished: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def chunks_sent(self) -> int:
        """How many writes the body took so far."""
        return len(self.write_times)

    @property
    def first_byte_at(self) -> float | None:
        """When the body's first write was done."""
        return self.write_times[0] if self.write_times else None

    def header(self, name: str, default: str | None = None) -> str | None:
        """A request header, case-insensitively."""
        return self.headers.get(name.lower(), default)

    def mark_disconnected(self) -> None:
        """The client went away before the response was complete."""
        if self.outcome == PENDING:
            self.outcome = DISCONNECTED
            self.disconnected_at = time.monotonic()
            self.disconnected.set()

    def finish(self, outcome: str = COMPLETED) -> None:
        """The handler is done (keeps an earlier outcome such as a disconnect)."""
        if self.outcome == PENDING:
            self.outcome = outcome
        if self.finished_at is None:
            self.finished_at = time.monotonic()
        self.finished.set()

    async def wait_disconnected(self, timeout: float = 5.0) -> float:
        """Wait until the client disconnect was seen; returns ``disconnected_at``."""
        await asyncio.wait_for(self.disconnected.wait(), timeout)
        assert self.disconnected_at is not None
        return self.disconnected_at

    async def wait_finished(self, timeout: float = 5.0) -> RecordedRequest:
        """Wait until the handler is done."""
        await asyncio.wait_for(self.finished.wait(), timeout)
        return self

    def to_json(self) -> dict[str, Any]:
        """JSON form (body as UTF-8 text) for ``GET /_control/requests``."""
        skip = {"disconnected", "finished", "body"}
        data = {k: v for k, v in vars(self).items() if k not in skip}
        data["body_text"] = self.body.decode("utf-8", "replace")
        data["chunks_sent"], data["first_byte_at"] = self.chunks_sent, self.first_byte_at
        data["is_disconnected"] = self.disconnected.is_set()
        data["is_finished"] = self.finished.is_set()
        return data
