/**
 * The usage dashboard: one webview panel drawn by the dashboard bundle (`extension/dashboard/`, built
 * into the server's package beside `tokengauge report`'s copy of it) from the server's
 * `tokenGauge/dashboard`, sent again whenever a request joins the usage history.
 */

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

import { messageOf } from './errors';
import { DashboardData, Methods } from './protocol';
import { ServerConnection } from './server';

export const DASHBOARD_VIEW = 'tokenGauge.dashboard';
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
        if (this.panel) {
            this.panel.reveal();
            return;
        }
        const file = dashboardScript(this.extensionUri.fsPath);
        if (!file) {
            throw new Error('its page script is missing from this installation; reinstall Token Gauge.');
        }
        const script = vscode.Uri.file(file);
        const data = await this.server.request(Methods.dashboard, {});
        const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW, 'Token Gauge: Usage', vscode.ViewColumn.Active, {
            enableScripts: true,
            localResourceRoots: [vscode.Uri.file(path.dirname(file))],
        });
        panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'images', 'icon.png');
        panel.webview.html = page(panel.webview, script, data);
        this.lastSent = data;
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
