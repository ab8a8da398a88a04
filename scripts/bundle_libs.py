"""Bundle tokengauge and its dependencies for the VSIX, for every supported CPython.

tiktoken and regex are compiled wheels, so the VSIX carries one set of libraries per CPython minor
version. Everything that is the same for all of them (the pure-Python packages, tokengauge itself)
is kept once in ``common``; what differs (compiled wheels, version-conditional dependencies) goes to
``cp3XX``. The extension puts ``cp3XX`` and then ``common`` on ``PYTHONPATH``.

Wheels come from the package index (resolved by uv for each target version and platform), never
from a local interpreter, so one machine builds the layout for all versions.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
PLATFORM = "x86_64-manylinux_2_28"  # tiktoken's wheels need glibc 2.28 (Debian 10+, Ubuntu 18.10+)
REPO = Path(__file__).resolve().parent.parent


def version_dir_name(version: str) -> str:
    """The folder of one CPython minor version: ``3.12`` → ``cp312``."""
    major, minor = version.split(".")
    return f"cp{major}{minor}"


def build_wheel(dest: Path) -> Path:
    """Build tokengauge's own (pure-Python) wheel into ``dest`` and return its path."""
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", "--no-deps", "--wheel-dir", str(dest), str(REPO)], check=True)
    (wheel,) = dest.glob("tokengauge-*.whl")
    return wheel


def install_for(version: str, wheel: Path, target: Path) -> None:
    """Install ``wheel`` and its dependencies as CPython ``version`` on Linux x86_64 would get them.

    uv rather than pip: pip's ``--python-version`` does not apply to environment markers, so it
    would leave out e.g. ``exceptiongroup; python_version < "3.11"``.
    """
    subprocess.run(
        [
            *(sys.executable, "-m", "uv", "pip", "install", "--quiet", "--no-config"),
            *("--target", str(target), "--only-binary", ":all:"),
            *("--python-version", version, "--python-platform", PLATFORM),
            str(wheel),
        ],
        check=True,
    )
    shutil.rmtree(target / "bin", ignore_errors=True)


def same_entry(paths: list[Path]) -> bool:
    """Whether these files or folders have identical contents."""
    first, *rest = paths
    return all(_same(first, other) for other in rest)


def _same(a: Path, b: Path) -> bool:
    if a.is_dir() != b.is_dir():
        return False
    if not a.is_dir():
        return filecmp.cmp(a, b, shallow=False)
    listing = filecmp.dircmp(a, b)
    if listing.left_only or listing.right_only or listing.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, listing.common_files, shallow=False)
    return not mismatch and not errors and all(_same(a / d, b / d) for d in listing.common_dirs)


def split_common(per_version: dict[str, Path], common: Path) -> list[str]:
    """Move the entries identical in every version folder to ``common``; return their names."""
    names = set.intersection(
        *({p.name for p in folder.iterdir()} for folder in per_version.values())
    )
    moved = []
    common.mkdir(parents=True, exist_ok=True)
    for name in sorted(names):
        copies = [folder / name for folder in per_version.values()]
        if not same_entry(copies):
            continue
        shutil.move(str(copies[0]), common / name)
        for other in copies[1:]:
            shutil.rmtree(other) if other.is_dir() else other.unlink()
        moved.append(name)
    return moved


def folder_size(path: Path) -> int:
    """Bytes of every file below ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bundle(out: Path, versions: tuple[str, ...] = PYTHON_VERSIONS) -> None:
    """Write ``out/common`` and ``out/cp3XX`` for each version, replacing what was there."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="tg-wheel-") as tmp:
        wheel = build_wheel(Path(tmp))
        per_version = {}
        for version in versions:
            target = out / version_dir_name(version)
            print(f"== bundling for CPython {version} → {target.relative_to(REPO)}", flush=True)
            install_for(version, wheel, target)
            per_version[version] = target
    moved = split_common(per_version, out / "common")
    print(f"== common to all: {len(moved)} entries, {folder_size(out / 'common') / 1e6:.1f} MB")
    for version, folder in per_version.items():
        entries = ", ".join(sorted(p.name for p in folder.iterdir() if p.suffix != ".dist-info"))
        print(f"   {folder.name} ({version}): {folder_size(folder) / 1e6:.1f} MB: {entries}")


def refresh_server(out: Path) -> None:
    """Replace the bundled tokengauge package with the working tree's (the libraries stay): the
    development extension runs the bundle, and its tests must run the code being changed."""
    common = out / "common"
    if not common.is_dir():
        bundle(out)
        return
    target = common / "tokengauge"
    shutil.rmtree(target, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "server" / "tokengauge", target, ignore=ignore)


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python scripts/bundle_libs.py [--out bundled/libs] [--python 3.X ...]
    [--refresh-server]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "bundled" / "libs")
    parser.add_argument("--python", action="append", choices=PYTHON_VERSIONS, dest="versions")
    parser.add_argument(
        "--refresh-server",
        action="store_true",
        help="only copy the working tree's tokengauge package into an existing bundle",
    )
    args = parser.parse_args(argv)
    if args.refresh_server:
        refresh_server(args.out.resolve())
    else:
        bundle(args.out.resolve(), tuple(args.versions or PYTHON_VERSIONS))


if __name__ == "__main__":
    main()
