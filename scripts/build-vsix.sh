#!/usr/bin/env bash
# Build the VSIX: the bundled extension (dist/extension.js), the icon, the tokengauge server and
# its libraries for CPython 3.10–3.14 (bundled/libs, scripts/bundle_libs.py), packaged by
# @vscode/vsce for linux-x64. Prints the VSIX's path, its size, and its size and file count
# installed. Needs .venv (scripts/setup.sh makes it) and npm ci.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
VERSION=$(node -p 'require("./package.json").version')
VSIX="tokengauge-$VERSION-linux-x64.vsix"

npm run --silent build  # first: the dashboard's bundle goes into the server's package
"$VENV/bin/python" scripts/bundle_libs.py
rm -f "$VSIX"
# --skip-license: the licence is stated in README.md; vsce would otherwise stop to ask.
# --no-rewrite-relative-links: package.json's repository has no public GitHub/GitLab address yet,
# from which vsce would make README.md's relative links (its screenshot) absolute; without one it
# refuses to package. Drop the flag once the repository has such an address.
npx --no-install vsce package --target linux-x64 --no-dependencies --skip-license \
    --no-rewrite-relative-links --out "$VSIX"
installed=$(unzip -l "$VSIX" | awk '$4 ~ /^extension\// {bytes += $1; files++}
    END {printf "%.1f MB in %d files", bytes / 1e6, files}')
echo "== VSIX: $PWD/$VSIX ($(du -h "$VSIX" | cut -f1); installed: $installed)"
