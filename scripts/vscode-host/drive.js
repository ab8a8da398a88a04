// usage: node drive.js URL [timeoutMs]
// Opens the code-server workbench URL (carrying the extension-test payload) in headless Debian chromium,
// prints every extension-host console line the smoke-test driver hands over, and exits with the suite's
// exit code (codeAutomationExit); 2 on timeout, 3 on a driver error. Needs playwright-core on NODE_PATH.
// Adapted from shared/vscode-host/drive.js. DRIVE_VERBOSE=1 also prints the workbench's own console.
// DRIVE_SCREENSHOTS=DIR: a test that logs `tg-screenshot NAME` gets the workbench saved as DIR/NAME.png.
const util = require('util');
const { chromium } = require('playwright-core');

// noise from offline lookups and the chat/agent machinery; never hides test output
const NOISE = /ENOTFOUND|EAI_AGAIN|Canceled|ChatModelSelection|AgentHost|socket hang up|Ignoring fetching additional builtin extensions|Updating additional builtin extensions cache/;

(async () => {
  const url = process.argv[2];
  const timeout = +(process.argv[3] || 120000);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage();
  let exitCode = null;
  // the workbench calls these (smoke-test driver) for each extension-host console line and at the end
  const shots = process.env.DRIVE_SCREENSHOTS;
  await page.exposeFunction('codeAutomationLog', async (type, args) => {
    let line;
    try { line = util.format(...args); } catch { line = String(args); }   // lines arrive as format strings ('%d passing')
    const shot = shots && /^tg-screenshot ([\w.-]+)$/.exec(line);
    if (shot) await page.screenshot({ path: require('path').join(shots, shot[1] + '.png') }).catch((e) => console.log('[driver] screenshot failed', String(e)));
    if (!NOISE.test(line)) console.log('[exthost ' + type + '] ' + line.slice(0, 4000));
  });
  await page.exposeFunction('codeAutomationExit', (code) => { console.log('[codeAutomationExit]', code); exitCode = code; });
  page.on('console', (m) => { if (process.env.DRIVE_VERBOSE) console.log('[console.' + m.type() + ']', m.text().slice(0, 400)); });
  page.on('pageerror', (e) => console.log('[pageerror]', String(e).slice(0, 400)));
  await page.goto(url);
  const t0 = Date.now();
  while (exitCode === null && Date.now() - t0 < timeout) await new Promise((r) => setTimeout(r, 250));
  if (exitCode === null) console.log('[driver] timed out after ' + timeout + ' ms without codeAutomationExit');
  await browser.close().catch(() => {});
  console.log('[driver] exit', exitCode);
  process.exit(exitCode === null ? 2 : Number(exitCode));
})().catch((e) => { console.error('[driver] error', e); process.exit(3); });
