/** tokengauge's entry point: wiring only. */

import { createHash } from 'node:crypto';
import * as vscode from 'vscode';

import { CountRecorder, createApi, TokenGaugeApi } from './api';
import { ApiKeys } from './apiKeys';
import { registerCommands } from './commands';
import { CountMemo, CountRequest } from './countMemo';
import { Methods, Notifications } from './protocol';
import { TokenGaugeProvider, VENDOR } from './provider';
import { ServerConnection } from './server';
import { affectsServer, readSettings } from './settings';
import { StatusBar } from './statusBar';
import { currentToolStrings } from './toolStrings';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export async function activate(context: vscode.ExtensionContext): Promise<TokenGaugeApi> {
    const log = vscode.window.createOutputChannel('tokengauge', { log: true });
    const server = new ServerConnection(context, log);
    const keys = new ApiKeys(context.secrets);
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
    const provider = new TokenGaugeProvider(server, keys, memo, recorder);

    server.onNotification(Notifications.chatPart, (params) => provider.onChatPart(params));
    server.onNotification(Notifications.status, (params) => statusBar.update(params));
    server.onNotification(Notifications.modelsChanged, () => provider.refresh());
    server.onNotification(Notifications.calibration, (params) => provider.onCalibration(params));

    // List the providers' models (a local Ollama needs no key); failures only cost the listing.
    const discover = (): void => {
        provider.discover(readSettings().providers.map((p) => p.id)).then(
            (report) => {
                for (const { providerId, models, error } of report.providers) {
                    log.info(error ? `${providerId}: no model list (${error})` : `${providerId}: ${models} models listed`);
                }
            },
            (error: unknown) => log.warn(`model discovery failed: ${String(error)}`),
        );
    };

    // After every (re)start, tell VS Code the models may have changed, list them and warm the memo.
    server.onRunning(() => {
        provider.refresh();
        discover();
        provider.prewarm().then(
            (warmed) => log.info(`count memo pre-warmed with ${warmed} remembered strings`),
            (error: unknown) => log.warn(`could not pre-warm the count memo: ${String(error)}`),
        );
    });

    const start = (): Promise<void> => server.startOrExplain(readSettings());
    context.subscriptions.push(
        log,
        server,
        statusBar,
        vscode.lm.registerLanguageModelChatProvider(VENDOR, provider),
        keys.onDidChange(discover),
        ...registerCommands({ keys, server, log, settings: readSettings, restart: start }),
        vscode.workspace.onDidChangeConfiguration((event) => {
            statusBar.setEnabled(readSettings().statusBarEnabled);
            if (affectsServer(event)) {
                void start();
            }
        }),
    );
    await start();
    return createApi({ server, statusBar, provider, recorder, memo, countUncached, companionStrings });
}
