"""The VSIX of every platform (scripts/build-vsix-all.sh), checked without the platform.

Each VSIX says its target; every compiled extension module it carries sits in the folder of the
CPython it was built for, is named for that CPython and platform, is a file of that platform's
format for its architecture (ELF, Mach-O, PE), and comes from a wheel whose tag is that CPython
and platform. The pure-Python parts are the same in every VSIX, and tokengauge is the working
tree's. (This machine's VSIX is also started and counted from: tests/test_packaging.py.)
"""

from __future__ import annotations

import importlib.metadata
import io
import re
import struct
import subprocess
import zipfile
from email.parser import HeaderParser
from pathlib import PurePosixPath

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from scripts.bundle_libs import MACOS_MINIMUM, PYTHON_VERSIONS, TARGETS, version_dir_name
from tests.conftest import REPO, vsix_path

LIBS = PurePosixPath("extension/bundled/libs")
COMPILED = re.compile(r"\.(so|pyd)$")

# Per target: the module name's platform part, the file format and architecture, and the wheel's
# platform tag.
MODULE_SUFFIX = {
    "linux-x64": r"\.cpython-{v}-x86_64-linux-gnu\.so",
    "linux-arm64": r"\.cpython-{v}-aarch64-linux-gnu\.so",
    "darwin-x64": r"\.cpython-{v}-darwin\.so",
    "darwin-arm64": r"\.cpython-{v}-darwin\.so",
    "win32-x64": r"\.cp{v}-win_amd64\.pyd",
}
STABLE_ABI_SUFFIX = {
    "linux-x64": r"\.abi3\.so",
    "linux-arm64": r"\.abi3\.so",
    "darwin-x64": r"\.abi3\.so",
    "darwin-arm64": r"\.abi3\.so",
    "win32-x64": r"/[^/.]+\.pyd",
}
"""…or, for a module built for the stable ABI (protobuf's), the name every CPython 3 loads."""
ARCHITECTURE = {
    "linux-x64": ("ELF", "x86_64"),
    "linux-arm64": ("ELF", "aarch64"),
    "darwin-x64": ("Mach-O", "x86_64"),
    "darwin-arm64": ("Mach-O", "arm64"),
    "win32-x64": ("PE", "x86_64"),
}
WHEEL_PLATFORM = {
    # manylinux2014 is manylinux_2_17 by its older name
    "linux-x64": r"manylinux(?:_2_(\d+)|2014)_x86_64",
    "linux-arm64": r"manylinux(?:_2_(\d+)|2014)_aarch64",
    "darwin-x64": r"macosx_(\d+)_(\d+)_(x86_64|universal2)",
    "darwin-arm64": r"macosx_(\d+)_(\d+)_(arm64|universal2)",
    "win32-x64": r"win_amd64",
}
GLIBC_MINIMUM = 28
"""The newest glibc a Linux wheel may need (bundle_libs resolves for manylinux_2_28)."""
ELF_MACHINES = {62: "x86_64", 183: "aarch64"}
MACHO_CPUS = {0x01000007: "x86_64", 0x0100000C: "arm64"}
PE_MACHINES = {0x8664: "x86_64", 0xAA64: "arm64"}


@pytest.fixture(scope="module", autouse=True)
def every_vsix() -> None:
    """Every platform's VSIX, built with scripts/build-vsix-all.sh (about 2 minutes; the wheels
    come from PyPI) where one is missing or older than the server's source, as when `pytest` is
    the first thing run in a fresh clone (scripts/check.sh builds them first)."""
    newest = max(path.stat().st_mtime for path in (REPO / "server").rglob("*.py"))
    stale = [
        t for t in TARGETS if not vsix_path(t).exists() or vsix_path(t).stat().st_mtime < newest
    ]
    if not stale:
        return
    done = subprocess.run(
        ["bash", "scripts/build-vsix-all.sh"], cwd=REPO, capture_output=True, text=True, check=False
    )
    output = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, f"scripts/build-vsix-all.sh for {', '.join(stale)}:\n{output}"


@pytest.fixture(scope="module", params=tuple(TARGETS))
def built(request: pytest.FixtureRequest) -> tuple[str, zipfile.ZipFile]:
    target: str = request.param
    path = vsix_path(target)
    with zipfile.ZipFile(path) as vsix:
        yield target, vsix


def file_format(data: bytes) -> tuple[str, set[str]]:
    """A compiled module's format and the architectures it holds."""
    if data[:4] == b"\x7fELF":
        assert data[4] == 2, "a 64-bit ELF"
        (machine,) = struct.unpack_from("<H", data, 18)
        return "ELF", {ELF_MACHINES.get(machine, hex(machine))}
    if data[:4] == b"\xcf\xfa\xed\xfe":  # 64-bit Mach-O, little-endian
        (cpu,) = struct.unpack_from("<I", data, 4)
        return "Mach-O", {MACHO_CPUS.get(cpu, hex(cpu))}
    if data[:4] == b"\xca\xfe\xba\xbe":  # a universal binary: one Mach-O per architecture
        (count,) = struct.unpack_from(">I", data, 4)
        cpus = (struct.unpack_from(">I", data, 8 + 20 * i)[0] for i in range(count))
        return "Mach-O", {MACHO_CPUS.get(cpu, hex(cpu)) for cpu in cpus}
    if data[:2] == b"MZ":
        (header,) = struct.unpack_from("<I", data, 0x3C)
        assert data[header : header + 4] == b"PE\0\0"
        (machine,) = struct.unpack_from("<H", data, header + 4)
        return "PE", {PE_MACHINES.get(machine, hex(machine))}
    return "unknown", set()


def wheel_tags(vsix: zipfile.ZipFile, folder: PurePosixPath) -> dict[str, list[str]]:
    """Each distribution of a folder: the tags its WHEEL file gives."""
    tags = {}
    for name in vsix.namelist():
        path = PurePosixPath(name)
        if path.parent.parent == folder and path.name == "WHEEL":
            wheel = HeaderParser().parsestr(vsix.read(name).decode())
            tags[path.parent.name.split("-")[0].lower()] = wheel.get_all("Tag") or []
    return tags


def test_the_vsix_says_its_target(built: tuple[str, zipfile.ZipFile]) -> None:
    target, vsix = built
    manifest = vsix.read("extension.vsixmanifest").decode()
    assert f'TargetPlatform="{target}"' in manifest


@pytest.mark.parametrize("version", PYTHON_VERSIONS)
def test_compiled_modules_are_for_their_platform_and_cpython(
    built: tuple[str, zipfile.ZipFile], version: str
) -> None:
    target, vsix = built
    folder = LIBS / version_dir_name(version)
    short = version_dir_name(version)[2:]
    modules = [
        n for n in vsix.namelist() if COMPILED.search(n) and PurePosixPath(n).is_relative_to(folder)
    ]
    names = {PurePosixPath(m).name.split(".")[0] for m in modules}
    assert {"_tiktoken", "_regex"} <= names, modules
    suffix = re.compile(f"({MODULE_SUFFIX[target].format(v=short)}|{STABLE_ABI_SUFFIX[target]})$")
    expected_format, architecture = ARCHITECTURE[target]
    for module in modules:
        assert suffix.search(module), f"{module}: not named for CPython {version} on {target}"
        kind, architectures = file_format(vsix.read(module))
        assert kind == expected_format and architecture in architectures, (
            module,
            kind,
            architectures,
        )
    tags = wheel_tags(vsix, folder)
    platform_tag = re.compile(WHEEL_PLATFORM[target])
    for distribution in ("tiktoken", "regex"):
        assert tags[distribution], f"{distribution} has no wheel tag in {folder}"
        for tag in tags[distribution]:
            python, abi, platform_part = tag.split("-")
            assert (python, abi) == (f"cp{short}", f"cp{short}"), tag
            matched = platform_tag.fullmatch(platform_part.split(".")[0])
            assert matched, f"{distribution}: {tag} is not for {target}"
            if target.startswith("linux") and matched[1]:
                assert int(matched[1]) <= GLIBC_MINIMUM, tag
            if target.startswith("darwin"):
                assert (int(matched[1]), int(matched[2])) <= tuple(
                    map(int, MACOS_MINIMUM.split("."))
                )


@pytest.mark.parametrize("target", [t for t in TARGETS if t.startswith("linux-")])
def test_linux_modules_are_stripped_and_still_load(target: str) -> None:
    """What only a debugger reads is gone from the Linux modules (the wheels carry it; it was a
    third of the installed arm64 VSIX), and each still exports the function Python imports it by.
    macOS and Windows modules ship as their wheels have them."""
    with zipfile.ZipFile(vsix_path(target)) as vsix:
        modules = {n: vsix.read(n) for n in vsix.namelist() if COMPILED.search(n)}
    assert modules
    for module, data in modules.items():
        elf = ELFFile(io.BytesIO(data))
        names = [section.name for section in elf.iter_sections()]
        assert not [n for n in names if n.startswith(".debug") or n == ".symtab"], (module, names)
        dynamic = elf.get_section_by_name(".dynsym")
        assert isinstance(dynamic, SymbolTableSection), module
        init = "PyInit_" + PurePosixPath(module).name.split(".")[0]
        assert dynamic.get_symbol_by_name(init), f"{module} does not export {init}"


def test_no_compiled_module_is_shared(built: tuple[str, zipfile.ZipFile]) -> None:
    _, vsix = built
    common = LIBS / "common"
    assert not [
        n for n in vsix.namelist() if COMPILED.search(n) and PurePosixPath(n).is_relative_to(common)
    ]


def common_files(vsix: zipfile.ZipFile) -> dict[str, bytes]:
    """The shared (pure-Python) files, line endings made LF (a wheel built on Windows may carry
    CRLF in its Python files, which Python reads alike)."""
    prefix = f"{LIBS}/common/"
    return {
        name[len(prefix) :]: vsix.read(name).replace(b"\r\n", b"\n")
        for name in vsix.namelist()
        if name.startswith(prefix) and not name.endswith("/")
    }


def dev_install() -> dict[str, importlib.metadata.Distribution]:
    """The dev install's distributions, by normalised name."""
    return {
        (dist.metadata["Name"] or "").lower().replace("-", "_"): dist
        for dist in importlib.metadata.distributions()
    }


def serves_oldest(dist: importlib.metadata.Distribution) -> bool:
    """Whether a distribution runs on the oldest CPython the VSIX supports."""
    requires = dist.metadata["Requires-Python"]
    return requires is None or SpecifierSet(requires).contains(PYTHON_VERSIONS[0])


def test_the_pure_python_parts_match_everywhere_and_the_dev_install() -> None:
    shared = {t: common_files(zipfile.ZipFile(vsix_path(t))) for t in TARGETS}
    first = shared["linux-x64"]
    for target, files in shared.items():
        assert files == first, f"{target}'s shared files differ from linux-x64's"
    # The libraries: the versions the dev install has (or newer ones, released since it was made),
    # older only where the dev install's no longer runs on the oldest CPython: every version folder
    # shares one pure-Python copy, resolved for CPython 3.10.
    installed = dev_install()
    bundled = {
        tuple(PurePosixPath(name).parts[0].removesuffix(".dist-info").rsplit("-", 1))
        for name in first
        if PurePosixPath(name).parts[0].endswith(".dist-info")
    }
    older = []
    for name, version in sorted(bundled):
        dev = installed.get(name.lower().replace("-", "_"))
        assert dev is not None, f"{name} is bundled but not in the dev install"
        if Version(version) < Version(dev.version) and name != "tokengauge":
            assert not serves_oldest(dev), f"{name} {version} bundled, {dev.version} in .venv"
            older.append(name)
    assert len(older) < len(bundled) / 2, older
    # tokengauge: the working tree's.
    server = REPO / "server" / "tokengauge"
    ours = {
        n.removeprefix("tokengauge/"): data
        for n, data in first.items()
        if n.startswith("tokengauge/")
    }
    source = {
        p.relative_to(server).as_posix(): p.read_bytes()
        for p in server.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and p.suffix != ".pyc"
        and p.name != "py.typed"
    }
    assert ours.keys() == source.keys()
    assert [n for n in ours if ours[n] != source[n]] == []
