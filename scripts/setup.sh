#!/usr/bin/env bash
# Set up a fresh machine: a virtualenv in .venv with tokengauge and its test/dev tools from PyPI,
# the extension's npm packages and its build (dist/extension.js), then run the main job once
# (count the sample request) to show the install works.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
"$PYTHON" - <<'PY'
import sys
if sys.version_info < (3, 10):
    sys.exit(f"tokengauge needs Python 3.10 or newer, this is {sys.version.split()[0]}")
PY

rm -rf .venv
"$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test,dev]"

npm ci --no-audit --no-fund --loglevel=error
npm run build --silent

echo "== tokengauge $(.venv/bin/tokengauge --version)"
.venv/bin/tokengauge count tests/data/copilot-request.json
