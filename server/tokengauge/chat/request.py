"""One chat request (ARCHITECTURE §3, §8): asked, fitted, sent, streamed, learned from, logged.

`ChatRequest.run` is the whole life of a `tokenGauge/chat` request. It knows nothing of LSP:
parts, status, calibration and model changes leave through the `ChatSink`. A request that cannot
fit its window is fitted by the recovery ladder (`chat.recovery`) before it is sent and, after an
overflow error (an HTTP status, or an `error` event before any part of the answer), once again.
Retries happen only before the first part reached the user: error statuses back off as
`upstream.retry` says, broken connections likewise for at most `max_attempts` tries; `A + B > C`
and output-cap errors are retried once at once with a `max_tokens` that fits. A failure is said in
`upstream.explain`'s words; a "retrying" status is always followed, when the request ends, by a
true one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable

import attrs
import httpx

from tokengauge.activity.conversations import is_summary, marker
from tokengauge.activity.record import Outcome, RequestRecord
from tokengauge.calibration.classify import ErrorKind, classify_error
from tokengauge.chat.answer import Answer, Attempt, StreamFailed
from tokengauge.chat.cached_summary import LastSent, Sent, aligned_messages, foreground_summary
from tokengauge.chat.compaction import CompactionAsks
from tokengauge.chat.local import LocalServers
from tokengauge.chat.output import ChatError, ChatSink, ending
from tokengauge.chat.reasoning import (
    REASONING_ERRORS,
    ReasoningMemory,
    Replays,
    prepared,
    replay_advice,
)
from tokengauge.chat.recovery import Fitting
from tokengauge.chat.route import Route, chat_options
from tokengauge.gauge import Gauge
from tokengauge.messages import Message, TextPart, Usage, unstructure
from tokengauge.notes import cut_note, without_notes
from tokengauge.protocol import (
    AGENT_HOST,
    ChatParams,
    ChatResult,
    Severity,
    StatefulMarkerPart,
)
from tokengauge.status import request_ended, retrying, with_trim
from tokengauge.telemetry.request import EndedRequest, TraceParent
from tokengauge.upstream.attribution import (
    NONE,
    Attribution,
    Sessions,
    attribution_for,
    cache_keyed,
    described,
    takes_cache_key,
    wants_session,
)
from tokengauge.upstream.errors import (
    ConnectionFailed,
    HttpStatusError,
    StreamStalled,
    UpstreamError,
)
from tokengauge.upstream.retry import RetryPolicy
from tokengauge.upstream.tool_docs import shown_whole

log = logging.getLogger(__name__)


@attrs.frozen
class Shared:
    """What every chat request uses and that outlasts it (`ChatRunner` makes it once)."""

    gauge: Gauge
    client: httpx.AsyncClient
    sink: ChatSink
    retry: RetryPolicy
    sleep: Callable[[float], Awaitable[None]]
    local: LocalServers
    sessions: Sessions
    observer: Callable[[EndedRequest], None] | None
    """Hears of every request that ended (telemetry)."""
    capture_content: bool
    """The observer hears of each request's prompt and answer too."""
    replays: Replays
    """Each model's reasoning rule, as set and as taught (Chat Completions servers)."""
    memory: ReasoningMemory
    """The reasoning each answer came with, put back where the client drops it."""
    asks: CompactionAsks
    """The Agents window's runtime's requests refused so that it compacts (`chat.compaction`)."""
    sent: LastSent
    """Each conversation's last request as sent, for its summary to be asked over
    (`chat.cached_summary`)."""


@attrs.define
class ChatRequest:
    """One chat request and what has been decided about it so far."""

    shared: Shared
    params: ChatParams
    route: Route
    fitting: Fitting
    answer: Answer
    asked: list[Message] = attrs.field(factory=list)
    """The messages as asked, before the reasoning rule prepared them."""
    attribution: Attribution = NONE
    """What the request tells its gateway (`upstream.attribution`)."""
    replayed: bool = False
    """Sent again the other way after a 400 that named reasoning: only once."""
    conversation: str | None = None
    """The conversation the request was told before it was sent, when its session names it."""
    tries: int = 0
    status_owed: bool = False
    """A "retrying" status was shown: the request's end must replace it with a true one."""
    usage: Usage | None = None
    """What the API reported, once it has."""
    finish: str | None = None
    cut: bool = False
    """The local server cut the prompt without an error (`Counts.silently_cut`)."""
    cut_size: int = 0
    """What the request cut most likely came to (`Counts.expected_size`)."""
    started_ns: int = attrs.field(factory=time.time_ns)
    declared_then: int = 0
    """The model's declared `maxInputTokens` when the request came (`Gauge.runtime_limit`)."""
    before: Sent | None = None
    """The conversation's last request to this model, as it was sent, if known."""

    @classmethod
    def ask(cls, shared: Shared, params: ChatParams) -> ChatRequest:
        """The request as asked, not sent yet: its model (with the window and `toolDocs` its
        options pick), its options and where it goes."""
        gauge, sink = shared.gauge, shared.sink
        params = attrs.evolve(params, messages=[without_notes(m) for m in params.messages])
        model = gauge.offer.model(params.model_id)
        options = chat_options(model, params)
        windows = gauge.windows
        if (options.context_size is not None and windows.choose(model, options.context_size)) or (
            options.compact_at is not None and windows.choose_compaction(model, options.compact_at)
        ):
            sink.models_changed()  # its window changed: VS Code asks for the models again
        if options.tool_docs is not None and options.tool_docs != model.tool_docs:
            model = attrs.evolve(model, tool_docs=options.tool_docs)  # picked for this model
        gauge.bar.tool_docs_used(model)
        api_key = params.credentials.api_key if params.credentials else None
        route = Route.to(model, options, api_key)
        asked = params.messages
        if route.dialect.name == "openai":
            shared.memory.remember_request(model.id, asked)
            rule = shared.replays.rule(model)
            params = attrs.evolve(params, messages=prepared(asked, rule, shared.memory, model.id))
        fitting = Fitting.start(gauge, sink, shared.local, shared.asks, route, params)
        before = _sent_before(shared, fitting)
        fitting.knowing(before)
        text: list[str] | None = [] if shared.capture_content else None
        answer = Answer(sink, params.request_id, fitting, text)
        # Only the Agents window's runtime keeps the limit its session began with.
        agent_host = params.client == AGENT_HOST
        declared_then = gauge.offer.declarations.get(model).max_input if agent_host else 0
        return cls(
            shared,
            params,
            route,
            fitting,
            answer,
            asked,
            before=before,
            declared_then=declared_then,
        )

    async def run(self) -> ChatResult:
        """Stream one response; its result, or `ChatError`."""
        try:
            if self.route.local is not None:
                await self.fitting.ask_server()
            if not self._over_last_sent():
                self.fitting.fit()
            self._attribute()
            result = self._finish(await self._attempts())
        except ChatError as exc:
            self._log("failed", exc.brief, exc.kind)
            self._settle(exc.brief, "error")
            raise
        except BaseException as exc:  # the status must not keep saying "retrying"
            cancelled = isinstance(exc, asyncio.CancelledError)
            kind = "cancelled" if cancelled else type(exc).__name__
            self._log("cancelled" if cancelled else "failed", type(exc).__name__, kind)
            self._settle("cancelled", "info")
            raise
        self._settle("answered", "info")
        if self.cut:
            assert self.usage is not None
            await self.shared.local.learn_cut(self.route, self.usage, self.cut_size)
        elif self.route.local is not None:
            self.shared.local.read_later(self.route)
        return result

    def _over_last_sent(self) -> bool:
        """Copilot's foreground summary, fitted as the conversation's last request as sent and
        its instructions after it (`chat.cached_summary`), if that fits with nothing cut: True
        if the request now sends that, tools kept and tool choice none."""
        params, shared = self.params, self.shared
        summary = foreground_summary(params.messages) if params.client != AGENT_HOST else None
        if summary is None:
            return False
        previous = self.before
        messages = None if previous is None else aligned_messages(summary, previous)
        if previous is None or messages is None:
            return False
        route = attrs.evolve(self.route, options=attrs.evolve(self.route.options, tool_mode="none"))
        params = attrs.evolve(params, messages=messages, tools=list(previous.given))
        shown = shown_whole(previous.tools, previous.given)
        aligned = Fitting.start(
            shared.gauge, shared.sink, shared.local, shared.asks, route, params, shown
        )
        try:
            aligned.fit()
        except ChatError:
            return False
        kept = aligned.tools == list(previous.tools) and aligned.messages[:-1] == list(
            previous.messages
        )
        if aligned.fitted.removed or not kept:
            log.info("%s: its summary did not fit over its last request", self.route.model.id)
            return False
        log.info("%s: the summary is asked over the conversation's last request", route.model.id)
        self.route, self.params, self.fitting, self.answer.fitting = route, params, aligned, aligned
        return True

    def _attribute(self) -> None:
        """What the request tells its gateway, if its provider asks, and its API's cache key, if
        it takes one: the request's kind and, for a session or a cache key, the conversation its
        answer's marker will name (known before it is sent)."""
        provider, fitting, gauge = self.route.model.provider, self.fitting, self.shared.gauge
        cache_key = takes_cache_key(provider)
        if provider.attribution is None and not cache_key:
            return
        held = self.params.messages if fitting.fitted.dropped else None
        kind, self.conversation = gauge.history.ahead(
            fitting.messages,
            fitting.tools,
            fitting.estimate,
            held,
            conversation=wants_session(provider) or cache_key,
        )
        session = None if self.conversation is None else self.shared.sessions.of(self.conversation)
        self.attribution = attribution_for(
            provider, kind=kind, session=session, workspace_name=gauge.settings.workspace_name
        )
        if cache_key:
            self.attribution = cache_keyed(self.attribution, session)
        log.debug("%s: attributed by %s", self.route.model.id, described(self.attribution))

    async def _attempts(self) -> Attempt:
        """Send until a try is answered, recovering from what failed while that is possible."""
        route = self.route
        while True:
            self.tries += 1
            attempt = Attempt(self.answer)
            try:
                await attempt.send(self.shared.client, self.attribution)
                return attempt
            except HttpStatusError as exc:
                await self._recover_from_status(exc, attempt)
            except StreamFailed as exc:
                await self._recover_from_stream(exc, attempt)
            except (ConnectionFailed, StreamStalled) as exc:
                if attempt.parts or not self.shared.retry.tries_left(self.tries):
                    raise ChatError("connection", route.explain(exc), route.brief(exc)) from None
                await self._wait(route.brief(exc), None)
            except UpstreamError as exc:
                raise ChatError("upstream", route.explain(exc), route.brief(exc)) from None

    async def _recover_from_status(self, exc: HttpStatusError, attempt: Attempt) -> None:
        """Adjust and return to try again, or raise the `ChatError` a person should see."""
        route = self.route
        body = route.redact(exc.body)
        error = classify_error(exc.status, body)
        if exc.refuses_key or error.kind is ErrorKind.AUTH:
            raise ChatError("auth", route.explain(exc), route.brief(exc))
        if error.kind is ErrorKind.OVERFLOW:
            await self.fitting.recover(error)
            return
        if error.kind in REASONING_ERRORS:
            if self._replay_otherwise(error.kind):
                return
            todo = replay_advice(route.model, error.kind)
            raise ChatError("reasoning", route.explain(exc, error.message, todo), route.brief(exc))
        if (
            error.kind is ErrorKind.OUTPUT_LIMIT
            and error.limit_tokens
            and self.fitting.cap_output(error.limit_tokens)
        ):
            return
        if attempt.parts or not self.shared.retry.allows(
            self.tries, exc.status, exc.retry_after, exc.should_retry
        ):
            raise ChatError(error.kind.value, route.explain(exc, error.message), route.brief(exc))
        await self._wait(route.brief(exc), exc.retry_after)

    def _replay_otherwise(self, kind: ErrorKind) -> bool:
        """After a 400 that named reasoning: the request fitted again, its reasoning sent back
        the way the server asked (and kept for the model), if that is still to be tried."""
        model, shared = self.route.model, self.shared
        rule = None if self.replayed else shared.replays.learn(model, kind)
        if rule is None:
            return False
        self.replayed = True
        messages = prepared(self.asked, rule, shared.memory, model.id)
        params = attrs.evolve(self.params, messages=messages)
        fitting = Fitting.start(
            shared.gauge, shared.sink, shared.local, shared.asks, self.route, params
        )
        fitting.fit()
        self.params, self.fitting, self.answer.fitting = params, fitting, fitting
        return True

    async def _recover_from_stream(self, failed: StreamFailed, attempt: Attempt) -> None:
        """After an error inside the stream: an overflow before any part is recovered from as an
        HTTP 400 would be; anything else is the `ChatError` a person should see."""
        body = self.route.redact(failed.error.body or failed.error.message)
        error = classify_error(None, body)
        if error.kind is not ErrorKind.OVERFLOW:
            message = self.route.midstream(failed.error.message)
            raise ChatError(error.kind.value, message, "error mid-response")
        if attempt.parts:
            raise self.fitting.too_late(error)
        await self.fitting.recover(error)

    async def _wait(self, reason: str, after: float | None) -> None:
        """Wait before the next try, and say so."""
        model, retry = self.route.model, self.shared.retry
        delay = retry.delay(self.tries, after)
        log.warning(
            "%s: %s; retrying in %.1f s (try %d of %d)",
            model.id,
            reason,
            delay,
            self.tries + 1,
            retry.max_attempts,
        )
        self.status_owed = True
        self.shared.sink.status(retrying(model, reason, delay, self.tries + 1, retry.max_attempts))
        await self.shared.sleep(delay)

    def _settle(self, outcome: str, severity: Severity) -> None:
        """After a "retrying" status, a true one: the failure, else the usage status (or, with
        no usage yet, what became of the request)."""
        if not self.status_owed:
            return
        self.status_owed = False
        status = self.shared.gauge.bar.conversation() if severity != "error" else None
        self.shared.sink.status(status or request_ended(self.route.model.name, outcome, severity))

    def _finish(self, attempt: Attempt) -> ChatResult:
        """Learn from the answered try's usage, log the request, and end the answer with its
        usage part."""
        gauge, sink, fitting = self.shared.gauge, self.shared.sink, self.fitting
        model, estimate, request_id = self.route.model, fitting.estimate, self.params.request_id
        self.answer.begin()
        self.finish = attempt.finish
        usage = attempt.usage
        if usage is None:
            log.warning("%s sent no usage; nothing learned from this response", model.id)
            usage = Usage(
                input_tokens=estimate.total, output_tokens=0, total_input_tokens=estimate.total
            )
            conversation = self._log("answered")
            if fitting.expect_next_tools(self.answer.called):
                sink.calibration_changed(model.id)
            sent = estimate.total
        elif gauge.counts.silently_cut(model, estimate, usage):
            self.usage, self.cut = usage, True
            log.warning(
                "%s: its server counted %d input tokens of a request of about %d: it cut the "
                "prompt without an error; nothing learned from its usage",
                model.id,
                usage.total_input_tokens,
                estimate.total,
            )
            size = self.cut_size = gauge.counts.expected_size(model, estimate)
            note = cut_note(model.name, usage.total_input_tokens, size, self.answer.fence_open)
            sink.part(request_id, TextPart(note))
            conversation = self._log("answered")
            sent = estimate.total  # what was really sent
        else:
            self.usage = usage
            learned = gauge.learn_usage(
                model, fitting.messages, fitting.tools, usage, estimate, given=self.params.tools
            )
            if learned.models_changed:
                sink.models_changed()
            conversation = self._log("answered")  # before the status: today's cost too
            fitting.expect_next_tools(self.answer.called)
            sink.calibration_changed(model.id)
            gauge.frequent.save_if_due()  # survives a crash, not only a clean shutdown
            status = gauge.bar.status()
            self.status_owed = False
            sink.status(with_trim(status, fitting.fitted) if fitting.fitted.changed else status)
            sent = usage.total_input_tokens
        if conversation is not None and self.params.client != AGENT_HOST:
            self._keep_sent(conversation)
        limit = None
        if self.params.client == AGENT_HOST:
            limit = gauge.runtime_limit(model, conversation, self.declared_then)
        prompt = gauge.client_prompt(model, sent, limit)
        if self.answer.reasoning is not None:  # the client may drop it before it must go back
            self.shared.memory.remember(model.id, self.answer.keys(), self.answer.reasoning)
        if conversation is not None:  # the next request of the conversation brings it back
            sink.part(request_id, StatefulMarkerPart(marker(conversation)))
        part, result = ending(usage, prompt, attempt.usage is None, fitting.fitted, attempt.finish)
        sink.part(request_id, part)
        return result

    def _keep_sent(self, conversation: str) -> None:
        """Remember the request as sent, if it is a turn's, as its conversation's last."""
        fitting, answer = self.fitting, self.answer
        if is_summary(fitting.messages) or not fitting.tools:
            return
        sent = Sent(
            tuple(fitting.messages),
            tuple(fitting.tools),
            tuple(self.params.tools),
            answer.head,
            tuple(answer.calls),
            self.route.model.id,
            fitting.fitted.decisions,
        )
        self.shared.sent.keep(conversation, sent)

    def _log(
        self, outcome: Outcome, error: str | None = None, error_type: str | None = None
    ) -> str | None:
        """Add the request to the usage history, and say so (to telemetry too); its
        conversation, if it has one (a failure here fails no chat)."""
        fitting, answer, model = self.fitting, self.answer, self.route.model
        try:
            record = self.shared.gauge.history.log(
                model,
                fitting.messages,
                fitting.tools,
                fitting.estimate,
                outcome,
                usage=self.usage,
                error=None if outcome == "answered" else error,
                trimmed_tokens=fitting.fitted.tokens,
                ladder=fitting.fitted.removed,
                retries=max(0, self.tries - 1),
                answer_text=answer.head,
                answer_calls=answer.calls,
                held=self.params.messages if fitting.fitted.dropped else None,
                cut=self.cut,
                ahead=self.conversation,
            )
            self.shared.sink.activity()
        except Exception:
            log.exception("%s: the request could not be added to the usage history", model.id)
            return None
        if self.shared.observer is not None:
            try:
                self.shared.observer(self._ended(record, error_type))
            except Exception:
                log.exception("%s: telemetry could not take the request", model.id)
        return record.conversation

    def _ended(self, record: RequestRecord, error_type: str | None) -> EndedRequest:
        """What telemetry is told of a request that ended."""
        route, text = self.route, self.answer.text
        captured = text is not None
        return EndedRequest(
            record=record,
            provider=route.model.provider,
            url=route.url,
            start_ns=self.started_ns,
            end_ns=time.time_ns(),
            first_chunk_ns=self.answer.first_ns,
            parent=TraceParent.from_model_options(self.params.model_options),
            max_tokens=self.fitting.max_tokens,
            temperature=route.options.temperature,
            top_p=route.options.top_p,
            finish_reason=self.finish,
            error_type=error_type,
            input_messages=json.dumps(unstructure(self.fitting.messages)) if captured else None,
            output_text="".join(text) if text is not None else None,
        )


def _sent_before(shared: Shared, fitting: Fitting) -> Sent | None:
    """The conversation's last request (of this session) to the same model, as it was sent."""
    if fitting.params.client == AGENT_HOST:
        return None
    _, conversation = shared.gauge.history.ahead(
        fitting.messages, fitting.tools, fitting.estimate, None, conversation=True
    )
    return shared.sent.of(conversation, fitting.route.model.id)
