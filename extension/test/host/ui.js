// Working the workbench as a person would, from a test inside the extension host: the test logs a
// `tg-ui` request, the driver outside (scripts/vscode-host/drive.js, playwright-core) carries out its
// steps in the browser and writes the outcome to $TG_UI_DIR/<id>.json, which this waits for.
// Steps: {press: 'Enter'}, {type: 'text'}, {click: 'css'}, {clickText: 'Label', within?: 'css'}, {waitText: 'text'},
// {waitSelector: 'css'}, {hover: 'css'}, {read: 'css'} (the inner texts of every match), {wait: ms},
// {shot: 'name', clip?: {x, y, width, height}}, {evaluate: 'expression'} (its JSON-able value is read),
// {policyViolations: true} (what the browser's console said a Content-Security-Policy refused, so far);
// `inFrame: 'css'` points a step's selectors (and `evaluate`) at the frame holding that element (a webview).
'use strict';
const fs = require('fs');
const path = require('path');

let next = 0;

/** Run `steps` in the workbench; resolves with what the `read` steps read, rejects with the failed step. */
async function ui(steps, timeoutMs = 60000) {
  const dir = process.env.TG_UI_DIR;
  if (!dir) throw new Error('TG_UI_DIR is not set: run the suite through scripts/vscode-host/run-ext-tests.sh');
  const id = `${process.pid}-${next++}`;
  const file = path.join(dir, `${id}.json`);
  console.log(`tg-ui ${JSON.stringify({ id, steps })}`);
  const t0 = Date.now();
  while (!fs.existsSync(file)) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`the driver did not answer tg-ui ${id} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const { reads, error } = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (error) throw new Error(`workbench: ${error}`);
  return reads;
}

/**
 * The texts of the notifications shown so far, as the notification center lists them (the headless
 * workbench files notifications there without showing them as toasts).
 */
async function notifications() {
  const vscode = require('vscode');
  await vscode.commands.executeCommand('notifications.showList');
  const [texts] = await ui([{ read: '.notifications-center .notification-list-item-message' }]);
  await vscode.commands.executeCommand('notifications.hideList');
  return texts;
}

module.exports = { ui, notifications };
