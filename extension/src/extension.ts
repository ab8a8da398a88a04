/** Token Gauge's entry point: wiring only. */

import { createHash } from 'node:crypto';
import * as vscode from 'vscode';

import { CountRecorder, createApi, TokenGaugeApi } from './api';
import { ApiKeys, MovedKey, movedKeyMessage, providerUrl } from './apiKeys';
import { Commands, registerCommands } from './commands';
import { CountMemo, CountRequest } from './countMemo';
import { DashboardPanel } from './dashboardPanel';
import { messageOf } from './errors';
import { welcome } from './firstRun';
import { GroupKeys } from './groupKeys';
import { Groups, parseListedGroups } from './groups';
import { readPresets } from './presets';
import { Methods, Notifications } from './protocol';
import { stateCache, TokenGaugeProvider, VENDOR } from './provider';
import { watchInterpreter } from './pythonExtension';
import { redactingLog, settingsSecrets } from './redact';
import { ServerConnection } from './server';
import { affectsServer, readSettings } from './settings';
import { StatusBar } from './statusBar';
import { countAheadWhileToolsRegister } from './countAhead';
import { currentToolStrings } from './toolStrings';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function activate(context: vscode.ExtensionContext): TokenGaugeApi {
    const activatedAt = Date.now();
    const presets = readPresets(context.extension.packageJSON);
    const keys = new ApiKeys(
        context.secrets,
        (providerId) => providerUrl(readSettings().providers, presets, providerId),
        (moved) => void keyMoved(moved),
    );
    // Every line without a credential: the settings' (kept up to date below), the keys handed out,
    // and the Manage Models groups' (once the provider below knows them).
    let secretsOfSettings = settingsSecrets(readSettings());
    let groupSecrets = (): string[] => [];
    const log = redactingLog(vscode.window.createOutputChannel('Token Gauge', { log: true }), () => [
        ...secretsOfSettings,
        ...keys.seen,
        ...groupSecrets(),
    ]);
    const server = new ServerConnection(context, log);
    const statusBar = new StatusBar(readSettings().statusBarEnabled);
    const companionStrings = currentToolStrings(() => vscode.lm.tools);
    const countUncached: CountRequest = (modelId, inputs) =>
        server.request(Methods.countTokens, { modelId, inputs });
    const memo = new CountMemo(
        countUncached,
        sha256,
        // Copilot counts every key and string of the tools it sends; those it can send are registered here.
        { companions: companionStrings },
    );
    const recorder = new CountRecorder();
    // VS Code's list of Manage Models groups: the profile's, beside its globalStorage folder.
    const groupList = vscode.Uri.joinPath(context.globalStorageUri, '..', '..', 'chatLanguageModels.json');
    const groups = new Groups(
        async () =>
            vscode.workspace.fs.readFile(groupList).then(
                (bytes) => parseListedGroups(new TextDecoder().decode(bytes), VENDOR),
                () => [],
            ),
        () => readSettings().providers.map((p) => p.id),
    );
    const provider = new TokenGaugeProvider(
        server,
        keys,
        memo,
        recorder,
        stateCache(context.globalState),
        log,
        presets,
        groups,
        new GroupKeys(context.secrets),
    );
    groupSecrets = () => provider.groupSecrets();

    server.onNotification(Notifications.chatPart, (params) => provider.onChatPart(params));
    server.onNotification(Notifications.status, (params) => statusBar.update(params));
    server.onNotification(Notifications.modelsChanged, () => provider.refresh());
    server.onNotification(Notifications.calibration, (params) => provider.onCalibration(params));
    const dashboard = new DashboardPanel(context.extensionUri, server, log);
    server.onNotification(Notifications.activity, () => dashboard.onActivity());
    server.onNotification(Notifications.notice, ({ message, setting }) => {
        const actions = setting ? ['Open Settings'] : [];
        void vscode.window.showWarningMessage(`Token Gauge: ${message}`, ...actions).then(async (choice) => {
            if (choice && setting) {
                await vscode.commands.executeCommand('workbench.action.openSettings', setting);
            }
        });
    });

    /** A stored key whose provider now points elsewhere: it goes there only once the person says so. */
    const keyMoved = async (moved: MovedKey): Promise<void> => {
        const { message, confirm } = movedKeyMessage(moved);
        const choice = await vscode.window.showWarningMessage(message, 'Enter Key', confirm);
        if (choice === confirm) {
            await keys.confirm(moved.providerId);
        } else if (choice === 'Enter Key') {
            await vscode.commands.executeCommand(Commands.setApiKey, moved.providerId);
        }
    };

    /** A provider that wants a key (none set, or the one set was turned down): say so, offer to set it. */
    const askForKey = async (providerId: string, error: string): Promise<void> => {
        const choice = await vscode.window.showWarningMessage(`Token Gauge: ${error}`, 'Set API Key');
        if (choice === 'Set API Key') {
            await vscode.commands.executeCommand(Commands.setApiKey, providerId);
        }
    };

    // List the providers' models (a local Ollama needs no key); failures only cost the listing.
    let discovered: Promise<void> = Promise.resolve();
    /** `askForKeys` off after a key was set: Set API Key has said what the provider made of it. */
    const discover = (askForKeys = true): Promise<void> => {
        discovered = provider.discover(readSettings().providers.map((p) => p.id)).then(
            (report) => {
                for (const { providerId, models, error, keyRejected } of report.providers) {
                    if (error === null) {
                        log.info(`${providerId}: ${models} models listed`);
                    } else if (keyRejected && askForKeys) {
                        void askForKey(providerId, error); // the server has logged it
                    }
                }
            },
            (error: unknown) => log.warn(`model discovery failed: ${messageOf(error)}`),
        );
        return discovered;
    };
    const modelCount = async (): Promise<number> => {
        await discovered;
        return (await vscode.lm.selectChatModels({ vendor: VENDOR })).length;
    };

    // After every (re)start, tell VS Code the models may have changed, list them and warm the memo:
    // the strings the server remembers, then the tools' strings, counted ahead of the first turn.
    let firstRun = true;
    let starts = 0;
    let going = false;
    context.subscriptions.push({ dispose: () => (going = true) });
    server.onRunning(() => {
        const start = ++starts;
        provider.onServerRunning();
        void discover().then(async () => {
            if (firstRun && provider.groupProviderIds.length === 0 && (await modelCount()) === 0) {
                await welcome(context.globalState, presets, readSettings().providers);
            }
            firstRun = false;
        });
        provider
            .prewarm()
            .then(async (warmed) => {
                log.info(`count memo pre-warmed with ${warmed} remembered strings`);
                const ahead = await countAheadWhileToolsRegister(
                    () => provider.countAhead(),
                    () => going || start !== starts || !server.isRunning,
                );
                log.info(`tools' strings counted ahead: ${ahead}`);
            })
            .catch((error: unknown) => log.warn(`could not pre-warm the count memo: ${messageOf(error)}`));
    });
    server.onLost(() =>
        statusBar.update({
            text: '$(error) Token Gauge',
            tooltip: 'The Token Gauge server stopped. Run **Token Gauge: Restart Server**; **Token Gauge: Show Logs** says why.',
            severity: 'error',
        }),
    );

    server.onStartFailed((reason) =>
        statusBar.update({
            text: '$(error) Token Gauge',
            tooltip: `The Token Gauge server could not start. ${reason}`,
            severity: 'error',
        }),
    );

    const start = (): Promise<void> => server.startOrExplain(readSettings());
    context.subscriptions.push(
        log,
        server,
        statusBar,
        dashboard,
        dashboard.registerSerializer(),
        vscode.lm.registerLanguageModelChatProvider(VENDOR, provider),
        keys.onDidChange(() => void discover(false)),
        ...registerCommands({
            keys,
            server,
            log,
            settings: readSettings,
            presets,
            restart: start,
            modelCount,
            provider,
            dashboard,
            extensionVersion: String((context.extension.packageJSON as { version?: unknown }).version),
        }),
        watchInterpreter(() => void server.followInterpreter(readSettings()), log),
        vscode.workspace.onDidGrantWorkspaceTrust(() => void server.followInterpreter(readSettings())),
        vscode.workspace.onDidChangeConfiguration((event) => {
            secretsOfSettings = settingsSecrets(readSettings());
            statusBar.setEnabled(readSettings().statusBarEnabled);
            if (affectsServer(event)) {
                void start();
            }
        }),
    );
    // Not awaited: VS Code lists the models (from the last session's list) while the server starts,
    // and requests wait for it.
    void start();
    return createApi({ server, statusBar, provider, recorder, memo, countUncached, companionStrings, activatedAt, dashboard });
}
