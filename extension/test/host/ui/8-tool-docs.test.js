// Progressive tool documentation in the real Copilot agent: a model with `toolDocs: "progressive"` on
// a 32K window. Its first request carries each of Copilot's tools in minimal form; the test upstream's
// model uses only the optional parameters it sees described, so its first file_search call has the
// required `query` alone, and Copilot runs it. The rest of that tool loop keeps the tools as they were
// (the API's cached prefix holds); the next turn shows file_search whole, and the model's call there
// uses `maxResults`, which Copilot runs too. The status tooltip and the dashboard say how many tokens
// the minimal forms saved.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { configure, control, listed, until } = require('../support');
const { agentReady } = require('../reasoning');
const { ui } = require('../ui');

const MODEL = 'qwen3-coder';
const PROVIDER = { id: 'docs-test', dialect: 'openai', baseUrl: `${process.env.TG_UPSTREAM}/v1`, discover: false };
const ENTRY = { id: MODEL, provider: PROVIDER.id, name: 'Qwen3 Coder', contextWindow: 32768, maxOutputTokens: 4096, toolDocs: 'progressive' };
const PAGE = '#tg-dashboard';
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

const functionsOf = (request) => Object.fromEntries(request.json.tools.map((t) => [t.function.name, t.function]));
/** Whether a JSON schema documents anything: a string `description` anywhere (a parameter named
 * "description" is a schema, not a string). */
const hasDescriptions = (schema) => schema !== null && typeof schema === 'object'
    && (typeof schema.description === 'string' || Object.values(schema).some(hasDescriptions));
/** The last assistant tool call of a request and the result Copilot sent back for it. */
function lastCall(request) {
    const messages = request.json.messages;
    const assistant = messages.filter((m) => m.role === 'assistant' && m.tool_calls).pop();
    const [call] = assistant.tool_calls;
    const result = messages.find((m) => m.role === 'tool' && m.tool_call_id === call.id);
    const text = typeof result.content === 'string' ? result.content : result.content.map((p) => p.text || '').join('');
    return { name: call.function.name, args: JSON.parse(call.function.arguments), result: text };
}

describe('progressive tool documentation in the Copilot agent', function () {
    this.timeout(180000);
    let kept;
    let since;
    let started;

    before(async () => {
        const settings = vscode.workspace.getConfiguration('tokenGauge');  // as the suite left them
        kept = [settings.get('providers'), settings.get('models')];
        const config = await control('config');
        await control('config', {
            reply: { scripted_calls: true, documented_only: true },
            models: [...config.models, { id: MODEL, context_window: 32768 }],
        });
        await configure([PROVIDER], [ENTRY]);
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'docs-test', process.env.TG_UI_KEY);
        await listed(MODEL);
        await agentReady(MODEL);
        since = (await control('requests?route=chat')).requests.reduce((last, r) => Math.max(last, r.id), 0);
        started = Date.now() / 1000;
    });

    after(async () => {
        await control('config', { reply: { scripted_calls: false, documented_only: false } });
        // The reloaded window finds the settings' models as they were, and this one: its turn is the
        // last conversation request, which the status bar shows from the ledger after the reload.
        await configure([...kept[0], PROVIDER], [...kept[1], ENTRY]);
    });

    it('sends minimal tools until one is called, whole from the next turn, and the calls work', async () => {
        const ask = (call) => `Find the Python files.\n<tg-tool-calls>${JSON.stringify([call])}</tg-tool-calls>`;
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        const results = [];
        for (const call of [
            { name: 'file_search', arguments: { query: '**/parser.py', maxResults: 5 } },
            { name: 'file_search', arguments: { query: '**/*.py', maxResults: 3 } },
        ]) {  // two turns of the same chat, a call each
            results.push(await vscode.commands.executeCommand('workbench.action.chat.open', {
                query: ask(call), mode: 'agent', modelSelector: { vendor: 'tokengauge', id: MODEL }, blockOnResponse: true,
            }));
        }
        const requests = (await control(`requests?route=chat&since=${since}`)).requests
            .filter((r) => r.json && r.json.model === MODEL && (r.json.tools || []).length > 0);
        const statuses = requests.map((r) => `${r.id}: ${r.status} ${r.body_text || ''}`).join('; ');
        for (const result of results) {
            assert.ok(!result || !result.errorDetails, `a turn failed: ${JSON.stringify(result && result.errorDetails)}; ${statuses}`);
        }
        assert.strictEqual(requests.length, 4, `a call and the answer, twice: ${statuses}`);
        assert.ok(requests.every((r) => r.status === 200), statuses);
        const [first, loop, turn, last] = requests.map(functionsOf);
        console.log(`tool docs: ${Object.keys(first).length} tools; tool tokens per request ${requests.map((r) => r.prompt_tools).join(', ')}; ` +
            `file_search description ${first.file_search.description.length} → ${turn.file_search.description.length} characters`);

        // First request: every tool minimal (the first sentence, no parameter described).
        for (const tool of Object.values(first)) {
            assert.ok(!hasDescriptions(tool.parameters), `${tool.name} sent minimal`);
            assert.doesNotMatch(tool.description, /\n/, `${tool.name}: one sentence`);
        }
        // The model called with the required parameter alone; Copilot ran it (its real result).
        const made = lastCall(requests[1]);
        assert.deepStrictEqual(made.args, { query: '**/parser.py' });
        assert.match(made.result, /parser\.py/);
        assert.doesNotMatch(made.result, /ERROR/);
        // Within that tool loop the tools stayed as they were.
        assert.deepStrictEqual(requests[1].json.tools, requests[0].json.tools);
        // The next turn: file_search whole, the others still minimal; its documented option used, and run.
        assert.ok(turn.file_search.description.length > first.file_search.description.length);
        assert.ok(hasDescriptions(turn.file_search.parameters));
        assert.ok(!hasDescriptions(turn.read_file.parameters), 'read_file never called: minimal');
        assert.deepStrictEqual(last.file_search, turn.file_search);
        const again = lastCall(requests[3]);
        assert.deepStrictEqual(again.args, { query: '**/*.py', maxResults: 3 });
        assert.doesNotMatch(again.result, /ERROR/);
        assert.ok(requests[1].prompt_tools < requests[2].prompt_tools, 'the whole tool costs more');
    });

    it('says what was saved in the status tooltip and on the dashboard', async () => {
        const shown = await until('the status of the turn', async () => {
            const status = api().statusShown();
            return /Tool documentation `progressive` saved about/.test(status.tooltip) && status;
        });
        const saved = Number(shown.tooltip.match(/saved about ([\d,]+) tokens on this request/)[1].replace(/,/g, ''));
        assert.ok(saved > 5000, `Copilot's tools, minimal but one: ${saved} tokens saved`);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        const [tooltip] = await ui([
            { hover: '[id$="tokenGauge.status"]' }, { waitSelector: '.monaco-hover' }, { wait: 500 },
            { shot: 'status-tool-docs', clip: { x: 640, y: 260, width: 640, height: 460 } },
            { read: '.monaco-hover' },
        ]);
        assert.match(tooltip.join('\n'), /tool definitions \(progressive\)/);
        await ui([{ press: 'Escape' }]);

        const data = await api().dashboard();
        const mine = data.requests.filter((r) => r.modelId === MODEL && r.kind === 'turn' && r.time >= started);
        // The turn's three requests with tools (Copilot's own requests of the turn send none).
        assert.ok(mine.filter((r) => r.toolDocsSaved > 0).length >= 3, JSON.stringify(mine.map((r) => r.toolDocsSaved)));
        assert.strictEqual(data.totals.toolDocsSaved, data.requests.reduce((sum, r) => sum + r.toolDocsSaved, 0));
        await vscode.commands.executeCommand('tokenGauge.openDashboard');
        const [tile] = await ui([
            { inFrame: PAGE, waitSelector: '.tg-tile[data-tile="saved"]' }, { wait: 700 },
            { shot: 'dashboard-tool-docs' },
            { inFrame: PAGE, read: '.tg-tile[data-tile="saved"]' },
        ]);
        assert.match(tile.join('\n'), /Tool docs saved/);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    });
});
