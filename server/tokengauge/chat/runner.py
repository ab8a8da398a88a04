"""One chat request: count, fit, send, stream, learn from usage and errors (ARCHITECTURE §3, §8).

`ChatRunner.run` is the whole life of a `tokenGauge/chat` request. It knows nothing of LSP:
parts, status, calibration and model changes leave through the callbacks of `ChatSink`. Before
sending, a request whose calibrated estimate plus a useful output floor cannot fit the window is
shrunk (`calibration.trim.shrink`) instead of sent; after an overflow error (an HTTP status, or
an `error` event before any part of the answer), once, the same with what the error taught.
Retries happen only before the first part reached the user: error statuses back off as
`upstream.retry` says, broken connections likewise for at most
`max_attempts` tries; `A + B > C` and output-cap errors are retried once at once with a
`max_tokens` that fits. A failure is said in `upstream.explain`'s words; a "retrying" status is
always followed, when the request ends, by a true one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, Protocol

import attrs
import httpx

from tokengauge.activity.conversations import ANSWER_HEAD, marker
from tokengauge.activity.record import Outcome, RequestRecord
from tokengauge.calibration.classify import ErrorKind, ParsedError, classify_error
from tokengauge.calibration.estimates import RequestEstimate
from tokengauge.calibration.ladder import CannotFit, Fitted, Room, climb, largest_tool_call
from tokengauge.calibration.trim import Cut, Truncator, cap_tool_results
from tokengauge.formatting import compact
from tokengauge.gauge import Gauge
from tokengauge.messages import InvalidInput, Message, TextPart, Tool, Usage, unstructure
from tokengauge.models import budget
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.served import Served
from tokengauge.protocol import (
    ChatParams,
    ChatPart,
    ChatResult,
    RecordErrorParams,
    RecordUsageParams,
    Severity,
    StatefulMarkerPart,
    Status,
    TrimReport,
    UsagePart,
)
from tokengauge.status import (
    cut_note,
    ladder_note,
    request_ended,
    with_trim,
    without_notes,
)
from tokengauge.telemetry.request import EndedRequest, TraceParent
from tokengauge.upstream.attribution import (
    NONE,
    Attribution,
    Sessions,
    attribution_for,
    described,
    wants_session,
)
from tokengauge.upstream.dialects import Dialect, dialect_for, provider_headers
from tokengauge.upstream.errors import (
    ConnectionFailed,
    HttpStatusError,
    StreamStalled,
    UpstreamError,
)
from tokengauge.upstream.events import (
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
from tokengauge.upstream.exact_count import count_request
from tokengauge.upstream.explain import brief, explain, midstream
from tokengauge.upstream.http import drain, open_sse
from tokengauge.upstream.options import ChatOptions, parse_model_options, with_defaults
from tokengauge.upstream.redact import provider_secrets, redact
from tokengauge.upstream.request_body import merged_headers
from tokengauge.upstream.retry import RetryPolicy
from tokengauge.upstream.served import load_in_ollama, read_served, served_kind
from tokengauge.upstream.tool_docs import tool_forms, tools_as_sent

log = logging.getLogger(__name__)

READ_SECONDS: Final = 30.0
"""How often, at most, a chat reads the window its local server serves the model with (a model
loaded, reloaded or evicted since shows up within this)."""


class ChatError(Exception):
    """A chat that failed; `kind` says why, the message says it to a person, and `brief` in a
    few words (for the status bar)."""

    def __init__(self, kind: str, message: str, brief: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.brief = brief or kind.replace("_", " ")


class ChatSink(Protocol):
    """Where a chat's output goes (the language server, or a test)."""

    def part(self, request_id: str, part: ChatPart) -> None: ...
    def status(self, status: Status) -> None: ...
    def models_changed(self) -> None: ...
    def calibration_changed(self, model_id: str) -> None: ...
    def activity(self) -> None: ...
    def notice(self, message: str, setting: str | None) -> None: ...


def openai_usage(usage: Usage, prompt_tokens: int) -> dict[str, Any]:
    """The OpenAI-style usage JSON that Copilot reads from a `usage` data part, the input in the
    units the model's window is declared in (`prompt_tokens`: what Copilot's compaction compares
    with `maxInputTokens`)."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


@attrs.define
class _Attempt:
    """What one try has produced so far."""

    parts: int = 0
    usage: Usage | None = None
    finish: str | None = None
    header_cost: float | None = None
    """The cost the response's headers stated (a LiteLLM proxy's), if any."""

    def took_headers(self, headers: httpx.Headers) -> None:
        """Keep the cost the response's headers state."""
        self.header_cost = header_cost(headers)


@attrs.define
class _Chat:
    """One chat request and what has been decided about it so far."""

    params: ChatParams
    model: ModelSpec
    options: ChatOptions
    dialect: Dialect
    api_key: str | None
    url: str
    """Where the request goes."""
    messages: list[Message]
    """What is sent: the request's messages, trimmed if they could not fit."""
    tools: list[Tool]
    """What is sent: the request's tools, in the form the model's `toolDocs` asks for."""
    estimate: RequestEstimate
    max_tokens: int
    fitted: Fitted
    """What the recovery ladder (and the tool-result cap) did to the request."""
    resized: bool = False
    tries: int = 0
    usage: Usage | None = None
    """What the API reported, once it has."""
    calls: list[str] = attrs.field(factory=list)
    """The ids of the tool calls the answer made."""
    called: set[str] = attrs.field(factory=set)
    """The names of the tools the answer called."""
    answer_head: str = ""
    """The beginning of the answer's text (the usage history tells conversations by it)."""
    noted: bool = False
    """The answer began with the note of what the ladder cut."""
    status_owed: bool = False
    """A "retrying" status was shown: the request's end must replace it with a true one."""
    cut: bool = False
    """The local server cut the prompt without an error (`Gauge.silently_cut`)."""
    cut_size: int = 0
    """What the request cut most likely came to (`Gauge.expected_size`)."""
    fence_open: bool = False
    """The answer's text so far leaves a code block open (a note must close it first)."""
    text_tail: str = ""
    """The answer's last two characters (a fence may be split between deltas)."""
    started_ns: int = attrs.field(factory=time.time_ns)
    first_chunk_ns: int | None = None
    """When the first part of the answer came (Unix ns)."""
    finish: str | None = None
    answer: list[str] | None = None
    """The whole answer's text, kept only when telemetry captures content."""
    attribution: Attribution = NONE
    """What the request tells its gateway (`upstream.attribution`)."""
    conversation: str | None = None
    """The conversation the request was told before it was sent, when its session names it."""

    def track_fences(self, text: str) -> None:
        """Follow whether the answer's text leaves a code block (```) open."""
        joined = self.text_tail + text
        self.fence_open ^= joined.count("```") % 2 == 1
        self.text_tail = joined[-2:]

    def redact(self, text: str) -> str:
        """`text` without the API key or another of the provider's credentials in it."""
        return redact(text, *provider_secrets(self.model.provider, self.api_key))

    def explain(self, failure: UpstreamError, said: str | None = None) -> str:
        """What went wrong and what to do, without the key."""
        provider = self.model.provider
        return explain(
            provider, self.url, failure, model=self.model.id, said=said, key=self.api_key
        )

    def brief(self, failure: UpstreamError) -> str:
        """The failure in a few words."""
        return brief(self.model.provider, self.url, failure)


class _StreamOverflow(Exception):
    """An overflow reported inside a stream before any part of the answer (OpenAI's Responses
    API streams its overflow as an `error` event)."""

    def __init__(self, error: ParsedError, body: str) -> None:
        super().__init__(error.message)
        self.error, self.body = error, body


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
        self.gauge = gauge
        self.client = client
        self.sink = sink
        self.retry = retry
        self.sleep = sleep
        self.observer = observer
        self.capture_content = capture_content
        self.sessions = Sessions(gauge.ledger)
        self._read_at: dict[str, float] = {}
        self._told_cut: set[str] = set()
        self._background: set[asyncio.Task[None]] = set()

    def _prepare(self, params: ChatParams) -> _Chat:
        params = attrs.evolve(params, messages=[without_notes(m) for m in params.messages])
        model = self.gauge.model(params.model_id)
        try:
            defaults = parse_model_options(params.tool_mode, model.options)
        except InvalidInput as exc:
            message = str(exc).replace("modelOptions", f"options of {model.id} (tokenGauge.models)")
            raise InvalidInput(message) from None
        options = with_defaults(
            parse_model_options(params.tool_mode, params.model_options), defaults
        )
        if options.context_size is not None and self.gauge.choose_context_size(
            model, options.context_size
        ):
            self.sink.models_changed()  # its window changed: VS Code asks for the models again
        if options.tool_docs is not None and options.tool_docs != model.tool_docs:
            model = attrs.evolve(model, tool_docs=options.tool_docs)  # picked for this model
        self.gauge.tool_docs_used(model)
        dialect = dialect_for(model)
        tools = tools_as_sent(params.tools, params.messages, model.tool_docs)
        chat = _Chat(
            params=params,
            model=model,
            options=options,
            dialect=dialect,
            api_key=params.credentials.api_key if params.credentials else None,
            url=dialect.url(model.provider.base_url),
            messages=params.messages,
            tools=tools,
            estimate=self.gauge.estimate(model, params.messages, tools, params.tools),
            max_tokens=1,
            fitted=Fitted(params.messages, tools, 0),
            answer=[] if self.capture_content else None,
        )
        return chat

    def _fit(self, chat: _Chat) -> None:
        """Cap the tool results if asked to, climb the recovery ladder if the request cannot fit,
        and size `max_tokens`."""
        model, params = chat.model, chat.params
        truncator = Truncator(self.gauge.counter(model).text.encoding)
        capped = Cut(params.messages)
        cap = self.gauge.settings.tool_result_max_tokens
        if cap is not None:
            capped = cap_tool_results(params.messages, truncator, cap)
        limit = self.gauge.window_limit(model)
        window = budget.effective_window(model, limit)
        floor = budget.output_floor(model, limit)
        least = budget.least_output_floor(floor, largest_tool_call(capped.messages, truncator))
        room = Room(window, budget.safety_tokens(window), floor, least)
        forms = tool_forms(params.tools, capped.messages, model.tool_docs)
        usual = forms[0][1]

        def estimate(messages: Sequence[Message], tools: Sequence[Tool]) -> RequestEstimate:
            return self.gauge.estimate(
                model, messages, tools, params.tools, remember=tools is usual
            )

        try:
            fitted = climb(capped.messages, forms, truncator, estimate, room)
        except CannotFit as exc:
            raise ChatError("overflow", _cannot_fit_message(chat, exc, room)) from None
        if fitted.changed:
            log.warning(
                "%s: the request would not fit its %s-token window: %s (%s tokens)",
                model.id,
                f"{window:,}",
                fitted.describe(),
                ", ".join(f"{rung} {tokens:,}" for rung, tokens in fitted.removed.items()),
            )
        if capped.changed:
            removed = dict(fitted.removed)
            removed["toolResults"] = removed.get("toolResults", 0) + capped.tokens
            fitted = attrs.evolve(
                fitted,
                tool_results=max(fitted.tool_results, capped.tool_results),
                removed=removed,
            )
        chat.fitted = fitted
        chat.messages, chat.tools = fitted.messages, fitted.tools
        chat.estimate = estimate(chat.messages, chat.tools)
        chat.max_tokens = budget.clamp_max_tokens(
            model, chat.estimate.total, limit, chat.options.max_tokens
        )

    async def run(self, params: ChatParams) -> ChatResult:
        """Stream one response; its result, or `ChatError`."""
        chat = self._prepare(params)
        try:
            await self._ask_server(chat)
            self._fit(chat)
            self._attribute(chat)
            result = await self._attempts(chat)
        except ChatError as exc:
            self._log(chat, "failed", exc.brief, exc.kind)
            self._settle(chat, exc.brief, "error")
            raise
        except BaseException as exc:  # the status must not keep saying "retrying"
            cancelled = isinstance(exc, asyncio.CancelledError)
            kind = "cancelled" if cancelled else type(exc).__name__
            self._log(chat, "cancelled" if cancelled else "failed", type(exc).__name__, kind)
            self._settle(chat, "cancelled", "info")
            raise
        self._settle(chat, "answered", "info")
        if chat.cut:
            await self._learn_cut(chat)
        elif served_kind(chat.model.provider) is not None:
            self._later(self._read_served(chat.model, chat.api_key, force=True))
        return result

    def _attribute(self, chat: _Chat) -> None:
        """What the request tells its gateway, if its provider asks: the request's kind and, for
        a session, the conversation its answer's marker will name (known before it is sent)."""
        provider = chat.model.provider
        if provider.attribution is None:
            return
        held = chat.params.messages if chat.fitted.dropped else None
        kind, chat.conversation = self.gauge.ahead(
            chat.messages, chat.tools, chat.estimate, held, conversation=wants_session(provider)
        )
        session = None if chat.conversation is None else self.sessions.of(chat.conversation)
        chat.attribution = attribution_for(
            provider, kind=kind, session=session, workspace_name=self.gauge.settings.workspace_name
        )
        log.debug("%s: attributed by %s", chat.model.id, described(chat.attribution))

    async def _ask_server(self, chat: _Chat) -> None:
        """For a local server: read the window it has loaded the model with, ask Ollama for the
        window to load (`num_ctx`), and count the request exactly where the server can."""
        model = chat.model
        if served_kind(model.provider) is None:
            return
        await self._read_served(model, chat.api_key)
        served = self.gauge.served.get(model.id)
        if served_kind(model.provider) == "ollama" and (served is None or not served.loaded):
            headers = provider_headers(model.provider, chat.api_key)
            await load_in_ollama(self.client, model, headers, self.gauge.asked_num_ctx(model))
            self.gauge.num_ctx_sent(model, self.gauge.asked_num_ctx(model))
            await self._read_served(model, chat.api_key, force=True)
        num_ctx = self.gauge.num_ctx(model)
        if num_ctx is not None:
            asked = chat.options.extra.get("options")
            asked = dict(asked) if isinstance(asked, dict) else {}
            num_ctx = asked.setdefault("num_ctx", num_ctx)  # the person's own options win
            extra = {**chat.options.extra, "options": asked}
            chat.options = attrs.evolve(chat.options, extra=extra)
            self.gauge.num_ctx_sent(model, num_ctx if isinstance(num_ctx, int) else None)
        now = time.monotonic()
        if self.gauge.anchor_due(model, now):
            body = chat.dialect.body(model, chat.messages, chat.tools, chat.options, 1)
            headers = provider_headers(model.provider, chat.api_key)
            count = await count_request(self.client, model, body, headers)
            self.gauge.anchor(model, chat.messages, chat.tools, chat.params.tools, count, now)
            if count is not None:
                chat.estimate = self.gauge.estimate(
                    model, chat.messages, chat.tools, chat.params.tools
                )
                self.sink.calibration_changed(model.id)

    async def _read_served(
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
            self.gauge.asked_num_ctx(model),
            self.gauge.last_num_ctx(model),
        )
        if served is not None and self.gauge.apply_served(model, served):
            self.sink.models_changed()
            self.sink.calibration_changed(model.id)
        return served

    async def read_all_served(
        self, provider_id: str | None = None, api_key: str | None = None
    ) -> None:
        """Read every local model's served window (of one provider, if named, with its key): a
        new session, or models just listed, may have been loaded or reloaded since."""
        for model in list(self.gauge.catalog):
            if served_kind(model.provider) is not None and provider_id in (None, model.provider.id):
                await self._read_served(model, api_key, force=True)

    async def settled(self) -> None:
        """Wait for what the chats left running (the readings of a server after a response)."""
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

    async def _learn_cut(self, chat: _Chat) -> None:
        """After a response the server gave to a prompt it cut: learn the window it really has,
        have VS Code ask for the models again, and tell the person once per model."""
        model, usage = chat.model, chat.usage
        assert usage is not None
        served = await self._read_served(model, chat.api_key, force=True)
        window = self.gauge.learn_cut(model, usage, served)
        self.sink.models_changed()
        self.sink.calibration_changed(model.id)
        server = model.provider.id
        self.sink.status(request_ended(model.name, f"prompt cut by {server}", "warning"))
        if model.id in self._told_cut:
            return
        self._told_cut.add(model.id)
        self.sink.notice(_cut_message(chat, window), _cut_setting(model))

    def _log(
        self,
        chat: _Chat,
        outcome: Outcome,
        error: str | None = None,
        error_type: str | None = None,
    ) -> str | None:
        """Add the request to the usage history, and say so (to telemetry too); its
        conversation, if it has one (a failure here fails no chat)."""
        try:
            record = self.gauge.log_request(
                chat.model,
                chat.messages,
                chat.tools,
                chat.estimate,
                outcome,
                usage=chat.usage,
                error=None if outcome == "answered" else error,
                trimmed_tokens=chat.fitted.tokens,
                ladder=chat.fitted.removed,
                retries=max(0, chat.tries - 1),
                answer_text=chat.answer_head,
                answer_calls=chat.calls,
                held=chat.params.messages if chat.fitted.dropped else None,
                cut=chat.cut,
                ahead=chat.conversation,
            )
            self.sink.activity()
        except Exception:
            log.exception("%s: the request could not be added to the usage history", chat.model.id)
            return None
        if self.observer is not None:
            try:
                self.observer(self._ended(chat, record, error_type))
            except Exception:
                log.exception("%s: telemetry could not take the request", chat.model.id)
        return record.conversation

    def _ended(self, chat: _Chat, record: RequestRecord, error_type: str | None) -> EndedRequest:
        """What telemetry is told of a request that ended."""
        captured = chat.answer is not None
        return EndedRequest(
            record=record,
            provider=chat.model.provider,
            url=chat.url,
            start_ns=chat.started_ns,
            end_ns=time.time_ns(),
            first_chunk_ns=chat.first_chunk_ns,
            parent=TraceParent.from_model_options(chat.params.model_options),
            max_tokens=chat.max_tokens,
            temperature=chat.options.temperature,
            top_p=chat.options.top_p,
            finish_reason=chat.finish,
            error_type=error_type,
            input_messages=json.dumps(unstructure(chat.messages)) if captured else None,
            output_text="".join(chat.answer) if chat.answer is not None else None,
        )

    async def _attempts(self, chat: _Chat) -> ChatResult:
        attempt = 0
        while True:
            attempt += 1
            chat.tries = attempt
            progress = _Attempt()
            try:
                await self._stream(chat, progress)
                return self._finish(chat, progress)
            except HttpStatusError as exc:
                await self._recover_from_status(chat, attempt, progress, exc)
            except _StreamOverflow as exc:  # before any part: as an HTTP 400 would be
                await self._recover_from_overflow(chat, exc.error, None, exc.body)
            except (ConnectionFailed, StreamStalled) as exc:
                if progress.parts or not self.retry.tries_left(attempt):
                    raise ChatError("connection", chat.explain(exc), chat.brief(exc)) from None
                await self._wait(chat, attempt, chat.brief(exc), None)
            except UpstreamError as exc:
                raise ChatError("upstream", chat.explain(exc), chat.brief(exc)) from None

    def _settle(self, chat: _Chat, outcome: str, severity: Severity) -> None:
        """After a "retrying" status, a true one: the failure, else the usage status (or, with
        no usage yet, what became of the request)."""
        if not chat.status_owed:
            return
        chat.status_owed = False
        status = self.gauge.conversation_status() if severity != "error" else None
        self.sink.status(status or request_ended(chat.model.name, outcome, severity))

    async def _recover_from_overflow(
        self, chat: _Chat, error: ParsedError, status: int | None, body: str
    ) -> None:
        """Learn from an overflow (and, for a local server, read again what it has loaded: it may
        have been reloaded smaller) and fit the request to return and try again, once; else raise
        the `ChatError` a person should see."""
        fitted, taught = self._learn_overflow(chat, error, status, body)
        if served_kind(chat.model.provider) is not None:
            await self._read_served(chat.model, chat.api_key, force=True)
        if chat.resized or not (taught or fitted):
            raise ChatError("overflow", _overflow_message(chat, error))
        chat.resized = True
        if fitted is not None:
            chat.max_tokens = fitted
            log.info("%s: input + max_tokens overflowed; retrying with %d", chat.model.id, fitted)
        else:  # the input itself did not fit: shrink it with what the error taught, once
            self._fit(chat)
            log.info("%s: retrying with the request fitted to what the API counted", chat.model.id)

    async def _recover_from_status(
        self, chat: _Chat, attempt: int, progress: _Attempt, exc: HttpStatusError
    ) -> None:
        """Adjust and return to try again, or raise the `ChatError` a person should see."""
        body = chat.redact(exc.body)
        error = classify_error(exc.status, body)
        if exc.refuses_key or error.kind is ErrorKind.AUTH:
            raise ChatError("auth", chat.explain(exc), chat.brief(exc))
        if error.kind is ErrorKind.OVERFLOW:
            await self._recover_from_overflow(chat, error, exc.status, body)
            return
        if error.kind is ErrorKind.OUTPUT_LIMIT and error.limit_tokens and not chat.resized:
            chat.resized, chat.max_tokens = True, min(chat.max_tokens, error.limit_tokens)
            log.info("%s: output cap is %d; retrying", chat.model.id, error.limit_tokens)
            return
        if progress.parts or not self.retry.allows(
            attempt, exc.status, exc.retry_after, exc.should_retry
        ):
            raise ChatError(error.kind.value, chat.explain(exc, error.message), chat.brief(exc))
        await self._wait(chat, attempt, chat.brief(exc), exc.retry_after)

    async def _stream(self, chat: _Chat, progress: _Attempt) -> None:
        model = chat.model
        body = chat.dialect.body(model, chat.messages, chat.tools, chat.options, chat.max_tokens)
        body = chat.attribution.add_to(body)
        url = chat.url
        headers = merged_headers(
            chat.attribution.headers, provider_headers(model.provider, chat.api_key)
        )
        parser = chat.dialect.parser()
        log.debug(
            "%s: POST %s (%d messages, %d tools, max_tokens %d)",
            model.id,
            url,
            len(chat.messages),
            len(chat.tools),
            chat.max_tokens,
        )
        async with open_sse(self.client, url, headers, body, progress.took_headers) as events:
            async for sse in events:
                for event in parser.feed(sse.event, sse.data):
                    self._handle(chat, event, progress)
                if parser.ended:
                    await drain(events)
                    break
        for event in parser.finish():
            self._handle(chat, event, progress)
        if not parser.ended and progress.finish is None:
            raise ConnectionFailed("the stream ended before the response was complete")

    def _note(self, chat: _Chat) -> None:
        """Begin the answer with what the ladder cut, once: the person must know the model did
        not see everything (a text part: the only kind VS Code shows; the next requests leave it
        out again, `status.without_notes`)."""
        if chat.noted or not chat.fitted.changed:
            return
        chat.noted = True
        note = ladder_note(chat.model.name, chat.fitted)
        self.sink.part(chat.params.request_id, TextPart(note))

    def _handle(self, chat: _Chat, event: StreamEvent, progress: _Attempt) -> None:
        if isinstance(event, (TextDelta, ToolCall)):
            self._note(chat)
        if isinstance(event, (TextDelta, ThinkingDelta, ThinkingBlock, ToolCall)):
            part = message_part(event)
            if part is not None and (not isinstance(event, ThinkingDelta) or event.value):
                progress.parts += 1
                chat.first_chunk_ns = chat.first_chunk_ns or time.time_ns()
                self.sink.part(chat.params.request_id, part)
            if isinstance(event, ToolCall):
                chat.calls.append(event.call_id)
                chat.called.add(event.name)
            elif isinstance(event, TextDelta):
                chat.track_fences(event.value)
                if chat.answer is not None:
                    chat.answer.append(event.value)
                if len(chat.answer_head) < ANSWER_HEAD:
                    chat.answer_head += event.value
        elif isinstance(event, Usage):
            # The body's figure is the whole response's; a header was written before it ended.
            if event.cost_usd is None and progress.header_cost is not None:
                event = attrs.evolve(event, cost_usd=progress.header_cost)
            progress.usage = event
        elif isinstance(event, Finish):
            progress.finish = event.reason
        elif isinstance(event, StreamError):
            body = chat.redact(event.body or event.message)
            error = classify_error(None, body)
            if error.kind is ErrorKind.OVERFLOW:
                if not progress.parts:
                    raise _StreamOverflow(error, body)
                self._learn_overflow(chat, error, None, body)
                raise ChatError("overflow", _overflow_message(chat, error))
            message = midstream(chat.model.provider, chat.url, event.message, chat.api_key)
            raise ChatError(error.kind.value, message, "error mid-response")

    def _finish(self, chat: _Chat, progress: _Attempt) -> ChatResult:
        self._note(chat)
        chat.finish = progress.finish
        model, params, estimate = chat.model, chat.params, chat.estimate
        usage = progress.usage
        if usage is None:
            log.warning("%s sent no usage; nothing learned from this response", model.id)
            usage = Usage(
                input_tokens=estimate.total, output_tokens=0, total_input_tokens=estimate.total
            )
            conversation = self._log(chat, "answered")
            if self._expect_next_tools(chat):
                self.sink.calibration_changed(model.id)
            prompt = self.gauge.client_prompt(model, estimate.total)
        elif self.gauge.silently_cut(model, estimate, usage):
            chat.usage, chat.cut = usage, True
            log.warning(
                "%s: its server counted %d input tokens of a request of about %d: it cut the "
                "prompt without an error; nothing learned from its usage",
                model.id,
                usage.total_input_tokens,
                estimate.total,
            )
            size = chat.cut_size = self.gauge.expected_size(model, estimate)
            note = cut_note(model.name, usage.total_input_tokens, size, chat.fence_open)
            self.sink.part(params.request_id, TextPart(note))
            conversation = self._log(chat, "answered")
            prompt = self.gauge.client_prompt(model, estimate.total)  # what was really sent
        else:
            chat.usage = usage
            recorded = self.gauge.record_usage(
                RecordUsageParams(model.id, chat.messages, usage, chat.tools),
                estimate,
                log_request=False,
                given=params.tools,
            )
            if recorded.models_changed:
                self.sink.models_changed()
            prompt = recorded.client_prompt or usage.total_input_tokens
            conversation = self._log(chat, "answered")  # before the status: today's cost too
            self._expect_next_tools(chat)
            self.sink.calibration_changed(model.id)
            self.gauge.frequent.save_if_due()  # survives a crash, not only a clean shutdown
            status = self.gauge.status()
            chat.status_owed = False
            self.sink.status(with_trim(status, chat.fitted) if chat.fitted.changed else status)
        if conversation is not None:  # the next request of the conversation brings it back
            self.sink.part(params.request_id, StatefulMarkerPart(marker(conversation)))
        data = openai_usage(usage, prompt)
        trimmed = _trim_report(chat.fitted)
        part = UsagePart(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            total_input_tokens=usage.total_input_tokens,
            estimated=progress.usage is None,
            data=data,
            trimmed=trimmed,
        )
        self.sink.part(params.request_id, part)
        return ChatResult(data, progress.finish or "stop", trimmed)

    def _expect_next_tools(self, chat: _Chat) -> bool:
        """After an answer that called tools shown in their minimal form, the next request (the
        calls' results) shows them whole: Copilot's count of the tools follows at once, so its
        next render is budgeted for them. True if that changed the model's tool scale."""
        model, params = chat.model, chat.params
        if model.tool_docs != "progressive" or not chat.called or not params.tools:
            return False
        following = tools_as_sent(params.tools, params.messages, model.tool_docs, chat.called)
        return self.gauge.expect_tools(model, following, params.tools)

    def _learn_overflow(
        self, chat: _Chat, error: ParsedError, status: int | None, body: str
    ) -> tuple[int | None, bool]:
        """Learn from an overflow: a `max_tokens` that fits if only the output overflowed, and
        whether the error taught anything (a limit, or the request's size)."""
        epoch = self.gauge.epoch
        result = self.gauge.record_error(
            RecordErrorParams(chat.model.id, chat.messages, body, status, chat.tools),
            chat.estimate,
            log_request=False,
        )
        taught = result.learned_limit is not None or self.gauge.epoch != epoch
        if taught:
            self.sink.calibration_changed(chat.model.id)
        if result.models_changed:
            self.sink.models_changed()
        if error.input_tokens is None or error.output_tokens is None or error.limit_tokens is None:
            return None, taught
        room = error.limit_tokens - error.input_tokens - budget.safety_tokens(error.limit_tokens)
        return (room if 0 < room < error.output_tokens else None), taught

    async def _wait(self, chat: _Chat, attempt: int, reason: str, after: float | None) -> None:
        model = chat.model
        delay = self.retry.delay(attempt, after)
        log.warning(
            "%s: %s; retrying in %.1f s (try %d of %d)",
            model.id,
            reason,
            delay,
            attempt + 1,
            self.retry.max_attempts,
        )
        chat.status_owed = True
        self.sink.status(
            Status(
                text=f"$(sync~spin) {model.provider.id}: retrying in {delay:.0f}s",
                tooltip=f"{model.name}: {reason}. Try {attempt + 1} of {self.retry.max_attempts}.",
                severity="warning",
            )
        )
        await self.sleep(delay)


def _overflow_message(chat: _Chat, error: ParsedError) -> str:
    if error.input_tokens is not None and error.limit_tokens is not None:
        detail = f"{error.input_tokens:,} tokens for a {error.limit_tokens:,}-token window"
    else:
        detail = f"the provider said: {error.message}"
    return (
        f"The conversation is too long for {chat.model.name} ({detail}). Token Gauge has learned "
        "its real size; your next message will be summarized to fit."
    )


def _cut_message(chat: _Chat, window: int) -> str:
    usage = chat.usage
    evaluated = usage.total_input_tokens if usage is not None else 0
    server = chat.model.provider.id
    size = chat.cut_size
    return (
        f"{server} cut a request to {chat.model.name} without an error: it read {evaluated:,} "
        f"tokens of about {size:,}, so that answer missed the start of the "
        f"conversation. Token Gauge now keeps requests within the {window:,} tokens it serves, "
        f"and Copilot summarizes sooner. For a longer window, {_larger_window(chat.model)}."
    )


def _cut_setting(model: ModelSpec) -> str | None:
    """The setting that fixes a cut: Ollama's `numCtx`, else none of ours."""
    return "tokenGauge.models" if served_kind(model.provider) == "ollama" else None


def _trim_report(fitted: Fitted) -> TrimReport | None:
    """What the ladder did, for the response's last part; None if it did nothing."""
    if not fitted.changed:
        return None
    return TrimReport(
        tool_results=fitted.tool_results,
        messages=fitted.dropped,
        tokens=fitted.tokens,
        tool_docs=fitted.tool_docs,
        output_floor=fitted.output_floor if "output" in fitted.removed else None,
        removed=fitted.removed,
    )


def _cannot_fit_message(chat: _Chat, exc: CannotFit, room: Room) -> str:
    estimate = exc.estimate
    tools = "" if not estimate.tools else f" and the tools {compact(estimate.tools)}"
    return (
        f"This request cannot fit {chat.model.name}'s {compact(room.window)}-token window. Token "
        "Gauge cut the tool results and your message to their beginning and end, left out every "
        "earlier message, sent the tools' shortest documentation and kept only "
        f"{compact(room.least_floor)} tokens for the answer, and it still comes to about "
        f"{compact(estimate.total)} tokens where {compact(exc.target)} fit (the system prompt "
        f"{compact(estimate.system)}{tools}). Start a new chat, turn off tools you do not need "
        f"(Configure Tools in the chat view), or {_larger_window(chat.model)}."
    )


def _larger_window(model: ModelSpec) -> str:
    """How a person gets a larger window for the model."""
    kind = served_kind(model.provider)
    if kind == "ollama":
        return (
            "have Ollama load the model with more context (the model's numCtx setting, or "
            "OLLAMA_CONTEXT_LENGTH)"
        )
    if kind is not None:
        return "load the model with a larger context length in its server"
    return "pick a model with a larger window"
