"""The VSIX: its layout, and tokengauge with every dependency importing from the bundled libraries.

The VSIX that scripts/build-vsix.sh wrote (scripts/setup.sh runs it) is unzipped and the server is
started from it with each CPython 3.10–3.14 found on this machine, with site-packages switched off
(`-S`), so that only `bundled/libs/cp3XX` and `bundled/libs/common` can serve an import.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from scripts.bundle_libs import PYTHON_VERSIONS, version_dir_name

REPO = Path(__file__).resolve().parent.parent
VERSION = json.loads((REPO / "package.json").read_text())["version"]
VSIX = REPO / f"tokengauge-{VERSION}-linux-x64.vsix"
SAMPLE = REPO / "tests" / "data" / "copilot-request.json"

# Imports every top-level module of every bundled distribution and says where each came from.
IMPORT_ALL = """
import importlib, json, pathlib, sys
sys.path[:0] = sys.argv[1:]
libs = [pathlib.Path(p) for p in sys.argv[1:]]
found = {}
for lib in libs:
    for info in lib.glob("*.dist-info"):
        record = (info / "RECORD").read_text().splitlines()
        tops = {line.split(",")[0].split("/")[0] for line in record}
        for top in sorted(tops):
            name = top[:-3] if top.endswith(".py") else top
            if top.endswith((".dist-info", ".pth")) or name in ("..", "bin", "__pycache__"):
                continue
            module = importlib.import_module(name)
            # a namespace package (tiktoken_ext) has no __file__
            where = module.__file__ or next(iter(module.__path__))
            found[name] = str(pathlib.Path(where).resolve())
print(json.dumps(found))
"""


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
def unpacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The VSIX's `extension/` folder, unzipped."""
    if not VSIX.is_file():
        pytest.fail(f"{VSIX.name} is missing: run scripts/build-vsix.sh (scripts/setup.sh does)")
    out = tmp_path_factory.mktemp("vsix")
    with zipfile.ZipFile(VSIX) as archive:
        archive.extractall(out)
    return out / "extension"


def test_layout(unpacked: Path) -> None:
    manifest = json.loads((unpacked / "package.json").read_text())
    assert manifest["main"] == "./dist/extension.js"
    assert (unpacked / "dist" / "extension.js").is_file()
    libs = unpacked / "bundled" / "libs"
    expected = {"common", *(version_dir_name(v) for v in PYTHON_VERSIONS)}
    assert {p.name for p in libs.iterdir()} == expected
    assert (libs / "common" / "tokengauge" / "data" / "o200k_base.tiktoken").is_file()
    for version in PYTHON_VERSIONS:
        per_version = libs / version_dir_name(version)
        tag = f"cpython-{version_dir_name(version)[2:]}"
        assert any(per_version.glob(f"tiktoken/_tiktoken.{tag}-*.so")), per_version
        assert any(per_version.glob(f"regex/_regex.{tag}-*.so")), per_version
    shipped = {p.relative_to(unpacked).parts[0] for p in unpacked.iterdir()}
    assert shipped <= {"package.json", "readme.md", "dist", "bundled"}, shipped


@pytest.mark.parametrize("version", [pytest.param(v, id=f"python{v}") for v in PYTHON_VERSIONS])
def test_imports_and_counts_from_the_bundle(unpacked: Path, version: str) -> None:
    python = find_python(version)
    if python is None:
        pytest.skip(f"no CPython {version} on this machine")
    libs = unpacked / "bundled" / "libs"
    path = [str(libs / version_dir_name(version)), str(libs / "common")]
    imported = subprocess.run(
        [python, "-S", "-E", "-c", IMPORT_ALL, *path], capture_output=True, text=True, check=False
    )
    assert imported.returncode == 0, imported.stderr
    modules = json.loads(imported.stdout)
    assert {"tokengauge", "tiktoken", "regex", "pygls", "lsprotocol", "httpx", "diskcache"} <= set(
        modules
    )
    outside = {name: where for name, where in modules.items() if not where.startswith(str(libs))}
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
