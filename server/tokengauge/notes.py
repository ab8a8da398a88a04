"""The notes Token Gauge writes into an answer for the person: what the recovery ladder cut (at
the answer's start), what a local server cut without an error (at its end); and a message with
them taken out again, since the model need not read them with every later request.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from tokengauge.calibration.ladder import Fitted
from tokengauge.messages import Message, TextPart

NOTE_START: Final = "*Token Gauge: "
"""How Token Gauge's notes begin: what the recovery ladder cut (at an answer's start), what a
server cut (at its end, after a blank line)."""
NOTE: Final = re.compile(r"(?:\n\n)?" + re.escape(NOTE_START) + r"[^\n]*\*\n\n")


def ladder_note(model_name: str, fitted: Fitted) -> str:
    """The line that begins an answer to a request the ladder fitted (markdown, one line)."""
    return (
        f"{NOTE_START}this request did not fit {model_name}'s window, so the model did not see "
        f"all of it: {fitted.describe()}.*\n\n"
    )


def cut_note(model_name: str, read: int, size: int, fence_open: bool = False) -> str:
    """The line that ends an answer the server gave to a prompt of about `size` tokens it cut to
    `read` without an error (after closing the answer's open code block, if it left one)."""
    fence = "\n```" if fence_open else ""
    return (
        f"{fence}\n\n{NOTE_START}the server read only {read:,} tokens of this request's "
        f"{size:,}: it cut the start of the conversation, so {model_name} answered without it. "
        "Requests are now kept within the window it really serves.*\n\n"
    )


def without_notes(message: Message) -> Message:
    """An assistant's message without the notes Token Gauge began its answers with: they are for
    the person, and the model need not read them again with every request."""
    if message.role != "assistant" or not any(
        isinstance(part, TextPart) and NOTE_START in part.value for part in message.content
    ):
        return message
    content = [
        TextPart(NOTE.sub("", part.value)) if isinstance(part, TextPart) else part
        for part in message.content
    ]
    return attrs.evolve(message, content=[p for p in content if p != TextPart("")])
