"""The reasoning a Chat Completions server gets back (ARCHITECTURE §8): which assistant messages
of a request keep theirs, what the client dropped put back, and what the server's errors taught.

A server's rule (`upstream.dialects.openai.reasoning_rules`) says which messages carry their
reasoning back: those of the current tool loop, those too that made tool calls, every one, or
none. The person's `reasoningReplay` setting overrides it (`always`: every one; `never`: none),
and where it is `auto` a server's 400 that names reasoning teaches the other way once, kept per
model in the ledger (`Replays`).

Copilot's chat panel keeps a round's thinking only while its turn lasts: the history of earlier
turns comes without it, and DeepSeek V4 refuses a tool-call message of any earlier turn without
its reasoning. So each answer's reasoning is remembered by its tool call ids (by its text when it
made none), in memory and bounded (`ReasoningMemory`), and put back into the messages that come
without it. Where it is not known any more (the server restarted), a server that must have the
field gets it empty, as DeepSeek's own clients send it, and Gemini the signature its
documentation gives for calls whose signature is lost; nothing else is invented.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any, Final

import attrs
from cachetools import LRUCache

from tokengauge.calibration.classify import ErrorKind
from tokengauge.counting.request import current_turn
from tokengauge.ledger.store import Ledger
from tokengauge.messages import (
    Message,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    unstructure,
)
from tokengauge.models.catalog import ModelSpec
from tokengauge.upstream.dialects.openai.reasoning_rules import (
    GEMINI_DUMMY_SIGNATURE,
    SCOPES,
    ReasoningRule,
    ReplayScope,
    rule_for,
)

log = logging.getLogger(__name__)

DOCUMENT: Final = "reasoning-replay"
"""The ledger document of what servers' errors taught: a scope per model id."""
MEMORY_BYTES: Final = 32 * 1024 * 1024
"""What the remembered reasoning may hold (about the reasoning of 3,000 agent rounds)."""
_SETTING_SCOPES: Final[dict[str, ReplayScope]] = {"always": "all", "never": "none"}
REASONING_ERRORS: Final = frozenset({ErrorKind.REASONING_MISSING, ErrorKind.REASONING_REFUSED})
"""The errors of a server that wants the model's reasoning back, or refuses it."""


def _size(part: ThinkingPart) -> int:
    return len(json.dumps(unstructure(part))) + 200


class ReasoningMemory:
    """The reasoning each answer came with, by model and by its tool calls (or its text)."""

    def __init__(self, max_bytes: int = MEMORY_BYTES) -> None:
        self._parts: LRUCache[tuple[str, str], ThinkingPart] = LRUCache(max_bytes, _size)

    def remember(self, model_id: str, keys: Iterable[str], part: ThinkingPart) -> None:
        """Keep `part` as the reasoning of the message `keys` name (`message_keys`)."""
        if _size(part) > self._parts.maxsize:
            return
        for key in keys:
            self._parts[(model_id, key)] = part

    def remember_request(self, model_id: str, messages: Sequence[Message]) -> None:
        """Keep the reasoning a request's assistant messages still carry."""
        for message in messages:
            if message.role == "assistant":
                part = _carried(message)
                if part is not None:
                    self.remember(model_id, message_keys(message), part)

    def recall(self, model_id: str, message: Message) -> ThinkingPart | None:
        """The reasoning `message` came with, if it is remembered."""
        for key in message_keys(message):
            part = self._parts.get((model_id, key))
            if part is not None:
                return part
        return None


def message_keys(message: Message) -> list[str]:
    """What an assistant message is known by: its tool calls (`ToolCallPart.key`), else its
    text's digest."""
    calls = [p.key() for p in message.content if isinstance(p, ToolCallPart)]
    if calls:
        return calls
    text = "".join(p.value for p in message.content if isinstance(p, TextPart))
    return [answer_key(text)] if text else []


def answer_key(text: str) -> str:
    """The key of an answer that made no tool call: its text's digest."""
    return text_key(hashlib.sha256(text.encode("utf-8", "surrogatepass")))


def text_key(digest: Any) -> str:
    """The key of an answer whose text's SHA-256 is `digest` (`hashlib`'s, fed as it streamed)."""
    return "text:" + str(digest.hexdigest())


def _carried(message: Message) -> ThinkingPart | None:
    return next(
        (p for p in reversed(message.content) if isinstance(p, ThinkingPart) and p.carried),
        None,
    )


class Replays:
    """Each model's rule as the person set it and its server taught it."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def rule(self, model: ModelSpec) -> ReasoningRule:
        """The rule a request to `model` follows."""
        rule = rule_for(model)
        if model.reasoning_replay in _SETTING_SCOPES:
            return rule.with_scope(_SETTING_SCOPES[model.reasoning_replay])
        learned = self._learned().get(model.id)
        if learned is None:
            return rule
        # A server that taught it wants reasoning back must have the field, empty if lost.
        return attrs.evolve(rule, scope=learned, required=rule.required or learned != "none")

    def learn(self, model: ModelSpec, kind: ErrorKind) -> ReasoningRule | None:
        """After a 400 that names reasoning, the rule to try at once, kept for the model; None
        when the person's setting decides, or nothing is left to try."""
        if model.reasoning_replay != "auto":
            return None
        scope = self.rule(model).scope
        if kind is ErrorKind.REASONING_REFUSED:
            wanted: ReplayScope | None = "none" if scope != "none" else None
        else:
            wanted = _MORE.get(scope)
        if wanted is None:
            return None
        log.warning(
            "%s: its server %s the model's reasoning: sending %s from now on",
            model.id,
            "refused" if kind is ErrorKind.REASONING_REFUSED else "wants back",
            _SAID[wanted],
        )
        self.ledger.update_document(DOCUMENT, lambda old: {**_scopes(old), model.id: wanted})
        return self.rule(model)

    def _learned(self) -> dict[str, ReplayScope]:
        return _scopes(self.ledger.get_document(DOCUMENT))


_MORE: Final[dict[ReplayScope, ReplayScope]] = {"none": "tools", "loop": "tools", "tools": "all"}
"""What a server that wants reasoning back gets next."""
_SAID: Final[dict[ReplayScope, str]] = {
    "none": "none of it",
    "loop": "that of the current tool loop",
    "tools": "that of every message with tool calls",
    "all": "that of every message",
}


def replay_advice(model: ModelSpec, kind: ErrorKind) -> str:
    """What a person can do about a server that refuses the model's reasoning, or wants it back,
    where Token Gauge has nothing left to try."""
    wanted = "never" if kind is ErrorKind.REASONING_REFUSED else "always"
    if model.reasoning_replay == "auto":
        return (
            f"Token Gauge already sent {model.id}'s reasoning back as its server last asked; "
            f'if it needs another way, set "reasoningReplay": "{wanted}" for {model.id} in '
            "tokenGauge.models."
        )
    return (
        f'{model.id} has "reasoningReplay": "{model.reasoning_replay}" in tokenGauge.models, '
        f'and its server asks otherwise: set it to "auto" (or "{wanted}").'
    )


def _scopes(document: object) -> dict[str, ReplayScope]:
    if not isinstance(document, dict):
        return {}
    return {str(k): v for k, v in document.items() if v in SCOPES}


def prepared(
    messages: Sequence[Message], rule: ReasoningRule, memory: ReasoningMemory, model_id: str
) -> list[Message]:
    """The messages as the server gets them: each assistant message with the reasoning the rule
    sends back (put back where the client dropped it, empty where the server must have the field
    and it is lost), the others' left out."""
    turn = current_turn(messages)
    out: list[Message] = []
    for index, message in enumerate(messages):
        if message.role != "assistant":
            out.append(message)
            continue
        calls = [p.call_id for p in message.content if isinstance(p, ToolCallPart)]
        thinking = [p for p in message.content if isinstance(p, ThinkingPart)]
        rest = [p for p in message.content if not isinstance(p, ThinkingPart)]
        in_loop = index > turn
        if not _kept(rule.scope, in_loop, bool(calls)):
            out.append(_with(message, [], rest) if thinking else message)
            continue
        given = thinking
        if not any(p.carried for p in thinking):
            remembered = memory.recall(model_id, message)
            if remembered is not None:
                thinking = [remembered]
            elif calls and rule.required and not thinking:
                thinking = [ThinkingPart("", field=rule.field)]
        if rule.dummy_signature and in_loop and calls and not _signed(thinking, calls[0]):
            signature = {"google": {"thought_signature": GEMINI_DUMMY_SIGNATURE}}
            thinking = [*thinking, ThinkingPart("", calls={calls[0]: signature})]
        out.append(message if thinking == given else _with(message, thinking, rest))
    return out


def _kept(scope: ReplayScope, in_loop: bool, called: bool) -> bool:
    """Whether a message of the current tool loop (or not), with tool calls (or not), keeps its
    reasoning under `scope`."""
    if scope == "none":
        return False
    if scope == "loop":
        return in_loop
    return scope == "all" or in_loop or called


def _signed(thinking: Sequence[ThinkingPart], call_id: str) -> bool:
    return any(part.calls and call_id in part.calls for part in thinking)


def _with(message: Message, thinking: Sequence[Part], rest: Sequence[Part]) -> Message:
    """The message with its thinking parts first, where Copilot puts them."""
    return Message(message.role, [*thinking, *rest], message.name)
