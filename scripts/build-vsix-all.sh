#!/usr/bin/env bash
# Build the VSIX of every platform people use (scripts/build-vsix.sh each; the platforms are
# scripts/bundle_libs.py's TARGETS: linux-x64, linux-arm64, darwin-x64, darwin-arm64 and
# win32-x64), this machine's last (bundled/libs stays its libraries, which the development
# extension runs). Ends with each one's size, packed and installed.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=$(node -p 'require("./package.json").version')
PY="${VENV:-.venv}/bin/python"
HOST=$("$PY" scripts/bundle_libs.py --print-host-target)
TARGETS=$("$PY" scripts/bundle_libs.py --print-targets)  # one a line
for target in $TARGETS; do
    [ "$target" = "$HOST" ] || bash scripts/build-vsix.sh "$target" | tail -n 1
done
bash scripts/build-vsix.sh "$HOST" | tail -n 1
echo "| VSIX | packed | installed | files |"
echo "| --- | ---: | ---: | ---: |"
for target in $TARGETS; do
    vsix="tokengauge-$VERSION-$target.vsix"
    unzip -l "$vsix" | awk -v name="$vsix" -v packed="$(stat -c %s "$vsix")" \
        '$4 ~ /^extension\// {bytes += $1; files++}
        END {printf "| %s | %.1f MB | %.1f MB | %d |\n", name, packed / 1e6, bytes / 1e6, files}'
done
