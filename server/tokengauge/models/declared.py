"""What VS Code is told of a model's window: in the client's own units, moved only with damping.

Copilot meters a conversation with its own o200k_base, not with the API tokenizer (ARCHITECTURE §1):
- the local agent renders messages against `0.9 × (maxInputTokens − toolTokens)` of its count
  and compacts once `(its count + toolTokens) ÷ maxInputTokens` reaches ~0.8; `toolTokens` comes
  from us and puts its budget's edge where the true budget is (`scales.copilot_tools_target`),
  as far as it can go (not below the formula's floor);
- the Agents window's runtime is given `maxInputTokens` as its limit (VS Code 1.139.1's bridge
  passes it as `maxPromptTokens`) when a session begins, and compacts at 0.80 of it, blocks at
  0.95, counting everything itself with its own tokenizer (measured, ARCHITECTURE §1).
So the sizes are declared in the client's units, `r` being the API's tokens per token of an
o200k count of the whole request (learned from every response):
- above 1, the true window and input budget ÷ r: the Agent Host compacts and blocks at its
  share of the true window, and the local agent compacts at 0.8 of the true budget, where exact
  counts would;
- below 1, the true window (never above it: the Agent Host's tokenizer, chosen by model name,
  cannot be checked) and the input budget ÷ r within it, leaving `least_output` of the window:
  the tools' count is at its floor there, and only a larger `maxInputTokens` lets the local
  agent admit what the API can really take;
- near 1, the true sizes.
Measured in the real Copilot agent, a `maxInputTokens` smaller still (the budget's room for
messages ÷ r, the tools' count at its floor) put its compaction so close to its edge that most
turns went over it and summarized in the foreground (docs/BENCHMARKS.md). Counts and the usage
part's prompt tokens go in the declared units (`Declared.scale`); the status bar and the
dashboard keep true tokens. A declaration moves only when its ideal leaves a band around it, so
calibration's noise sends no storm of `modelsChanged`, and no value flaps between two.
`Declarations` keeps each model's (in the ledger too, so a new session starts from it); the ratio
comes from calibration, which is told when a declaration replaces another (counts follow it).
A model with a compaction window (`Windows.compaction_sizes`) is declared from that window as if
it were the model's: Copilot meters and summarizes against it; its "true" sizes here are the
compaction window's.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Final, Protocol

import attrs

from tokengauge.ledger.store import Ledger
from tokengauge.models.budget import LEAST_OUTPUT_FLOOR
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.windows import Windows

log = logging.getLogger(__name__)

BAND_BELOW: Final = 0.06
"""A declared size is kept while at most this share below its ideal..."""
BAND_ABOVE: Final = 0.03
"""...or this share above it (the Agent Host blocks at 0.95 of the window, the send path fits
the rest); a ratio within this share of 1 keeps the true sizes."""
QUANTUM: Final = 64
"""Declared sizes other than the true ones are whole multiples of this many tokens."""


@attrs.frozen
class Basis:
    """What a declaration is made from."""

    window: int
    """The true window (after learned limits and a picked context size)."""
    max_input: int
    """The true input budget (the window less the output kept for the answer)."""
    ratio: float | None
    """API tokens per token of an o200k count of whole requests; None before any."""
    least_output: int
    """The least `maxOutputTokens` may be."""


@attrs.frozen
class Declared:
    """`maxInputTokens` and the window (its sum with `maxOutputTokens`) VS Code is told, and the
    true sizes they stand for."""

    max_input: int
    window: int
    true_max_input: int
    true_window: int

    @property
    def max_output(self) -> int:
        """`maxOutputTokens`: the rest of the window."""
        return self.window - self.max_input

    @property
    def scale(self) -> float:
        """Declared tokens per true token: what counts are multiplied by."""
        return self.max_input / max(1, self.true_max_input)

    def to_document(self) -> dict[str, int]:
        """The ledger's form."""
        return attrs.asdict(self)

    @classmethod
    def from_document(cls, document: Any) -> Declared | None:
        """A stored declaration, or None if there is none (or it is damaged)."""
        if not isinstance(document, dict):
            return None
        try:
            declared = cls(**{key: int(document[key]) for key in attrs.fields_dict(cls)})
        except (KeyError, TypeError, ValueError):
            return None
        sane = 0 < declared.max_input < declared.window <= declared.true_window
        return declared if sane and declared.true_max_input > 0 else None


def ideal(basis: Basis) -> Declared:
    """The sizes in the client's units (see the module docstring)."""
    ratio = basis.ratio
    true = Declared(basis.max_input, basis.window, basis.max_input, basis.window)
    if ratio is None or 1 - BAND_ABOVE <= ratio <= 1 / (1 - BAND_ABOVE):
        return true
    if ratio > 1:
        window = math.floor(basis.window / ratio)
        max_input = math.floor(basis.max_input * window / basis.window)
    else:
        window = basis.window
        max_input = min(math.floor(basis.max_input / ratio), window - basis.least_output)
    max_input = max(1, max_input)
    return attrs.evolve(true, max_input=max_input, window=max(window, max_input + 1))


def damped(current: Declared | None, basis: Basis) -> Declared:
    """The declaration to keep: `current` while both its sizes stay in their bands around the
    ideal ones (and the true sizes are those it was made for), else the ideal, in whole quanta."""
    best = ideal(basis)
    if current is not None and _near(current, best):
        return current
    if best.window == basis.window and best.max_input == basis.max_input:
        return best
    window = best.window if best.window == basis.window else best.window // QUANTUM * QUANTUM
    max_input = best.max_input // QUANTUM * QUANTUM or best.max_input
    return attrs.evolve(best, max_input=max_input, window=max(window, max_input + 1))


def _near(current: Declared, best: Declared) -> bool:
    """Whether `current` may stay where `best` is the ideal."""
    if (current.true_max_input, current.true_window) != (best.true_max_input, best.true_window):
        return False
    if current.window > current.true_window:
        return False
    return all(
        ideal * (1 - BAND_BELOW) <= size <= ideal * (1 + BAND_ABOVE)
        for size, ideal in ((current.window, best.window), (current.max_input, best.max_input))
    )


class Learning(Protocol):
    """What a declaration needs of calibration (`calibration.estimates.Calibration` is it)."""

    def basis(self, model: ModelSpec, window: int, max_input: int, least_output: int) -> Basis:
        """What the model's declaration is made from, for its true `window` and `max_input`."""
        ...

    def changed(self, model_id: str) -> None:
        """The model's counts must follow a new declaration."""
        ...


class Declarations:
    """Each model's declaration, made for its true sizes (`Windows.sizes`) and calibration's
    ratio, and moved only as `damped` says."""

    def __init__(self, ledger: Ledger, windows: Windows, learning: Learning) -> None:
        self.ledger = ledger
        self.windows = windows
        self.learning = learning
        self._declared: dict[str, Declared] = {}

    def get(self, model: ModelSpec) -> Declared:
        """What VS Code is told of the model's window: the last declaration while the true sizes
        are those it was made for, else a new one."""
        current = self._declared.get(model.id)
        if current is None:
            current = Declared.from_document(self.ledger.get_document(_key(model.id)))
            if current is not None:
                self._declared[model.id] = current
        basis = self._basis(model)
        if current is None or (current.true_max_input, current.true_window) != (
            basis.max_input,
            basis.window,
        ):
            current = self._declare(model, damped(None, basis))
        return current

    def redeclare(self, model: ModelSpec) -> bool:
        """Move the model's declaration if calibration has taken its ideal out of the band;
        whether it moved (VS Code must ask for the models again)."""
        current = self.get(model)
        moved = damped(current, self._basis(model))
        if moved == current:
            return False
        self._declare(model, moved)
        log.info(
            "%s: declared maxInputTokens %s, window %s (was %s, %s) in Copilot's units",
            model.id,
            f"{moved.max_input:,}",
            f"{moved.window:,}",
            f"{current.max_input:,}",
            f"{current.window:,}",
        )
        return True

    def _declare(self, model: ModelSpec, declared: Declared) -> Declared:
        """Keep `declared` as the model's declaration (in the ledger too); counts follow a
        declaration that replaces another."""
        before = self._declared.get(model.id)
        if before != declared:
            self._declared[model.id] = declared
            self.ledger.set_document(_key(model.id), declared.to_document())
            if before is not None:
                self.learning.changed(model.id)
        return declared

    def _basis(self, model: ModelSpec) -> Basis:
        sizes = self.windows.compaction_sizes(model)
        least_output = min(LEAST_OUTPUT_FLOOR, sizes.window - sizes.max_input)
        return self.learning.basis(model, sizes.window, sizes.max_input, least_output)


def _key(model_id: str) -> str:
    """Ledger document name of a model's declaration."""
    return f"declared/{model_id}"
