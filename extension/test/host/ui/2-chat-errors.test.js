// Errors as a person reads them in the Copilot Chat view: one sentence of what happened and one of
// what to do, naming the provider and URL, and no JavaScript stack.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { closedPort, configure, listed } = require('../support');
const { ui } = require('../ui');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = process.env.TG_UI_KEY;

/** Ask `id` in the chat view; the last response's text as the view shows it. */
async function askInChat(id, query) {
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    await vscode.commands.executeCommand('workbench.action.chat.open', {
        query, mode: 'ask', modelSelector: { vendor: 'tokengauge', id }, blockOnResponse: true,
    }).then(undefined, () => undefined);
    const [texts] = await ui([{ read: '.interactive-item-container.interactive-response' }]);
    return texts[texts.length - 1] || '';
}

describe('chat errors in the chat view', function () {
    this.timeout(120000);
    let port;

    before(async () => {
        port = await closedPort();
        await configure(
            [
                { id: 'closed', baseUrl: `http://127.0.0.1:${port}/v1`, discover: false },
                { id: 'nov1', baseUrl: UPSTREAM, discover: false },
                { id: 'test', baseUrl: `${UPSTREAM}/v1`, discover: false },
            ],
            [
                { id: 'closed-model', provider: 'closed', contextWindow: 32768, maxOutputTokens: 4096 },
                { id: 'nov1-model', provider: 'nov1', contextWindow: 32768, maxOutputTokens: 4096 },
                { id: 'gpt-4o-mini', provider: 'test' },
            ],
        );
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'test', 'sk-wrong-key-000');
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'nov1', KEY);
        await listed('closed-model');
    });

    it('a closed port: nothing listening, at which URL, and what to do', async () => {
        const text = await askInChat('closed-model', 'hello');
        await ui([{ shot: 'chat-error-connection-refused' }]);
        assert.match(text, new RegExp(`127\\.0\\.0\\.1:${port}`));
        assert.doesNotMatch(text, /extension\.js|\n\s+at |ConnectError/);
    });

    it('a base URL without /v1: the URL to try instead', async () => {
        const text = await askInChat('nov1-model', 'hello');
        assert.match(text, /\/v1/);
        assert.doesNotMatch(text, /extension\.js|\n\s+at /);
    });

    it('a wrong key: rejected, and how to set it', async () => {
        const text = await askInChat('gpt-4o-mini', 'hello');
        await ui([{ shot: 'chat-error-rejected-key' }]);
        assert.match(text, /rejected/);
        assert.match(text, /Set API Key/);
        assert.doesNotMatch(text, /sk-wrong-key-000|extension\.js|\n\s+at /);
    });
});
