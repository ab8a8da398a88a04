/** The status-bar item: shows the server's `tokenGauge/status` as it is. */

import * as vscode from 'vscode';

import { Commands } from './commands';
import { Status } from './protocol';

const BACKGROUND: Record<Status['severity'], vscode.ThemeColor | undefined> = {
    info: undefined,
    warning: new vscode.ThemeColor('statusBarItem.warningBackground'),
    error: new vscode.ThemeColor('statusBarItem.errorBackground'),
};

export class StatusBar implements vscode.Disposable {
    private readonly item = vscode.window.createStatusBarItem(
        'tokenGauge.status',
        vscode.StatusBarAlignment.Right,
        100,
    );
    private last: Status | undefined;

    /** Shown from activation: the server's first status (the last request, from the ledger) follows. */
    constructor(private enabled: boolean) {
        this.item.name = 'Token Gauge';
        this.item.command = Commands.openDashboard;
        this.update({ text: '$(pulse) Token Gauge', tooltip: 'Token Gauge is starting its server…', severity: 'info' });
        this.last = undefined;
    }

    /** Show a status from the server. */
    update(status: Status): void {
        this.last = status;
        this.item.text = status.text;
        const tooltip = new vscode.MarkdownString(status.tooltip);
        // The server folds the calibration's details away in a <details> element.
        tooltip.supportHtml = true;
        this.item.tooltip = tooltip;
        this.item.backgroundColor = BACKGROUND[status.severity];
        this.render();
    }

    setEnabled(enabled: boolean): void {
        this.enabled = enabled;
        this.render();
    }

    /** The server's last status text (for tests and the usage command). */
    get text(): string | undefined {
        return this.last?.text;
    }

    /** The text and tooltip on screen now. */
    get shown(): { text: string; tooltip: string } {
        const tooltip = this.item.tooltip;
        return { text: this.item.text, tooltip: typeof tooltip === 'string' ? tooltip : (tooltip?.value ?? '') };
    }

    private render(): void {
        if (this.enabled) {
            this.item.show();
        } else {
            this.item.hide();
        }
    }

    dispose(): void {
        this.item.dispose();
    }
}
