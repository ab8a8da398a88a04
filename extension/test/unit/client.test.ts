import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import type * as vscode from 'vscode';

import { clientOf } from '../../src/client';

/** Options as VS Code 1.139.1's extension host hands them to a provider (`$startChatRequest`). */
function options(extra: Record<string, unknown>): vscode.ProvideLanguageModelChatResponseOptions {
    const handed: unknown = { modelOptions: {}, toolMode: 1, tools: [], ...extra };
    return handed as vscode.ProvideLanguageModelChatResponseOptions;
}

void test('the Agent Host bridge is told apart from the chat panel by what VS Code hands the provider', () => {
    // The Agent Host's handler calls as VS Code itself, with encrypted thinking asked for.
    assert.equal(clientOf(options({ requestInitiator: 'core', includeEncryptedThinking: true })), 'agentHost');
    // The same options from an extension standing in for it (the host suite's bridge).
    assert.equal(clientOf(options({ requestInitiator: 'tokengauge-tests.tokengauge-agent-host', includeEncryptedThinking: true })), 'agentHost');
    // Copilot Chat's agent: its id, nothing asked of thinking.
    assert.equal(clientOf(options({ requestInitiator: 'github.copilot-chat', includeEncryptedThinking: undefined })), 'chat');
    assert.equal(clientOf(options({ requestInitiator: 'github.copilot-chat', includeEncryptedThinking: false })), 'chat');
    // A host older than 1.139 says neither.
    assert.equal(clientOf(options({})), 'chat');
});
