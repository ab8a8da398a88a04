"""The answer as it streams back (ARCHITECTURE §3): each event of a try handed on to the person as
a part, and what the answer has shown so far, over every try (its tool calls, its beginning, a code
block it leaves open), for the usage history and telemetry."""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

import attrs
import httpx

from tokengauge.activity.conversations import ANSWER_HEAD, is_summary
from tokengauge.chat.output import ChatSink
from tokengauge.chat.reasoning import text_key
from tokengauge.chat.recovery import Fitting
from tokengauge.messages import TextPart, ThinkingPart, ToolCallPart, Usage
from tokengauge.notes import ladder_note
from tokengauge.upstream.attribution import Attribution
from tokengauge.upstream.dialects.body import merged_headers
from tokengauge.upstream.dialects.events import (
    Finish,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
    header_cost,
    message_part,
)
from tokengauge.upstream.errors import ConnectionFailed
from tokengauge.upstream.http import drain, open_sse

log = logging.getLogger(__name__)


class StreamFailed(Exception):
    """The API reported an error inside the stream."""

    def __init__(self, error: StreamError) -> None:
        super().__init__(error.message)
        self.error = error


@attrs.define
class Answer:
    """What of the answer has reached the person, over every try."""

    sink: ChatSink
    request_id: str
    fitting: Fitting
    """What the request sends (the answer begins with what the ladder cut of it)."""
    text: list[str] | None = None
    """The whole answer's text, kept only when telemetry captures content."""
    calls: list[ToolCallPart] = attrs.field(factory=list)
    """The tool calls the answer made."""
    head: str = ""
    """The beginning of the answer's text (the usage history tells conversations by it)."""
    noted: bool = False
    """The note of what the ladder cut was dealt with: sent, or left out of a summary."""
    fence_open: bool = False
    """The answer's text so far leaves a code block open (a note must close it first)."""
    tail: str = ""
    """The answer's last two characters (a fence may be split between deltas)."""
    first_ns: int | None = None
    """When the first part of the answer came (Unix ns)."""
    reasoning: ThinkingPart | None = None
    """The reasoning a Chat Completions server sent with the answer, to go back with it."""
    digest: Any = attrs.field(factory=hashlib.sha256)
    """The SHA-256 of the answer's text so far (what an answer without calls is known by)."""

    def begin(self) -> None:
        """Begin the answer with what the ladder cut, once: the person must know the model did
        not see everything (a text part: the only kind VS Code shows; the next requests leave it
        out again, `notes.without_notes`). Not a summary's: its text becomes the conversation
        Copilot and the runtime send from then on, the note with it, and no person reads it."""
        fitted = self.fitting.fitted
        if self.noted or not fitted.changed:
            return
        self.noted = True
        if is_summary(self.fitting.params.messages):
            return
        note = ladder_note(self.fitting.route.model.name, fitted)
        self.sink.part(self.request_id, TextPart(note))

    def add(self, piece: TextDelta | ThinkingDelta | ThinkingBlock | ToolCall) -> bool:
        """Hand on a piece of the answer to the person; True if it was a part they see."""
        if isinstance(piece, (TextDelta, ToolCall)):
            self.begin()
        part = message_part(piece)
        if isinstance(piece, ThinkingDelta) and not piece.value:
            part = None  # an empty piece of reasoning is no part
        if part is not None:
            self.first_ns = self.first_ns or time.time_ns()
            self.sink.part(self.request_id, part)
        if isinstance(part, ThinkingPart) and part.carried:
            self.reasoning = part
        if isinstance(part, ToolCallPart):
            self.calls.append(part)
        elif isinstance(piece, TextDelta):
            self._track_fences(piece.value)
            self.digest.update(piece.value.encode("utf-8", "surrogatepass"))
            if self.text is not None:
                self.text.append(piece.value)
            if len(self.head) < ANSWER_HEAD:
                self.head += piece.value
        return part is not None

    @property
    def called(self) -> set[str]:
        """The names of the tools the answer called."""
        return {call.name for call in self.calls}

    def keys(self) -> list[str]:
        """What the answer is known by when it comes back: its tool calls, else its text."""
        return [call.key() for call in self.calls] or [text_key(self.digest)]

    def _track_fences(self, text: str) -> None:
        """Follow whether the answer's text leaves a code block (```) open."""
        joined = self.tail + text
        self.fence_open ^= joined.count("```") % 2 == 1
        self.tail = joined[-2:]


@attrs.define
class Attempt:
    """One try: the request sent as fitted, and what its answer has produced so far."""

    answer: Answer
    parts: int = 0
    usage: Usage | None = None
    finish: str | None = None
    header_cost: float | None = None
    """The cost the response's headers stated (a LiteLLM proxy's), if any."""

    async def send(self, client: httpx.AsyncClient, attribution: Attribution) -> None:
        """Send the request and hand on each event of its answer: `StreamFailed` when the API
        reports an error inside the stream, `ConnectionFailed` when it ends before the answer."""
        fitting = self.answer.fitting
        route, messages, tools = fitting.route, fitting.messages, fitting.tools
        body = attribution.add_to(route.body(messages, tools, fitting.max_tokens))
        headers = merged_headers(attribution.headers, route.headers())
        parser = route.dialect.parser()
        log.debug(
            "%s: POST %s (%d messages, %d tools, max_tokens %d)",
            route.model.id,
            route.url,
            len(messages),
            len(tools),
            fitting.max_tokens,
        )
        async with open_sse(client, route.url, headers, body, self._took_headers) as events:
            async for sse in events:
                for event in parser.feed(sse.event, sse.data):
                    self._take(event)
                if parser.ended:
                    await drain(events)
                    break
        for event in parser.finish():
            self._take(event)
        if not parser.ended and self.finish is None:
            raise ConnectionFailed("the stream ended before the response was complete")

    def _took_headers(self, headers: httpx.Headers) -> None:
        """Keep the cost the response's headers state."""
        self.header_cost = header_cost(headers)

    def _take(self, event: StreamEvent) -> None:
        if isinstance(event, (TextDelta, ThinkingDelta, ThinkingBlock, ToolCall)):
            if self.answer.add(event):
                self.parts += 1
        elif isinstance(event, Usage):
            # The body's figure is the whole response's; a header was written before it ended.
            if event.cost_usd is None and self.header_cost is not None:
                event = attrs.evolve(event, cost_usd=self.header_cost)
            self.usage = event
        elif isinstance(event, Finish):
            self.finish = event.reason
        elif isinstance(event, StreamError):
            raise StreamFailed(event)
