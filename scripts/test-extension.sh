#!/usr/bin/env bash
# The extension's tests inside a real VS Code (code-server 1.139): builds the extension, starts the
# test upstream on 127.0.0.1, writes user settings that point tokengauge at it and at this repo's
# Python, and runs extension/test/host/*.test.js in the extension host.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}

bash scripts/vscode-host/setup.sh
npm run --silent build

WORK=$(mktemp -d /tmp/tg-ext-test.XXXXXX)
"$PY" -m tests.upstream.server --port 0 --config '{}' > "$WORK/upstream.out" 2> "$WORK/upstream.err" &
UPSTREAM_PID=$!
trap 'kill "$UPSTREAM_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/upstream.out" ] && break; sleep 0.1; done
URL=$(head -n 1 "$WORK/upstream.out")
[ -n "$URL" ] || { echo "test upstream did not start:"; cat "$WORK/upstream.err"; exit 1; }

cat > "$WORK/settings.json" <<JSON
{
  "tokenGauge.pythonPath": "$PY",
  "tokenGauge.logLevel": "debug",
  "tokenGauge.providers": [{"id": "test-openai", "dialect": "openai", "baseUrl": "$URL/v1", "discover": false}],
  "tokenGauge.models": [
    {"id": "gpt-4o", "provider": "test-openai", "name": "GPT-4o (test upstream)"},
    {"id": "local-small", "provider": "test-openai", "family": "llama-3.1", "contextWindow": 8192, "maxOutputTokens": 2048}
  ]
}
JSON
ENVJSON=$(printf '{"TG_PYTHON": "%s", "TG_UPSTREAM": "%s", "TG_REPO": "%s"}' "$PY" "$URL" "$REPO")
bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$ENVJSON" --settings "$WORK/settings.json"
