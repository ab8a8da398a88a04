"""The bundled encodings: offline, byte-exact, and identical to what tiktoken itself builds."""

from __future__ import annotations

import hashlib
import importlib
import importlib.resources
import socket
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

from tokengauge.counting import encodings
from tokengauge.counting.encodings import (
    SPECS,
    EncodingIntegrityError,
    EncodingRegistry,
    build_encoding,
    parse_ranks,
    read_rank_file,
)

DATA = Path(encodings.__file__).parents[1] / "data"  # the package's own data folder
NAMES = [pytest.param(name, id=name) for name in SPECS]


@pytest.fixture(scope="module")
def registry() -> EncodingRegistry:
    return EncodingRegistry()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("cl100k_base", [15339, 1917], id="cl100k"),
        pytest.param("o200k_base", [24912, 2375], id="o200k"),
    ],
)
def test_hello_world(registry: EncodingRegistry, name: str, expected: list[int]):
    assert registry.get(name).encode_ordinary("hello world") == expected


@pytest.mark.parametrize("name", NAMES)
def test_bundled_file_hash_matches_tiktoken(name: str):
    data = (DATA / f"{name}.tiktoken").read_bytes()
    assert hashlib.sha256(data).hexdigest() == SPECS[name].sha256
    # tiktoken's own module pins the same hash for the URL it would download.
    source = Path(importlib.import_module("tiktoken_ext.openai_public").__file__).read_text()
    assert SPECS[name].sha256 in source


@pytest.mark.parametrize("name", NAMES)
def test_equals_tiktoken_constructor(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: EncodingRegistry
):
    """tiktoken's own constructor, fed our file through its cache dir, builds the same encoding."""
    import tiktoken_ext.openai_public as openai_public

    blob_url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    cache_key = hashlib.sha1(blob_url.encode()).hexdigest()
    (tmp_path / cache_key).write_bytes((DATA / f"{name}.tiktoken").read_bytes())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("tiktoken tried to download")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    theirs = tiktoken.Encoding(**getattr(openai_public, name)())
    ours = registry.get(name)
    assert ours.name == theirs.name
    assert ours._pat_str == theirs._pat_str
    assert ours._special_tokens == theirs._special_tokens
    # Ours keeps no Python copy of its ranks (test_no_python_copy_of_the_ranks_is_kept): the ranks
    # it is built from, and each rank's bytes in its Rust core, are tiktoken's.
    ranks = parse_ranks(read_rank_file(name))
    assert ranks == theirs._mergeable_ranks
    assert ours.n_vocab == theirs.n_vocab
    assert all(ours.decode_single_token_bytes(rank) == token for token, rank in ranks.items())
    sample = "Hello, wörld! 你好 🙂 def f(x):\n    return x**2  # 'tis  \r\n\t"
    assert ours.encode(sample, allowed_special="all") == theirs.encode(
        sample, allowed_special="all"
    )


def test_damaged_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    damaged = bytearray((DATA / "cl100k_base.tiktoken").read_bytes())
    damaged[100] ^= 1
    fake_package = tmp_path / "tokengauge"
    (fake_package / "data").mkdir(parents=True)
    (fake_package / "data" / "cl100k_base.tiktoken").write_bytes(bytes(damaged))

    monkeypatch.setattr(importlib.resources, "files", lambda _: fake_package)
    with pytest.raises(EncodingIntegrityError, match="damaged"):
        read_rank_file("cl100k_base")
    (fake_package / "data" / "cl100k_base.tiktoken").unlink()
    with pytest.raises(EncodingIntegrityError, match="missing"):
        build_encoding("cl100k_base")


def test_loading_never_touches_the_network(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access while loading encodings")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "must-stay-empty"))
    fresh = EncodingRegistry()
    for name in SPECS:
        assert fresh.get(name).n_vocab > 100_000
    assert not (tmp_path / "must-stay-empty").exists()


@pytest.mark.parametrize("name", NAMES)
def test_no_python_copy_of_the_ranks_is_kept(name: str, registry: EncodingRegistry):
    # tiktoken keeps the dict it was given, only to pickle the encoding: emptied, it frees 28 MiB
    # (o200k_base). Should tiktoken rename it, this test says so.
    encoding = registry.get(name)
    assert vars(encoding)["_mergeable_ranks"] == {}
    assert encoding.n_vocab > 100_000


def test_warm_loads_in_background():
    fresh = EncodingRegistry()
    thread = fresh.warm()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert set(fresh._encodings) == set(SPECS)


def test_unknown_encoding_is_a_clear_error(registry: EncodingRegistry):
    with pytest.raises(KeyError, match="unknown encoding 'p50k_base'"):
        registry.get("p50k_base")
