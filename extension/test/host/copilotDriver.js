// What the suites that drive the real Copilot Chat share (copilot/, reasoning/): a model once VS Code
// lists it, Copilot activated as scripts/vscode-host/COPILOT.md says, a chat turn, and a bound on it.
'use strict';
const vscode = require('vscode');
const { sleep } = require('./support');

/** `promise`, or an error naming `what` after `ms`. */
function withTimeout(promise, ms, what) {
    let timer;
    return Promise.race([
        promise.finally(() => clearTimeout(timer)),
        new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms); }),
    ]);
}

/** The first chat model `selector` finds, asked every 200 ms `tries` times; undefined if none. */
async function findModel(selector, tries = 150) {
    for (let i = 0; i < tries; i++) {
        const found = (await vscode.lm.selectChatModels(selector))[0];
        if (found) return found;
        await sleep(200);
    }
    return undefined;
}

/**
 * COPILOT.md step 2: chat setup runs once on a throw-away request to a model of `selector`, then
 * Copilot activates. Resolves with the ms it took and what the request came to ('still running' if
 * it had not ended 30 s after); rejects if Copilot did not activate within a minute.
 */
async function activateCopilot(selector) {
    const t0 = Date.now();
    const warm = vscode.commands.executeCommand('workbench.action.chat.open', {
        query: 'hello', mode: 'ask', modelSelector: selector, blockOnResponse: true,
    }).then((r) => r, (e) => e);
    const copilot = () => vscode.extensions.getExtension('GitHub.copilot-chat');
    while (!(copilot() && copilot().isActive) && Date.now() - t0 < 60000) await sleep(250);
    if (!(copilot() && copilot().isActive)) throw new Error('GitHub.copilot-chat did not activate');
    const result = await Promise.race([warm, sleep(30000).then(() => 'still running')]);
    return { ms: Date.now() - t0, result };
}

/** One chat turn with the model of `selector` in `mode` (agent or ask), its result once answered. */
function chat(selector, query, mode) {
    return vscode.commands.executeCommand('workbench.action.chat.open', {
        query, mode, modelSelector: selector, blockOnResponse: true,
    });
}

module.exports = { withTimeout, findModel, activateCopilot, chat };
