#!/usr/bin/env bash
# The extension's tests inside a real VS Code (code-server 1.139), in these suites:
#   dev      the development extension, plus a second (consumer) extension installed as a VSIX,
#            against the test upstream on 127.0.0.1; then its workspace-settings test again on a
#            copy of the extension whose manifest gives no setting a scope;
#   ui       a first run as a person meets it, the workbench worked through playwright-core (Manage
#            Models → Add Models, error texts in the chat, the status bar across a reload), with
#            screenshots (TG_SCREENSHOTS, default a folder of the run);
#   vsix     the packaged tokengauge VSIX installed with --install-extension, driven by the consumer;
#   untrusted  the development extension in a folder that is not trusted, the Python extension (its
#            stand-in) naming an interpreter that leaves a marker when it runs;
#   copilot  the real Copilot Chat in agent mode (scripts/test-copilot.sh);
#   reasoning  the real Copilot agent's tool loop of a reasoning model, through the installed VSIX,
#            against strict stand-ins of DeepSeek V4 and OpenRouter (scripts/test-copilot-reasoning.sh).
#   agent-host  the Agents window's real Copilot runtimes (VS Code 1.139.1's and the CLI's) through
#            VS Code's bridge rebuilt as a test extension, to the installed VSIX, in a loopback-only
#            network namespace (scripts/test-agent-host.sh).
# Prints each suite's output, then one plain `N passed, N failed` line for all of them.
# Env: TG_PYTHON (the dev server's Python, default .venv/bin/python), TG_VSIX_PYTHON (the Python the
# installed VSIX runs on, default /usr/bin/python3: a bare interpreter, so only bundled libs serve),
# TG_HOST_SUITES (default "dev untrusted ui vsix copilot reasoning agent-host"), TG_HOST_TEST_GREP (only the host tests whose titles match).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${TG_PYTHON:-$REPO/.venv/bin/python}
VSIX_PY=${TG_VSIX_PYTHON:-/usr/bin/python3}
SUITES=${TG_HOST_SUITES:-dev untrusted ui vsix copilot reasoning agent-host}
VERSION=$(node -p 'require("./package.json").version')
VSIX=$REPO/tokengauge-$VERSION-$("$PY" scripts/bundle_libs.py --print-host-target).vsix  # this machine's

bash scripts/vscode-host/setup.sh || exit 1
npm run --silent build || exit 1
# The development extension runs its bundled server package: make it the working tree's.
"$PY" scripts/bundle_libs.py --refresh-server || exit 1

WORK=$(mktemp -d /tmp/tg-ext-test.XXXXXX)
SHOTS=${TG_SCREENSHOTS:-$WORK/shots}  # the ui suite's screenshots
# Its listings speak Ollama's API (/api/tags, /api/show, /api/ps: the model loaded with its whole
# window), for the discovered provider below.
UPSTREAM_CONFIG='{"listing": "ollama", "models": [{"id": "qwen2.5-coder:7b", "context_window": 40960, "architecture": "qwen2", "loaded_context": 40960}]}'
"$PY" -m tests.harness.fake_upstream.server --port 0 --config "$UPSTREAM_CONFIG" > "$WORK/upstream.out" 2> "$WORK/upstream.err" &
UPSTREAM_PID=$!
trap 'kill "$UPSTREAM_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/upstream.out" ] && break; sleep 0.1; done
URL=$(head -n 1 "$WORK/upstream.out")
[ -n "$URL" ] || { echo "test upstream did not start:"; cat "$WORK/upstream.err"; exit 1; }

# The consumer extension as a VSIX: a zip with extension/package.json and its code is enough.
mkdir -p "$WORK/consumer"
cp -r extension/test/consumer "$WORK/consumer/extension"
(cd "$WORK/consumer" && "$PY" -m zipfile -c consumer.vsix extension) || exit 1
# A stand-in for the Python extension (ms-python.python), whose API names the interpreter.
mkdir -p "$WORK/python-stub"
cp -r extension/test/python-stub "$WORK/python-stub/extension"
(cd "$WORK/python-stub" && "$PY" -m zipfile -c python-stub.vsix extension) || exit 1

settings() {  # settings.json for tokengauge pointed at the test upstream, with this Python
    cat <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "tokenGauge.pythonPath": "$1",
  "tokenGauge.logLevel": "debug",
  "tokenGauge.providers": [
    {"id": "test-openai", "dialect": "openai", "baseUrl": "$URL/v1", "discover": false},
    {"id": "ollama-test", "dialect": "openai", "baseUrl": "$URL/v1"}
  ],
  "tokenGauge.models": [
    {"id": "gpt-4o", "provider": "test-openai", "name": "GPT-4o (test upstream)"},
    {"id": "local-small", "provider": "test-openai", "family": "llama-3.1", "contextWindow": 8192, "maxOutputTokens": 2048}
  ]
}
JSON
}
UI_KEY=sk-tg-ui-0123456789
UI_UPSTREAM_CONFIG='{"listing": "openai", "api_root": "/v1", "models": [{"id": "gpt-4o"}, {"id": "qwen2.5-coder:7b", "context_window": 32768}], "model": {"require_api_key": "'$UI_KEY'", "listed_only": true}}'
ui_settings() {  # a first run: no provider configured, Copilot Chat signed out (anonymous), this Python
    cat <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "chat.allowAnonymousAccess": true,
  "chat.agent.enabled": true,
  "chat.byokUtilityModelDefault": "mainAgent",
  "tokenGauge.pythonPath": "$1",
  "tokenGauge.logLevel": "debug",
  "tokenGauge.providers": []
}
JSON
}
slow_server() {  # point settings file $1's tokenGauge.pythonPath at $PY behind a 3 s wait
    printf '#!/bin/sh\nsleep 3\nexec "%s" "$@"\n' "$PY" > "$WORK/slow-python"
    chmod +x "$WORK/slow-python"
    "$PY" - "$1" "$WORK/slow-python" <<'PY'
import json, pathlib, sys
path = pathlib.Path(sys.argv[1])
settings = json.loads(path.read_text())
settings["tokenGauge.pythonPath"] = sys.argv[2]
path.write_text(json.dumps(settings, indent=2))
PY
}
# The dev suite's workspace-settings test (its title), run a second time as said below.
WORKSPACE_TEST='settings in a workspace folder cannot redirect keys or run its Python'
unscoped_extension() {  # the development extension at $1 with a manifest that gives no setting a scope
    mkdir -p "$1"
    for entry in dist bundled images node_modules; do ln -sfn "$REPO/$entry" "$1/$entry"; done
    node -e '
const manifest = require(process.argv[1]);
for (const property of Object.values(manifest.contributes.configuration.properties)) delete property.scope;
console.log(JSON.stringify(manifest, null, 2));
' "$REPO/package.json" > "$1/package.json"
}
envjson() {  # the extension host's environment for suite $1 (its upstream: $2, default the shared one)
    printf '{"TG_HOST_SUITE": "%s", "TG_PYTHON": "%s", "TG_UPSTREAM": "%s", "TG_REPO": "%s", "TG_VSIX_PYTHON": "%s", "TG_PYTHON_STUB": "%s", "TG_UI_KEY": "%s", "TG_UI_PROFILE": "%s", "TG_HOST_TEST_GREP": "%s"}' \
        "$1" "$PY" "${2:-$URL}" "$REPO" "$VSIX_PY" "$WORK/python-stub/python-stub.vsix" "$UI_KEY" "$WORK/ui-profile" "${TG_HOST_TEST_GREP:-}"
}

passed=0; failed=0; status=0
tally() {  # add the last `N passed, N failed` of log $1 (none: the suite did not run, one failure)
    local line
    line=$(grep -oE '[0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1)
    if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
    passed=$((passed + $(echo "$line" | cut -d' ' -f1)))
    failed=$((failed + $(echo "$line" | cut -d' ' -f3)))
}

for suite in $SUITES; do
    echo "== host suite: $suite"
    log="$WORK/$suite.log"
    case "$suite" in
        dev)
            settings "$PY" > "$WORK/dev-settings.json"
            bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$(envjson dev)" \
                --settings "$WORK/dev-settings.json" --install-vsix "$WORK/consumer/consumer.vsix" 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]}
            # The workspace-settings test again, on a copy of the extension whose manifest gives no
            # setting a scope: VS Code then hands a folder's values over, and only the extension's
            # own reading of its settings keeps them from taking effect.
            if [ -z "${TG_HOST_TEST_GREP:-}" ] || grep -qE -- "$TG_HOST_TEST_GREP" <<< "$WORKSPACE_TEST"; then
                unscoped_extension "$WORK/unscoped"
                bash scripts/vscode-host/run-ext-tests.sh "$WORK/unscoped" \
                    extension/test/host/index.js "$(TG_HOST_TEST_GREP=$WORKSPACE_TEST envjson dev)" \
                    --settings "$WORK/dev-settings.json" 2>&1 | tee "$log.unscoped"
                [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
                tally "$log.unscoped"
            fi;;
        untrusted)
            # No tokenGauge.pythonPath: the Python extension's interpreter would come first, were the
            # folder trusted; it is a script that leaves a marker beside it, then runs this Python.
            mkdir -p "$WORK/selected-env/bin"
            printf '#!/bin/sh\necho ran >> "%s"\nexec "%s" "$@"\n' "$WORK/selected-env/ran" "$PY" > "$WORK/selected-env/bin/python"
            chmod +x "$WORK/selected-env/bin/python"
            settings "" | sed "s|\"tokenGauge.pythonPath\": \"\",|\"python.defaultInterpreterPath\": \"$WORK/selected-env/bin/python\", \"security.workspace.trust.startupPrompt\": \"never\",|" \
                > "$WORK/untrusted-settings.json"
            VSC_WORKSPACE_TRUST=1 bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js "$(envjson untrusted)" \
                --settings "$WORK/untrusted-settings.json" --install-vsix "$WORK/python-stub/python-stub.vsix" 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]};;
        vsix)
            if [ ! -f "$VSIX" ]; then
                echo "no $VSIX: run scripts/build-vsix.sh (scripts/setup.sh does)" | tee "$log"
                rc=1
            else
                # No tokenGauge.pythonPath: PATH's Python is found, until the suite installs the
                # Python extension (its stand-in), whose interpreter is then the one found.
                settings "" | sed "s|\"tokenGauge.pythonPath\": \"\",|\"python.defaultInterpreterPath\": \"$VSIX_PY\",|" \
                    > "$WORK/vsix-settings.json"
                bash scripts/vscode-host/run-ext-tests.sh extension/test/consumer extension/test/host/index.js \
                    "$(envjson vsix)" --settings "$WORK/vsix-settings.json" --install-vsix "$VSIX" 2>&1 | tee "$log"
                rc=${PIPESTATUS[0]}
            fi;;
        ui)
            mkdir -p "$SHOTS"
            ui_settings "$PY" > "$WORK/ui-settings.json"
            # Its own upstream: an OpenAI-style API that wants a key, listing two models.
            "$PY" -m tests.harness.fake_upstream.server --port 0 --config "$UI_UPSTREAM_CONFIG" > "$WORK/ui-upstream.out" 2> "$WORK/ui-upstream.err" &
            UI_UPSTREAM_PID=$!
            for _ in $(seq 1 100); do [ -s "$WORK/ui-upstream.out" ] && break; sleep 0.1; done
            UI_URL=$(head -n 1 "$WORK/ui-upstream.out")
            # Twice with the same profile, port and upstream: the second launch is the window reloaded.
            port=$(node scripts/vscode-host/free-port.js)
            rc=0
            for phase in ui ui-reload; do
                # The reload's server starts 3 s late (its Python behind a wrapper that waits), so a
                # chat sent as soon as the cached models are offered is always ahead of it.
                [ "$phase" = ui-reload ] && slow_server "$WORK/ui-profile/User/settings.json"
                VSC_PORT=$port DRIVE_SCREENSHOTS=$SHOTS bash scripts/vscode-host/run-ext-tests.sh . extension/test/host/index.js \
                    "$(envjson "$phase" "$UI_URL")" --settings "$WORK/ui-settings.json" --user-data-dir "$WORK/ui-profile" \
                    --timeout 480000 2>&1 | tee "$log.$phase"
                [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
            done
            tally "$log.ui"; log=$log.ui-reload   # each launch counted (the loop tallies the second)
            kill "$UI_UPSTREAM_PID" 2>/dev/null || true
            echo "== ui suite screenshots: $SHOTS";;
        copilot)
            TG_PYTHON="$PY" bash scripts/test-copilot.sh 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]};;
        reasoning)
            TG_PYTHON="$PY" TG_VSIX_PYTHON="$VSIX_PY" bash scripts/test-copilot-reasoning.sh 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]};;
        agent-host)
            TG_PYTHON="$PY" TG_VSIX_PYTHON="$VSIX_PY" bash scripts/test-agent-host.sh 2>&1 | tee "$log"
            rc=${PIPESTATUS[0]};;
        *) echo "unknown host suite $suite" | tee "$log"; rc=1;;
    esac
    tally "$log"
    [ "$rc" -eq 0 ] || status=1
done
echo "host suites ($SUITES):"
echo "$passed passed, $failed failed"
exit "$status"
