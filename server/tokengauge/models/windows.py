"""Each model's true window and input budget, and what lowers them (ARCHITECTURE §8).

A model's window is its own (`contextWindow`), lowered to the smallest of three limits: the one
an overflow or a server's cut taught (the ledger keeps it), the context size picked for it
(`context_sizes`), and the window its local server has loaded it with (`served`). `Windows.sizes`
makes that window and the input budget `budget` leaves in it, in this one place, for every user:
the models' info, the declaration VS Code is told, the status bar, the dashboard and the usage
records. What Ollama is asked to load a model with (`num_ctx`) is kept here too.

A model may also have a compaction window (`compactAt`, or picked in the model picker): a
smaller window Copilot is told of (`Windows.compaction_sizes`), so that it summarizes a chat
before its requests get dear, while the send path still fits requests to the whole window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs

from tokengauge.ledger.store import Ledger
from tokengauge.messages import Usage
from tokengauge.models import budget
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.context_sizes import COMPACTIONS, ContextSizes
from tokengauge.models.served import Served, ServedWindows

log = logging.getLogger(__name__)


@attrs.frozen
class Sizes:
    """A model's window and input budget in true tokens."""

    limit: int | None
    """What lowers the window below the model's own (None: nothing does)."""
    window: int
    max_input: int
    """The window less the output kept for the answer: `maxInputTokens` in true tokens."""


class Windows:
    """The limits on the models' windows, and the sizes they leave."""

    def __init__(self, ledger: Ledger, changed: Callable[[str], None]) -> None:
        """`changed`: told a model's id when a limit moved its window (counts follow it)."""
        self.ledger = ledger
        self.context_sizes = ContextSizes(ledger)
        self.compactions = ContextSizes(ledger, COMPACTIONS)
        self.served = ServedWindows(ledger)
        self._changed = changed
        self._num_ctx_sent: dict[str, int] = {}

    def limit(self, model: ModelSpec) -> int | None:
        """What limits the model's window below its own: what overflows taught us, the context
        size picked for it, or the window its local server has loaded it with (the smallest)."""
        limits = [
            self.ledger.get_limit(model.id),
            self.context_sizes.limit(model),
            self.served.limit(model),
        ]
        return min((limit for limit in limits if limit is not None), default=None)

    def sizes(self, model: ModelSpec) -> Sizes:
        """The model's window and input budget, after every limit."""
        limit = self.limit(model)
        return Sizes(
            limit,
            budget.effective_window(model, limit),
            budget.max_input_tokens(model, limit),
        )

    def compaction(self, model: ModelSpec) -> int | None:
        """The window Copilot is told of instead of the model's (picked, else `compactAt`), when
        it is smaller than the model's window after every limit; None: the window itself."""
        compact_at = self.compactions.limit(model) or model.compact_at
        return (
            compact_at if compact_at is not None and compact_at < self.sizes(model).window else None
        )

    def compaction_sizes(self, model: ModelSpec) -> Sizes:
        """The sizes Copilot meters a chat against: the model's, or its compaction window with
        the same output kept (at most a quarter of it) and the input budget that leaves."""
        sizes = self.sizes(model)
        compact_at = self.compaction(model)
        if compact_at is None:
            return sizes
        output = min(sizes.window - sizes.max_input, compact_at // budget.RESERVED_WINDOW_SHARE)
        return Sizes(sizes.limit, compact_at, max(1, compact_at - output))

    def choose_compaction(self, model: ModelSpec, size: int) -> bool:
        """A compaction window picked for a model; whether it changed (VS Code must ask for the
        models again)."""
        return self.compactions.choose(model, size)

    def api_window(self, model: ModelSpec) -> int:
        """The window the model's API itself has, as far as its overflows taught us (whatever
        context size was picked)."""
        return budget.effective_window(model, self.ledger.get_limit(model.id))

    def choose(self, model: ModelSpec, size: int) -> bool:
        """A context size picked for a model; whether its window changed (VS Code must ask for
        the models again)."""
        return self.context_sizes.choose(model, size)

    def asked_num_ctx(self, model: ModelSpec) -> int | None:
        """The window a person asked Ollama to load the model with (picked, or `numCtx`)."""
        return self.context_sizes.limit(model) or model.num_ctx

    def num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` to ask Ollama for: the window asked for, else what Ollama has loaded
        the model with (nothing reloads unasked); None before Ollama has said."""
        served = self.served.get(model.id)
        loaded = served.window if served is not None and served.loaded else None
        return self.asked_num_ctx(model) or loaded

    def num_ctx_sent(self, model: ModelSpec, num_ctx: int | None) -> None:
        """A request asked Ollama for `num_ctx`: its next reading shows what Ollama made of it."""
        if num_ctx is not None:
            self._num_ctx_sent[model.id] = num_ctx

    def last_num_ctx(self, model: ModelSpec) -> int | None:
        """The `num_ctx` the model's last request asked Ollama for, if any."""
        return self._num_ctx_sent.get(model.id)

    def apply_served(self, model: ModelSpec, served: Served) -> bool:
        """Keep what the model's local server said it serves it with; True if its window moved
        (VS Code must ask for the models again). A larger window (the model reloaded with more)
        makes a smaller limit an overflow taught moot."""
        if not self.served.update(model.id, served):
            return False
        learned = self.ledger.get_limit(model.id)
        if learned is not None and learned < min(served.window, model.context_window):
            self.ledger.set_limit(model.id, model.context_window)  # reloaded with more: moot
        log.info(
            "%s: its server serves a %s-token window (%s)",
            model.id,
            f"{served.window:,}",
            served.source,
        )
        self._changed(model.id)
        return True

    def learn_cut(self, model: ModelSpec, usage: Usage, served: Served | None) -> int:
        """A request the server cut: its window is what it says it has loaded when that is
        smaller than the window believed in (a `contextWindow` set included), else at most what
        it read and wrote (a lower bound that holds); the window learned."""
        window = self.sizes(model).window
        if served is not None:
            self.apply_served(model, served)
        if served is not None and served.window < window:
            learned = served.window
        else:
            learned = max(2, usage.total_input_tokens + usage.output_tokens)
        if learned < window:
            self.ledger.set_limit(model.id, learned)
            self._changed(model.id)
        return min(learned, window)
