// The development extension in a folder VS Code does not trust (scripts/test-extension.sh turns
// workspace trust on, and never asks). tokenGauge.pythonPath is not set, and the Python extension
// (its stand-in, extension/test/python-stub) names an interpreter that could be the folder's own
// environment: a script that leaves a marker beside it when it runs. The server must run on the
// machine's Python instead, and the log say so once.
'use strict';
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { until } = require('../support');

const NOTE = "the workspace is not trusted: the Python extension's interpreter";

/** The server's process id once it answers, and the program it runs on. */
async function serverProcess(api) {
    const { pid } = await api.usage().catch(() => ({}));
    return pid ? { pid, program: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] } : undefined;
}

/** Token Gauge's log of this window (run-ext-tests.sh keeps VS Code's logs beside TG_UI_DIR). */
function tokenGaugeLog() {
    const found = [];
    const walk = (dir) => {
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
            const full = path.join(dir, entry.name);
            if (entry.isDirectory()) walk(full);
            else if (entry.name === 'Token Gauge.log') found.push(full);
        }
    };
    walk(path.join(process.env.TG_UI_DIR, '..', 'ud', 'logs'));
    assert.strictEqual(found.length, 1, `Token Gauge's logs: ${found.join(', ')}`);
    return fs.readFileSync(found[0], 'utf8');
}

/** The lines of the log that hold `text`. */
const lines = (text) => tokenGaugeLog().split('\n').filter((line) => line.includes(text));
const STARTING = 'starting the Token Gauge server with';

describe('in an untrusted workspace', function () {
    this.timeout(60000);

    it("runs the server on the machine's Python, not the Python extension's interpreter, and says so once", async () => {
        assert.strictEqual(vscode.workspace.isTrusted, false);
        assert.strictEqual(vscode.workspace.getConfiguration('tokenGauge').get('pythonPath'), '');
        // The Python extension runs here and names its interpreter: were it taken, the server would run on it.
        const python = vscode.extensions.getExtension('ms-python.python');
        assert.ok(python, 'the Python extension is not enabled');
        const environments = (await python.activate()).environments;
        const selected = (await environments.resolveEnvironment(environments.getActiveEnvironmentPath())).executable.uri.fsPath;
        const marker = path.join(path.dirname(path.dirname(selected)), 'ran');

        const api = await vscode.extensions.getExtension('tokengauge.tokengauge').activate();
        const first = await until('the server running', () => serverProcess(api));
        assert.strictEqual(first.program, 'python3');
        assert.ok(!fs.existsSync(marker), "the Python extension's interpreter ran");
        const [gpt] = await until('gpt-4o listed', () => vscode.lm.selectChatModels({ vendor: 'tokengauge', id: 'gpt-4o' }).then((m) => m.length && m));
        assert.ok((await gpt.countTokens('counted on the machine\'s Python')) > 0);
        const [note, ...more] = await until('the note in the log', () => lines(NOTE).length && lines(NOTE));
        assert.deepStrictEqual(more, []);
        assert.ok(note.includes(`(${selected}) is not used`), note);
        assert.ok(lines(STARTING)[0].includes('python3 (Python 3.'), lines(STARTING)[0]);

        // Started again, it keeps to the machine's Python, and the log does not repeat itself.
        await vscode.commands.executeCommand('tokenGauge.restartServer');
        const second = await until('the server restarted', async () => {
            const running = await serverProcess(api);
            return running && running.pid !== first.pid && running;
        });
        assert.strictEqual(second.program, 'python3');
        assert.ok(!fs.existsSync(marker), "the Python extension's interpreter ran");
        await until('the second start in the log', () => lines(STARTING).length === 2);
        assert.strictEqual(lines(NOTE).length, 1);
    });
});
