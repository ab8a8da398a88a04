// A first run as a person meets it: nothing configured, Copilot Chat in the sidebar. The workbench is
// worked through the driver (../ui.js): the notice that says what to do, Manage Models → Add Models →
// Token Gauge, the key check, the status bar, Restart Server. Screenshots: tg-ui `shot` steps.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { until } = require('../support');
const { ui, notifications } = require('../ui');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = process.env.TG_UI_KEY;

const ourModels = () => vscode.lm.selectChatModels({ vendor: 'tokengauge' });
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;
const toast = (text) => until(`a notification saying "${text}"`, async () => (await notifications()).find((t) => t.includes(text)));

/** Manage Models → Add Models → Token Gauge, answering each prompt VS Code shows. */
async function addModels(name, presetLabel, baseUrl, key) {
    await vscode.commands.executeCommand('workbench.action.chat.manage');
    await ui([{ click: '.models-add-model-button' }, { shot: 'add-models-menu' }]);
    // The menu can be drawn again under the pointer as the models' table fills in: click until it answers.
    for (let tries = 1; ; tries++) {
        try {
            await ui([{ clickText: 'Token Gauge', within: '.context-view' }, { waitSelector: '.quick-input-widget input', timeout: 5000 }]);
            break;
        } catch (error) {
            if (tries === 3) throw error;
        }
    }
    await ui([
        { wait: 1000 }, { shot: 'add-models-name' },
        { press: 'Control+A' }, { type: name }, { press: 'Enter' },
        { waitText: `${name}: API` }, { type: presetLabel }, { wait: 300 }, { press: 'Enter' },
        { waitText: `${name}: Base URL` }, { type: baseUrl }, { press: 'Enter' },
        { waitText: `${name}: API key` }, { type: key }, { shot: 'add-models-key' }, { press: 'Enter' },
        { waitText: `${name}: Extra headers` }, { press: 'Enter' },
    ]);
}

describe('a first run, in the workbench', function () {
    this.timeout(120000);

    it('shows the status bar item from activation', async () => {
        const item = '[id$="tokenGauge.status"]';
        await until('the status-bar item', async () => (await ui([{ read: item }]))[0].length > 0);
        const [texts] = await ui([{ read: item }]);
        assert.match(texts[0], /Token Gauge/);
    });

    it('says what to do when there is nothing to offer', async () => {
        const text = await toast('Token Gauge has no models to offer yet');
        assert.match(text, /Add a provider with your API key/);
        await vscode.commands.executeCommand('notifications.showList');
        await ui([{ wait: 300 }, { shot: 'first-run' }]);
        await vscode.commands.executeCommand('notifications.hideList');
    });

    it('adds a first provider from Manage Models with a wrong key: the error names it and the way out', async () => {
        await addModels('Test API', 'Other OpenAI-compatible', `${UPSTREAM}/v1`, 'sk-wrong-key-000');
        await vscode.commands.executeCommand('workbench.action.chat.manage');
        const status = await until('the group\'s error', async () => {
            const [texts] = await ui([{ read: '.models-table-container, .monaco-list' }]);
            return texts.find((t) => /rejected the API key/.test(t));
        });
        // The only group: VS Code gives it no menu, so the message names the command that fixes it.
        assert.match(status, /Test API \(Manage Models\) rejected the API key/);
        assert.match(status, /Run 'Token Gauge: Set API Key'/);
        assert.doesNotMatch(status, /sk-wrong-key-000|Error:|\n\s+at /);
        assert.deepEqual(await ourModels(), []);
        // The row is cut at the column's width; its hover says it whole.
        const [hover] = await ui([
            { hover: '.models-table-container .error-status' }, { wait: 1000 },
            { shot: 'manage-models-first-group-rejected' }, { read: '.monaco-hover, .workbench-hover' },
        ]);
        assert.match(hover.join('\n'), /Test API \(Manage Models\) rejected the API key[^]*Run 'Token Gauge: Set API Key'/);
        await ui([{ press: 'Escape' }]);
    });

    it('sets the right key with Set API Key, and the provider\'s models appear without a reload', async () => {
        const done = vscode.commands.executeCommand('tokenGauge.setApiKey');
        // The one provider there is: Set API Key asks for its key straight away, by the group's name.
        await ui([
            { waitText: 'API key for Test API' }, { type: KEY }, { wait: 300 }, { shot: 'set-api-key-first-group' }, { press: 'Enter' },
        ]);
        await done;
        const accepted = await toast('accepted');
        assert.doesNotMatch(accepted, new RegExp(KEY));
        await vscode.commands.executeCommand('notifications.hideList');
        const models = await until('the group\'s models', async () => {
            const found = await ourModels();
            return found.length >= 2 && found;
        });
        assert.deepEqual(models.map((m) => m.id).sort(), ['gpt-4o', 'qwen2.5-coder:7b']);
        await vscode.commands.executeCommand('workbench.action.chat.manage');
        // In the table (the chat's model picker says GPT-4o too), the error gone.
        await until('the group\'s models in Manage Models', async () => {
            const [rows] = await ui([{ read: '.models-table-container' }]);
            return rows.some((t) => t.includes('GPT-4o')) && !rows.some((t) => /rejected the API key/.test(t));
        });
        await ui([{ wait: 300 }, { shot: 'manage-models' }]);
        // Named as people know them; the unknown local model claims no vision.
        const gpt = models.find((m) => m.id === 'gpt-4o');
        assert.strictEqual(gpt.name, 'GPT-4o');
    });

    it('answers in the chat with a model of that provider, and the status bar shows the window used', async () => {
        const [model] = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: 'qwen2.5-coder:7b' });
        // A conversation (more than a question and its instructions), so it moves the status bar:
        // about half of the model's 32k window.
        const files = Array.from({ length: 120 }, (_, i) => `function step${i}(input) {\n  return input.map((x) => x * ${i} + 1);\n}\n`).join('\n');
        const conversation = [
            vscode.LanguageModelChatMessage.User(`Here is my code:\n${files.repeat(6)}`),
            vscode.LanguageModelChatMessage.Assistant('It maps each input through a linear step.'),
        ];
        // Twice: the second turn is counted with what the first taught.
        for (const question of ['hello there', 'and now?']) {
            conversation.push(vscode.LanguageModelChatMessage.User(question));
            const response = await model.sendRequest(conversation, {});
            let text = '';
            for await (const part of response.text) text += part;
            assert.match(text, new RegExp(`^ok: ${question.replace('?', '\\?')}`));
            conversation.push(vscode.LanguageModelChatMessage.Assistant(text));
        }
        const shown = api().statusShown();
        assert.match(shown.text, /^\$\(pulse\) [\d.]+k \/ [\d.]+k · \d+%$/);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors'); // Manage Models covers the window
        const [tooltip] = await ui([
            { hover: '[id$="tokenGauge.status"]' }, { waitSelector: '.monaco-hover' }, { wait: 500 },
            { shot: 'status-bar', clip: { x: 640, y: 300, width: 640, height: 420 } },
            { read: '.monaco-hover' },
        ]);
        assert.match(tooltip.join('\n'), /of the model's window/);
        await ui([{ press: 'Escape' }]);
    });

    it('shows the rejected key beside a provider whose key is wrong', async () => {
        await addModels('Wrong Key', 'Other OpenAI-compatible', `${UPSTREAM}/v1`, 'sk-wrong-key-000');
        await vscode.commands.executeCommand('workbench.action.chat.manage');
        const status = await until('the group\'s error', async () => {
            const [texts] = await ui([{ read: '.models-table-container, .monaco-list' }]);
            return texts.find((t) => /rejected the API key/.test(t));
        });
        assert.doesNotMatch(status, /sk-wrong-key-000|Error:|\n\s+at /);
        // Named as the person named it, and a way out VS Code does not give for a group alone.
        assert.match(status, /Wrong Key \(Manage Models\) rejected the API key/);
        assert.match(status, /Run 'Token Gauge: Set API Key'/);
        await ui([{ shot: 'manage-models-rejected-key' }]);
    });

    it('adds a provider to settings.json with the guided command, checking its key', async () => {
        const done = vscode.commands.executeCommand('tokenGauge.addProvider');
        await ui([
            { waitText: 'Token Gauge: Add Provider' }, { type: 'Other OpenAI-compatible' }, { wait: 300 }, { shot: 'add-provider-presets' }, { press: 'Enter' },
            { waitText: 'a name for' }, { press: 'Enter' }, // the name offered: openai-compatible
            { waitText: 'base URL' }, { type: `${UPSTREAM}/v1` }, { press: 'Enter' },
            { waitText: 'API key for' }, { type: KEY }, { press: 'Enter' },
        ]);
        await done;
        const providers = vscode.workspace.getConfiguration('tokenGauge').get('providers');
        assert.deepEqual(providers, [{ id: 'openai-compatible', preset: 'openai-compatible', baseUrl: `${UPSTREAM}/v1` }]);
        const text = await toast('Other OpenAI-compatible API added as "openai-compatible"');
        assert.match(text, /accepted/);
        await vscode.commands.executeCommand('notifications.hideList');
    });

    it('checks a key set with Set API Key, and says the provider rejected it', async () => {
        const done = vscode.commands.executeCommand('tokenGauge.setApiKey');
        await ui([
            { waitText: 'API key for which provider?' }, { type: 'openai-compatible' }, { wait: 300 }, { press: 'Enter' },
            { waitText: 'API key for openai-compatible' }, { type: 'sk-wrong-key-000' }, { press: 'Enter' },
        ]);
        const text = await toast('rejected');
        assert.doesNotMatch(text, /sk-wrong-key-000/);
        await vscode.commands.executeCommand('notifications.showList');
        await ui([{ wait: 300 }, { shot: 'set-api-key-rejected' }]);
        await vscode.commands.executeCommand('notifications.hideList');
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'openai-compatible', KEY);
        void done;
    });

    it('restarts the server with progress, and says how it went', async () => {
        void vscode.commands.executeCommand('tokenGauge.restartServer');
        const text = await toast('the server restarted');
        assert.match(text, /Token Gauge: the server restarted; \d+ models ready\./);
    });
});

describe('settings, as the Settings editor shows them', function () {
    this.timeout(60000);

    it('lists providers first, under one product name, with markdown descriptions', async () => {
        await vscode.commands.executeCommand('workbench.action.openSettings', '@ext:tokengauge.tokengauge');
        const [titles] = await ui([
            { waitText: 'Providers' }, { wait: 500 }, { shot: 'settings' },
            { read: '.settings-editor .setting-item-label' },
        ]);
        assert.strictEqual(titles[0], 'Providers');
        assert.strictEqual(titles[1], 'Models');
        const [categories] = await ui([{ read: '.settings-editor .setting-item-category' }]);
        assert.ok(categories.every((c) => c.startsWith('Token Gauge')), categories.join(', '));
        await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    });
});
