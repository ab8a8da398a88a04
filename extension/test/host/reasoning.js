// What the reasoning tests (5-thinking, 6-reasoning) share: a model of a settings provider on the
// test upstream that reasons before each answer and makes the read_file call a turn scripts, and one
// agent turn in the real Copilot Chat with the upstream's requests it made.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { configure, control, listed } = require('./support');

/**
 * A workspace file for Copilot's agent to read (`parser.py`), and the agent set up with `model` on
 * a first request (as the Copilot suite's warm-up does); the file's URI.
 */
async function agentReady(model) {
    const file = vscode.Uri.joinPath(vscode.workspace.workspaceFolders[0].uri, 'parser.py');
    await vscode.workspace.fs.writeFile(file, Buffer.from('def parse(text):\n    return text.split()\n', 'utf8'));
    await vscode.commands.executeCommand('workbench.action.chat.open', {
        query: 'hello', mode: 'ask', modelSelector: { vendor: 'tokengauge', id: model }, blockOnResponse: true,
    }).then(undefined, () => undefined);
    return file;
}

/**
 * Set up `model` ({id, window}) on `provider` (a settings entry) with `options`, thinking `thought`;
 * the agent ready. Returns the workspace file to read and the last request id of `route` so far.
 */
async function reasoningModel({ model, provider, name, options, thought, route }) {
    const config = await control('config');
    await control('config', {
        reply: { thinking: thought, scripted_calls: true },
        models: [...config.models, { id: model.id, context_window: model.window }],
    });
    await configure([provider], [{ id: model.id, provider: provider.id, name, options }]);
    await vscode.commands.executeCommand('tokenGauge.setApiKey', provider.id, process.env.TG_UI_KEY);
    await listed(model.id);
    const file = await agentReady(model.id);
    const since = (await control(`requests?route=${route}`)).requests.reduce((last, r) => Math.max(last, r.id), 0);
    return { file, since };
}

/** One agent turn that reads `file`; the model's requests with tools (all answered 200). */
async function toolRound(modelId, file, route, since) {
    const calls = [{ name: 'read_file', arguments: { filePath: file.fsPath, startLine: 1, endLine: 2 } }];
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    const result = await vscode.commands.executeCommand('workbench.action.chat.open', {
        query: `Read parser.py and say what it does.\n<tg-tool-calls>${JSON.stringify(calls)}</tg-tool-calls>`,
        mode: 'agent',
        modelSelector: { vendor: 'tokengauge', id: modelId },
        blockOnResponse: true,
    });
    const requests = (await control(`requests?route=${route}&since=${since}`)).requests
        .filter((r) => r.json && r.json.model === modelId && (r.json.tools || []).length > 0);
    const statuses = requests.map((r) => `${r.id}: ${r.status} ${r.body_text || ''}`).join('; ');
    assert.ok(!result || !result.errorDetails, `the turn failed: ${JSON.stringify(result && result.errorDetails)}; ${statuses}`);
    assert.ok(requests.length >= 2, `a tool-call round: ${requests.length} requests`);
    assert.ok(requests.every((r) => r.status === 200), statuses);
    return requests;
}

module.exports = { agentReady, reasoningModel, toolRound };
