// Minimal real-host smoke suite: proves the harness (VS Code 1.139 extension host, stable LM provider API,
// model selection and token counting through a registered provider).
// The provider checks need the extension under test to contribute the 'tgproof' and 'tgproof-test' vendors
// (scripts/vscode-host/selftest.sh makes such a throwaway extension); against any other extension they skip.
'use strict';
const assert = require('assert');
const vscode = require('vscode');

const contributes = (vendor) => vscode.extensions.all.some((e) =>
  ((e.packageJSON.contributes || {}).languageModelChatProviders || []).some((p) => p.vendor === vendor));
const cts = () => new vscode.CancellationTokenSource().token;

describe('vscode host smoke', () => {
  it('runs VS Code 1.139', () => {
    assert.ok(vscode.version.startsWith('1.139'), `vscode.version is ${vscode.version}`);
  });

  it('has the stable vscode.lm.registerLanguageModelChatProvider', () => {
    assert.strictEqual(typeof vscode.lm.registerLanguageModelChatProvider, 'function');
  });

  describe('provider of the extension under test (vendor tgproof)', function () {
    before(function () { if (!contributes('tgproof')) this.skip(); });

    it('selectChatModels({vendor: "tgproof"}) lists its model', async () => {
      const models = await vscode.lm.selectChatModels({ vendor: 'tgproof' });
      assert.deepStrictEqual(models.map((m) => m.id), ['tgproof-1']);
      assert.strictEqual(models[0].vendor, 'tgproof');
      assert.strictEqual(models[0].maxInputTokens, 4096);
    });

    it('countTokens("hello") reaches provideTokenCount and returns 5', async () => {
      const [model] = await vscode.lm.selectChatModels({ vendor: 'tgproof' });
      assert.strictEqual(await model.countTokens('hello', cts()), 5);
    });
  });

  describe('provider registered from inside the test (vendor tgproof-test)', function () {
    let reg;
    const calls = [];
    before(function () {
      if (!contributes('tgproof-test')) this.skip();
      reg = vscode.lm.registerLanguageModelChatProvider('tgproof-test', {
        provideLanguageModelChatInformation: async () => [{
          id: 'tgproof-test-1', name: 'proof (test)', family: 'tgproof', version: '1',
          maxInputTokens: 1000, maxOutputTokens: 100, capabilities: {},
        }],
        provideLanguageModelChatResponse: async (_model, _messages, _options, progress) => {
          progress.report(new vscode.LanguageModelTextPart('ok'));
        },
        provideTokenCount: async (_model, text) => { calls.push(text); return typeof text === 'string' ? text.length : 0; },
      });
    });
    after(() => reg && reg.dispose());

    it('is listed and counts through the test\'s provider', async () => {
      const models = await vscode.lm.selectChatModels({ vendor: 'tgproof-test' });
      assert.deepStrictEqual(models.map((m) => m.id), ['tgproof-test-1']);
      assert.strictEqual(await models[0].countTokens('hello', cts()), 5);
      assert.deepStrictEqual(calls, ['hello']);
    });
  });
});
