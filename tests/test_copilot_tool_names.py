"""extension/src/copilotToolNames.ts against the Copilot Chat the VS Code host runs.

The table of model-facing tool names is copied from Copilot's bundle; this reads the bundle the
host suites drive (scripts/vscode-host/setup.sh) and fails when Copilot renames differently, or
no longer rewrites the tools it hands to a request.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "extension" / "src" / "copilotToolNames.ts"
COPILOT = Path("cs/node_modules/code-server/lib/vscode/extensions/copilot")
ENUM = re.compile(r"\((\w+)=>\(((?:\1\.\w+=\"[^\"]*\",)+)\1\)\)")
MEMBER = re.compile(r"\w+\.(\w+)=\"([^\"]*)\"")
REWRITE = re.compile(
    r"name:\w+\(\w+\.name\),description:\w+\(\w+\.description\),inputSchema:\w+\.inputSchema&&\w+\("
)


def copilot_folder() -> Path:
    """The host's Copilot extension, or a skip that says how to set the host up."""
    home = Path(os.environ.get("VSC_HOME", Path.home() / ".cache" / "vscode-host"))
    folder = home / COPILOT
    if not (folder / "dist" / "extension.js").is_file():
        pytest.skip("no VS Code host here: bash scripts/vscode-host/setup.sh installs it")
    return folder


def enum_with(bundle: str, key: str, value: str) -> dict[str, str]:
    """The minified string enum of the bundle in which `key` is `value`."""
    for match in ENUM.finditer(bundle):
        members = dict(MEMBER.findall(match.group(2)))
        if members.get(key) == value:
            return members
    raise AssertionError(f"no enum with {key}={value!r} in Copilot's bundle")


def test_table_is_copilots_renames() -> None:
    folder = copilot_folder()
    bundle = (folder / "dist" / "extension.js").read_text(encoding="utf-8")
    contributed = enum_with(bundle, "ReadFile", "copilot_readFile")
    facing = enum_with(bundle, "ReadFile", "read_file")
    renames = [(name, facing[key]) for key, name in contributed.items() if key in facing]
    renames = [(name, model) for name, model in renames if name != model]
    table = re.findall(r"\['(\w+)', '(\w+)'\]", TABLE.read_text(encoding="utf-8"))
    version = json.loads((folder / "package.json").read_text(encoding="utf-8"))["version"]
    assert table == renames, f"Copilot {version} renames its tools otherwise: update {TABLE.name}"
    source = TABLE.read_text(encoding="utf-8")
    assert f"Copilot Chat {version}" in source, "the table names the version it was taken from"


def test_copilot_rewrites_name_description_and_schema() -> None:
    bundle = (copilot_folder() / "dist" / "extension.js").read_text(encoding="utf-8")
    assert REWRITE.search(bundle), "Copilot no longer rewrites the tools it hands to a request"
    assert "new RegExp(`\\\\b${" in bundle, "mentions are replaced at word boundaries"
