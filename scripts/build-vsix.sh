#!/usr/bin/env bash
# Build the VSIX of one platform (default: this machine's; or one of linux-x64, linux-arm64,
# darwin-x64, darwin-arm64, win32-x64): the bundled extension (dist/extension.js), the icon, the
# tokengauge server and its libraries for CPython 3.10–3.14 of that platform (bundled/libs,
# scripts/bundle_libs.py), packaged by @vscode/vsce for that target. Prints the VSIX's path, its
# size, and its size and file count installed. Needs .venv (scripts/setup.sh makes it) and npm ci.
# bundled/libs is left holding that platform's libraries: scripts/build-vsix-all.sh builds this
# machine's last, for the development extension runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
VERSION=$(node -p 'require("./package.json").version')
TARGET=${1:-$("$VENV/bin/python" scripts/bundle_libs.py --print-host-target)}
VSIX="tokengauge-$VERSION-$TARGET.vsix"

npm run --silent build  # first: the dashboard's bundle goes into the server's package
"$VENV/bin/python" scripts/bundle_libs.py --target "$TARGET"
rm -f "$VSIX"
# --skip-license: the licence is stated in README.md; vsce would otherwise stop to ask.
# --no-rewrite-relative-links: package.json's repository has no public GitHub/GitLab address yet,
# from which vsce would make README.md's relative links (its screenshot) absolute; without one it
# refuses to package. Drop the flag once the repository has such an address.
# scripts/no-lint-profiler.cjs: vsce's secret lint without its quadratic profiler (20 s of 44).
NODE_OPTIONS="--require $PWD/scripts/no-lint-profiler.cjs" npx --no-install vsce package --target "$TARGET" --no-dependencies --skip-license \
    --no-rewrite-relative-links --out "$VSIX"
installed=$(unzip -l "$VSIX" | awk '$4 ~ /^extension\// {bytes += $1; files++}
    END {printf "%.1f MB in %d files", bytes / 1e6, files}')
echo "== VSIX: $PWD/$VSIX ($(du -h "$VSIX" | cut -f1); installed: $installed)"
