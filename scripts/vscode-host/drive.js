// usage: node drive.js URL [timeoutMs]
// Opens the code-server workbench URL (carrying the extension-test payload) in headless Debian chromium,
// prints every extension-host console line the smoke-test driver hands over, and exits with the suite's
// exit code (codeAutomationExit); 2 on timeout, 3 on a driver error. Needs playwright-core on NODE_PATH.
// Background: scripts/vscode-host/README.md. DRIVE_VERBOSE=1 also prints the workbench's own console.
// DRIVE_SCREENSHOTS=DIR: a test that logs `tg-screenshot NAME` gets the workbench saved as DIR/NAME.png.
// DRIVE_UI_DIR=DIR: a test that logs `tg-ui {"id": N, "steps": [...]}` has the driver work the workbench
// as a person would (keys, clicks, waiting for text, reading text, screenshots); the outcome is written
// to DIR/N.json, which the test waits for (extension/test/host/ui.js).
const fs = require('fs');
const path = require('path');
const util = require('util');
const { chromium } = require('playwright-core');

/** What the browser said a Content-Security-Policy refused, in any frame (webviews included). */
const policyViolations = [];

/** The frame (a webview's page, or the workbench) whose document holds `selector`, waited for. */
async function frameHolding(page, selector, timeout) {
  const deadline = Date.now() + timeout;
  for (;;) {
    for (const frame of page.frames()) {
      if (await frame.$(selector).catch(() => null)) return frame;
    }
    if (Date.now() > deadline) throw new Error(`no frame holds ${selector}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * One step of a `tg-ui` request; returns what it read, if anything. With `inFrame: 'css'` the step's
 * selectors (and `evaluate`, an expression run in that document) apply to the frame holding that
 * element: a webview's page. Keys always go to the focused element.
 */
async function step(page, s) {
  const timeout = s.timeout || 15000;
  const target = s.inFrame ? await frameHolding(page, s.inFrame, timeout) : page;
  if (s.evaluate) return target.evaluate(s.evaluate);
  if (s.policyViolations) return [...policyViolations];
  if (s.press) return void await page.keyboard.press(s.press);
  if (s.type !== undefined) return void await page.keyboard.type(s.type, { delay: 5 });
  if (s.click) return void await target.locator(s.click).first().click({ timeout });
  if (s.hover) return void await target.locator(s.hover).first().hover({ timeout });
  if (s.clickText) {
    const scope = s.within ? target.locator(s.within) : target;
    return void await scope.getByText(s.clickText, { exact: s.exact !== false }).first().click({ timeout });
  }
  if (s.waitText) return void await target.getByText(s.waitText, { exact: false }).first().waitFor({ timeout });
  if (s.waitSelector) return void await target.locator(s.waitSelector).first().waitFor({ timeout });
  if (s.read) return target.locator(s.read).allInnerTexts();
  if (s.wait) return void await new Promise((r) => setTimeout(r, s.wait));
  if (s.shot) {
    const dir = process.env.DRIVE_SCREENSHOTS;
    if (dir) await page.screenshot({ path: path.join(dir, s.shot + '.png'), clip: s.clip });
    return;
  }
  if (s.inFrame) return;  // only waited for the frame
  throw new Error('unknown step ' + JSON.stringify(s));
}

/** Run a `tg-ui` request and write its outcome where the test waits for it. */
async function ui(page, request) {
  const reads = [];
  let error = null;
  for (const s of request.steps) {
    try {
      const read = await step(page, s);
      if (read !== undefined) reads.push(read);
    } catch (e) {
      error = `step ${JSON.stringify(s)}: ${String(e).split('\n')[0]}`;
      const dir = process.env.DRIVE_SCREENSHOTS;   // what the workbench showed when the step failed
      if (dir) await page.screenshot({ path: path.join(dir, `failed-${request.id}.png`) }).catch(() => {});
      break;
    }
  }
  fs.writeFileSync(path.join(process.env.DRIVE_UI_DIR, request.id + '.json'), JSON.stringify({ reads, error }));
}

// noise from offline lookups and the chat/agent machinery; never hides test output
const NOISE = /ENOTFOUND|EAI_AGAIN|Canceled|ChatModelSelection|AgentHost|socket hang up|Ignoring fetching additional builtin extensions|Updating additional builtin extensions cache/;

(async () => {
  const url = process.argv[2];
  const timeout = +(process.argv[3] || 120000);
  const options = {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  };
  // DRIVE_PROFILE=DIR keeps the browser's profile (the workbench's secrets live there) for a later run.
  const browser = process.env.DRIVE_PROFILE
    ? await chromium.launchPersistentContext(process.env.DRIVE_PROFILE, options)
    : await chromium.launch(options);
  const page = await browser.newPage();
  let exitCode = null;
  // the workbench calls these (smoke-test driver) for each extension-host console line and at the end
  const shots = process.env.DRIVE_SCREENSHOTS;
  await page.exposeFunction('codeAutomationLog', async (type, args) => {
    let line;
    try { line = util.format(...args); } catch { line = String(args); }   // lines arrive as format strings ('%d passing')
    const shot = shots && /^tg-screenshot ([\w.-]+)$/.exec(line);
    if (shot) await page.screenshot({ path: path.join(shots, shot[1] + '.png') }).catch((e) => console.log('[driver] screenshot failed', String(e)));
    const request = process.env.DRIVE_UI_DIR && /^tg-ui (\{.*\})$/.exec(line);
    if (request) void ui(page, JSON.parse(request[1]));
    if (!NOISE.test(line)) console.log('[exthost ' + type + '] ' + line.slice(0, 4000));
  });
  await page.exposeFunction('codeAutomationExit', (code) => { console.log('[codeAutomationExit]', code); exitCode = code; });
  page.on('console', (m) => {
    if (/Content.Security.Policy/i.test(m.text())) policyViolations.push(m.text().slice(0, 300));
    if (process.env.DRIVE_VERBOSE) console.log('[console.' + m.type() + ']', m.text().slice(0, 400));
  });
  page.on('pageerror', (e) => console.log('[pageerror]', String(e).slice(0, 400)));
  await page.goto(url);
  const t0 = Date.now();
  while (exitCode === null && Date.now() - t0 < timeout) await new Promise((r) => setTimeout(r, 250));
  if (exitCode === null) console.log('[driver] timed out after ' + timeout + ' ms without codeAutomationExit');
  await browser.close().catch(() => {});
  console.log('[driver] exit', exitCode);
  process.exit(exitCode === null ? 2 : Number(exitCode));
})().catch((e) => { console.error('[driver] error', e); process.exit(3); });
