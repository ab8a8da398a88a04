// Entry point VS Code calls for `extensionTestsPath` (see scripts/vscode-host/run-ext-tests.sh):
// exports run(), which runs mocha (BDD: describe/it) over one suite, `extension/test/host/<suite>/*.test.js`,
// inside the real extension host, and resolves when all pass / rejects otherwise (VS Code turns that into
// the exit code). The last line it prints is always the plain `N passed, N failed` that CI reads.
//
// Suites (TG_HOST_SUITE): `dev` (the development extension against the test upstream), `vsix` (the packaged
// extension installed with --install-extension), `copilot` (the real Copilot Chat driving tokengauge).
// mocha comes from the repo's node_modules (root package.json), else $TG_MOCHA_DIR/node_modules, else
// $VSC_HOME/pw/node_modules where scripts/vscode-host/setup.sh installs it.
// Env knobs: TG_HOST_SUITE (required), TG_HOST_TEST_GREP (mocha grep), TG_HOST_TEST_TIMEOUT_MS (per test,
// default 20000).
'use strict';
const fs = require('fs');
const path = require('path');

function loadMocha() {
  const tried = [];
  const dirs = [null];
  if (process.env.TG_MOCHA_DIR) dirs.push(path.join(process.env.TG_MOCHA_DIR, 'node_modules'));
  dirs.push(path.join(process.env.VSC_HOME || path.join(require('os').homedir(), '.cache/vscode-host'), 'pw', 'node_modules'));
  for (const d of dirs) {
    try {
      const p = d ? require.resolve('mocha', { paths: [d] }) : require.resolve('mocha', { paths: [__dirname] });
      return { Mocha: require(p), from: p };
    } catch (e) {
      tried.push(d || `${__dirname} and its parents`);
    }
  }
  throw new Error('mocha not found; tried ' + tried.join(', '));
}

function run() {
  return new Promise((resolve, reject) => {
    let passes = 0;
    let failures = 0;
    const done = (err) => {
      console.log(`${passes} passed, ${failures} failed`);
      if (err) reject(err); else resolve();
    };
    try {
      const { Mocha, from } = loadMocha();
      console.log(`host tests: node ${process.version}, mocha ${from}`);
      const mocha = new Mocha({
        ui: 'bdd', reporter: 'spec', color: false,
        timeout: +(process.env.TG_HOST_TEST_TIMEOUT_MS || 20000),
      });
      if (process.env.TG_HOST_TEST_GREP) mocha.grep(process.env.TG_HOST_TEST_GREP);
      const suite = process.env.TG_HOST_SUITE;
      if (!suite) { failures = 1; return done(new Error('TG_HOST_SUITE is not set (dev, vsix or copilot)')); }
      const dir = path.join(__dirname, suite);
      const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort() : [];
      if (files.length === 0) { failures = 1; return done(new Error(`no *.test.js in ${dir}`)); }
      console.log(`host suite ${suite}: ${files.join(', ')}`);
      for (const f of files) mocha.addFile(path.join(dir, f));
      const runner = mocha.run((nFailed) => {
        passes = runner.stats ? runner.stats.passes : 0;
        failures = nFailed;
        done(nFailed > 0 ? new Error(`${nFailed} host test(s) failed`) : undefined);
      });
    } catch (e) {   // mocha missing, or a test file failed to load
      console.error('host tests could not run:', e && e.stack || e);
      failures = Math.max(failures, 1);
      done(e);
    }
  });
}

module.exports = { run };
