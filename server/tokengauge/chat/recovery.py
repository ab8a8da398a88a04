"""The recovery ladder as a chat request climbs it (ARCHITECTURE §8): before sending, a request
whose calibrated estimate plus a useful output floor cannot fit the window is shrunk
(`calibration.ladder.climb`) instead of sent; after an overflow, once, the same with what the
error taught, or only a smaller `max_tokens` when the output alone did not fit."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from tokengauge.calibration.classify import ParsedError
from tokengauge.calibration.ladder import CannotFit, Fitted, Room, climb, largest_tool_call
from tokengauge.calibration.masking import mask_old_results
from tokengauge.calibration.precedent import Decisions
from tokengauge.calibration.repeats import refer_repeats
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.calibration.trim import Cut, Truncator, cap_tool_results
from tokengauge.chat.cached_summary import Sent
from tokengauge.chat.compaction import RUNTIME_OVERFLOW, CompactionAsks, compact_first_message
from tokengauge.chat.local import LocalServers
from tokengauge.chat.output import ChatError, ChatSink
from tokengauge.chat.route import Route, larger_window
from tokengauge.formatting import compact
from tokengauge.gauge import Gauge
from tokengauge.messages import Message, Tool
from tokengauge.models import budget
from tokengauge.models.catalog import ModelSpec
from tokengauge.protocol import AGENT_HOST, ChatParams, Client
from tokengauge.upstream.tool_docs import shown_whole, tool_forms, tools_as_sent

log = logging.getLogger(__name__)


@attrs.frozen
class Lesson:
    """What an overflow taught."""

    taught: bool
    """The model's limit, or the size of requests, was learned."""
    max_tokens: int | None
    """A `max_tokens` that fits, when only the output overflowed."""


@attrs.define
class Fitting:
    """What a request sends, fitted to its model's window, and what fitting it took."""

    gauge: Gauge
    sink: ChatSink
    local: LocalServers
    asks: CompactionAsks
    route: Route
    params: ChatParams
    messages: list[Message]
    tools: list[Tool]
    """In the form the model's `toolDocs` asks for."""
    estimate: RequestEstimate
    fitted: Fitted
    """What the ladder (and the tool-result cap) did to the request."""
    max_tokens: int = 1
    resized: bool = False
    """Fitted again, or given a smaller `max_tokens`, after an error: only once."""
    shown: frozenset[str] = frozenset()
    """Tools the conversation's last request sent whole: they stay whole (`tool_docs`)."""
    since: Decisions | None = None
    """What the ladder took for the conversation's last request: taken again (`precedent`)."""

    @classmethod
    def start(
        cls,
        gauge: Gauge,
        sink: ChatSink,
        local: LocalServers,
        asks: CompactionAsks,
        route: Route,
        params: ChatParams,
        shown: frozenset[str] = frozenset(),
    ) -> Fitting:
        """The request as it came, not fitted yet (`shown`: the tools the conversation's last
        request sent whole)."""
        model = route.model
        tools = tools_as_sent(params.tools, params.messages, model.tool_docs, shown)
        estimate = gauge.counts.estimate(model, params.messages, tools, params.tools)
        fitted = Fitted(params.messages, tools, 0)
        messages = params.messages
        return cls(
            gauge, sink, local, asks, route, params, messages, tools, estimate, fitted, shown=shown
        )

    def knowing(self, before: Sent | None) -> None:
        """The conversation's last request as it was sent (if known): under `progressive` the
        tools it sent whole stay whole, and what the ladder took for it is taken again."""
        if before is None:
            return
        model, params = self.route.model, self.params
        decisions = before.decisions
        if decisions is not None and list(before.given) != params.tools:
            decisions = decisions.without_form()
        self.since = decisions
        if model.tool_docs != "progressive" or not params.tools:
            return
        self.shown = shown_whole(before.tools, before.given)
        if self.shown - shown_whole(self.tools, params.tools):
            self.tools = tools_as_sent(params.tools, params.messages, model.tool_docs, self.shown)
            self.estimate = self.gauge.counts.estimate(
                model, params.messages, self.tools, params.tools
            )

    async def ask_server(self) -> None:
        """For a local server: the window it has loaded the model with, the window to ask
        Ollama for, and the request counted exactly where the server can."""
        route, params = self.route, self.params
        await self.local.prepare(route)
        if await self.local.count(route, self.messages, self.tools, params.tools):
            self.estimate = self.gauge.counts.estimate(
                route.model, self.messages, self.tools, params.tools
            )
            self.sink.calibration_changed(route.model.id)

    def lightened(self) -> list[Message]:
        """The messages with older tool rounds' results as stubs and repeated results as
        references, as the settings ask: the same for the same messages, so each request of a
        conversation makes the same changes as the one before."""
        settings, model_id = self.gauge.settings, self.route.model.id
        messages = list(self.params.messages)
        if settings.mask_tool_results_after is not None:
            masked = mask_old_results(messages, settings.mask_tool_results_after)
            messages = masked.messages
            if masked.results:
                log.info(
                    "%s: %d results of older tool rounds sent as stubs (%s characters)",
                    model_id,
                    masked.results,
                    f"{masked.chars:,}",
                )
        if settings.deduplicate_tool_results:
            referred = refer_repeats(messages)
            messages = referred.messages
            if referred.results:
                log.info(
                    "%s: %d repeated tool results sent as references (%s characters)",
                    model_id,
                    referred.results,
                    f"{referred.chars:,}",
                )
        return messages

    def fit(self) -> None:
        """Lighten the messages (`lightened`), cap the tool results if asked to, climb the ladder
        if the request cannot fit, and size `max_tokens`; the `ChatError` a person should see if
        nothing makes it fit."""
        gauge, model, params = self.gauge, self.route.model, self.params
        truncator = Truncator(gauge.counts.counter(model).text.encoding)
        messages = self.lightened()
        capped = Cut(messages)
        cap = gauge.settings.tool_result_max_tokens
        if cap is not None:
            capped = cap_tool_results(messages, truncator, cap)
        limit = gauge.windows.limit(model)
        window = budget.effective_window(model, limit)
        floor = budget.output_floor(model, limit)
        least = budget.least_output_floor(floor, largest_tool_call(capped.messages, truncator))
        room = Room(window, budget.safety_tokens(window), floor, least)
        since, loop = self._taken_before(capped.messages)
        forms = tool_forms(params.tools, capped.messages, model.tool_docs, self.shown, loop=loop)
        usual = forms[0][1]

        def estimate(messages: Sequence[Message], tools: Sequence[Tool]) -> RequestEstimate:
            return gauge.counts.estimate(
                model, messages, tools, params.tools, remember=tools is usual
            )

        try:
            fitted = climb(capped.messages, forms, truncator, estimate, room, since)
        except CannotFit as exc:
            raise ChatError(
                "overflow", _cannot_fit_message(model, exc, room, params.client)
            ) from None
        if params.client == AGENT_HOST and self.asks.ask(
            params.messages, fitted, self.estimate, room.target(room.floor)
        ):
            raise ChatError("overflow", compact_first_message(model, self.estimate, window))
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
        self.fitted = fitted
        self.messages, self.tools = fitted.messages, fitted.tools
        self.estimate = estimate(self.messages, self.tools)
        asked = self.route.options.max_tokens
        self.max_tokens = budget.clamp_max_tokens(model, self.estimate.total, limit, asked)

    def _taken_before(self, messages: Sequence[Message]) -> tuple[Decisions | None, bool]:
        """What the ladder takes again of the conversation's last request (its cuts where
        `messages` continue it; where Copilot compacted it, only the tools' form), and whether
        the request goes on with a tool loop, whose tools stay as they were (`tool_docs`)."""
        since = self.since
        if since is None:
            return None, False
        in_loop = bool(messages) and messages[-1].tool_results_only
        loop = self.route.model.tool_docs == "progressive" and in_loop
        return (since if since.continued_by(messages) else since.only_form()), loop

    async def recover(self, error: ParsedError) -> None:
        """Learn from an overflow (and, for a local server, read again what it has loaded: it may
        have been reloaded smaller) and fit the request to return and try again, once; else raise
        the `ChatError` a person should see."""
        lesson = self._learn(error)
        model = self.route.model
        if self.route.local is not None:
            await self.local.read(model, self.route.api_key, force=True)
        if self.resized or not (lesson.taught or lesson.max_tokens):
            raise ChatError("overflow", overflow_message(model, error, self.params.client))
        self.resized = True
        if lesson.max_tokens is not None:
            self.max_tokens = lesson.max_tokens
            log.info(
                "%s: input + max_tokens overflowed; retrying with %d", model.id, self.max_tokens
            )
        else:  # the input itself did not fit: shrink it with what the error taught, once
            self.fit()
            log.info("%s: retrying with the request fitted to what the API counted", model.id)

    def too_late(self, error: ParsedError) -> ChatError:
        """Learn from an overflow reported after a part of the answer: the `ChatError` to raise."""
        self._learn(error)
        return ChatError("overflow", overflow_message(self.route.model, error, self.params.client))

    def cap_output(self, limit: int) -> bool:
        """Keep `max_tokens` within the model's output cap, once: False if resized already."""
        if self.resized:
            return False
        self.resized, self.max_tokens = True, min(self.max_tokens, limit)
        log.info("%s: output cap is %d; retrying", self.route.model.id, limit)
        return True

    def expect_next_tools(self, called: set[str]) -> bool:
        """After an answer that ends a turn (it `called` no tool), the next turn shows whole the
        tools its tool loop called in their progressive form (within the loop they stayed as
        they were: `tool_docs`): Copilot's count of the tools follows at once, so its next render
        is budgeted for them. True if that changed the model's tool scale."""
        model, params = self.route.model, self.params
        if model.tool_docs != "progressive" or called or not params.tools:
            return False
        following = tools_as_sent(params.tools, params.messages, model.tool_docs, self.shown)
        return self.gauge.counts.expect_tools(model, following, params.tools)

    def _learn(self, error: ParsedError) -> Lesson:
        """Learn from an overflow, and say what changed."""
        gauge, epoch, model = self.gauge, self.gauge.epoch, self.route.model
        learned = gauge.learn_error(model, self.messages, error, self.estimate)
        taught = learned.learned_limit is not None or gauge.epoch != epoch
        if taught:
            self.sink.calibration_changed(model.id)
        if learned.models_changed:
            self.sink.models_changed()
        return Lesson(taught, _output_room(error))


def _output_room(error: ParsedError) -> int | None:
    """A `max_tokens` that fits, if the error says the output alone did not."""
    if error.input_tokens is None or error.output_tokens is None or error.limit_tokens is None:
        return None
    room = error.limit_tokens - error.input_tokens - budget.safety_tokens(error.limit_tokens)
    return room if 0 < room < error.output_tokens else None


def overflow_message(model: ModelSpec, error: ParsedError, client: Client = "chat") -> str:
    """What a person is told of an overflow the ladder could not recover from, in words the
    client acts on."""
    if error.input_tokens is not None and error.limit_tokens is not None:
        detail = f"{error.input_tokens:,} tokens for a {error.limit_tokens:,}-token window"
    else:
        detail = f"the provider said: {error.message}"
    if client == AGENT_HOST:
        return (
            f"{RUNTIME_OVERFLOW} for {model.name} ({detail}). Token Gauge has learned its real "
            "size; the conversation is compacted to fit and the turn sent again."
        )
    return (
        f"The conversation is too long for {model.name} ({detail}). Token Gauge has learned "
        "its real size; your next message will be summarized to fit."
    )


def _cannot_fit_message(model: ModelSpec, exc: CannotFit, room: Room, client: Client) -> str:
    estimate = exc.estimate
    tools = "" if not estimate.tools else f" and the tools {compact(estimate.tools)}"
    lead = f"{RUNTIME_OVERFLOW}: t" if client == AGENT_HOST else "T"
    return (
        f"{lead}his request cannot fit {model.name}'s {compact(room.window)}-token window. Token "
        "Gauge cut the tool results and your message to their beginning and end, left out every "
        "earlier message, sent the tools' shortest documentation and kept only "
        f"{compact(room.least_floor)} tokens for the answer, and it still comes to about "
        f"{compact(estimate.total)} tokens where {compact(exc.target)} fit (the system prompt "
        f"{compact(estimate.system)}{tools}). Start a new chat, turn off tools you do not need "
        f"(Configure Tools in the chat view), or {larger_window(model)}."
    )
