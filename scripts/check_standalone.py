"""The repository stands alone: no tracked text file names a path of one machine, or a document or
folder outside the checkout. Run by `scripts/check.sh`; prints each finding as `path:line: what`
and exits 1 when there is one.

A machine path is an absolute path that only the machine it was written on has:
- anything under `/work` (the build machine's root), `/root` (root's home) or `/var/folders`
  (macOS's per-user temporary folders);
- a named person's home: `/home/<user>`, `/Users/<user>`, `C:\\Users\\<user>` (either slash,
  doubled backslashes as in JSON). A placeholder user (`me`, `you`, `user`, `dev`, `alice`, …, or
  `<user>`, `$USER`, `%USERNAME%`, `*`) is an example, not a machine: tests and synthetic workloads
  need such paths;
- a path into a named folder under `/tmp` (`/tmp/<name>/…`). A single name under `/tmp`
  (`/tmp/trace.json`, the scratch file an example command writes; a fake storage folder in a test)
  is nobody's machine, and a template is not a name: mktemp's `XXXXXX`, a glob `*`, a variable.
A path counts only where one can start: at the start of a line, after a space, a quote, a bracket,
`=`, `:`, `,`. Inside a longer path or a URL (`https://host/home/x`, `bench/work/x`) it is a part of
that, not a path of its own; a `file://` URL's path does count.

A reference outside the checkout: the folder beside it (`../shared`, `shared/fixtures`,
`shared/vscode-host`) or the old design document (`DESIGN.md`, `DESIGN §n`): docs/ARCHITECTURE.md
is the design, tests/data/wire the captures, scripts/vscode-host the host's recipes.

Files that are not UTF-8 text (images, archives) are skipped; so are this file and its tests
(tests/test_standalone.py), which name what they look for.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXEMPT = frozenset({"scripts/check_standalone.py", "tests/test_standalone.py"})
PLACEHOLDER_USERS = frozenset(
    {"me", "you", "user", "username", "name", "someone", "dev", "developer", "example"}
    | {"alice", "bob", "jane", "john", "jdoe"}
)

# Where a path may start: not after a word character or another path's characters, but after the
# `//` of a file URL.
_START = r"(?:(?<![\w.~/\\-])|(?<=file://))"
_END = r"(?=[/\\\s\"'`)\]>,;:]|$)"
_NAME = r"[^/\\\s\"'`)\]>,;:]+"
_MACHINE = re.compile(
    rf"{_START}(?:"
    rf"(?P<root>/(?:work|root){_END}|/var/folders/)"
    rf"|(?P<home>/(?:home|Users)/(?P<user>{_NAME}))"
    rf"|(?P<windows>[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)(?P<winuser>{_NAME}))"
    rf"|(?P<tmp>/tmp/(?P<tmpname>{_NAME})/)"
    r")",
    re.IGNORECASE,
)
_OUTSIDE = re.compile(r"\.\./shared\b|\bshared/(?:fixtures|vscode-host)\b|\bDESIGN(?:\.md\b| §)")
_TEMPLATE = re.compile(r"XXX|[*$%{<]")
_TOKEN = re.compile(r"[^\s\"'`)\]>,;]*")


def _is_placeholder(user: str) -> bool:
    """Whether a home folder's user is an example rather than a person."""
    return user.lower() in PLACEHOLDER_USERS or bool(_TEMPLATE.search(user))


def _path_at(line: str, start: int) -> str:
    """The whole path that starts at `start`, without the full stop of a sentence."""
    token = _TOKEN.match(line, start)
    return token[0].rstrip(".") if token else ""


def findings(text: str) -> Iterator[tuple[int, str]]:
    """Each `(line number, what)` of `text` that ties the repository to one machine or to
    something outside it."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in _MACHINE.finditer(line):
            if match["home"] and _is_placeholder(match["user"]):
                continue
            if match["windows"] and _is_placeholder(match["winuser"]):
                continue
            if match["tmp"] and _TEMPLATE.search(match["tmpname"]):
                continue
            yield number, f"machine path {_path_at(line, match.start())!r}"
        for match in _OUTSIDE.finditer(line):
            yield number, f"reference outside the repository {match.group(0)!r}"


def tracked_files(repo: Path) -> list[str]:
    """The repository's tracked files, relative to it."""
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, check=True
    )
    return [name for name in listing.stdout.decode("utf-8").split("\0") if name]


def text_of(path: Path) -> str | None:
    """A file's text, or None when it is not UTF-8 text (or is gone from the work tree)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def main(repo: Path = REPO) -> int:
    """Print every finding in the tracked files; 1 when there is one, else 0."""
    found = 0
    for name in tracked_files(repo):
        text = None if name in EXEMPT else text_of(repo / name)
        for number, what in findings(text or ""):
            print(f"{name}:{number}: {what}")
            found += 1
    if found:
        print(f"{found} line(s) tie the repository to a machine or to files outside it")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
