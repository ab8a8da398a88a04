// OpenAI Responses reasoning across a tool call, in the real Copilot agent: the test upstream reasons
// (a reasoning item with encrypted content, its summary streamed), asks for read_file, and, stricter
// than the real API so that dropping it cannot pass, refuses the next request unless the call comes
// back after that very item, unaltered. The turn answers only if the item went out to VS Code in a
// thinking part (its id, the content in its metadata), came back in Copilot's history, and was sent
// again.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { agentReady, configure, control, listed } = require('../support');
const { ui } = require('../ui');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = process.env.TG_UI_KEY;
const MODEL = 'gpt-5';
const THOUGHT = 'Reading parser.py first shows what it does; one read_file call will do.';


describe('encrypted reasoning survives a tool call in the Copilot agent (Responses API)', function () {
    this.timeout(180000);
    let since;
    let file;

    before(async () => {
        const config = await control('config');
        await control('config', {
            reply: { thinking: THOUGHT, scripted_calls: true },
            models: [...config.models, { id: MODEL, context_window: 400000 }],
        });
        await configure(
            [{ id: 'responses-test', dialect: 'responses', baseUrl: `${UPSTREAM}/v1`, discover: false }],
            [{ id: MODEL, provider: 'responses-test', name: 'GPT-5 (reasoning)', options: { reasoningEffort: 'medium' } }],
        );
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'responses-test', KEY);
        await listed(MODEL);
        file = await agentReady(MODEL);
        since = (await control('requests?route=responses')).requests.reduce((last, r) => Math.max(last, r.id), 0);
    });

    after(async () => {
        await control('reset', { config: true });
    });

    it('sends the reasoning item back, unaltered, before the call it led to', async () => {
        const calls = [{ name: 'read_file', arguments: { filePath: file.fsPath, startLine: 1, endLine: 2 } }];
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        const result = await vscode.commands.executeCommand('workbench.action.chat.open', {
            query: `Read parser.py and say what it does.\n<tg-tool-calls>${JSON.stringify(calls)}</tg-tool-calls>`,
            mode: 'agent',
            modelSelector: { vendor: 'tokengauge', id: MODEL },
            blockOnResponse: true,
        });
        const requests = (await control(`requests?route=responses&since=${since}`)).requests
            .filter((r) => r.json && r.json.model === MODEL && (r.json.tools || []).length > 0);
        const kinds = (r) => r.json.input.map((i) => i.type || i.role);
        console.log(`reasoning rounds: ${requests.map((r) => `${r.id} ${r.status} reasoning=${JSON.stringify(r.json.reasoning)} ` +
            `items=${JSON.stringify(kinds(r))}`).join('; ')}`);
        assert.ok(!result || !result.errorDetails, `the turn failed: ${JSON.stringify(result && result.errorDetails)}`);
        assert.ok(requests.length >= 2, `a tool-call round: ${requests.length} requests`);
        const [first, second] = requests;
        for (const request of [first, second]) {
            assert.deepStrictEqual(request.json.reasoning, { effort: 'medium', summary: 'auto' });
            assert.deepStrictEqual(request.json.include, ['reasoning.encrypted_content']);
            assert.strictEqual(request.json.store, false);
        }
        const items = second.json.input;
        const call = items.findIndex((i) => i.type === 'function_call');
        assert.ok(call > 0, `a function call sent back: ${JSON.stringify(kinds(second))}`);
        const reasoning = items[call - 1];
        assert.strictEqual(reasoning.type, 'reasoning', `the reasoning item right before the call: ${JSON.stringify(kinds(second))}`);
        assert.match(reasoning.id, /^rs_/);
        assert.ok(reasoning.encrypted_content, 'its encrypted content');
        assert.ok(requests.every((r) => r.status === 200), requests.map((r) => `${r.id}: ${r.status} ${r.body_text || ''}`).join('; '));
        // The reasoning summary, as a person sees it in the chat view.
        const [shown] = await ui([{ shot: 'reasoning-in-agent-chat' }, { read: '.interactive-session' }]);
        assert.match(shown.join('\n'), /Read parser\.py/);
    });
});
