// No suitable Python, as a person meets it: tokenGauge.pythonPath names an interpreter that does
// not run. The server cannot start; a notification says which interpreter it tried and what it was,
// and offers the ways out (set the path, install Python); the status bar says the server could not
// start, and why. Pointed back at a working Python, the
// server starts again and the models come back.
'use strict';
const assert = require('assert');
const vscode = require('vscode');
const { until } = require('../support');
const { ui } = require('../ui');

const MISSING = '/nonexistent/bin/python3';

describe('no suitable Python', function () {
    this.timeout(120000);
    let kept;

    before(() => {
        kept = vscode.workspace.getConfiguration('tokenGauge').get('pythonPath');
    });

    after(async () => {
        await vscode.workspace.getConfiguration('tokenGauge').update('pythonPath', kept, vscode.ConfigurationTarget.Global);
        await vscode.commands.executeCommand('notifications.clearAll');
        const api = vscode.extensions.getExtension('tokengauge.tokengauge').exports;
        await until('the server back', () => api.usage().then(() => true, () => false), 60000, 500);
    });

    it('says what it tried and offers the ways out', async () => {
        await vscode.commands.executeCommand('notifications.clearAll');
        await vscode.workspace.getConfiguration('tokenGauge').update('pythonPath', MISSING, vscode.ConfigurationTarget.Global);
        await vscode.commands.executeCommand('notifications.showList');
        const item = `.notifications-center .notification-list-item:has-text("${MISSING}")`;
        const [[message], buttons] = await until('the notification', async () => {
            const read = await ui([
                { read: `${item} .notification-list-item-message` },
                { read: `${item} .notification-list-item-buttons-container .monaco-button` },
            ]);
            return read[0].length > 0 && read;
        }, 30000, 500);
        assert.strictEqual(
            message,
            `Token Gauge needs Python 3.10 or newer for its counting server: ${MISSING} (the tokenGauge.pythonPath ` +
                'setting) was not found. Set tokenGauge.pythonPath to a suitable interpreter, or clear it to use the one found on its own.',
        );
        assert.deepStrictEqual(buttons, ['Set Python Path', 'Install Python']);
        await ui([{ shot: 'no-python' }]);
        const status = vscode.extensions.getExtension('tokengauge.tokengauge').exports.statusShown();
        assert.strictEqual(status.text, '$(error) Token Gauge');
        assert.ok(status.tooltip.startsWith(`The Token Gauge server could not start. ${message}`), status.tooltip);
        await vscode.commands.executeCommand('notifications.hideList');
    });
});
