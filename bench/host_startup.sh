#!/usr/bin/env bash
# Startup benchmark in a real VS Code (code-server 1.139): milliseconds from Token Gauge's
# activation to the first models it offers VS Code, and to its server's first answer.
#
#   bash bench/host_startup.sh [launches]
#
# The first launch is a first run (a fresh profile: the models wait for the server); the next ones
# reuse that profile, as a reloaded window does (the models come from the last session's list while
# the server starts). The extension lists one configured model of a test upstream on 127.0.0.1.
# Prints each launch's figures and the medians of the reloads; asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
LAUNCHES=${1:-6}

bash scripts/vscode-host/setup.sh > /dev/null || { echo "vscode-host setup failed"; exit 1; }
npm run --silent build > /dev/null || exit 1
"$PY" scripts/bundle_libs.py --refresh-server > /dev/null || exit 1

WORK=$(mktemp -d /tmp/tg-startup.XXXXXX)
cat > "$WORK/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "tokenGauge.pythonPath": "$PY",
  "tokenGauge.providers": [{"id": "local", "baseUrl": "http://127.0.0.1:9/v1", "discover": false}],
  "tokenGauge.models": [{"id": "gpt-4o", "provider": "local"}]
}
JSON
port=$(node scripts/vscode-host/free-port.js)
ENVJSON='{"TG_HOST_SUITE": "startup"}'  # extension/test/host/startup
for i in $(seq 1 "$LAUNCHES"); do
    VSC_PORT=$port bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$ENVJSON" \
        --settings "$WORK/settings.json" --user-data-dir "$WORK/profile" > "$WORK/launch-$i.log" 2>&1
    line=$(grep -o 'tg-startup {.*}' "$WORK/launch-$i.log" | head -n 1)
    [ -n "$line" ] || { echo "launch $i gave no figures; log: $WORK/launch-$i.log"; exit 1; }
    echo "launch $i: ${line#tg-startup }"
done | tee "$WORK/figures.txt"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l.replace(/^launch \d+: /, "")));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const [first, ...reloads] = lines;
console.log(`first run: activation → models ${first.modelsMs} ms (${first.modelsFrom}), → server ${first.serverMs} ms`);
if (reloads.length) console.log(`reloads (${reloads.length}): activation → models median ${median(reloads.map((r) => r.modelsMs))} ms (from ${[...new Set(reloads.map((r) => r.modelsFrom))].join(", ")}), → server median ${median(reloads.map((r) => r.serverMs))} ms`);
' "$WORK/figures.txt"
