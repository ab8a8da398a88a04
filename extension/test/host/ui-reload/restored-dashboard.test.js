// The dashboard left open as the window closed (ui/99-dashboard-at-reload.test.js) comes back with
// the window: its tab is there, and shown it is the same page, drawing what the server of this
// launch says now, every request the panel showed before the reload still in it.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { until } = require('../support');
const { ui } = require('../ui');

const PAGE = '#tg-dashboard';
const DASHBOARD = 'tokenGauge.dashboard';
const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

/** The requests the page lists (their seq, newest first) and what its header says. */
const SHOWN = `(() => ({
    seqs: [...document.querySelectorAll('table[data-table="requests"] > tbody > tr[data-seq]')].map((tr) => Number(tr.dataset.seq)),
    text: document.body.innerText,
}))()`;

describe('the dashboard kept across a reload', function () {
    this.timeout(60000);

    it('comes back with the window, showing the server\'s data of now', async () => {
        const before = JSON.parse(fs.readFileSync(path.join(process.env.TG_UI_PROFILE, 'dashboard-left-open.json'), 'utf8'));
        await vscode.extensions.getExtension('tokengauge.tokengauge').activate();
        const tabs = vscode.window.tabGroups.all.flatMap((group) => group.tabs);
        const kept = tabs.find((tab) => tab.input instanceof vscode.TabInputWebview && tab.input.viewType.endsWith(DASHBOARD));
        assert.ok(kept, `the dashboard's tab is kept: ${tabs.map((tab) => tab.label)}`);
        assert.strictEqual(api().dashboardShown(), undefined, 'not drawn before it is shown');
        // Nothing opens the dashboard in this launch: shown, the tab VS Code kept becomes the panel.
        await vscode.commands.executeCommand(`workbench.action.openEditorAtIndex${tabs.indexOf(kept) + 1}`);
        const data = await until('the restored panel sent its data', async () => api().dashboardShown(), 30000);
        assert.ok(data.generated > before.generated, `data of this launch: ${data.generated} after ${before.generated}`);
        // The page against the panel's last data (requests finishing now send it again).
        let shown;
        let seqs;
        await until('the page draws the data it was sent', async () => {
            [shown] = await ui([{ inFrame: PAGE, waitSelector: 'h1' }, { inFrame: PAGE, evaluate: SHOWN }]);
            seqs = api().dashboardShown().requests.map((r) => r.seq).reverse();
            return JSON.stringify(shown.seqs) === JSON.stringify(seqs);
        }, 15000, 500).catch((error) => {
            throw new Error(`${error.message}: the page lists ${shown.seqs}, it was sent ${seqs}`);
        });
        assert.ok(before.seqs.every((seq) => seqs.includes(seq)), `the requests shown before the reload (${before.seqs}) are there: ${seqs}`);
        assert.doesNotMatch(shown.text, /no data yet/);
        await ui([{ wait: 500 }, { shot: 'dashboard-restored' }]);
    });
});
