"""What VS Code is told of a model's window: in the client's own units, moved only with damping.

Copilot meters a conversation with its own o200k_base, not with the API's tokenizer (DESIGN §1):
- the local agent renders messages against `0.9 × (maxInputTokens − toolTokens)` of its count
  and compacts once `(its count + toolTokens) ÷ maxInputTokens` reaches ~0.8; only `toolTokens`
  comes from us;
- the Agent Host takes `maxInputTokens + maxOutputTokens` as the window and compacts at 0.80 of
  it, blocks at 0.95, counting everything itself.
So what is declared is in Copilot's units:
- `maxInputTokens`: the true budget's room for messages in Copilot's count (`÷ r`, the API's
  tokens per token of Copilot's count of messages), plus the least Copilot's formula can make of
  the tools. The tools' count then closes the gap exactly (`scales.copilot_tools_target`), the
  budget's edge lands where the true budget is, and Copilot's 0.8 compaction falls just below
  that edge instead of a fifth of the budget below it;
- the window (`maxInputTokens + maxOutputTokens`): the true window `÷ r_all` (the API's tokens per
  token of an o200k count of the whole request, as the Agent Host counts), never above the true
  window: the Agent Host's tokenizer is its own and cannot be checked;
- the counts of messages and strings and the usage part's prompt tokens go in the same units
  (`Declared.scale`, `client_prompt`); the status bar and the dashboard keep true tokens.
A declared value moves only when the ideal leaves a band around it: never below the ideal for
`maxInputTokens` (the tools' count could not reach its floor), never above it for the window.
Calibration's noise sends no storm of `modelsChanged`, and no value flaps between two.
"""

from __future__ import annotations

import math
from typing import Any, Final

import attrs

INPUT_BAND: Final = 0.08
"""`maxInputTokens` is kept while within this share above its ideal."""
INPUT_PAD: Final = 0.03
"""A new `maxInputTokens` is this share above its ideal, so small drifts stay in the band."""
WINDOW_BAND: Final = 0.05
"""The window is kept while within this share below its ideal."""
QUANTUM: Final = 64
"""Declared sizes are whole multiples of this many tokens."""


@attrs.frozen
class Basis:
    """What an ideal declaration is made from."""

    window: int
    """The true window (after learned limits and a picked context size)."""
    max_input: int
    """The true input budget (the window less the output kept for the answer)."""
    tools: float
    """The API's tokens for the tools of the model's requests, with the request's overhead."""
    tools_floor: int
    """The least Copilot's formula can make of those tools' count."""
    ratio: float | None
    """API tokens per token of Copilot's count of messages; None before any request showed it
    (the true sizes are declared until then)."""
    whole_ratio: float | None
    """API tokens per token of an o200k count of whole requests; None before any."""
    least_output: int
    """The least `maxOutputTokens` may be."""


@attrs.frozen
class Declared:
    """`maxInputTokens` and the window (their sum with `maxOutputTokens`), in Copilot's units, and
    the true sizes they stand for."""

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
        sane = 0 < declared.max_input < declared.window and declared.true_window > 0
        return declared if sane else None


def ideal(basis: Basis) -> Declared:
    """The declaration that makes Copilot's decisions land where the true sizes are (the true
    sizes themselves before any request showed how Copilot's count compares)."""
    if basis.ratio is None:
        return Declared(basis.max_input, basis.window, basis.max_input, basis.window)
    messages = max(0.0, basis.max_input - basis.tools) / max(basis.ratio, 1e-6)
    whole = max(1.0, basis.whole_ratio or 1.0)
    window = min(basis.window, math.floor(basis.window / whole))
    max_input = min(math.ceil(messages) + basis.tools_floor, window - basis.least_output)
    return Declared(max(1, max_input), window, basis.max_input, basis.window)


def damped(current: Declared | None, basis: Basis) -> Declared:
    """The declaration to keep: `current` while the ideal stays in its band (and the true sizes
    are those it was made for), else a new one just inside the band."""
    best = ideal(basis)
    if basis.ratio is None:
        return best
    if current is None or (current.true_max_input, current.true_window) != (
        best.true_max_input,
        best.true_window,
    ):
        return _padded(best, basis)
    max_input = current.max_input
    if not best.max_input <= max_input <= best.max_input * (1 + INPUT_BAND):
        max_input = _padded(best, basis).max_input
    window = current.window
    if not best.window * (1 - WINDOW_BAND) <= window <= best.window:
        window = best.window
    max_input = min(max_input, window - basis.least_output)
    return attrs.evolve(current, max_input=max(1, max_input), window=window)


def _padded(best: Declared, basis: Basis) -> Declared:
    """`best` with room to drift: `maxInputTokens` a little above, rounded up to the quantum (a
    window below the true one rounded down), within the window."""
    window = best.window
    if window < best.true_window:
        window = max(1, window // QUANTUM * QUANTUM)
    padded = math.ceil(best.max_input * (1 + INPUT_PAD) / QUANTUM) * QUANTUM
    max_input = min(max(best.max_input, padded), window - basis.least_output)
    return attrs.evolve(best, max_input=max(1, max_input), window=window)
