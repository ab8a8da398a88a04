#!/usr/bin/env bash
# Build the VSIX: the bundled extension (dist/extension.js), the tokengauge server and its libraries
# for CPython 3.10–3.14 (bundled/libs, scripts/bundle_libs.py), packaged by @vscode/vsce for
# linux-x64. Prints the VSIX's path and size. Needs .venv (scripts/setup.sh makes it) and npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
VERSION=$(node -p 'require("./package.json").version')
VSIX="tokengauge-$VERSION-linux-x64.vsix"

"$VENV/bin/python" scripts/bundle_libs.py
npm run --silent build
rm -f "$VSIX"
# --skip-license: the licence is stated in README.md; vsce would otherwise stop to ask.
npx --no-install vsce package --target linux-x64 --no-dependencies --skip-license --out "$VSIX"
echo "== VSIX: $PWD/$VSIX ($(du -h "$VSIX" | cut -f1), $(unzip -l "$VSIX" | tail -1 | awk '{print $2}') files)"
