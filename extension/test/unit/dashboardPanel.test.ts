import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { before, test } from 'node:test';

import type * as vscode from 'vscode';

import type * as DashboardModule from '../../src/dashboardPanel';
import type { DashboardData } from '../../src/protocol';
import type { ServerConnection } from '../../src/server';

// The panel's module uses VS Code's API at run time: it gets this stand-in of the few parts it uses.

interface FakeUri {
    scheme: string;
    path: string;
    fsPath: string;
    toString(): string;
}

const uri = (file: string, scheme = 'file'): FakeUri => ({
    scheme,
    path: file,
    fsPath: file,
    toString: () => `${scheme}://${file}`,
});

class FakePanel {
    readonly posted: unknown[] = [];
    disposed = false;
    revealed = 0;
    visible = true;
    iconPath: unknown;
    private readonly received: ((message: unknown) => void)[] = [];
    private readonly disposals: (() => void)[] = [];
    readonly webview = {
        html: '',
        options: {} as vscode.WebviewOptions,
        cspSource: 'https://webview.test',
        asWebviewUri: (file: FakeUri) => uri(file.path, 'https'),
        postMessage: (message: unknown) => {
            this.posted.push(message);
            return Promise.resolve(true);
        },
        onDidReceiveMessage: (listener: (message: unknown) => void) => {
            this.received.push(listener);
            return { dispose: () => undefined };
        },
    };

    onDidDispose(listener: () => void): { dispose(): void } {
        this.disposals.push(listener);
        return { dispose: () => undefined };
    }

    reveal(): void {
        this.revealed += 1;
    }

    dispose(): void {
        this.disposed = true;
        this.disposals.forEach((listener) => listener());
    }

    /** The page posts `message` to the extension. */
    says(message: unknown): void {
        this.received.forEach((listener) => listener(message));
    }

    get asPanel(): vscode.WebviewPanel {
        return this as unknown as vscode.WebviewPanel;
    }
}

const serializers = new Map<string, vscode.WebviewPanelSerializer>();
const created: FakePanel[] = [];
const fakeVscode = {
    Uri: {
        file: (file: string) => uri(file),
        joinPath: (base: FakeUri, ...parts: string[]) => uri(path.posix.join(base.path, ...parts)),
    },
    ViewColumn: { Active: -1 },
    window: {
        registerWebviewPanelSerializer: (viewType: string, serializer: vscode.WebviewPanelSerializer) => {
            serializers.set(viewType, serializer);
            return { dispose: () => serializers.delete(viewType) };
        },
        createWebviewPanel: (_viewType: string, _title: string, _column: number, options: vscode.WebviewOptions) => {
            const panel = new FakePanel();
            panel.webview.options = options;
            created.push(panel);
            return panel;
        },
    },
};

let dashboardModule: typeof DashboardModule;

before(async () => {
    const fakePath = path.join(__dirname, 'vscode.fake.js');
    const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
    const resolve = loader._resolveFilename;
    loader._resolveFilename = (request, ...rest) => (request === 'vscode' ? fakePath : resolve.call(Module, request, ...rest));
    const fake = new Module(fakePath);
    fake.exports = fakeVscode;
    fake.loaded = true;
    require.cache[fakePath] = fake;
    dashboardModule = await import('../../src/dashboardPanel');
});

const DATA = { requests: [], models: [], totals: {} } as unknown as DashboardData;

/** A dashboard over an installation at a fresh folder (`withScript`: its page script there). */
function dashboard(withScript = true) {
    const root = mkdtempSync(path.join(tmpdir(), 'tg-dashboard-'));
    const scripts = path.join(root, 'server', 'tokengauge', 'data');
    if (withScript) {
        mkdirSync(scripts, { recursive: true });
        writeFileSync(path.join(scripts, 'dashboard.js'), '');
    }
    const asked: string[] = [];
    const server = {
        request: (method: string) => {
            asked.push(method);
            return Promise.resolve(DATA);
        },
    } as unknown as ServerConnection;
    const warnings: string[] = [];
    const log = { warn: (message: string) => warnings.push(message) } as unknown as vscode.LogOutputChannel;
    const panel = new dashboardModule.DashboardPanel(uri(root) as unknown as vscode.Uri, server, log);
    return { panel, scripts, asked, warnings };
}

/** What VS Code does at startup with a dashboard kept across a reload. */
async function revive(kept: FakePanel): Promise<void> {
    const serializer = serializers.get(dashboardModule.DASHBOARD_VIEW);
    assert.ok(serializer, 'a serializer is registered for the dashboard');
    await serializer.deserializeWebviewPanel(kept.asPanel, undefined);
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

void test('VS Code is told to wake the extension for a dashboard kept across a reload', () => {
    const manifest = JSON.parse(readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as {
        activationEvents: string[];
    };
    assert.ok(manifest.activationEvents.includes(`onWebviewPanel:${dashboardModule.DASHBOARD_VIEW}`));
});

void test('a dashboard kept across a reload is the dashboard again, with fresh data', async () => {
    const { panel, scripts, asked } = dashboard();
    const registration = panel.registerSerializer();
    const kept = new FakePanel();
    await revive(kept);
    const { enableScripts, localResourceRoots } = kept.webview.options;
    assert.equal(enableScripts, true);
    assert.deepEqual(localResourceRoots?.map((root) => root.fsPath), [scripts], 'files from its script\'s folder only');
    assert.match(kept.webview.html, /Content-Security-Policy/);
    assert.ok(kept.webview.html.includes(`src="https://${path.join(scripts, 'dashboard.js')}"`), kept.webview.html);
    assert.ok(kept.webview.html.includes('<script type="application/json" id="tg-data">null</script>'));
    assert.ok(kept.iconPath, 'its icon');
    assert.equal(panel.lastSent, undefined);
    kept.says({ type: 'ready' }); // the page has loaded
    await settle();
    assert.deepEqual(asked, ['tokenGauge/dashboard']);
    assert.deepEqual(kept.posted, [{ type: 'data', data: DATA }]);
    assert.equal(panel.lastSent, DATA);
    // Open Dashboard brings the restored panel forward rather than opening another.
    await panel.open();
    assert.equal(kept.revealed, 1);
    assert.equal(created.length, 0);
    registration.dispose();
    assert.equal(serializers.size, 0);
    panel.dispose();
});

void test('one dashboard: a kept panel arriving after one was opened is closed', async () => {
    const { panel } = dashboard();
    panel.registerSerializer();
    await panel.open();
    const kept = new FakePanel();
    await revive(kept);
    assert.ok(kept.disposed);
    assert.equal(created.length, 1);
    assert.ok(!created[0].disposed);
    panel.dispose();
    created.length = 0;
});

void test('a restored dashboard closed by the person is opened afresh', async () => {
    const { panel } = dashboard();
    panel.registerSerializer();
    const kept = new FakePanel();
    await revive(kept);
    kept.dispose();
    assert.equal(panel.lastSent, undefined);
    await panel.open();
    assert.equal(created.length, 1);
    assert.equal(panel.lastSent, DATA);
    panel.dispose();
    created.length = 0;
});

void test('without its page script the kept panel is closed, and the log says why', async () => {
    const { panel, warnings } = dashboard(false);
    panel.registerSerializer();
    const kept = new FakePanel();
    await revive(kept);
    assert.ok(kept.disposed);
    assert.match(warnings.join('\n'), /not restored: its page script is missing/);
});
