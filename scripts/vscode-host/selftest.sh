#!/usr/bin/env bash
# Prove the host harness without the real extension: make a throwaway extension in a temp dir that
# contributes the LM vendors 'tgproof' (registered by its main: one model, provideTokenCount = text.length)
# and 'tgproof-test' (registered by the test itself), then run extension/test/host/*.test.js against it.
# usage: scripts/vscode-host/selftest.sh [run-ext-tests.sh options...]   (after scripts/vscode-host/setup.sh)
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
REPO=$(realpath "$HERE/../..")
EXT=$(mktemp -d /tmp/tgproof-ext.XXXXXX)
trap 'rm -rf "$EXT"' EXIT
cat > "$EXT/package.json" <<'JSON'
{
  "name": "tgproof", "publisher": "tgproof", "displayName": "tokengauge host-harness proof", "version": "0.0.1",
  "engines": { "vscode": "^1.104.0" },
  "main": "./extension.js",
  "activationEvents": [],
  "contributes": {
    "languageModelChatProviders": [
      { "vendor": "tgproof", "displayName": "proof" },
      { "vendor": "tgproof-test", "displayName": "proof (registered by the test)" }
    ]
  }
}
JSON
cat > "$EXT/extension.js" <<'JS'
const vscode = require('vscode');
exports.activate = (context) => {
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider('tgproof', {
    provideLanguageModelChatInformation: async () => [{
      id: 'tgproof-1', name: 'proof', family: 'tgproof', version: '1',
      maxInputTokens: 4096, maxOutputTokens: 512, capabilities: {},
    }],
    provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
      progress.report(new vscode.LanguageModelTextPart('proof'));
    },
    provideTokenCount: async (_model, text) => (typeof text === 'string' ? text.length : JSON.stringify(text).length),
  }));
};
exports.deactivate = () => {};
JS
rc=0; "$HERE/run-ext-tests.sh" "$EXT" "$REPO/extension/test/host/index.js" "$@" || rc=$?
exit $rc
