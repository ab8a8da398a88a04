"""Which Copilot chat a request belongs to, as far as the requests themselves tell.

VS Code gives a provider no chat id, so requests are grouped by what they share: each request of a
chat resends the chat's earlier messages, so a request joins the conversation it shares the most
messages with. Copilot renders a turn's user message anew once the turn is over or tool calls
follow it, so the answers tie requests too: a request that carries an earlier answer (its tool
calls, each by id, name and arguments, or its text's beginning) joins that answer's
conversation. Messages every chat
of a workspace shares are left out of the comparison: the system prompt and Copilot's agent's
environment message (`CONTEXT_MARKS`). A summarization request joins the
conversation it shares messages with, else the one last active; the first request carrying its
summary (whose messages are new: the history was replaced) joins the conversation summarized.
Helpers (a chat's title, a progress line) belong to none.

Better than any of that: each answer of a conversation ends with a stateful marker naming its
conversation (`marker`), which the chat panel's agent keeps in the history it sends back; a
request that brings one back (`marked`) is of that conversation, whatever else it shares, even
after a restart. Copilot drops the markers of the rounds a summary replaced. The Agents window's
runtime sends none back (VS Code's bridge makes of a marker a response id, which that runtime
never sends), but its system prompt names the folder of its session, the session's id in it
(`runtime_session`): its requests are of that session's conversation, before and after a
compaction, whatever they share with other sessions. A request can be
told its conversation before it is sent (`ahead`: a new one is new then, and kept when the request
is placed), so that what it sends can name the conversation its answer's marker will.

What is kept is message digests, in memory and bounded; a server restarted mid-chat starts a new
conversation for it.
"""

from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import json
import re
import uuid
from collections.abc import Sequence
from typing import Final

import attrs
import cachetools

from tokengauge.activity.record import MAIN_PROMPT_MARK, SUMMARIZE_MARKS, RequestKind
from tokengauge.calibration.trim import SUMMARY_MARK
from tokengauge.messages import (
    STATEFUL_MARKER,
    DataPart,
    Message,
    TextPart,
    ToolCallPart,
)

CONTEXT_MARKS: Final = ("<environment_info>", "<workspace_info>")
"""What Copilot's agent writes in the message of context it opens every chat of a workspace with."""
ANSWER_HEAD: Final = 400
"""Characters of an answer's beginning that identify it."""
ANSWER_HEAD_MIN: Final = 40
"""Shorter answers ("Done.") are too common to tell a conversation by."""
DIGESTS_KEPT: Final = 50_000
"""Message digests remembered, across all conversations (LRU)."""
MARKER_KEY: Final = "tokenGauge"
"""Our key in a stateful marker's JSON (other providers' markers are not ours to read)."""
CONVERSATION_ID: Final = re.compile(r"[0-9a-f]{8}")
MARKER_MAX: Final = 1_024
"""Characters of a marker (base64) read at most: ours are some 80 with the model's id; a longer
one is not ours, and a deeply nested one would exhaust the JSON parser's recursion."""
RUNTIME_SESSION: Final = re.compile(
    r"Session folder: .*?session-state[\\/]"
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)
"""The line of the Agents window runtime's system prompt naming its session's folder (1.0.85 and
1.0.102 alike), the session's id its name."""


@attrs.frozen
class Placement:
    """A request's kind, its conversation, and whether it brings a summary in for the first time."""

    kind: RequestKind
    conversation: str | None
    summarized: bool = False


def is_summary(messages: Sequence[Message]) -> bool:
    """Whether the request asks for a summary of its conversation: Copilot's instruction, or the
    Agents window runtime's, is in its last user message."""
    users = [message for message in messages if message.role == "user"]
    return bool(users) and any(mark in _text(users[-1]) for mark in SUMMARIZE_MARKS)


def request_kind(messages: Sequence[Message], tools: int, helper_max_messages: int) -> RequestKind:
    """A summarization (Copilot's instruction ends the request); one of Copilot's helpers (no
    tools, at most `helper_max_messages` messages, and not Copilot's chat prompt: an ask-mode
    question is as short); else a turn of a conversation."""
    if is_summary(messages):
        return "summarize"
    if tools or len(messages) > helper_max_messages:
        return "turn"
    system = " ".join(_text(message) for message in messages if message.role == "system")
    return "turn" if MAIN_PROMPT_MARK in system else "helper"


class Conversations:
    """Assigns requests to conversations (see the module docstring)."""

    def __init__(self) -> None:
        self._owners: cachetools.LRUCache[str, str] = cachetools.LRUCache(DIGESTS_KEPT)
        self._last_active: str | None = None
        self._summarized: str | None = None
        """The conversation of the last summarization, until a request carries its summary."""

    def place(
        self,
        messages: Sequence[Message],
        digests: Sequence[str],
        kind: RequestKind,
        answer_text: str = "",
        answer_calls: Sequence[ToolCallPart] = (),
        ahead: str | None = None,
    ) -> Placement:
        """The request's placement; remembers its messages, and its answer (`answer_text`, the
        tool calls it made: `answer_calls`), as its conversation's. `ahead`: the
        conversation `ahead` gave the request before it was sent (its answer names it)."""
        if kind == "helper":
            return Placement(kind, None)
        pairs = [(m, d) for m, d in zip(messages, digests, strict=True) if m.role != "system"]
        joined, summarized = self._joined(messages, pairs, kind)
        conversation = ahead or joined or new_conversation()
        answer = Message("assistant", [TextPart(answer_text)]) if answer_text else None
        keys = [*map(_call_key, answer_calls), *(_answer_keys(answer) if answer else [])]
        for key in [*(digest for _, digest in pairs), *keys]:
            self._owners[key] = conversation
        self._last_active = conversation
        if kind == "summarize":
            self._summarized = conversation
        elif summarized:
            self._summarized = None
        return Placement(kind, conversation, summarized and kind == "turn")

    def ahead(
        self, messages: Sequence[Message], digests: Sequence[str], kind: RequestKind
    ) -> str | None:
        """The conversation a request will be placed in, told before it is sent (a new one for a
        request that joins none: `place` given it keeps it); None for a helper. Remembers
        nothing."""
        if kind == "helper":
            return None
        pairs = [(m, d) for m, d in zip(messages, digests, strict=True) if m.role != "system"]
        return self._joined(messages, pairs, kind)[0] or new_conversation()

    def _joined(
        self, messages: Sequence[Message], pairs: Sequence[tuple[Message, str]], kind: RequestKind
    ) -> tuple[str | None, bool]:
        """The conversation the request joins, if any, and whether it brings a summary in for
        the first time."""
        brought = runtime_session(messages) or marked(messages)
        # The answers' keys first: of two conversations shared with as much, the one whose answer
        # the request repeats (a tool result's message may be any chat's: "ok" to a numbered id).
        compared = [key for message in messages for key in _answer_keys(message)]
        compared += [d for m, d in pairs if not any(mark in _text(m) for mark in CONTEXT_MARKS)]
        shared = collections.Counter(
            owner for key in compared if (owner := self._owners.get(key)) is not None
        )
        conversation = shared.most_common(1)[0][0] if shared else None
        carries = [d for m, d in pairs if SUMMARY_MARK in _text(m)]
        summarized = bool(carries) and all(d not in self._owners for d in carries)
        if brought is not None:
            conversation = brought
        elif kind == "summarize":
            conversation = conversation or self._last_active
        elif conversation is None and summarized:
            conversation = self._summarized
        return conversation, summarized


def new_conversation() -> str:
    """A new conversation's id."""
    return uuid.uuid4().hex[:8]


def marker(conversation: str) -> str:
    """The stateful marker an answer of `conversation` ends with (JSON)."""
    return json.dumps({MARKER_KEY: {"conversation": conversation}}, separators=(",", ":"))


def runtime_session(messages: Sequence[Message]) -> str | None:
    """The conversation of the Agents window runtime's session whose system prompt names it (the
    same for every request of the session, also after a restart), or None."""
    for message in messages:
        found = RUNTIME_SESSION.search(_text(message)) if message.role == "system" else None
        if found is not None:
            return hashlib.sha256(found.group(1).encode()).hexdigest()[:8]
    return None


def marked(messages: Sequence[Message]) -> str | None:
    """The conversation named by the last of our stateful markers the messages bring back."""
    found = None
    for message in messages:
        for part in message.content:
            if isinstance(part, DataPart) and part.mime_type == STATEFUL_MARKER:
                found = _conversation_of(part.data) or found
    return found


def _conversation_of(data: str) -> str | None:
    """The conversation in one marker (`modelId\\JSON`, base64), or None if it is not ours."""
    if len(data) > MARKER_MAX:
        return None
    try:
        text = base64.b64decode(data, validate=True).decode("utf-8")
        value = json.loads(text.split("\\", 1)[-1])
    except (binascii.Error, UnicodeDecodeError, ValueError, RecursionError):
        return None
    state = value.get(MARKER_KEY) if isinstance(value, dict) else None
    conversation = state.get("conversation") if isinstance(state, dict) else None
    if isinstance(conversation, str) and CONVERSATION_ID.fullmatch(conversation):
        return conversation
    return None


def _answer_keys(message: Message) -> list[str]:
    """What ties a message to the answer it repeats: its tool calls, and for an assistant's
    message the beginning of its text (whitespace aside)."""
    keys = [_call_key(part) for part in message.content if isinstance(part, ToolCallPart)]
    head = " ".join(_text(message).split())[:ANSWER_HEAD]
    if message.role == "assistant" and len(head) >= ANSWER_HEAD_MIN:
        keys.append("answer\x1f" + hashlib.sha256(head.encode()).hexdigest())
    return keys


def _call_key(call: ToolCallPart) -> str:
    return f"call\x1f{call.key()}"


def _text(message: Message) -> str:
    return "".join(part.value for part in message.content if isinstance(part, TextPart))
