// A local server as a person meets it: an Ollama stand-in (the test upstream in its Ollama shape, run
// here as its own process) has two models loaded with 8,192 tokens where their own window is 131,072.
// The model without a contextWindow is offered with the window Ollama has loaded, and its hover in
// the chat's model picker says so. The model with contextWindow 131072 set (as copied from a model
// card) is sent a ~12k-token chat, which the stand-in cuts without an error as Ollama does; Token
// Gauge then ends the answer with a note, warns once with the fix, marks the request on the
// dashboard, and offers the model with the 8,192 tokens Ollama really has.
'use strict';
const assert = require('assert');
const { spawn } = require('child_process');
const readline = require('readline');
const vscode = require('vscode');
const { configure, listed, until } = require('../support');
const { ui, notifications } = require('../ui');

const NATIVE = 131072;
const LOADED = 8192;
const PLAIN = 'llama3.1:8b';          // no contextWindow: the loaded window is offered
const PINNED = 'qwen2.5-coder:14b';   // contextWindow 131072 set, as on its model card
const STAND_IN = {
    listing: 'ollama',
    models: [PLAIN, PINNED].map((id) => ({ id, context_window: NATIVE, loaded_context: LOADED, architecture: 'llama' })),
    model: { overflow: 'truncate' },
};
const PAGE = '#tg-dashboard';
/** The chat view's last answer, paragraph by paragraph: its text, and whether all of it is in italics. */
const LAST_ANSWER = `(() => {
    const answers = document.querySelectorAll('.interactive-item-container.interactive-response');
    const last = answers[answers.length - 1];
    return [...last.querySelectorAll('.rendered-markdown p')].map((p) => ({
        text: p.innerText.trim(),
        italic: [...p.querySelectorAll('em')].map((em) => em.innerText).join('').trim() === p.innerText.trim(),
    }));
})()`;
/** The part of the window that holds the model picker, its hover and the chat's input, with a margin. */
const AROUND_PICKER = `(() => {
    const boxes = [...document.querySelectorAll('.chat-model-hover, .action-widget, .interactive-input-part')]
        .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0);
    const x = Math.max(0, Math.min(...boxes.map((r) => r.left)) - 16);
    const y = Math.max(0, Math.min(...boxes.map((r) => r.top)) - 16);
    const right = Math.min(innerWidth, Math.max(...boxes.map((r) => r.right)) + 16);
    const bottom = Math.min(innerHeight, Math.max(...boxes.map((r) => r.bottom)) + 16);
    return { x, y, width: right - x, height: bottom - y };
})()`;
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;
let standIn;

/** The test upstream as an Ollama stand-in, in its own process; resolves with it and its URL. */
function startStandIn() {
    const args = ['-m', 'tests.harness.fake_upstream.server', '--port', '0', '--config', JSON.stringify(STAND_IN)];
    const child = spawn(process.env.TG_PYTHON, args, { cwd: process.env.TG_REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr = (stderr + chunk).slice(-4000); });
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the Ollama stand-in did not start: ${stderr}`)), 30000);
        child.on('exit', (code) => reject(new Error(`the Ollama stand-in exited (${code}): ${stderr}`)));
        readline.createInterface({ input: child.stdout }).once('line', (url) => {
            clearTimeout(timer);
            resolve({ child, url: url.trim() });
        });
    });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The stand-in's requests after request id `since`. */
async function standInRequests(since) {
    const response = await fetch(`${standIn.url}/_control/requests?since=${since}`);
    return (await response.json()).requests;
}

/** What the extension offers VS Code for `id` (its `LanguageModelChatInformation`, tooltip included). */
async function information(id) {
    const all = await api().diagnostics.provider.provideLanguageModelChatInformation(
        { silent: true }, new vscode.CancellationTokenSource().token);
    return all.find((m) => m.id === id);
}

/** Open the chat's model picker, filter it by `query` and point at `name`'s row: its hover's text. */
async function pickerHover(query, name, shot) {
    const row = `.action-widget .monaco-list-row:has-text("${name}")`;
    for (let tries = 1; ; tries++) {
        await vscode.commands.executeCommand('workbench.action.chat.openModelPicker');
        try {
            // The list shows a row's hover once the pointer moves onto it (not where it opened under it).
            const [hover, around] = await ui([
                { waitSelector: '.action-widget input' }, { type: query }, { waitSelector: row },
                { hover: '.action-widget input' }, { wait: 300 }, { hover: `${row} .title` },
                { waitSelector: '.chat-model-hover-description', timeout: 5000 }, { wait: 500 },
                { read: '.chat-model-hover' }, { evaluate: AROUND_PICKER },
            ]);
            if (shot) await ui([{ shot, clip: around }]);
            return hover.join('\n');
        } catch (error) {
            if (tries === 3) throw error;
        } finally {
            await ui([{ press: 'Escape' }, { wait: 300 }]);
        }
    }
}

/** A service log of `lines` lines (about 36 tokens each). */
function serviceLog(lines) {
    return Array.from({ length: lines }, (_, i) =>
        `2025-03-14T09:${String(30 + (i % 30)).padStart(2, '0')}:00Z INFO [gateway-${i % 8}] req=${(i * 7919).toString(16)} ` +
        `upstream answered 502 after ${(i * 37) % 4000}ms tenant=${i % 500}`).join('\n');
}

describe('a local server\'s loaded window', function () {
    this.timeout(300000);
    let kept;

    before(async () => {
        const settings = vscode.workspace.getConfiguration('tokenGauge');  // as the suite left them
        kept = [settings.get('providers'), settings.get('models')];
        standIn = await startStandIn();
        await configure(
            [{ id: 'ollama', preset: 'ollama', baseUrl: `${standIn.url}/v1` }],
            [{ id: PINNED, provider: 'ollama', contextWindow: NATIVE }],
        );
        await listed(PLAIN);
        await listed(PINNED);
        // What a server has loaded is read as soon as its models are listed (and as a session
        // starts, before a chat, after a response): the window moves without a restart.
        for (let waited = 0; !(await information(PLAIN)).tooltip.includes('8.2k-token window'); waited += 250) {
            assert.ok(waited < 15000, `${PLAIN} is still offered as: ${(await information(PLAIN)).tooltip}`);
            await sleep(250);
        }
    });

    after(async () => {
        await vscode.workspace.getConfiguration('workbench').update('notifications.position', undefined, vscode.ConfigurationTarget.Global);
        await vscode.commands.executeCommand('notifications.hideList');
        await vscode.commands.executeCommand('workbench.action.restoreAuxiliaryBar').then(undefined, () => undefined);
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await vscode.commands.executeCommand('workbench.view.explorer');
        await configure(...kept);
        if (standIn) standIn.child.kill();
    });

    it('offers the window Ollama has loaded, and says so in the model picker', async () => {
        const offered = await until('the loaded window offered', async () => {
            const info = await information(PLAIN);
            return info && /8\.2k-token window/.test(info.tooltip) && info;
        });
        assert.match(offered.tooltip, /^Llama 3\.1 8B via ollama · 8\.2k-token window \(loaded in Ollama, per ollama ps; the model's own is 131k\)/);
        const [model] = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: PLAIN });
        assert.ok(model.maxInputTokens < LOADED, `maxInputTokens ${model.maxInputTokens}`);

        await vscode.commands.executeCommand('workbench.action.closeSidebar');
        await vscode.commands.executeCommand('workbench.action.chat.open');
        const hover = await pickerHover('Llama 3.1', 'Llama 3.1 8B', 'local-window');
        assert.match(hover, /8\.2k-token window \(loaded in Ollama, per ollama ps; the model's own is 131k\)/);
        assert.match(hover, /Max context\s+8K/);
    });

    it('says when Ollama cut a request without an error, and keeps to the window it has loaded', async () => {
        const before = await information(PINNED);
        console.log(`local: ${PINNED} before: maxInputTokens ${before.maxInputTokens}, tooltip: ${before.tooltip}`);
        assert.ok(before.maxInputTokens > 100000, `the contextWindow set is offered: ${before.maxInputTokens}`);
        assert.match(before.tooltip, /The server has it loaded with only 8\.2k tokens/);
        // Copilot Chat set up by a first question (to the other model), as a person's first chat is.
        await vscode.commands.executeCommand('workbench.action.chat.open', {
            query: 'hello', mode: 'ask', modelSelector: { vendor: 'tokengauge', id: PLAIN }, blockOnResponse: true,
        }).then(undefined, () => undefined);
        await vscode.commands.executeCommand('notifications.clearAll');
        const since = (await standInRequests(0)).reduce((last, r) => Math.max(last, r.id), 0);

        await vscode.commands.executeCommand('workbench.action.chat.newChat');
        await vscode.commands.executeCommand('workbench.action.maximizeAuxiliaryBar');  // the whole answer in view
        const result = await vscode.commands.executeCommand('workbench.action.chat.open', {
            query: `Which tenant failed first? Here is the gateway log of last night:\n\n\`\`\`log\n${serviceLog(300)}\n\`\`\`\n`,
            mode: 'ask',
            modelSelector: { vendor: 'tokengauge', id: PINNED },
            blockOnResponse: true,
        });
        assert.ok(!result || !result.errorDetails, `the chat failed: ${JSON.stringify(result && result.errorDetails)}`);
        const sent = (await standInRequests(since)).filter((r) => r.json && r.json.model === PINNED);
        const cut = sent.filter((r) => r.truncated);
        assert.ok(cut.length >= 1, `the stand-in cut the request: ${JSON.stringify(sent.map((r) => [r.path, r.status, r.prompt_tokens, r.truncated]))}`);
        assert.strictEqual(cut[0].truncated.evaluated, LOADED);
        console.log(`local: the stand-in read ${cut[0].truncated.evaluated} of ${cut[0].truncated.prompt} tokens`);

        // (a) The answer ends with the note, in italics.
        const [paragraphs] = await ui([
            { waitText: 'Token Gauge: the server read only' }, { wait: 500 },
            { evaluate: LAST_ANSWER },
        ]);
        const note = paragraphs[paragraphs.length - 1];
        assert.match(paragraphs[0].text, /^ok: /, 'the answer comes first');
        assert.match(note.text, /^Token Gauge: the server read only 8,192 tokens of this request's [\d,]+: it cut the start of the conversation, so Qwen2\.5 Coder 14B answered without it\. Requests are now kept within the window it really serves\.$/);
        assert.ok(note.italic, 'the note is in italics');

        // (b) One warning, with the setting that fixes it.
        const warnings = async () => (await notifications()).filter((t) => /cut a request to/.test(t));
        const warned = await until('the warning', async () => {
            const texts = await warnings();
            return texts.length > 0 && texts;
        });
        assert.strictEqual(warned.length, 1, JSON.stringify(warned));
        assert.match(warned[0], /^Token Gauge: ollama cut a request to Qwen2\.5 Coder 14B without an error: it read 8,192 tokens of about [\d,]+, so that answer missed the start of the conversation\. Token Gauge now keeps requests within the 8,192 tokens it serves/);
        assert.match(warned[0], /numCtx/, 'the setting that asks Ollama for more');
        // The answer and the warning together. This workbench shows no toasts (in its smoke-test
        // driver mode VS Code files notifications in the center only): the center, put at the top
        // right, stands for one.
        const workbench = vscode.workspace.getConfiguration('workbench');
        await workbench.update('notifications.position', 'top-right', vscode.ConfigurationTarget.Global);
        await vscode.commands.executeCommand('notifications.showList');
        const [buttons] = await ui([
            { read: '.notifications-center .notification-list-item:has-text("cut a request to") .monaco-button' },
            { wait: 500 }, { shot: 'local-cut-note' },
        ]);
        await vscode.commands.executeCommand('notifications.hideList');
        await workbench.update('notifications.position', undefined, vscode.ConfigurationTarget.Global);
        assert.deepStrictEqual(buttons, ['Open Settings']);
        await vscode.commands.executeCommand('workbench.action.restoreAuxiliaryBar');

        // (d) The model is offered with the window Ollama has loaded.
        const after = await until('the loaded window offered', async () => {
            const info = await information(PINNED);
            return info && /8\.2k-token window/.test(info.tooltip) && info;
        });
        console.log(`local: ${PINNED} after: maxInputTokens ${after.maxInputTokens}, tooltip: ${after.tooltip}`);
        const [model] = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id: PINNED });
        assert.ok(model.maxInputTokens < LOADED, `maxInputTokens ${model.maxInputTokens}`);
        assert.match(after.tooltip, /^Qwen2\.5 Coder 14B via ollama · 8\.2k-token window \(loaded in Ollama, per ollama ps; the model's own is 131k\)/);
        const hover = await pickerHover('Qwen2.5', 'Qwen2.5 Coder 14B', 'local-cut-window');
        assert.match(hover, /8\.2k-token window/);
        assert.match(hover, /Max context\s+8K/);

        // (c) The dashboard marks the request.
        await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
        await vscode.commands.executeCommand('tokenGauge.openDashboard');
        const row = 'table[data-table="requests"] > tbody > tr:has-text("cut by the server")';
        const [rows] = await ui([
            { inFrame: PAGE, waitSelector: row },
            { inFrame: PAGE, read: row },
        ]);
        assert.strictEqual(rows.length, 1, JSON.stringify(rows));
        assert.match(rows[0], /Qwen2\.5 Coder 14B/);
        assert.match(rows[0], /cut by the server \(read 8,192 of [\d,]+\)/);
        await ui([
            { inFrame: PAGE, evaluate: `[...document.querySelectorAll('table[data-table="requests"] > tbody > tr')].find((tr) => tr.innerText.includes('cut by the server')).scrollIntoView({ block: 'center' }) || 1` },
            { hover: '.part.activitybar' }, // the pointer off the table
            { wait: 700 }, { shot: 'local-cut-dashboard', clip: { x: 56, y: 240, width: 1224, height: 440 } },
        ]);
        assert.strictEqual((await warnings()).length, 1, 'still one warning');

        // Its button opens the setting that asks Ollama for more (a model's numCtx).
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await vscode.commands.executeCommand('notifications.showList');
        const [labels] = await ui([
            { click: '.notifications-center .notification-list-item:has-text("cut a request to") .monaco-button' },
            { waitSelector: '.settings-editor .setting-item-label' }, { wait: 500 },
            { read: '.settings-editor .setting-item-label' },
        ]);
        assert.deepStrictEqual(labels, ['Models']);
    });
});
