"""The VSIX: its layout, only what runs in it, and the server starting and counting from it,
compiling its bytecode once into the extension's storage.

The VSIX that scripts/build-vsix.sh wrote (scripts/setup.sh runs it) is unzipped and the server is
started from it with each CPython 3.10–3.14 found on this machine, with site-packages switched off
(`-S`), so that only `bundled/libs/cp3XX` and `bundled/libs/common` can serve an import.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO, Any

import pytest

from scripts.bundle_libs import LEFT_OUT, LICENCE, PYTHON_VERSIONS, host_target, version_dir_name
from tests.conftest import DATA, vsix_path
from tests.harness.lsp import frame, read_frame
from tests.lsp.helpers import init_options, text_message

VSIX = vsix_path(host_target())  # the one this machine can run
SAMPLE = DATA / "copilot-request.json"
SESSION_TIMEOUT_S = 120

# Imports every top-level module and package of the bundled libraries and says where each came from.
IMPORT_ALL = """
import importlib, json, pathlib, sys
sys.path[:0] = sys.argv[1:]
found = {}
for lib in map(pathlib.Path, sys.argv[1:]):
    for entry in sorted(lib.iterdir()):
        if entry.suffix == ".dist-info":
            continue
        name = entry.stem if entry.suffix == ".py" else entry.name
        module = importlib.import_module(name)
        # a namespace package (tiktoken_ext) has no __file__
        where = module.__file__ or next(iter(module.__path__))
        found[name] = str(pathlib.Path(where).resolve())
print(json.dumps(found))
"""

# One LSP session: every request's result (notifications and the server's own requests aside).
TEXT = "def add(a, b):\n    return a + b  # 足し算 — ünïcode\n" * 20
REQUESTS: list[tuple[str, Any]] = [
    ("tokenGauge/models", {}),
    *(
        ("tokenGauge/countTokens", {"modelId": model, "inputs": [TEXT, text_message("user", TEXT)]})
        for model in ("gpt-4o", "claude-sonnet-4-5", "local-small")
    ),
    ("shutdown", None),
]


def find_python(version: str) -> str | None:
    """A working CPython ``version`` interpreter on this machine (PATH, then pyenv), if any."""
    candidates = [shutil.which(f"python{version}")]
    candidates += [
        str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}")
    ]
    if f"{sys.version_info[0]}.{sys.version_info[1]}" == version:
        candidates.insert(0, sys.executable)
    for candidate in filter(None, candidates):
        probe = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


@pytest.fixture(scope="module")
def vsix_names() -> list[str]:
    """Every file name in the VSIX."""
    if not VSIX.is_file():
        pytest.fail(f"{VSIX.name} is missing: run scripts/build-vsix.sh (scripts/setup.sh does)")
    with zipfile.ZipFile(VSIX) as archive:
        return archive.namelist()


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory, vsix_names: list[str]) -> Path:
    """The VSIX's `extension/` folder, unzipped."""
    out = tmp_path_factory.mktemp("vsix")
    with zipfile.ZipFile(VSIX) as archive:
        archive.extractall(out)
    return out / "extension"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a PNG file (from its IHDR chunk)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_layout(unpacked: Path) -> None:
    manifest = json.loads((unpacked / "package.json").read_text())
    assert manifest["main"] == "./dist/extension.js"
    assert (unpacked / "dist" / "extension.js").is_file()
    libs = unpacked / "bundled" / "libs"
    expected = {"common", *(version_dir_name(v) for v in PYTHON_VERSIONS)}
    assert {p.name for p in libs.iterdir()} == expected
    assert (libs / "common" / "tokengauge" / "data" / "o200k_base.tiktoken").is_file()
    assert (libs / "common" / "tokengauge" / "data" / "cl100k_base.tiktoken").is_file()
    # The dashboard's page script: the webview loads it, `tokengauge report` inlines it.
    assert (libs / "common" / "tokengauge" / "data" / "dashboard.js").stat().st_size > 100_000
    for version in PYTHON_VERSIONS:
        per_version = libs / version_dir_name(version)
        tag = f"cpython-{version_dir_name(version)[2:]}"
        assert any(per_version.glob(f"tiktoken/_tiktoken.{tag}-*.so")), per_version
        assert any(per_version.glob(f"regex/_regex.{tag}-*.so")), per_version
    width, height = png_size(unpacked / "images" / "icon.png")
    assert width == height >= 128
    shipped = {p.relative_to(unpacked).parts[0] for p in unpacked.iterdir()}
    assert shipped <= {"package.json", "readme.md", "dist", "bundled", "images", "docs"}, shipped
    assert [p.name for p in (unpacked / "images").iterdir()] == ["icon.png"]


def test_the_readme_shows_its_images_from_the_extension(unpacked: Path) -> None:
    # The Extensions page shows the README of the installed extension: each image it links must
    # be in the VSIX at that relative path (a link made absolute would point at the repository).
    readme = (unpacked / "readme.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert images
    for link in images:
        assert not re.match(r"\w+:", link), link
        png_size(unpacked / link)  # there, and a PNG
    docs = {str(p.relative_to(unpacked)) for p in (unpacked / "docs").rglob("*") if p.is_file()}
    assert docs == set(images), "only the images the README shows"


def test_only_what_runs_ships(vsix_names: list[str]) -> None:
    paths = [PurePosixPath(name) for name in vsix_names]
    unused = [
        str(p)
        for p in paths
        if {"__pycache__", "tests", "_tests"} & set(p.parts)
        or p.suffix in (".pyc", ".pyi", ".map")
        or p.name == "py.typed"
    ]
    assert not unused, unused
    infos: dict[PurePosixPath, list[PurePosixPath]] = {}
    for path in paths:
        info = next((parent for parent in path.parents if parent.suffix == ".dist-info"), None)
        if info is not None:
            infos.setdefault(info, []).append(path.relative_to(info))
    left_out = {re.sub(r"[-_.]+", "_", name) for name in LEFT_OUT}
    assert {info.name.split("-")[0] for info in infos}.isdisjoint(left_out)
    for info, files in infos.items():
        licences = [f for f in files if f.parts[0] == "licenses" or LICENCE.match(f.name)]
        kept = {PurePosixPath("METADATA"), PurePosixPath("WHEEL")}  # WHEEL: its platform tags
        assert set(files) - set(licences) == kept, info
        assert licences or info.name.startswith("tokengauge-"), f"{info} has no licence file"


def test_pure_python_kept_once(unpacked: Path) -> None:
    libs = unpacked / "bundled" / "libs"
    folders = [libs / version_dir_name(v) for v in PYTHON_VERSIONS]
    in_all = set.intersection(*({p.name for p in folder.iterdir()} for folder in folders))
    pure = [n for n in in_all if not any(f for d in folders for f in (d / n).rglob("*.so"))]
    # A compiled distribution's record: its WHEEL names each version's own tag, or the stable
    # ABI (abi3), the same in every version but still this platform's.
    records = [n for n in pure if n.endswith(".dist-info")]
    for name in records:
        tags = {(folder / name / "WHEEL").read_text() for folder in folders}
        stable = all("-abi3-" in tag for tag in tags)
        assert len(tags) == len(folders) or stable, f"{name}: the same WHEEL in every version"
    pure = [n for n in pure if n not in records]
    assert not pure, f"the same in every version, yet not in common: {pure}"


def bundle_path(unpacked: Path, version: str) -> list[str]:
    """The extension's PYTHONPATH for this CPython version."""
    libs = unpacked / "bundled" / "libs"
    return [str(libs / version_dir_name(version)), str(libs / "common")]


def python_for(version: str) -> str:
    """This machine's CPython ``version``, or the test is skipped."""
    python = find_python(version)
    if python is None:
        pytest.skip(f"no CPython {version} on this machine")
    return python


VERSIONS = [pytest.param(v, id=f"python{v}") for v in PYTHON_VERSIONS]


@pytest.mark.parametrize("version", VERSIONS)
def test_imports_and_counts_from_the_bundle(unpacked: Path, version: str) -> None:
    python = python_for(version)
    path = bundle_path(unpacked, version)
    imported = subprocess.run(
        [python, "-S", "-E", "-c", IMPORT_ALL, *path], capture_output=True, text=True, check=False
    )
    assert imported.returncode == 0, imported.stderr
    modules = json.loads(imported.stdout)
    assert {"tokengauge", "tiktoken", "regex", "pygls", "lsprotocol", "httpx", "diskcache"} <= set(
        modules
    )
    libs = str(unpacked / "bundled" / "libs")
    outside = {name: where for name, where in modules.items() if not where.startswith(libs)}
    assert not outside, outside

    env = {"PYTHONPATH": ":".join(path), "HOME": str(unpacked.parent), "PATH": "/usr/bin:/bin"}
    counted = subprocess.run(
        [python, "-S", "-m", "tokengauge", "count", str(SAMPLE), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert counted.returncode == 0, counted.stderr
    reference = subprocess.run(
        [sys.executable, "-m", "tokengauge", "count", str(SAMPLE), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(counted.stdout) == json.loads(reference.stdout)


def answer(stdin: IO[bytes], stdout: IO[bytes], request_id: int) -> Any:
    """The result of request ``request_id``; the server's own requests are answered with null."""
    while (message := read_frame(stdout)) is not None:
        if "method" in message:
            if "id" in message:
                stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
                stdin.flush()
        elif message.get("id") == request_id:
            assert "error" not in message, message
            return message["result"]
    raise AssertionError(f"the server's output ended before the answer to request {request_id}")


def lsp_session(command: list[str], storage: Path, env: dict[str, str] | None) -> list[Any]:
    """Start the server, initialize it, send `REQUESTS` one by one, exit; their results."""
    with (storage / "stderr.log").open("wb") as stderr:
        server = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env
        )
    assert server.stdin is not None and server.stdout is not None
    watchdog = threading.Timer(SESSION_TIMEOUT_S, server.kill)
    watchdog.start()
    try:
        options = init_options(storage)
        initialize = {"processId": None, "capabilities": {}, "initializationOptions": options}
        messages: list[tuple[str, Any]] = [("initialize", initialize), *REQUESTS]
        results = []
        for request_id, (method, params) in enumerate(messages, start=1):
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            server.stdin.write(frame(message))
            server.stdin.flush()
            results.append(answer(server.stdin, server.stdout, request_id))
            if method == "initialize":
                server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.close()
        assert server.wait(SESSION_TIMEOUT_S) == 0, (storage / "stderr.log").read_text()
    finally:
        watchdog.cancel()
        server.kill()
        server.stdout.close()
    return results


def untimed(results: list[Any]) -> list[Any]:
    """Results without their `epoch` (a clock reading, different in every session)."""
    return [
        {k: v for k, v in result.items() if k != "epoch"} if isinstance(result, dict) else result
        for result in results
    ]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_server_serves_from_the_bundle(unpacked: Path, version: str, tmp_path: Path) -> None:
    python = python_for(version)
    env = {
        "PYTHONPATH": ":".join(bundle_path(unpacked, version)),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    (tmp_path / "bundled").mkdir()
    (tmp_path / "reference").mkdir()
    bundled = lsp_session([python, "-S", "-m", "tokengauge"], tmp_path / "bundled", env)
    reference = lsp_session([sys.executable, "-m", "tokengauge"], tmp_path / "reference", None)
    initialized, models, *counts, shut_down = bundled
    assert "capabilities" in initialized
    assert {m["id"] for m in models} == {"gpt-4o", "claude-sonnet-4-5", "local-small"}
    assert all(tokens > 0 for count in counts for tokens in count["tokens"])
    assert shut_down is None
    assert untimed(bundled) == untimed(reference)


def compiled_from_source(stderr: str, libs: Path) -> list[str]:
    """The bundled modules a session under `python -v` compiled from their source."""
    return re.findall(rf"^# code object from ({re.escape(str(libs))}\S+\.py)$", stderr, re.M)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_first_start_leaves_bytecode_for_every_later_one(
    unpacked: Path, version: str, tmp_path: Path
) -> None:
    # Where the extension's folder is read-only, the extension points PYTHONPYCACHEPREFIX into its
    # storage (server.ts): the first start writes the bytecode there, every later one compiles
    # nothing, and nothing is written beside the sources.
    python = python_for(version)
    libs = unpacked / "bundled" / "libs"
    prefix = tmp_path / "pycache"
    env = {
        "PYTHONPATH": ":".join(bundle_path(unpacked, version)),
        "PYTHONPYCACHEPREFIX": str(prefix),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    beside = sorted(unpacked.rglob("*.pyc"))
    stderr = []
    for start in ("first", "second"):
        (tmp_path / start).mkdir()
        lsp_session([python, "-S", "-v", "-m", "tokengauge"], tmp_path / start, env)
        stderr.append((tmp_path / start / "stderr.log").read_text(errors="replace"))
    first, second = stderr
    compiled = compiled_from_source(first, libs)
    assert len(compiled) > 100, "the first start compiles the server and its libraries"
    tag = version_dir_name(version).replace("cp", "cpython-")
    written = {p for p in prefix.rglob(f"*.{tag}.pyc") if str(libs).lstrip("/") in str(p)}
    assert len(written) >= len(compiled)
    assert compiled_from_source(second, libs) == []
    assert f"# code object from '{prefix}" in second
    assert sorted(unpacked.rglob("*.pyc")) == beside, "nothing written beside the sources"
