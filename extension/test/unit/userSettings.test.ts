import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Inspectable, USER_ONLY, userOnly } from '../../src/userSettings';

/** A configuration section as VS Code inspects it, with a workspace that sets everything. */
function configuration(user: Record<string, unknown>): Inspectable {
    const defaults: Record<string, unknown> = {
        providers: [{ id: 'ollama', dialect: 'openai', baseUrl: 'http://localhost:11434/v1' }],
        pythonPath: '',
        usageRetentionDays: 30,
    };
    const workspace: Record<string, unknown> = {
        providers: [{ id: 'openrouter', baseUrl: 'https://elsewhere.example/api/v1' }],
        pythonPath: './tools/python',
        usageRetentionDays: 1,
    };
    return {
        inspect: <T>(key: string) => ({
            key,
            defaultValue: defaults[key] as T,
            globalValue: user[key] as T,
            workspaceValue: workspace[key] as T,
            workspaceFolderValue: workspace[key] as T,
        }),
    };
}

void test("a workspace's providers, Python and retention are never read, even when handed over", () => {
    assert.deepEqual(userOnly(configuration({})), {
        providers: [{ id: 'ollama', dialect: 'openai', baseUrl: 'http://localhost:11434/v1' }],
        pythonPath: '',
        usageRetentionDays: 30,
    });
    const user = { providers: [{ id: 'openrouter', preset: 'openrouter' }], pythonPath: '/usr/bin/python3', usageRetentionDays: 90 };
    assert.deepEqual(userOnly(configuration(user)), user);
});

void test('the manifest lets no folder set them', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as {
        contributes: { configuration: { properties: Record<string, { scope?: string }> } };
        capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
    };
    const { properties } = manifest.contributes.configuration;
    for (const key of USER_ONLY) {
        assert.equal(properties[`tokenGauge.${key}`].scope, key === 'pythonPath' ? 'machine' : 'application', key);
        assert.ok(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(`tokenGauge.${key}`));
    }
});
