"""What the recovery ladder took for a conversation's last request, taken again by the next
(ARCHITECTURE §8, "What the send path may change, and the cached prefix").

An API caches the longest prefix a request shares with an earlier one, so a cut the ladder made
must be made the same way in every later request of the conversation, or the first differing
token moves and all after it is fresh again. The next request begins where the last one ended:
the same texts cut to the same lengths, the same exchanges left out, the tools in the same form,
whether or not it would fit with less; and only if that is not enough does it cut further, by a
step (`ladder.STEP_ROUNDS` times what the conversation grew, at most `ladder.STEP_SHARE` of the
input target) large enough that the requests after it fit with the same cuts.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from tokengauge.calibration.trim import Cuts, Text
from tokengauge.messages import Message


@attrs.frozen
class Decisions:
    """What the ladder took for a request: the texts it cut, the messages it left out and the
    tools' form, by where they are in the messages it was given."""

    given: tuple[Message, ...]
    """The messages the ladder was given (lightened and capped), before its cuts."""
    cuts: Cuts = attrs.field(factory=dict)
    """Tokens kept of each text cut (reasoning, tool results, the turn's message)."""
    dropped: frozenset[int] = frozenset()
    """The earlier messages left out."""
    form: str | None = None
    """The reduced form of the tools the `toolDocs` rung took, if it took one."""

    @property
    def taken(self) -> bool:
        """Whether the ladder took anything."""
        return bool(self.cuts or self.dropped or self.form)

    def continued_by(self, messages: Sequence[Message]) -> bool:
        """Whether `messages` are these, then more: the same conversation, nothing compacted."""
        count = len(self.given)
        return len(messages) > count and tuple(messages[:count]) == self.given

    def without_form(self) -> Decisions:
        """The same cuts, the tools' form left to decide (the tools given changed)."""
        return attrs.evolve(self, form=None)

    def only_form(self) -> Decisions | None:
        """The tools' form alone, if the ladder took one: the cuts go with the messages they
        cut (a compaction replaced them), while the tools lead every request of the
        conversation."""
        return None if self.form is None else Decisions((), form=self.form)


def merged(held: Cuts, cuts: Cuts) -> Cuts:
    """`held` and `cuts` together, each text kept to the shorter of the two."""
    both = dict(held)
    for key, keep in cuts.items():
        both[key] = min(keep, both.get(key, keep))
    return both


def as_held(texts: Sequence[Text], held: Cuts) -> list[Text]:
    """`texts` as long as they are once `held` is taken: a text cut already is that long."""
    return [
        attrs.evolve(text, tokens=min(text.tokens, held[text.key])) if text.key in held else text
        for text in texts
    ]
