// What the host suites share besides the workbench driver (ui.js): waiting, a closed loopback
// port, Token Gauge's settings.
'use strict';
const net = require('net');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `probe()`'s first truthy value, asked every `every` ms; rejects naming `what` after `ms`. */
async function until(what, probe, ms = 30000, every = 250) {
    const t0 = Date.now();
    for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
        await sleep(every);
    }
}

/** A loopback port nothing listens on. */
function closedPort() {
    return new Promise((resolve) => {
        const server = net.createServer().listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

/** Set `tokenGauge.providers` and `tokenGauge.models` in the user settings (the server restarts). */
async function configure(providers, models) {
    const vscode = require('vscode');
    const config = vscode.workspace.getConfiguration('tokenGauge');
    await config.update('providers', providers, vscode.ConfigurationTarget.Global);
    await config.update('models', models, vscode.ConfigurationTarget.Global);
}

/** The Token Gauge model `id` once VS Code lists it. */
async function listed(id) {
    const vscode = require('vscode');
    const found = await until(`model ${id} listed`, async () => {
        const [model] = await vscode.lm.selectChatModels({ vendor: 'tokengauge', id });
        return model;
    }, 20000, 200);
    return found;
}

/** The test upstream's control endpoint (`upstream`, default `TG_UPSTREAM`): GET `path`, or POST `body` to it. */
async function control(path, body, upstream = process.env.TG_UPSTREAM) {
    const assert = require('assert');
    const response = await fetch(`${upstream}/_control/${path}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
    assert.ok(response.ok, `upstream ${path}: ${response.status}`);
    return response.json();
}

module.exports = { sleep, until, closedPort, configure, listed, control };
