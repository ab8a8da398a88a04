// The recovery ladder as a person meets it in the Copilot Chat view: an agent turn that Copilot's
// own count lets through but that does not fit the model's window as Token Gauge counts it (39 tools
// in full and a pasted log, on a 24K window) is sent with the tools' documentation shortened, and the
// answer begins with a line that says what the model did not see; the status bar says it too.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { configure, control, listed, until } = require('../support');
const { agentReady } = require('../reasoning');
const { ui } = require('../ui');

const MODEL = 'ladder-coder';
const WINDOW = 24576;
const PROVIDER = { id: 'ladder-test', dialect: 'openai', baseUrl: `${process.env.TG_UPSTREAM}/v1`, discover: false };
const ENTRY = { id: MODEL, provider: PROVIDER.id, name: 'Ladder Coder', contextWindow: WINDOW, maxOutputTokens: 2048 };
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

/** A service log of `lines` lines (about 14 o200k tokens each). */
function serviceLog(lines) {
    return Array.from({ length: lines }, (_, i) =>
        `2025-03-14T09:${String(30 + (i % 30)).padStart(2, '0')}:00Z INFO [gateway-${i % 8}] req=${(i * 7919).toString(16)} ` +
        `upstream answered 502 after ${(i * 37) % 4000}ms tenant=${i % 500}`).join('\n');
}

describe('the recovery ladder in the chat view', function () {
    this.timeout(180000);
    let kept;
    let since;

    before(async () => {
        const settings = vscode.workspace.getConfiguration('tokenGauge');  // as the suite left them
        kept = [settings.get('providers'), settings.get('models')];
        const config = await control('config');
        await control('config', { models: [...config.models, { id: MODEL, context_window: WINDOW }] });
        await configure([PROVIDER], [ENTRY]);
        await vscode.commands.executeCommand('tokenGauge.setApiKey', PROVIDER.id, process.env.TG_UI_KEY);
        await listed(MODEL);
        await agentReady(MODEL);
        since = (await control('requests?route=chat')).requests.reduce((last, r) => Math.max(last, r.id), 0);
    });

    after(async () => {
        await configure(...kept);
    });

    it('sends what fits and begins the answer with what the model did not see', async () => {
        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        const result = await vscode.commands.executeCommand('workbench.action.chat.open', {
            query: `Which tenant failed first?\n\n\`\`\`log\n${serviceLog(260)}\n\`\`\`\n`,
            mode: 'agent',
            modelSelector: { vendor: 'tokengauge', id: MODEL },
            blockOnResponse: true,
        });
        assert.ok(!result || !result.errorDetails, `the turn failed: ${JSON.stringify(result && result.errorDetails)}`);
        const requests = (await control(`requests?route=chat&since=${since}`)).requests
            .filter((r) => r.json && r.json.model === MODEL && (r.json.tools || []).length > 0);
        const sent = requests[requests.length - 1];
        assert.strictEqual(sent.status, 200);
        assert.ok(sent.prompt_tokens + sent.json.max_tokens <= WINDOW, `${sent.prompt_tokens} + ${sent.json.max_tokens}`);
        console.log(`ladder: ${requests.length} requests with tools; the last ${sent.prompt_tokens} true tokens, ` +
            `tools ${sent.prompt_tools}, max_tokens ${sent.json.max_tokens}`);

        const [texts] = await ui([
            { waitText: 'Token Gauge: this request did not fit' }, { wait: 500 },
            { shot: 'chat-ladder-note' },
            { read: '.interactive-item-container.interactive-response' },
        ]);
        const answer = texts[texts.length - 1] || '';
        assert.match(answer, /Token Gauge: this request did not fit Ladder Coder's window, so the model did not see all of it/);
        assert.match(answer, /the tools' documentation shortened \((progressive|minimal)\)/);
        assert.match(answer, /ok: /, 'the answer follows the note');

        const status = await until('the status of the fitted turn', async () => {
            const shown = api().statusShown();
            return /trimmed/.test(shown.text) && shown;
        });
        assert.match(status.text, /tool docs \((progressive|minimal)\)/);
        const history = ((await api().usage()).history || []).filter((h) => h.modelId === MODEL && h.ladder);
        assert.ok(history.some((h) => h.ladder.toolDocs > 0), JSON.stringify(history.map((h) => h.ladder)));
    });
});
