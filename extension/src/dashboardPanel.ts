/**
 * The usage dashboard: one webview panel drawn by the dashboard bundle (`extension/dashboard/`, built
 * into the server's package beside `tokengauge report`'s copy of it) from the server's
 * `tokenGauge/dashboard`, sent again whenever a request joins the usage history. VS Code keeps it open
 * across a window reload, and hands it back to be drawn again (`registerSerializer`).
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

import { messageOf } from './errors';
import { DashboardData, Methods } from './protocol';
import { ServerConnection } from './server';

export const DASHBOARD_VIEW = 'tokenGauge.dashboard';
const TITLE = 'Token Gauge: Usage';
/** Requests finishing close together are shown together. */
const UPDATE_DELAY_MS = 250;

/** Where the bundle is: in a VSIX the server's package is under bundled/libs, in the repository under server/. */
export function dashboardScript(extensionPath: string): string | undefined {
    const candidates = [
        path.join(extensionPath, 'bundled', 'libs', 'common', 'tokengauge', 'data', 'dashboard.js'),
        path.join(extensionPath, 'server', 'tokengauge', 'data', 'dashboard.js'),
    ];
    return candidates.find((file) => fs.existsSync(file));
}

/** The page may run its script, and load files from the script's folder only. */
const options = (file: string): vscode.WebviewOptions => ({
    enableScripts: true,
    localResourceRoots: [vscode.Uri.file(path.dirname(file))],
});

/** JSON safe inside a `<script>` element. */
const inline = (data: unknown): string => JSON.stringify(data).replace(/</g, '\\u003c');

function page(webview: vscode.Webview, script: vscode.Uri, data: DashboardData | null): string {
    const nonce = randomBytes(18).toString('base64url');
    const policy = `default-src 'none'; img-src ${webview.cspSource} data:; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';`;
    return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Token Gauge: Usage</title></head>
<body><main id="tg-dashboard" data-mode="webview"></main>
<script type="application/json" id="tg-data">${inline(data)}</script>
<script nonce="${nonce}" src="${webview.asWebviewUri(script).toString()}"></script>
</body></html>`;
}

export class DashboardPanel implements vscode.Disposable {
    private panel: vscode.WebviewPanel | undefined;
    private timer: NodeJS.Timeout | undefined;
    /** Data sent to the open panel (tests read what it shows against it). */
    lastSent: DashboardData | undefined;

    constructor(
        private readonly extensionUri: vscode.Uri,
        private readonly server: ServerConnection,
        private readonly log: vscode.LogOutputChannel,
    ) {}

    /** Open the panel, or bring it forward. */
    async open(): Promise<void> {
        if (this.reveal()) {
            return;
        }
        const file = this.script();
        if (!file) {
            throw new Error('its page script is missing from this installation; reinstall Token Gauge.');
        }
        const data = await this.server.request(Methods.dashboard, {});
        if (this.reveal()) {
            return; // VS Code restored the panel it kept meanwhile
        }
        const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW, TITLE, vscode.ViewColumn.Active, options(file));
        this.adopt(panel, file, data);
    }

    /**
     * A dashboard open when the window closed or reloaded comes back: VS Code keeps its tab and hands it over
     * here at startup (the manifest's `onWebviewPanel` activation event), to show the page again with fresh data.
     * Register while activating.
     */
    registerSerializer(): vscode.Disposable {
        return vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW, {
            deserializeWebviewPanel: (panel) => Promise.resolve(this.restore(panel)),
        });
    }

    /** Take over a panel VS Code kept: the page as `open` makes it, its data asked for when the page is ready. */
    restore(panel: vscode.WebviewPanel): void {
        const file = this.script();
        if (!file) {
            this.log.warn('the dashboard was not restored: its page script is missing from this installation');
            panel.dispose();
            return;
        }
        if (this.panel) {
            panel.dispose(); // one dashboard: it was opened meanwhile
            return;
        }
        panel.webview.options = options(file);
        // No data in the page: the server may be starting still (requests wait for it); the page says `ready`.
        this.adopt(panel, file, null);
    }

    /** Bring the open panel forward; false if there is none. */
    private reveal(): boolean {
        this.panel?.reveal();
        return this.panel !== undefined;
    }

    private script(): string | undefined {
        return dashboardScript(this.extensionUri.fsPath);
    }

    private adopt(panel: vscode.WebviewPanel, file: string, data: DashboardData | null): void {
        panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'images', 'icon.png');
        panel.webview.html = page(panel.webview, vscode.Uri.file(file), data);
        this.lastSent = data ?? undefined;
        // Shown again after being hidden, the page starts over from its html: it says `ready`, and gets fresh data.
        panel.webview.onDidReceiveMessage((message: { type?: string }) => {
            if (message?.type === 'ready') {
                void this.send();
            }
        });
        panel.onDidDispose(() => {
            this.panel = undefined;
            this.lastSent = undefined;
            clearTimeout(this.timer);
        });
        this.panel = panel;
    }

    /** A request joined the usage history: update the panel (if it is showing) shortly. */
    onActivity(): void {
        if (!this.panel?.visible) {
            return;
        }
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.send(), UPDATE_DELAY_MS);
    }

    private async send(): Promise<void> {
        const panel = this.panel;
        if (!panel) {
            return;
        }
        try {
            const data = await this.server.request(Methods.dashboard, {});
            if (await panel.webview.postMessage({ type: 'data', data })) {
                this.lastSent = data;
            }
        } catch (error) {
            this.log.warn(`the dashboard could not be updated: ${messageOf(error)}`);
        }
    }

    dispose(): void {
        clearTimeout(this.timer);
        this.panel?.dispose();
    }
}
