// The window reloaded: a second launch with the profile the ui suite left (its settings, secrets,
// Manage Models providers, Token Gauge's state and ledger). Models are offered before the server
// answers (scripts/test-extension.sh starts this launch's server 3 s late, so that is certain), the status bar shows the last conversation request from the ledger, and the providers
// added in Manage Models come back with their keys.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { until } = require('../support');
const { ui } = require('../ui');

const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

describe('the window reloaded', function () {
    this.timeout(60000);

    it('offers the models at once, from the last session, and a chat sent while the server starts waits for it', async () => {
        await vscode.extensions.getExtension('tokengauge.tokengauge').activate();
        const [model] = await until('models offered', () => vscode.lm.selectChatModels({ vendor: 'tokengauge', id: 'gpt-4o' }).then((m) => m.length && m), 30000, 50);
        const sentBeforeServer = api().diagnostics.startup().serverMs === undefined;
        const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('sent at once')], {});
        let text = '';
        for await (const part of response.text) text += part;
        const startup = api().diagnostics.startup();
        console.log(`startup: activation → models ${startup.modelsMs} ms (${startup.modelsFrom}), activation → server ${startup.serverMs} ms`);
        assert.strictEqual(startup.modelsFrom, 'cache');
        assert.ok(sentBeforeServer, 'the chat was sent after the server was up: nothing was proven');
        assert.match(text, /^ok: sent at once/);
    });

    it('shows the last conversation request in the status bar, from the ledger', async () => {
        let last;
        const shown = await until('the ledger\'s status', async () => {
            last = api().statusShown();
            return /\d+%/.test(last.text) && last;
        }).catch((error) => {
            throw new Error(`${error.message}; the status bar said ${JSON.stringify(last)}`);
        });
        assert.match(shown.text, /^\$\(pulse\) [\d.]+k? \/ [\d.]+k · \d+%$/);
        await ui([{ shot: 'status-bar-after-reload' }]);
        // The tooltip's breakdown, as a person hovering the item sees it.
        const [tooltip] = await ui([
            { hover: '[id$="tokenGauge.status"]' }, { waitSelector: '.monaco-hover' }, { wait: 500 },
            { shot: 'status-bar-tooltip', clip: { x: 640, y: 300, width: 640, height: 420 } },
            { read: '.monaco-hover' },
        ]);
        assert.match(tooltip.join('\n'), /window/);
    });

    it('answers with a model of a Manage Models provider, its key restored', async () => {
        const [model] = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: 'gpt-4o' });
        const response = await model.sendRequest([vscode.LanguageModelChatMessage.User('after the reload')], {});
        let text = '';
        for await (const part of response.text) text += part;
        assert.match(text, /^ok: after the reload/);
    });

    it('never writes an API key to settings, Token Gauge\'s storage or the logs', () => {
        const keys = [process.env.TG_UI_KEY, 'sk-wrong-key-000'];
        const found = [];
        const scan = (dir) => {
            for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
                const file = path.join(dir, entry.name);
                if (entry.isDirectory()) scan(file);
                else if (keys.some((k) => fs.readFileSync(file).includes(k))) found.push(file);
            }
        };
        // The profile's user data and logs; the browser keeps VS Code's secret storage (encrypted) apart.
        scan(path.join(process.env.TG_UI_PROFILE, 'User'));
        scan(path.join(process.env.TG_UI_PROFILE, 'logs'));
        assert.deepStrictEqual(found, []);
    });
});
