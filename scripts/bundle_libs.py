"""Bundle tokengauge and its dependencies for the VSIX of one platform, for every supported CPython.

tiktoken and regex are compiled wheels, so each platform has its own VSIX (`vsce package
--target`, `TARGETS`), and each VSIX carries one set of libraries per CPython minor version.
Everything that is the same for all of them (the pure-Python packages, tokengauge itself) is kept
once in ``common``; what differs (compiled wheels, version-conditional dependencies) goes to
``cp3XX``. The extension puts ``cp3XX`` and then ``common`` on ``PYTHONPATH``.

Wheels come from the package index (resolved by uv for each target version and platform), never
from a local interpreter, so one machine builds the layout for all versions and platforms. The
pure-Python distributions are pinned, for every version, to what the oldest version resolved, so
that each is kept once. Only what the server runs ships: no tests, type stubs, debug symbols or
installer records (each distribution keeps its METADATA headers and its licence files), and no
bytecode: one set per CPython would double the download to spare the first start after an update;
that start writes it, beside the sources or, where the extension's folder is read-only, into the
extension's storage (PYTHONPYCACHEPREFIX: extension/src/server.ts).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Final

PYTHON_VERSIONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
TARGETS: Final = {
    # tiktoken's Linux wheels need glibc 2.28 (Debian 10+, Ubuntu 18.10+, RHEL 8+).
    "linux-x64": "x86_64-manylinux_2_28",
    "linux-arm64": "aarch64-manylinux_2_28",
    "darwin-x64": "x86_64-apple-darwin",
    "darwin-arm64": "aarch64-apple-darwin",
    "win32-x64": "x86_64-pc-windows-msvc",
}
"""VS Code's platform targets (`vsce package --target`) → uv's `--python-platform`."""
MACOS_MINIMUM: Final = "11.0"
"""The oldest macOS the wheels may need (VS Code's own minimum)."""
REPO = Path(__file__).resolve().parent.parent

LEFT_OUT: Final = {
    "pygments": "rich highlights code with it; the command line prints tables only",
    "markdown-it-py": "rich renders Markdown with it; the command line prints tables only",
}
"""Dependencies no code path of tokengauge reaches, with the reason; what only they need goes too
(mdurl with markdown-it-py). (requests stays: OpenTelemetry's OTLP exporter sends with it.)"""
UNUSED_DIRS: Final = frozenset({"__pycache__", "tests", "_tests"})
UNUSED_FILES: Final = ("*.pyc", "*.pyi", "py.typed")
LICENCE: Final = re.compile(r"(licen[cs]e|copying|notice|authors)", re.IGNORECASE)


def version_dir_name(version: str) -> str:
    """The folder of one CPython minor version: ``3.12`` → ``cp312``."""
    major, minor = version.split(".")
    return f"cp{major}{minor}"


def build_wheel(dest: Path) -> Path:
    """Build tokengauge's own (pure-Python) wheel into ``dest`` and return its path."""
    # setuptools builds in the repository's build/ and keeps what an earlier build left there:
    # modules since moved or deleted would ship.
    shutil.rmtree(REPO / "build", ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "wheel", "--no-deps", "--wheel-dir", str(dest), str(REPO)], check=True)
    (wheel,) = dest.glob("tokengauge-*.whl")
    return wheel


def host_target() -> str:
    """This machine's VS Code platform target (`linux-x64`, `darwin-arm64`, …)."""
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win32"}[platform.system()]
    machine = platform.machine().lower()
    return f"{system}-{'arm64' if machine in ('arm64', 'aarch64') else 'x64'}"


def install_for(
    version: str, wheel: Path, target: Path, pins: Path, never: Path, platform_target: str
) -> None:
    """Install ``wheel`` and its dependencies as CPython ``version`` on ``platform_target`` would
    get them, within the versions ``pins`` allows and without the distributions ``never`` names.

    uv rather than pip: pip's ``--python-version`` does not apply to environment markers, so it
    would leave out e.g. ``exceptiongroup; python_version < "3.11"``.
    """
    subprocess.run(
        [
            *(sys.executable, "-m", "uv", "pip", "install", "--quiet", "--no-config"),
            *("--target", str(target), "--only-binary", ":all:"),
            # Copies, not links into uv's cache: the files are trimmed and stripped in place.
            *("--link-mode", "copy"),
            *("--python-version", version, "--python-platform", TARGETS[platform_target]),
            *("--constraints", str(pins), "--overrides", str(never)),
            str(wheel),
        ],
        check=True,
        env={**os.environ, "MACOSX_DEPLOYMENT_TARGET": MACOS_MINIMUM},
    )
    shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts
    (target / ".lock").unlink(missing_ok=True)  # uv's, while it installed


def never_file(dest: Path) -> Path:
    """Overrides that drop every ``LEFT_OUT`` distribution: a marker no platform matches."""
    path = dest / "never.txt"
    path.write_text("".join(f"{name}; sys_platform == 'never'\n" for name in LEFT_OUT))
    return path


def pure_pins(folder: Path) -> list[str]:
    """``name==version`` of every pure-Python distribution installed in ``folder``."""
    pins = []
    for info in sorted(folder.glob("*.dist-info")):
        wheel = HeaderParser().parsestr((info / "WHEEL").read_text())
        if wheel.get("Root-Is-Purelib", "").lower() == "true":
            meta = HeaderParser().parsestr((info / "METADATA").read_text())
            pins.append(f"{meta['Name']}=={meta['Version']}")
    return pins


def remove_unused(folder: Path) -> None:
    """Delete from an installed ``folder`` what the server never reads (see the module's doc)."""
    for entry in folder.iterdir():
        if entry.suffix == ".dist-info":
            trim_dist_info(entry)
        elif entry.is_dir():
            for unused in [d for d in entry.rglob("*") if d.is_dir() and d.name in UNUSED_DIRS]:
                shutil.rmtree(unused, ignore_errors=True)  # a tests/ inside a removed tests/
    for pattern in UNUSED_FILES:
        for path in folder.rglob(pattern):
            path.unlink()


def trim_dist_info(info: Path) -> None:
    """Keep a distribution's METADATA headers (name, version, licence; not the long description),
    its WHEEL file (the platform and Python its files were built for) and its licence files; drop
    the installer's records."""
    for path in sorted(info.rglob("*"), reverse=True):
        relative = path.relative_to(info)
        if path.is_dir():
            if not any(path.iterdir()):
                path.rmdir()
        elif relative == Path("METADATA"):
            headers, _, _ = path.read_text(encoding="utf-8").partition("\n\n")
            path.write_text(headers.rstrip("\n") + "\n", encoding="utf-8")
        elif not _kept(relative):
            path.unlink()


def _kept(relative: Path) -> bool:
    """Whether a file of a dist-info (its path inside) is one `trim_dist_info` keeps."""
    return (
        relative.parts[0] == "licenses"
        or relative.name == "WHEEL"
        or bool(LICENCE.match(relative.name))
    )


def strip_symbols(folder: Path, platform_target: str) -> None:
    """Strip compiled Linux extensions of what only a debugger reads (debug info, local symbols).
    ``llvm-strip`` reads ELF of any architecture; without it, this machine's ``strip`` does this
    machine's platform only. macOS and Windows libraries stay as the wheels ship them: a changed
    Mach-O loses its code signature (Apple silicon refuses to load it), and a DLL keeps its debug
    information in a PDB beside it, which no wheel carries."""
    if not platform_target.startswith("linux-"):
        return
    strip = shutil.which("llvm-strip") or (
        shutil.which("strip") if platform_target == host_target() else None
    )
    if strip is None:
        print(f"== no strip for {platform_target} (llvm-strip): the extensions keep their symbols")
        return
    for library in sorted(folder.rglob("*.so")):
        subprocess.run([strip, "--strip-unneeded", str(library)], check=True)


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


COMPILED: Final = (".so", ".pyd", ".dylib")


def compiled(entry: Path) -> bool:
    """Whether a file or folder is or holds a compiled module, or is the record of a wheel
    that is not pure Python (its WHEEL names the platform): it stays in each version's folder
    even when identical in all (an abi3 wheel's), so ``common`` is the same on every platform."""
    if entry.suffix == ".dist-info":
        wheel = HeaderParser().parsestr((entry / "WHEEL").read_text())
        return wheel.get("Root-Is-Purelib", "").lower() != "true"
    paths = [entry, *entry.rglob("*")] if entry.is_dir() else [entry]
    return any(path.suffix in COMPILED for path in paths)


def split_common(per_version: dict[str, Path], common: Path) -> list[str]:
    """Move the entries identical in every version folder, and holding no compiled module, to
    ``common``; return their names."""
    names = set.intersection(
        *({p.name for p in folder.iterdir()} for folder in per_version.values())
    )
    moved = []
    common.mkdir(parents=True, exist_ok=True)
    for name in sorted(names):
        copies = [folder / name for folder in per_version.values()]
        if compiled(copies[0]) or not same_entry(copies):
            continue
        shutil.move(str(copies[0]), common / name)
        for other in copies[1:]:
            shutil.rmtree(other) if other.is_dir() else other.unlink()
        moved.append(name)
    return moved


def folder_size(path: Path) -> int:
    """Bytes of every file below ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def bundle(
    out: Path, versions: tuple[str, ...] = PYTHON_VERSIONS, platform_target: str | None = None
) -> None:
    """Write ``out/common`` and ``out/cp3XX`` for each version and one platform (this machine's
    by default), replacing what was there."""
    platform_target = platform_target or host_target()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="tg-wheel-") as tmp:
        wheel = build_wheel(Path(tmp))
        never = never_file(Path(tmp))
        pins = Path(tmp) / "pins.txt"
        pins.write_text("")
        per_version: dict[str, Path] = {}
        for version in sorted(versions, key=lambda v: tuple(map(int, v.split(".")))):
            target = out / version_dir_name(version)
            where = target.relative_to(REPO) if target.is_relative_to(REPO) else target
            print(f"== bundling for CPython {version} on {platform_target} → {where}", flush=True)
            install_for(version, wheel, target, pins, never, platform_target)
            if not per_version:
                pins.write_text("".join(f"{pin}\n" for pin in pure_pins(target)))
            per_version[version] = target
    for folder in per_version.values():
        remove_unused(folder)
        strip_symbols(folder, platform_target)
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
    ignore = shutil.ignore_patterns(*UNUSED_DIRS, *UNUSED_FILES)
    shutil.copytree(REPO / "server" / "tokengauge", target, ignore=ignore)


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python scripts/bundle_libs.py [--out bundled/libs] [--python 3.X ...]
    [--target linux-x64|...] [--refresh-server | --print-host-target | --print-targets]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "bundled" / "libs")
    parser.add_argument("--python", action="append", choices=PYTHON_VERSIONS, dest="versions")
    parser.add_argument("--target", choices=tuple(TARGETS), help="platform (this machine's)")
    parser.add_argument(
        "--print-host-target", action="store_true", help="only print this machine's platform"
    )
    parser.add_argument(
        "--print-targets", action="store_true", help="only print every platform, one a line"
    )
    parser.add_argument(
        "--refresh-server",
        action="store_true",
        help="only copy the working tree's tokengauge package into an existing bundle",
    )
    args = parser.parse_args(argv)
    if args.print_host_target:
        print(host_target())
    elif args.print_targets:
        print("\n".join(TARGETS))
    elif args.refresh_server:
        refresh_server(args.out.resolve())
    else:
        bundle(args.out.resolve(), tuple(args.versions or PYTHON_VERSIONS), args.target)


if __name__ == "__main__":
    main()
