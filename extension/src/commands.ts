/** The commands: set an API key, show usage, restart the server, show logs. */

import * as vscode from 'vscode';

import { ApiKeys } from './apiKeys';
import { Methods } from './protocol';
import { ServerConnection } from './server';
import { ISettings } from './settings';

/** The command ids (package.json `contributes.commands`). */
export const Commands = {
    setApiKey: 'tokenGauge.setApiKey',
    showUsage: 'tokenGauge.showUsage',
    restartServer: 'tokenGauge.restartServer',
    showLogs: 'tokenGauge.showLogs',
} as const;

export interface CommandDeps {
    keys: ApiKeys;
    server: ServerConnection;
    log: vscode.LogOutputChannel;
    settings: () => ISettings;
    restart: () => Promise<void>;
}

async function setApiKey(deps: CommandDeps, providerId?: unknown, key?: unknown): Promise<void> {
    // Called with (providerId, key) it stores without asking: tests and automation use this.
    if (typeof providerId === 'string' && typeof key === 'string') {
        await deps.keys.set(providerId, key);
        return;
    }
    const providers = deps.settings().providers.map((p) => p.id);
    const chosen = providers.length === 1
        ? providers[0]
        : await vscode.window.showQuickPick(providers, { title: 'tokengauge: API key for which provider?' });
    if (!chosen) {
        return;
    }
    const entered = await vscode.window.showInputBox({
        title: `tokengauge: API key for ${chosen}`,
        prompt: 'Stored in VS Code\'s secret storage. Leave empty to remove it.',
        password: true,
        ignoreFocusOut: true,
    });
    if (entered !== undefined) {
        await deps.keys.set(chosen, entered.trim());
        void vscode.window.showInformationMessage(
            entered.trim() ? `tokengauge: API key for ${chosen} saved.` : `tokengauge: API key for ${chosen} removed.`,
        );
    }
}

async function showUsage(deps: CommandDeps): Promise<void> {
    const usage = await deps.server.request(Methods.usage, {});
    const document = await vscode.workspace.openTextDocument({
        language: 'json',
        content: JSON.stringify(usage, null, 2),
    });
    await vscode.window.showTextDocument(document, { preview: true });
}

/** Register every command; failures are shown, never swallowed. */
export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
    const guarded =
        (name: string, run: (...args: unknown[]) => Promise<void> | void) =>
        async (...args: unknown[]): Promise<void> => {
            try {
                await run(...args);
            } catch (error) {
                deps.log.error(`${name} failed: ${String(error)}`);
                void vscode.window.showErrorMessage(`tokengauge: ${name} failed: ${String(error)}`);
            }
        };
    return [
        vscode.commands.registerCommand(Commands.setApiKey, guarded('Set API Key', (p, k) => setApiKey(deps, p, k))),
        vscode.commands.registerCommand(Commands.showUsage, guarded('Show Usage', () => showUsage(deps))),
        vscode.commands.registerCommand(Commands.restartServer, guarded('Restart Server', deps.restart)),
        vscode.commands.registerCommand(Commands.showLogs, () => deps.log.show()),
    ];
}
