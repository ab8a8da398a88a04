"""The send path's recovery ladder (ARCHITECTURE §8: never an unrecoverable token limit).

A request whose calibrated estimate, with room for a useful answer, does not fit the window is
fitted before it is sent instead of refused, rung by rung:

0. `reasoning`: the longest reasoning of earlier turns that a Chat Completions server reads back
   (DeepSeek: every tool call's, in every later request) cut head + tail to a common length, never
   the current tool loop's, nor any that a signature goes with (`trim.reasoning_texts`);
1. `toolResults`: the largest tool results cut head + tail to a common length (`trim`);
2. `history`: the oldest exchanges left out, whole;
3. `toolDocs`: the tools in a reduced form for this request (progressive, then minimal:
   `upstream.tool_docs`; names, types, enums, nesting and required parameters unchanged);
4. `output`: a smaller output floor for this request, never below what a tool call of the
   conversation needed (`budget.least_output_floor`);
5. `userMessage`: the turn's own user message cut head + tail;

and only then refused (`CannotFit`). A rung is taken only when every rung before it, taken in full,
is not enough, and then only as far as needed (in a conversation that goes on, a step past it
where the rung can: `STEP_ROUNDS`): the later the rung, the dearer what it costs the
conversation. Never the system prompt. What the conversation's last request took is taken again
first (`precedent`), so that the prefix the API cached holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final

import attrs

from tokengauge.calibration.precedent import Decisions, as_held, merged
from tokengauge.calibration.request_estimate import RequestEstimate
from tokengauge.calibration.trim import (
    Cuts,
    Path,
    Text,
    Truncator,
    apply,
    history_units,
    level,
    reasoning_texts,
    shortest,
    tool_texts,
    turn_texts,
)
from tokengauge.messages import Message, Tool, ToolCallPart, to_json_text

RUNGS: Final = ("reasoning", "toolResults", "history", "toolDocs", "output", "userMessage")
"""The rungs in the order they are taken (the usage history's names)."""
MAX_PASSES: Final = 4
"""Tries at cutting texts only as far as needed before taking them as far as they go."""
STEP_ROUNDS: Final = 2
"""A rung taken in a conversation that grew since its last request goes past what the request
needs by this many times what it grew, where the rung can: the requests after it grow as much
again, and those that still fit take the same cuts (`precedent`)."""
STEP_SHARE: Final = 0.25
"""The most a step goes past what a request needs: this share of the input target."""

Estimate = Callable[[Sequence[Message], Sequence[Tool]], RequestEstimate]
"""The request's calibrated estimate, given its messages and its tools."""
ToolForm = tuple[str, list[Tool]]
"""A form of the request's tools and its name (`full`, `progressive`, `minimal`)."""


@attrs.frozen
class Room:
    """What a request must fit: the window less the output floor and a safety margin."""

    window: int
    safety: int
    floor: int
    """The output a request keeps room for."""
    least_floor: int
    """The smallest output floor the `output` rung may go to."""

    def target(self, floor: int) -> int:
        """The most input that still leaves `floor` for the answer."""
        return max(1, self.window - floor - self.safety)


class CannotFit(Exception):
    """Even with every rung taken in full, the request does not fit."""

    def __init__(self, estimate: RequestEstimate, target: int) -> None:
        super().__init__(f"{estimate.total:,} tokens after every rung, {target:,} allowed")
        self.estimate = estimate
        self.target = target


@attrs.frozen
class Fitted:
    """The request as it will be sent, and what each rung took to make it fit."""

    messages: list[Message]
    tools: list[Tool]
    output_floor: int
    reasoning: int = 0
    """Earlier reasoning cut."""
    tool_results: int = 0
    """Tool results cut."""
    dropped: int = 0
    """Earlier messages left out."""
    tool_docs: str | None = None
    """The tools' form the `toolDocs` rung took, if it was taken."""
    removed: dict[str, int] = attrs.field(factory=dict)
    """Tokens each rung taken removed (`output`: room for the answer given up)."""
    decisions: Decisions | None = None
    """What the next request of the conversation takes again (`precedent`)."""

    @property
    def changed(self) -> bool:
        """Whether any rung was taken."""
        return bool(self.removed)

    @property
    def tokens(self) -> int:
        """Input tokens the rungs removed."""
        return sum(tokens for rung, tokens in self.removed.items() if rung != "output")

    def brief(self) -> str:
        """`1 tool result, 4 messages, tool docs (minimal)`: what went, in few words."""
        parts = []
        if self.reasoning:
            parts.append(_plural(self.reasoning, "earlier reasoning"))
        if self.tool_results:
            parts.append(_plural(self.tool_results, "tool result"))
        if self.dropped:
            parts.append(_plural(self.dropped, "message"))
        if self.tool_docs is not None:
            parts.append(f"tool docs ({self.tool_docs})")
        if "output" in self.removed:
            parts.append(f"answer ≤ {self.output_floor:,}")
        if "userMessage" in self.removed:
            parts.append("your message")
        return ", ".join(parts)

    def describe(self) -> str:
        """`2 tool results cut, 4 earlier messages left out, …`: what the rungs did, for a
        person."""
        parts = []
        if self.reasoning:
            parts.append(f"the model's reasoning of {_plural(self.reasoning, 'earlier step')} cut")
        if self.tool_results:
            parts.append(f"{_plural(self.tool_results, 'tool result')} cut in the middle")
        if self.dropped:
            parts.append(f"{_plural(self.dropped, 'earlier message')} left out")
        if self.tool_docs is not None:
            parts.append(f"the tools' documentation shortened ({self.tool_docs})")
        if "output" in self.removed:
            parts.append(f"the answer limited to {self.output_floor:,} tokens")
        if "userMessage" in self.removed:
            parts.append(f"your message cut in the middle ({self.removed['userMessage']:,} tokens)")
        return ", ".join(parts)


def climb(
    messages: Sequence[Message],
    tool_forms: Sequence[ToolForm],
    truncator: Truncator,
    estimate: Estimate,
    room: Room,
    since: Decisions | None = None,
) -> Fitted:
    """`messages` and the first of `tool_forms` (the tools as the model's settings send them;
    then the reduced forms the `toolDocs` rung may take, smaller each) fitted to `room`, or
    `CannotFit`. `since`: what the ladder took for the conversation's last request, which these
    messages continue (`precedent`): taken again, whether or not it is needed, and gone beyond
    only if it is not enough."""
    usual = tool_forms[0][1]
    held = since or Decisions(tuple(messages))
    if not held.taken and estimate(messages, usual).total <= room.target(room.floor):
        return Fitted(list(messages), usual, room.floor, decisions=held)
    forms = _forms_from(tool_forms, held.form)
    reasoning = as_held(reasoning_texts(messages, truncator), held.cuts)
    results = as_held(tool_texts(messages, truncator), held.cuts)
    all_results = shortest(reasoning) | shortest(results)
    units = history_units(messages)
    kept_out = held.dropped if held.dropped in units else frozenset()
    units = [unit for unit in units if unit > kept_out]
    all_history = units[-1] if units else kept_out
    least_tools = forms[-1][1]

    def size(cuts: Cuts, dropped: frozenset[int], tools: Sequence[Tool]) -> RequestEstimate:
        sent = apply(messages, truncator, merged(held.cuts, cuts), dropped)
        return estimate(sent.messages, tools)

    turn = as_held(turn_texts(messages, truncator), held.cuts)
    again = _Again(held.cuts, {t.key for t in reasoning}, {t.key for t in turn})
    if size({}, kept_out, forms[0][1]).total <= room.target(room.floor):
        taken = again.taken({}, {}, kept_out, forms[0], room.floor, {})
        return _fitted(messages, usual, truncator, estimate, room, taken)
    # From the last rung up: each as far as needed with every rung before it taken in full.
    user = _fewest_cuts(
        turn,
        lambda cuts: size(all_results | cuts, all_history, least_tools),
        room.target(room.least_floor),
        all_the_way=True,
    )
    most = size(all_results | user, all_history, least_tools).total
    floor = room.least_floor if user else min(room.floor, room.window - room.safety - most)
    target = room.target(floor)
    form, tools = next(
        (name, form)
        for name, form in forms
        if size(all_results | user, all_history, form).total <= target
    )
    # A step, not only what this request needs, so that the next ones fit with the same cuts.
    aim = target - _step(estimate, messages, held, usual, target)

    def fits(cuts: Cuts, dropped: frozenset[int], limit: int) -> bool:
        return size(cuts | user, dropped, tools).total <= limit

    thoughts, cuts, dropped = shortest(reasoning), all_results, kept_out
    if fits(all_results, kept_out, target):
        goal = aim if fits(all_results, kept_out, aim) else target
        cuts = _fewest_cuts(
            results, lambda cuts: size(thoughts | cuts | user, dropped, tools), goal
        )
        if not cuts:
            thoughts = _fewest_cuts(reasoning, lambda cuts: size(cuts | user, dropped, tools), goal)
    else:
        dropped = next(
            (d for limit in (aim, target) for d in units if fits(all_results, d, limit)),
            all_history,
        )
    taken = again.taken(thoughts, cuts, dropped, (form, tools), floor, user)
    return _fitted(messages, usual, truncator, estimate, room, taken)


def _step(
    estimate: Estimate,
    messages: Sequence[Message],
    held: Decisions,
    tools: Sequence[Tool],
    target: int,
) -> int:
    """How far past what the request needs a rung goes: `STEP_ROUNDS` times what the
    conversation grew since its last request, at most `STEP_SHARE` of `target`; none for a
    request that continues no earlier one."""
    if not held.given:
        return 0
    grown = estimate(messages, tools).total - estimate(held.given, tools).total
    return max(0, min(STEP_ROUNDS * grown, math.ceil(target * STEP_SHARE)))


def _forms_from(tool_forms: Sequence[ToolForm], form: str | None) -> Sequence[ToolForm]:
    """The forms of the tools from `form` on (the one the conversation's last request sent)."""
    names = [name for name, _ in tool_forms]
    return tool_forms[names.index(form) :] if form in names else tool_forms


def _fewest_cuts(
    texts: Sequence[Text],
    size: Callable[[Cuts], RequestEstimate],
    target: int,
    *,
    all_the_way: bool = False,
) -> Cuts:
    """Cuts of `texts` that bring `size` within `target`, no further than needed (at worst every
    text as short as it may be); `all_the_way`: `CannotFit` if even that is not enough."""
    before = size({})
    if before.total <= target:
        return {}
    tokens_per_raw = before.total / max(1, before.raw_total)
    remove = math.ceil((before.total - target) / tokens_per_raw)
    for _ in range(MAX_PASSES):
        cuts = level(texts, remove)
        current = size(cuts)
        if current.total <= target:
            return cuts
        # At least a token more of each text cut, or the common length may not move at all.
        remove += max(math.ceil((current.total - target) / tokens_per_raw), len(cuts))
    cuts = shortest(texts)
    if all_the_way:
        current = size(cuts)
        if current.total > target:
            raise CannotFit(current, target)
    return cuts


@attrs.frozen
class _Taken:
    """How far each rung goes."""

    reasoning: Cuts
    cuts: Cuts
    dropped: frozenset[int]
    form: str
    tools: list[Tool]
    floor: int
    user: Cuts


@attrs.frozen
class _Again:
    """The cuts the conversation's last request took, each with its rung."""

    held: Cuts
    reasoning: set[tuple[int, Path]]
    """Where the reasoning texts are."""
    turn: set[tuple[int, Path]]
    """Where the turn's own message's texts are."""

    def taken(
        self,
        reasoning: Cuts,
        cuts: Cuts,
        dropped: frozenset[int],
        form: ToolForm,
        floor: int,
        user: Cuts,
    ) -> _Taken:
        """How far each rung goes: this request's cuts with the held ones."""

        def held(where: Callable[[tuple[int, Path]], bool]) -> Cuts:
            return {key: keep for key, keep in self.held.items() if where(key)}

        return _Taken(
            merged(held(self.reasoning.__contains__), reasoning),
            merged(held(lambda key: key not in self.reasoning and key not in self.turn), cuts),
            dropped,
            form[0],
            form[1],
            floor,
            merged(held(self.turn.__contains__), user),
        )


def _fitted(
    messages: Sequence[Message],
    usual: list[Tool],
    truncator: Truncator,
    estimate: Estimate,
    room: Room,
    taken: _Taken,
) -> Fitted:
    """The request with the rungs taken, and what each removed: the estimate after each rung in
    turn, less the one before."""
    thought = apply(messages, truncator, taken.reasoning).messages
    cuts = taken.reasoning | taken.cuts
    cut = apply(messages, truncator, cuts).messages
    kept = apply(messages, truncator, cuts, taken.dropped).messages
    sent = apply(messages, truncator, cuts | taken.user, taken.dropped)
    totals = [
        estimate(messages, usual).total,
        estimate(thought, usual).total,
        estimate(cut, usual).total,
        estimate(kept, usual).total,
        estimate(kept, taken.tools).total,
        estimate(sent.messages, taken.tools).total,
    ]
    removed = {
        "reasoning": totals[0] - totals[1],
        "toolResults": totals[1] - totals[2],
        "history": totals[2] - totals[3],
        "toolDocs": totals[3] - totals[4],
        "output": room.floor - taken.floor,
        "userMessage": totals[4] - totals[5],
    }
    return Fitted(
        sent.messages,
        taken.tools,
        taken.floor,
        reasoning=sum(1 for m, _ in taken.reasoning if m not in taken.dropped),
        tool_results=sent.tool_results,
        dropped=sent.dropped,
        tool_docs=None if taken.tools is usual else taken.form,
        removed={rung: tokens for rung, tokens in removed.items() if tokens > 0},
        decisions=Decisions(
            tuple(messages),
            taken.reasoning | taken.cuts | taken.user,
            taken.dropped,
            None if taken.tools is usual else taken.form,
        ),
    )


def largest_tool_call(messages: Sequence[Message], truncator: Truncator) -> int:
    """Tokens of the largest tool call the conversation holds (its name and arguments)."""
    return max(
        (
            len(truncator.tokens(part.name + to_json_text(part.input)))
            for message in messages
            for part in message.content
            if isinstance(part, ToolCallPart)
        ),
        default=0,
    )


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'s' * (count != 1)}"
