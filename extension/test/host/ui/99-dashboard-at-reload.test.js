// The last of the suite (its name sorts last): the dashboard is left open as the window closes, for
// the reload launch to find it restored (ui-reload/restored-dashboard.test.js). What it showed is
// noted in the profile for that check. A file is opened after it, so that its tab comes back behind
// the file's: shown at startup, it would wake the extension before the reload's first test, which
// needs the extension to start with the window.
'use strict';
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { until } = require('../support');
const { ui } = require('../ui');

const api = () => vscode.extensions.getExtension('tokengauge.tokengauge').exports;

/** Whether the workbench's stored state (the browser's IndexedDB) keeps the dashboard's tab and the file's. */
const SAVED = `(async () => {
    const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    for (const { name } of await indexedDB.databases()) {
        if (!name.startsWith('vscode-web-state-db-')) continue;
        const db = await request(indexedDB.open(name));
        try {
            if (!db.objectStoreNames.contains('ItemTable')) continue;
            const values = await request(db.transaction('ItemTable').objectStore('ItemTable').getAll());
            const both = (v) => typeof v === 'string' && v.includes('mainThreadWebview-tokenGauge.dashboard') && v.includes('notes.txt');
            if (values.some(both)) return true;
        } finally {
            db.close();
        }
    }
    return false;
})()`;

describe('the dashboard at a reload', function () {
    this.timeout(60000);

    it('is open as the window closes (kept across a reload)', async () => {
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await vscode.commands.executeCommand('tokenGauge.openDashboard');
        const data = await until('the panel sent its data', async () => api().dashboardShown());
        await ui([{ inFrame: '#tg-dashboard', waitSelector: 'h1' }, { wait: 500 }, { shot: 'dashboard-before-reload' }]);
        const shown = { generated: data.generated, seqs: data.requests.map((r) => r.seq).reverse() };
        fs.writeFileSync(path.join(process.env.TG_UI_PROFILE, 'dashboard-left-open.json'), JSON.stringify(shown));
        const notes = vscode.Uri.file(path.join(process.env.TG_UI_PROFILE, 'workspace', 'notes.txt'));
        fs.writeFileSync(notes.fsPath, 'The dashboard is the tab before this one.\n');
        await vscode.window.showTextDocument(notes);
        // A web workbench stores which editors are open every few seconds while it has the focus,
        // not as it closes.
        await ui([{ click: '.tabs-container .tab.active' }]);
        await until('the workbench stored both tabs', async () => (await ui([{ evaluate: SAVED }]))[0], 30000, 1000);
    });
});
