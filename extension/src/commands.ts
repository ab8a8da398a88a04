/** The commands: add a provider, set an API key, open the dashboard, copy diagnostics, restart the server, show logs. */

import * as vscode from 'vscode';

import { ApiKeys } from './apiKeys';
import { DashboardPanel } from './dashboardPanel';
import { messageOf } from './errors';
import { Preset } from './presets';
import { KeyCheck, Methods } from './protocol';
import { ServerConnection } from './server';
import { ISettings, ProviderSetting, saveProviders } from './settings';

/** The command ids (package.json `contributes.commands`). */
export const Commands = {
    addProvider: 'tokenGauge.addProvider',
    setApiKey: 'tokenGauge.setApiKey',
    openDashboard: 'tokenGauge.openDashboard',
    copyDiagnostics: 'tokenGauge.copyDiagnostics',
    restartServer: 'tokenGauge.restartServer',
    showLogs: 'tokenGauge.showLogs',
} as const;

/** VS Code's own editor of language models (Manage Models). */
export const MANAGE_MODELS = 'workbench.action.chat.manage';

export interface CommandDeps {
    keys: ApiKeys;
    server: ServerConnection;
    log: vscode.LogOutputChannel;
    settings: () => ISettings;
    presets: Preset[];
    restart: () => Promise<void>;
    /** How many models VS Code is offered now. */
    modelCount: () => Promise<number>;
    dashboard: DashboardPanel;
    extensionVersion: string;
}

const ENTER_AGAIN = 'Enter Again';

/** Ask the provider whether it accepts `key`; say what it answered. */
async function checkKey(deps: CommandDeps, providerId: string, key: string): Promise<KeyCheck> {
    const check = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Token Gauge: checking the API key with ${providerId}…` },
        () => deps.server.request(Methods.checkKey, { providerId, apiKey: key }),
    );
    deps.log.info(`API key check for ${providerId}: ${check.message}`);
    return check;
}

/** Tell the person what the check found; true when they asked to enter the key again. */
async function reportCheck(check: KeyCheck): Promise<boolean> {
    if (check.accepted === true) {
        void vscode.window.showInformationMessage(`Token Gauge: ${check.message}`);
        return false;
    }
    const show = check.accepted === false ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    return (await show(`Token Gauge: ${check.message}`, ENTER_AGAIN)) === ENTER_AGAIN;
}

async function askKey(providerId: string, optional: boolean): Promise<string | undefined> {
    const entered = await vscode.window.showInputBox({
        title: `Token Gauge: API key for ${providerId}`,
        prompt: optional
            ? "Kept in VS Code's secret storage. Leave empty if the server needs none."
            : "Kept in VS Code's secret storage. Leave empty to remove it.",
        password: true,
        ignoreFocusOut: true,
    });
    return entered?.trim();
}

async function setApiKey(deps: CommandDeps, providerId?: unknown, key?: unknown): Promise<void> {
    // Called with (providerId, key) it stores without asking: tests and automation use this.
    if (typeof providerId === 'string' && typeof key === 'string') {
        await deps.keys.set(providerId, key);
        return;
    }
    const providers = deps.settings().providers.map((p) => p.id);
    const chosen =
        typeof providerId === 'string'
            ? providerId
            : providers.length === 1
              ? providers[0]
              : await vscode.window.showQuickPick(providers, { title: 'Token Gauge: API key for which provider?' });
    if (!chosen) {
        return;
    }
    for (;;) {
        const entered = await askKey(chosen, false);
        if (entered === undefined) {
            return;
        }
        await deps.keys.set(chosen, entered);
        if (!entered) {
            void vscode.window.showInformationMessage(`Token Gauge: API key for ${chosen} removed.`);
            return;
        }
        if (!(await reportCheck(await checkKey(deps, chosen, entered)))) {
            return;
        }
    }
}

function uniqueId(wanted: string, taken: string[]): string {
    let id = wanted;
    for (let n = 2; taken.includes(id); n++) {
        id = `${wanted}-${n}`;
    }
    return id;
}

async function askBaseUrl(preset: Preset): Promise<string | undefined> {
    const entered = await vscode.window.showInputBox({
        title: `Token Gauge: ${preset.label} base URL`,
        value: preset.baseUrl ?? '',
        placeHolder: 'https://HOST/v1',
        prompt: preset.baseUrl ? 'Press Enter to keep the usual URL.' : 'The URL your API is served at.',
        ignoreFocusOut: true,
        validateInput: (value) => {
            try {
                const url = new URL(value.trim());
                return url.protocol === 'http:' || url.protocol === 'https:' ? undefined : 'Use an http:// or https:// URL.';
            } catch {
                return 'Enter a URL such as https://api.example.com/v1.';
            }
        },
    });
    return entered?.trim();
}

/** The guided way to a provider in settings.json: preset, URL, key (checked), then its models. */
async function addProvider(deps: CommandDeps): Promise<void> {
    const picked = await vscode.window.showQuickPick(
        deps.presets.map((preset) => ({ label: preset.label, description: preset.baseUrl, preset })),
        { title: 'Token Gauge: Add Provider', placeHolder: 'Which API serves your models?', ignoreFocusOut: true },
    );
    if (!picked) {
        return;
    }
    const { preset } = picked;
    const baseUrl = await askBaseUrl(preset);
    if (baseUrl === undefined) {
        return;
    }
    const key = await askKey(preset.label, preset.local);
    if (key === undefined) {
        return;
    }
    const existing = deps.settings().providers;
    const entry: ProviderSetting = {
        id: uniqueId(preset.id, existing.map((p) => p.id)),
        preset: preset.id,
        ...(baseUrl === preset.baseUrl ? {} : { baseUrl }),
    };
    if (key) {
        await deps.keys.set(entry.id, key);
    }
    // The server restarts with the new settings; requests below wait for it.
    await saveProviders([...existing, entry]);
    const check = key || preset.local ? await checkKey(deps, entry.id, key) : undefined;
    if (check && check.accepted !== true) {
        await reportCheck(check);
        return;
    }
    const models = await deps.modelCount();
    void vscode.window.showInformationMessage(
        `Token Gauge: ${preset.label} added as "${entry.id}"${check ? `; ${check.message}` : ''}. ${models} models in the model picker.`,
    );
}

/** Settings as a bug report may show them: header values (they can hold credentials) left out. */
function shareableSettings(settings: ISettings): ISettings {
    const providers = settings.providers.map((provider) =>
        provider.headers
            ? { ...provider, headers: Object.fromEntries(Object.keys(provider.headers).map((name) => [name, '[redacted]'])) }
            : provider,
    );
    return { ...settings, providers };
}

async function copyDiagnostics(deps: CommandDeps): Promise<void> {
    const usage = await deps.server.request(Methods.usage, {});
    const text = JSON.stringify(
        {
            tokenGauge: deps.extensionVersion,
            vscode: vscode.version,
            platform: `${process.platform}-${process.arch}`,
            settings: shareableSettings(deps.settings()),
            server: usage,
        },
        null,
        2,
    );
    await vscode.env.clipboard.writeText(text);
    void vscode.window.showInformationMessage(
        `Token Gauge: diagnostics copied to the clipboard (${(text.length / 1024).toFixed(1)} KB): counts, model ids and settings; no API keys, no messages.`,
    );
}

async function restartServer(deps: CommandDeps): Promise<void> {
    await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Token Gauge: restarting the server…' },
        deps.restart,
    );
    if (deps.server.isRunning) {
        void vscode.window.showInformationMessage(
            `Token Gauge: the server restarted; ${await deps.modelCount()} models ready.`,
        );
    }
}

/** Register every command; failures are shown, never swallowed. */
export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
    const guarded =
        (name: string, run: (...args: unknown[]) => Promise<void> | void) =>
        async (...args: unknown[]): Promise<void> => {
            try {
                await run(...args);
            } catch (error) {
                deps.log.error(`${name} failed: ${messageOf(error)}`);
                void vscode.window.showErrorMessage(`Token Gauge: ${name} failed. ${messageOf(error)}`);
            }
        };
    return [
        vscode.commands.registerCommand(Commands.addProvider, guarded('Add Provider', () => addProvider(deps))),
        vscode.commands.registerCommand(Commands.setApiKey, guarded('Set API Key', (p, k) => setApiKey(deps, p, k))),
        vscode.commands.registerCommand(Commands.openDashboard, guarded('Open Dashboard', () => deps.dashboard.open())),
        vscode.commands.registerCommand(Commands.copyDiagnostics, guarded('Copy Diagnostics', () => copyDiagnostics(deps))),
        vscode.commands.registerCommand(Commands.restartServer, guarded('Restart Server', () => restartServer(deps))),
        vscode.commands.registerCommand(Commands.showLogs, () => deps.log.show()),
    ];
}
