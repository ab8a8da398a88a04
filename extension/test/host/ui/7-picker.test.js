// A model's options in VS Code's own UI: a Manage Models provider lists a reasoning model with a
// 400K window; its row offers Thinking Effort, Context Size and Tool Documentation (the
// configurationSchema VS Code 1.139 reads), a person picks High, 200K and Minimal, and the next
// request goes out with that effort and its tool in short form, while the model's window, as VS Code
// and the status bar see it, becomes 200K.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { configure, control, until } = require('../support');
const { ui } = require('../ui');

const MODEL = 'gpt-5-mini';
const ROW = '.monaco-list-row:has-text("GPT-5 mini")';


const ours = async () => (await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: MODEL }))[0];

/** The row's gear, then a choice of one of its options. */
async function pick(option, value, shot) {
    await ui([
        { hover: ROW }, { click: `${ROW} .models-actions-column .action-label[aria-label="More Actions..."]` },
        { waitSelector: '.context-view .monaco-menu' }, { wait: 300 }, { shot: `${shot}-menu` },
        { hover: `.context-view .action-item:has-text("${option}")` }, { wait: 500 }, { shot },
        { clickText: value, within: '.context-view .monaco-submenu', exact: true },
    ]);
}

describe('the model picker', function () {
    this.timeout(180000);
    let kept;

    before(async () => {
        const settings = vscode.workspace.getConfiguration('tokenGauge');  // as the suite left them
        kept = [settings.get('providers'), settings.get('models')];
        const config = await control('config');
        await control('config', { models: [...config.models, { id: MODEL, context_window: 400000, max_output_tokens: 128000 }] });
        // Only the Manage Models provider lists the upstream's models (no provider in settings), and
        // anew: the server again.
        await configure([], []);
        await vscode.commands.executeCommand('tokenGauge.restartServer');
        await until(`${MODEL} listed`, async () => (await ours()) !== undefined, 60000);
    });

    after(async () => {
        await control('reset', { config: true });
        await configure(...kept);  // the reloaded window finds the settings' models as they were
    });

    it('offers a reasoning model\'s effort and context size, and what is picked is used', async () => {
        const before = await ours();
        assert.ok(before.maxInputTokens > 200000, `the whole window first: ${before.maxInputTokens}`);
        await vscode.commands.executeCommand('workbench.action.chat.manage');
        await ui([{ waitText: 'GPT-5 mini' }, { wait: 500 }]);
        await pick('Thinking Effort', 'High', 'picker-thinking-effort');
        await pick('Context Size', '200K', 'picker-context-size');
        await pick('Tool Documentation', 'Minimal', 'picker-tool-docs');
        // As a person sees it: the gear's menu shows the pick (VS Code has stored it).
        await ui([
            { hover: ROW }, { click: `${ROW} .models-actions-column .action-label[aria-label="More Actions..."]` },
            { hover: '.context-view .action-item:has-text("Context Size")' }, { wait: 500 },
            { shot: 'picker-picked' }, { press: 'Escape' }, { press: 'Escape' }, { wait: 1000 },
        ]);
        const since = (await control('requests?route=chat')).requests.reduce((last, r) => Math.max(last, r.id), 0);
        const tool = {
            name: 'read_file',
            description: 'Read a file. Lines are 1-based.',
            inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'The file.' } }, required: ['path'] },
        };
        const response = await before.sendRequest([vscode.LanguageModelChatMessage.User('hi')], { tools: [tool] });
        for await (const part of response.text) void part;
        const [sent] = (await control(`requests?route=chat&since=${since}`)).requests;
        assert.strictEqual(sent.json.reasoning_effort, 'high');
        assert.ok(!('contextSize' in sent.json), 'the context size is not the API\'s business');
        assert.ok(!('toolDocs' in sent.json), 'nor is the tool documentation');
        assert.deepStrictEqual(sent.json.tools[0].function, {
            name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        });
        const after = await until('the 200K window', async () => {
            const model = await ours();
            return model && model.maxInputTokens < 200000 && model;
        });
        console.log(`picked: maxInputTokens ${before.maxInputTokens} → ${after.maxInputTokens}`);
        await ui([{ shot: 'picker-after' }]);
    });
});
