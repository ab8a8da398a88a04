// Anthropic extended thinking across a tool call, in the real Copilot agent: the test upstream thinks
// (a signed thinking block), asks for read_file, and, as strict as the real API, refuses the next
// request with thinking on unless its tool-use turn starts with that very block. The turn answers only
// if the signature went out to VS Code in the thinking part's metadata, came back in Copilot's history,
// and was sent again.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { agentReady, configure, control, listed } = require('../support');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = process.env.TG_UI_KEY;
const MODEL = 'claude-sonnet-4-5';
const THOUGHT = 'The user wants parser.py read before anything else; one read_file call will do.';


describe('extended thinking survives a tool call in the Copilot agent', function () {
    this.timeout(180000);
    let since;
    let file;

    before(async () => {
        const config = await control('config');
        await control('config', {
            reply: { thinking: THOUGHT, scripted_calls: true },
            models: [...config.models, { id: MODEL, context_window: 200000 }],
        });
        await configure(
            [{ id: 'anthropic-test', dialect: 'anthropic', baseUrl: UPSTREAM, discover: false }],
            [{ id: MODEL, provider: 'anthropic-test', name: 'Claude (thinking)', options: { thinkingBudget: 2048 } }],
        );
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'anthropic-test', KEY);
        await listed(MODEL);
        file = await agentReady(MODEL);
        since = (await control('requests?route=messages')).requests.reduce((last, r) => Math.max(last, r.id), 0);
    });

    after(async () => {
        await control('reset', { config: true });
    });

    it('keeps thinking on after the tool call, with the signed block sent back', async () => {
        const calls = [{ name: 'read_file', arguments: { filePath: file.fsPath, startLine: 1, endLine: 2 } }];
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        const result = await vscode.commands.executeCommand('workbench.action.chat.open', {
            query: `Read parser.py and say what it does.\n<tg-tool-calls>${JSON.stringify(calls)}</tg-tool-calls>`,
            mode: 'agent',
            modelSelector: { vendor: 'tokengauge', id: MODEL },
            blockOnResponse: true,
        });
        const requests = (await control(`requests?route=messages&since=${since}`)).requests
            .filter((r) => r.json && r.json.model === MODEL && (r.json.tools || []).length > 0);
        console.log(`thinking rounds: ${requests.map((r) => `${r.id} ${r.status} thinking=${JSON.stringify(r.json.thinking)} ` +
            `assistant blocks=${JSON.stringify((r.json.messages.filter((m) => m.role === 'assistant').pop() || { content: [] }).content.map((b) => b.type))}`).join('; ')}`);
        assert.ok(!result || !result.errorDetails, `the turn failed: ${JSON.stringify(result && result.errorDetails)}`);
        assert.ok(requests.length >= 2, `a tool-call round: ${requests.length} requests`);
        const [first, second] = requests;
        assert.deepStrictEqual(first.json.thinking, { type: 'enabled', budget_tokens: 2048 });
        assert.deepStrictEqual(second.json.thinking, { type: 'enabled', budget_tokens: 2048 }, 'thinking still on after the tool call');
        const turn = second.json.messages.filter((m) => m.role === 'assistant').pop().content;
        assert.strictEqual(turn[0].type, 'thinking');
        assert.strictEqual(turn[0].thinking, THOUGHT);
        assert.ok(turn[0].signature, 'signed');
        assert.ok(requests.every((r) => r.status === 200), requests.map((r) => `${r.id}: ${r.status} ${r.body_text || ''}`).join('; '));
    });
});
