// The usage dashboard as a person meets it: chats run in Copilot Chat against the test upstream, then
// Token Gauge: Open Dashboard. Its page (a webview) is read through the driver: each chart has one mark
// per request or day the server's data holds, the table one row per request, the costs sum to what the
// upstream's own usage figures price to; it updates while open, follows the theme, is reached by
// keyboard, and loads nothing its Content-Security-Policy would block. What only the browser shows is
// measured in it: the tables' header is opaque, no column is cut at the panel's width or a narrow one,
// every time axis has two ticks or more and a label, the models' colours stand out from the
// background, and calibration's internals wait behind one click. Screenshots in dark and light.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { configure, listed, until } = require('../support');
const { ui } = require('../ui');

const UPSTREAM = process.env.TG_UPSTREAM;
const KEY = process.env.TG_UI_KEY;
const PRICES = { inputPerMTok: 2.5, outputPerMTok: 10 };
const PAGE = '#tg-dashboard';
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

/** Requests the upstream answered since request id `since` (its own true counts). */
async function upstreamRequests(since) {
    const response = await fetch(`${UPSTREAM}/_control/requests?route=chat&since=${since}`);
    return (await response.json()).requests;
}

/** Ask `id` in a new Copilot chat (ask mode), waiting for the answer. */
async function askInChat(id, query) {
    await vscode.commands.executeCommand('workbench.action.chat.newChat');
    await vscode.commands.executeCommand('workbench.action.chat.open', {
        query, mode: 'ask', modelSelector: { vendor: 'tokengauge', id }, blockOnResponse: true,
    });
}

/** What the dashboard page shows, counted in its DOM. */
const COUNT = `(() => {
    const count = (css) => document.querySelectorAll(css).length;
    return {
        fill: count('figure[data-chart="fill"] g.tg-point path'),
        accuracy: count('figure[data-chart="accuracy"] g.tg-point circle'),
        dailyTokens: count('figure[data-chart="daily-tokens"] g.tg-bar rect'),
        dailyCost: count('figure[data-chart="daily-cost"] g.tg-bar rect'),
        rows: count('table[data-table="requests"] > tbody > tr[data-seq]'),
        conversations: count('table[data-table="conversations"] > tbody > tr'),
        seqs: [...document.querySelectorAll('table[data-table="requests"] > tbody > tr[data-seq]')].map((tr) => Number(tr.dataset.seq)),
        // VS Code puts its own default styles (#_defaultStyles) into every webview; ours carry the nonce.
        unnoncedStyles: [...document.querySelectorAll('style:not(#_defaultStyles)')].filter((s) => !s.nonce).map((s) => s.outerHTML.slice(0, 60)),
        background: getComputedStyle(document.body).backgroundColor,
        bodyClass: document.body.className,
        text: document.body.innerText,
    };
})()`;

/** How the page is laid out and coloured, measured in its DOM. */
const LOOK = `(() => {
    const channels = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const alpha = (c) => (c === 'transparent' ? 0 : channels(c)[3] ?? 1);
    const rgb = (c) => (c.startsWith('#') ? 'rgb(' + [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)).join(',') + ')' : c);
    const luminance = (c) => {
        const [r, g, b] = channels(c).slice(0, 3).map((v) => (v / 255 <= 0.04045 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const contrast = (a, b) => {
        const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
        return (x + 0.05) / (y + 0.05);
    };
    const background = getComputedStyle(document.body).backgroundColor;
    // drawn and not folded away (a closed <details> skips its contents)
    const shown = (el) => el !== null && el.checkVisibility();
    const details = document.querySelector('details[data-details="calibration"]');
    return {
        width: window.innerWidth,
        headers: [...document.querySelectorAll('.tg-table thead th')].map((th) => alpha(getComputedStyle(th).backgroundColor)),
        regions: [...document.querySelectorAll('.tg-region')].map((r) => ({
            table: r.querySelector('table').dataset.table, scroll: r.scrollWidth, client: r.clientWidth, stacked: r.classList.contains('tg-stacked'),
        })),
        // a cell of "What happened" past its region's right edge, or wider than it shows
        cutCells: [...document.querySelectorAll('.tg-region td.tg-happened')].filter((td) => {
            const region = td.closest('.tg-region').getBoundingClientRect();
            return td.getBoundingClientRect().right > region.right + 1 || td.scrollWidth > td.clientWidth + 1;
        }).length,
        axes: [...document.querySelectorAll('figure[data-chart] [aria-label="x-axis tick label"]')].filter(shown).map((g) => ({
            chart: g.closest('figure[data-chart]').dataset.chart,
            ticks: g.querySelectorAll('text').length,
            label: g.closest('svg').querySelector('[aria-label="x-axis label"] text')?.textContent ?? '',
        })),
        modelColors: [...new Set([...document.querySelectorAll('figure[data-chart="accuracy"] g.tg-point circle')].map((c) => c.getAttribute('fill')))]
            .map((fill) => ({ fill, contrast: contrast(rgb(fill), background) })),
        calibration: { present: details !== null, open: details?.open ?? null, shown: shown(document.querySelector('figure[data-chart="ratios"]')) },
        ratioLines: document.querySelectorAll('figure[data-chart="ratios"] g.tg-line path').length,
        accuracyShown: shown(document.querySelector('figure[data-chart="accuracy"]')),
    };
})()`;

async function looks() {
    const [look] = await ui([{ inFrame: PAGE, evaluate: LOOK }]);
    return look;
}

/** What a person must be able to read at the page's width, whatever the theme. */
function assertReadable(look, where) {
    const at = `${where}, ${look.width} px`;
    assert.ok(look.headers.length > 0 && look.headers.every((a) => a === 1), `${at}: opaque table headers (alpha ${look.headers})`);
    for (const r of look.regions) {
        assert.ok(r.scroll <= r.client, `${at}: the ${r.table} table fits its region (${r.scroll} > ${r.client})`);
    }
    assert.strictEqual(look.cutCells, 0, `${at}: no "What happened" cell is cut`);
    const timeAxes = look.axes.filter((a) => ['fill', 'accuracy', 'daily-tokens', 'daily-cost', 'cache'].includes(a.chart));
    assert.ok(timeAxes.length >= 4, `${at}: the time axes drawn: ${JSON.stringify(look.axes)}`);
    for (const axis of timeAxes) {
        assert.ok(axis.ticks >= 2, `${at}: ${axis.chart} has ${axis.ticks} tick(s)`);
        assert.match(axis.label, /(time|date).*\(UTC/, `${at}: ${axis.chart}'s axis says what its ticks are`);
    }
    assert.ok(look.modelColors.length >= 2, `${at}: two models drawn: ${JSON.stringify(look.modelColors)}`);
    for (const c of look.modelColors) {
        assert.ok(c.contrast >= 3, `${at}: the model colour ${c.fill} stands out ${c.contrast.toFixed(2)}:1`);
    }
    assert.deepStrictEqual(look.calibration, { present: true, open: false, shown: false }, `${at}: calibration's internals folded away`);
    assert.ok(look.accuracyShown, `${at}: the estimate's accuracy is shown`);
}

async function shown() {
    const [counts] = await ui([{ inFrame: PAGE, evaluate: COUNT }]);
    return counts;
}

function expected(data) {
    const requests = data.requests;
    return {
        fill: requests.filter((r) => r.inputTokens !== null && r.kind !== 'helper').length,
        // A request a local server cut has no estimate error: it read less than was sent.
        accuracy: requests.filter((r) => r.inputTokens !== null && r.inputTokens > 0 && !r.cut).length,
        rows: requests.length,
        conversations: data.conversations.length,
        dailyCost: data.days.filter((d) => d.costUsd !== null).length,
        dailyTokens: 3 * data.days.length, // cached input, fresh input, output
    };
}

describe('the usage dashboard', function () {
    this.timeout(180000);
    let since;
    let started;

    before(async () => {
        await configure(
            [
                { id: 'dash', baseUrl: `${UPSTREAM}/v1`, discover: false },
                { id: 'dash-refused', baseUrl: `${UPSTREAM}/v1`, discover: false },
            ],
            [
                { id: 'gpt-4o', provider: 'dash', name: 'GPT-4o (priced)', pricing: PRICES },
                { id: 'qwen2.5-coder:7b', provider: 'dash', contextWindow: 32768, maxOutputTokens: 4096 },
                { id: 'refused-model', provider: 'dash-refused', contextWindow: 32768, maxOutputTokens: 4096 },
            ],
        );
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'dash', KEY);
        await vscode.commands.executeCommand('tokenGauge.setApiKey', 'dash-refused', 'sk-not-this-one');
        await listed('gpt-4o');
        since = (await upstreamRequests(0)).reduce((last, r) => Math.max(last, r.id), 0);
        started = Date.now() / 1000;
        await askInChat('gpt-4o', 'Explain what a token budget is, in two sentences.');
        await askInChat('qwen2.5-coder:7b', 'And what is a context window?');
    });

    it('draws one mark per request and per day, and lists every request', async () => {
        await vscode.commands.executeCommand('tokenGauge.openDashboard');
        await ui([{ inFrame: PAGE, waitSelector: 'table[data-table="requests"] tbody tr' }]);
        const data = await until('the panel sent its data', async () => api().dashboardShown());
        const counts = await shown();
        const want = expected(data);
        assert.strictEqual(counts.fill, want.fill, 'context-fill points');
        assert.strictEqual(counts.accuracy, want.accuracy, 'accuracy points');
        assert.strictEqual(counts.rows, want.rows, 'request rows');
        assert.strictEqual(counts.conversations, want.conversations, 'conversation rows');
        assert.strictEqual(counts.dailyCost, want.dailyCost, 'daily cost bars');
        assert.strictEqual(counts.dailyTokens, want.dailyTokens, 'daily token bars');
        assert.deepStrictEqual(counts.seqs, data.requests.map((r) => r.seq).reverse(), 'rows newest first');
        assert.ok(want.fill >= 2 && want.conversations >= 2, `two chats shown: ${JSON.stringify(want)}`);
        // the panel as it opens beside the chat: nothing cut, nothing hidden that should show
        assertReadable(await looks(), 'as opened');
    });

    it('prices what the upstream counted, and sums it', async () => {
        const data = await api().dashboard();
        const answered = (await upstreamRequests(since)).filter((r) => r.status === 200 && r.json && r.json.model === 'gpt-4o');
        const priced = (r) => (r.prompt_tokens * PRICES.inputPerMTok + r.output_tokens * PRICES.outputPerMTok) / 1e6;
        const want = answered.reduce((sum, r) => sum + priced(r), 0);
        const mine = data.requests.filter((r) => r.time >= started && r.modelId === 'gpt-4o');
        const got = mine.reduce((sum, r) => sum + r.costUsd, 0);
        assert.ok(answered.length >= 1 && mine.length === answered.length, `${mine.length} requests priced for ${answered.length} answered`);
        assert.ok(Math.abs(got - want) < 1e-9, `costs ${got} vs the upstream's usage priced ${want}`);
        const total = data.requests.reduce((sum, r) => sum + (r.costUsd ?? 0), 0);
        assert.ok(Math.abs(total - data.totals.costUsd) < 1e-9, 'the total is the sum of the requests');
        const qwen = data.requests.filter((r) => r.time >= started && r.modelId === 'qwen2.5-coder:7b');
        assert.ok(qwen.length >= 1 && qwen.every((r) => r.costUsd === null), 'no price, no cost');
    });

    it('updates while open, as requests finish', async () => {
        const before = (await shown()).rows;
        const refused = await listed('refused-model');
        await assert.rejects(async () => {
            const response = await refused.sendRequest([vscode.LanguageModelChatMessage.User('hello?')], {});
            for await (const part of response.text) void part;
        });
        await until('the new row', async () => (await shown()).rows === before + 1, 15000, 300);
        const [texts] = await ui([{ inFrame: PAGE, read: 'table[data-table="requests"] > tbody > tr:first-child' }]);
        assert.match(texts[0], /failed/i);
    });

    it('follows the theme, is reached by keyboard, and breaks no rule of its policy', async () => {
        const workbench = vscode.workspace.getConfiguration('workbench');
        const theme = async (name) => {
            const before = (await shown()).background;
            await workbench.update('colorTheme', name, vscode.ConfigurationTarget.Global);
            return until(`the page in ${name}`, async () => {
                const now = await shown();
                return now.background !== before && now;
            }, 15000, 300);
        };
        // The page as a person reads it: the panel alone in the window, its charts, then its tables.
        await vscode.commands.executeCommand('workbench.action.closeSidebar');
        await vscode.commands.executeCommand('workbench.action.closeAuxiliaryBar');
        // the tables' shot scrolls the requests a little: the sticky header stands over the rows
        const shots = (name) => ui([
            { wait: 700 }, { shot: `dashboard-${name}` },
            { inFrame: PAGE, evaluate: "document.getElementById('tg-h-conversations').scrollIntoView() || 1" },
            { inFrame: PAGE, evaluate: "(document.querySelector('.tg-region:has(table[data-table=requests])').scrollTop = 40) || 1" },
            { wait: 300 }, { shot: `dashboard-${name}-tables` },
            { inFrame: PAGE, evaluate: "(document.querySelector('.tg-region:has(table[data-table=requests])').scrollTop = 0) || window.scrollTo(0, 0) || 1" },
        ]);
        const dark = await theme('Default Dark Modern');
        await shots('dark');
        assertReadable(await looks(), 'dark');
        const light = await theme('Default Light Modern');
        await shots('light');
        assertReadable(await looks(), 'light');
        // a narrow panel: the tables stack their rows, nothing is cut
        await ui([{ inFrame: PAGE, evaluate: "(document.getElementById('tg-dashboard').style.maxWidth = '420px') && 1" }, { wait: 700 }]);
        const narrow = await looks();
        await ui([
            { inFrame: PAGE, evaluate: "document.getElementById('tg-h-requests').scrollIntoView() || 1" },
            { wait: 300 }, { shot: 'dashboard-light-narrow' },
            { inFrame: PAGE, evaluate: "(document.getElementById('tg-dashboard').style.maxWidth = '') || window.scrollTo(0, 0) || 1" },
        ]);
        assertReadable({ ...narrow, width: 420 }, 'light, narrow');
        assert.ok(narrow.regions.find((r) => r.table === 'requests').stacked, 'the requests stacked in a narrow panel');
        // calibration's internals, one click away
        const [opened] = await ui([
            { inFrame: PAGE, click: 'details[data-details="calibration"] > summary' }, { wait: 500 },
            { inFrame: PAGE, evaluate: LOOK },
            { inFrame: PAGE, click: 'details[data-details="calibration"] > summary' },
        ]);
        assert.ok(opened.calibration.open && opened.calibration.shown && opened.ratioLines > 0, `the learned ratios drawn when opened: ${JSON.stringify(opened.calibration)}, ${opened.ratioLines} lines`);
        await workbench.update('colorTheme', undefined, vscode.ConfigurationTarget.Global);
        const luminance = (rgb) => rgb.match(/\d+/g).slice(0, 3).reduce((sum, v) => sum + Number(v), 0);
        assert.ok(luminance(light.background) > luminance(dark.background), `${light.background} after ${dark.background}`);
        assert.strictEqual(dark.bodyClass.includes('vscode-dark'), true, dark.bodyClass);
        for (const page of [dark, light]) {
            assert.deepStrictEqual(page.unnoncedStyles, [], 'every style element carries the nonce');
        }
        const [violations] = await ui([{ policyViolations: true }]);
        assert.deepStrictEqual(violations, [], 'the page loads, draws and redraws within its policy');
        const [focused] = await ui([
            { inFrame: PAGE, click: 'h1' },
            { press: 'Tab' }, { press: 'Tab' },
            { inFrame: PAGE, evaluate: 'document.activeElement && document.activeElement !== document.body ? document.activeElement.outerHTML.slice(0, 80) : ""' },
        ]);
        assert.ok(focused, 'Tab moves the focus into the page');
    });

    it('copies diagnostics a bug report can carry: no key, no message', async () => {
        await vscode.env.clipboard.writeText('');
        await vscode.commands.executeCommand('tokenGauge.copyDiagnostics');
        const text = await until('the diagnostics on the clipboard', async () => vscode.env.clipboard.readText());
        const diagnostics = JSON.parse(text);
        assert.ok(diagnostics.tokenGauge && diagnostics.vscode && diagnostics.server.history.length > 0);
        assert.ok(!text.includes(KEY) && !text.includes('sk-not-this-one'), 'no API key');
        assert.ok(!text.includes('token budget is'), 'no message text');
    });
});
