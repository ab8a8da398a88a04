"""The window a local server really serves a model with, as its own API last said (ARCHITECTURE §1).

Ollama, LM Studio, llama.cpp and vLLM load a model with a window often far below the model's
native one, and the first two cut a longer prompt without an error. `upstream.served` reads the
loaded window from each server; `ServedWindows` keeps the last reading per model (in the ledger,
so a new session starts from it) and says what limits the model's window: the loaded window,
unless the person set `contextWindow` (theirs wins, and the reading is only compared with it).
`cut_without_error` tells, from what a server read of a request, that it cut the prompt.
"""

from __future__ import annotations

from typing import Final, Literal

import attrs

from tokengauge.ledger.store import Ledger
from tokengauge.models.catalog import ModelSpec
from tokengauge.settings import MAX_TOKENS

DOCUMENT: Final = "served-windows"

Kind = Literal["ollama", "lmstudio", "llamacpp", "vllm"]
LOCAL_KINDS: Final[tuple[Kind, ...]] = ("ollama", "lmstudio", "llamacpp", "vllm")
CUT_BELOW: Final = 0.5
"""A local server that counted less than this share of what the request should come to (the
fit's own prediction, before any usage taught it) cut the prompt without an error: no tokenizer
counts that much less than the prior (the harshest skew seen is 0.6)."""
CUT_BELOW_CALIBRATED: Final = 0.75
"""…and this share once usage has taught the fit the model's tokenizer."""
MIN_WINDOW: Final = 256
"""The smallest window a server's reading is taken as (a llama.cpp of 512 shared by two slots);
below it no request and answer fit, and a reading of 2 or 200 tokens is a server's mistake."""
FULL_WINDOW: Final = 0.97
"""A read of at least this share of the served window, of a request estimated above that window,
was cut to it: requests are fitted below the window, so only a cut fills it (a conversation that
grows a turn at a time overflows by a little first). Taken for a cut wrongly, it costs only
taking the window the server serves."""


def plausible_window(value: object) -> bool:
    """Whether a server's reading can be a window: a whole number from `MIN_WINDOW` to the
    largest window taken of any model (a reading of 309 digits would overflow what it is used
    in)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return MIN_WINDOW <= value <= MAX_TOKENS


@attrs.frozen
class Served:
    """One reading of a server: the window it serves the model with, and where that came from."""

    window: int
    """The loaded window in the server's tokens (input + output)."""
    source: str
    """Where the window came from, in words for the model's tooltip."""
    loaded: bool = True
    """The server has the model loaded with this window (False: what it will load it with)."""
    exact: bool = True
    """The server said so (False: an assumption, e.g. Ollama's default for small machines)."""

    def to_document(self) -> dict[str, object]:
        """The reading as JSON."""
        return attrs.asdict(self)

    @classmethod
    def from_document(cls, document: object) -> Served | None:
        """A reading back from JSON; None for anything else."""
        if not isinstance(document, dict):
            return None
        try:
            served = cls(**document)
        except TypeError:
            return None
        if not plausible_window(served.window):
            return None
        if not isinstance(served.source, str):
            return None
        return served


class ServedWindows:
    """The last reading of each model's served window, by model id."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        document = ledger.get_document(DOCUMENT)
        readings = document.items() if isinstance(document, dict) else []
        self._served: dict[str, Served] = {
            str(model_id): served
            for model_id, raw in readings
            if (served := Served.from_document(raw)) is not None
        }

    def get(self, model_id: str) -> Served | None:
        """The model's last reading, if any."""
        return self._served.get(model_id)

    def limit(self, model: ModelSpec) -> int | None:
        """The served window where it limits the model: below its own, and no `contextWindow`
        set by the person (theirs wins)."""
        served = self._served.get(model.id)
        if served is None or model.window_set or served.window >= model.context_window:
            return None
        return served.window

    def update(self, model_id: str, served: Served) -> bool:
        """Keep a new reading; whether the window it reports changed."""
        before = self._served.get(model_id)
        if before == served:
            return False
        self._served[model_id] = served
        self.ledger.set_document(
            DOCUMENT, {key: value.to_document() for key, value in self._served.items()}
        )
        return before is None or before.window != served.window


def cut_without_error(
    read: int, expected: int, estimated: int, served: Served | None, *, calibrated: bool
) -> bool:
    """Whether a local server that read `read` tokens of a request that most likely came to
    `expected` (estimated at `estimated`, margins included) cut the prompt without an error: it
    counted far below what the request comes to (`calibrated`: usage has taught the fit the
    model's tokenizer, or the server counted the request itself), or read just its whole served
    window of a request larger than that (Ollama and LM Studio do both)."""
    share = CUT_BELOW_CALIBRATED if calibrated else CUT_BELOW
    if read < share * expected:
        return True
    return (
        served is not None
        and read >= FULL_WINDOW * served.window
        and max(expected, estimated) > served.window
    )
