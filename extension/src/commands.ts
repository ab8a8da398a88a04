/** The commands: add a provider, set an API key, open the dashboard, copy diagnostics, restart the server, show logs. */

import * as vscode from 'vscode';

import { ApiKeys } from './apiKeys';
import { DashboardPanel } from './dashboardPanel';
import { diagnosticsText, SeenGroup } from './diagnostics';
import { messageOf } from './errors';
import { groupOf } from './groups';
import { Preset } from './presets';
import { CheckKeyResult, Methods, ProviderSettings } from './protocol';
import { ServerConnection } from './server';
import { ISettings, saveProviders } from './settings';

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

/** The providers configured in Manage Models this session (the language model provider). */
export interface ManagedProviders {
    readonly groupProviderIds: string[];
    readonly seenGroups: SeenGroup[];
    readonly setGroupKeys: ReadonlySet<string>;
    setGroupKey(providerId: string, apiKey: string): Promise<void>;
}

export interface CommandDeps {
    keys: ApiKeys;
    server: ServerConnection;
    log: vscode.LogOutputChannel;
    settings: () => ISettings;
    presets: Preset[];
    restart: () => Promise<void>;
    /** How many models VS Code is offered now. */
    modelCount: () => Promise<number>;
    provider: ManagedProviders;
    dashboard: DashboardPanel;
    extensionVersion: string;
}

const ENTER_AGAIN = 'Enter Again';

/** Ask the provider whether it accepts `key`; say what it answered. */
async function checkKey(deps: CommandDeps, providerId: string, key: string): Promise<CheckKeyResult> {
    const check = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Token Gauge: checking the API key with ${providerId}…` },
        () => deps.server.request(Methods.checkKey, { providerId, apiKey: key }),
    );
    deps.log.info(`API key check for ${providerId}: ${check.message}`);
    return check;
}

/** Tell the person what the check found; true when they asked to enter the key again. */
async function reportCheck(check: CheckKeyResult): Promise<boolean> {
    if (check.accepted === true) {
        void vscode.window.showInformationMessage(`Token Gauge: ${check.message}`);
        return false;
    }
    const show = check.accepted === false ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    return (await show(`Token Gauge: ${check.message}`, ENTER_AGAIN)) === ENTER_AGAIN;
}

/** What an empty answer does: nothing to say for a new key; for a key there is, what becomes of it. */
type EmptyKey = 'none' | 'needsNone' | 'removes' | 'restoresManaged';

const EMPTY_KEY: Record<EmptyKey, string> = {
    none: '',
    needsNone: ' Leave empty if the server needs none.',
    removes: ' Leave empty to remove it.',
    restoresManaged: ' Leave empty to use the key it has in Manage Models again.',
};

async function askKey(name: string, empty: EmptyKey): Promise<string | undefined> {
    const entered = await vscode.window.showInputBox({
        title: `Token Gauge: API key for ${name}`,
        prompt: `Kept in VS Code's secret storage.${EMPTY_KEY[empty]}`,
        password: true,
        ignoreFocusOut: true,
    });
    return entered?.trim();
}

/** The providers of settings the person wrote (not the default local Ollama, which needs no key). */
function configuredProviders(deps: CommandDeps): string[] {
    const providers = vscode.workspace.getConfiguration('tokenGauge').inspect('providers');
    const written = providers?.globalValue ?? providers?.workspaceValue ?? providers?.workspaceFolderValue;
    return written === undefined ? [] : deps.settings().providers.map((p) => p.id);
}

/** Ask which provider, by the names the person knows: the ids of settings, the groups' names. */
async function pickProvider(deps: CommandDeps): Promise<string | undefined> {
    const items = [
        ...configuredProviders(deps).map((id) => ({ label: id, description: 'tokenGauge.providers', id })),
        ...deps.provider.groupProviderIds.map((id) => ({ label: groupOf(id) ?? id, description: 'Manage Models', id })),
    ];
    if (items.length === 0) {
        void vscode.window.showInformationMessage(
            'Token Gauge: no provider to set a key for yet. Add one in Chat: Manage Language Models → Add Models… → Token Gauge, or run Token Gauge: Add Provider.',
        );
        return undefined;
    }
    if (items.length === 1) {
        return items[0].id;
    }
    const picked = await vscode.window.showQuickPick(items, { title: 'Token Gauge: API key for which provider?' });
    return picked?.id;
}

async function setApiKey(deps: CommandDeps, providerId?: unknown, key?: unknown): Promise<void> {
    // Called with (providerId, key) it stores without asking: tests and automation use this.
    if (typeof providerId === 'string' && typeof key === 'string') {
        await storeKey(deps, providerId, key);
        return;
    }
    const chosen = typeof providerId === 'string' ? providerId : await pickProvider(deps);
    if (!chosen) {
        return;
    }
    const group = groupOf(chosen);
    const empty = group !== undefined ? 'restoresManaged' : (await deps.keys.get(chosen)) ? 'removes' : 'none';
    for (;;) {
        const entered = await askKey(group ?? chosen, empty);
        if (entered === undefined || (!entered && empty === 'none')) {
            return;
        }
        const check = entered ? await checkKey(deps, chosen, entered) : undefined;
        await storeKey(deps, chosen, entered);
        if (!check) {
            void vscode.window.showInformationMessage(
                group !== undefined
                    ? `Token Gauge: ${group} uses the API key it has in Manage Models again.`
                    : `Token Gauge: API key for ${chosen} removed.`,
            );
            return;
        }
        if (!(await reportCheck(check))) {
            return;
        }
    }
}

/** Keep a provider's key: a group's in place of VS Code's, else in the secret storage. */
async function storeKey(deps: CommandDeps, providerId: string, key: string): Promise<void> {
    if (deps.provider.groupProviderIds.includes(providerId)) {
        await deps.provider.setGroupKey(providerId, key);
    } else {
        await deps.keys.set(providerId, key);
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

async function askName(preset: Preset, taken: string[]): Promise<string | undefined> {
    const entered = await vscode.window.showInputBox({
        title: `Token Gauge: a name for ${preset.label}`,
        value: uniqueId(preset.id, taken),
        prompt: 'Messages and tokenGauge.models refer to the provider by it.',
        ignoreFocusOut: true,
        validateInput: (value) =>
            !value.trim()
                ? 'Enter a name, e.g. work.'
                : taken.includes(value.trim())
                  ? `A provider is already named ${value.trim()}.`
                  : undefined,
    });
    return entered?.trim();
}

/** The guided way to a provider in settings.json: preset, name, URL, key (checked), then its models. */
async function addProvider(deps: CommandDeps): Promise<void> {
    const picked = await vscode.window.showQuickPick(
        deps.presets.map((preset) => ({ label: preset.label, description: preset.baseUrl, preset })),
        { title: 'Token Gauge: Add Provider', placeHolder: 'Which API serves your models?', ignoreFocusOut: true },
    );
    if (!picked) {
        return;
    }
    const { preset } = picked;
    const existing = deps.settings().providers;
    const id = await askName(preset, existing.map((p) => p.id));
    if (!id) {
        return;
    }
    const baseUrl = await askBaseUrl(preset);
    if (baseUrl === undefined) {
        return;
    }
    const key = await askKey(id, preset.local ? 'needsNone' : 'none');
    if (key === undefined) {
        return;
    }
    const entry: ProviderSettings = { id, preset: preset.id, ...(baseUrl === preset.baseUrl ? {} : { baseUrl }) };
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

async function copyDiagnostics(deps: CommandDeps): Promise<void> {
    const text = diagnosticsText({
        about: { tokenGauge: deps.extensionVersion, vscode: vscode.version, platform: `${process.platform}-${process.arch}` },
        settings: deps.settings(),
        groups: deps.provider.seenGroups,
        keys: [...deps.keys.seen, ...deps.provider.setGroupKeys],
        server: await deps.server.request(Methods.usage, {}),
    });
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
