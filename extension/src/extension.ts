/** tokengauge's entry point: wiring only. */

import { createHash } from 'node:crypto';
import * as vscode from 'vscode';

import { CountRecording } from './api';
import { ApiKeys } from './apiKeys';
import { registerCommands } from './commands';
import { CountInput, CountMemo, CountResult } from './countMemo';
import { Methods, Notifications, VENDOR } from './protocol';
import { TokenGaugeProvider } from './provider';
import { PythonNotFoundError } from './python';
import { ServerConnection } from './server';
import { affectsServer, readSettings } from './settings';
import { ServerStatus, StatusBar } from './statusBar';
import { currentToolStrings } from './toolStrings';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** What the extension offers other extensions (and its own tests). */
export interface TokenGaugeApi {
    /** The status-bar text now, if a response has reported usage. */
    statusText(): string | undefined;
    /** The server's usage report (`tokenGauge/usage`). */
    usage(): Promise<Record<string, unknown>>;
    /** How many `provideTokenCount` calls VS Code made since activation. */
    tokenCountCalls(): number;
    /** For tests and the counting benchmark (bench/count_compare.sh); nothing here runs unless called. */
    diagnostics: TokenGaugeDiagnostics;
}

export interface TokenGaugeDiagnostics {
    /** The provider registered with VS Code (the benchmark calls its `provideTokenCount` directly). */
    readonly provider: vscode.LanguageModelChatProvider;
    /** Keep the inputs of the next `provideTokenCount` calls (DESIGN §3 JSON), at most `maxCalls`. */
    startCountRecording(maxCalls?: number): void;
    /** Stop recording and hand over the inputs kept. */
    stopCountRecording(): CountRecording;
    /** Entries in the extension's count memo. */
    memoEntries(): number;
    /** Empty the count memo (a new session's memo, before the server's warmCounts refill it). */
    clearCountMemo(): void;
    /** Ask the server for counts directly, past the memo (the benchmark's first answer of a new server). */
    countUncached(modelId: string, inputs: string[]): Promise<CountResult>;
    /** The strings the memo counts ahead with a model's first miss: every key and string of `vscode.lm.tools`' schemas. */
    companionStrings(): readonly string[];
}

export async function activate(context: vscode.ExtensionContext): Promise<TokenGaugeApi> {
    const log = vscode.window.createOutputChannel('tokengauge', { log: true });
    const server = new ServerConnection(context, log);
    const keys = new ApiKeys(context.secrets);
    const statusBar = new StatusBar(readSettings().statusBarEnabled);
    const companionStrings = currentToolStrings(() => vscode.lm.tools);
    const countRequest = (modelId: string, inputs: CountInput[]): Promise<CountResult> =>
        server.request<CountResult>(Methods.countTokens, { modelId, inputs });
    const memo = new CountMemo(
        countRequest,
        sha256,
        // Copilot counts every key and string of the tools it sends; those it can send are registered here.
        { companions: companionStrings },
    );
    const provider = new TokenGaugeProvider(server, keys, memo);

    server.onNotification(Notifications.chatPart, (params) => provider.onChatPart(params));
    server.onNotification(Notifications.status, (params) => statusBar.update(params as ServerStatus));
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

    const start = async (): Promise<void> => {
        try {
            await server.start(readSettings());
        } catch (error) {
            log.error(String(error));
            const action = error instanceof PythonNotFoundError ? 'Set Python Path' : 'Show Logs';
            const choice = await vscode.window.showErrorMessage(`tokengauge: ${String(error)}`, action);
            if (choice === 'Set Python Path') {
                await vscode.commands.executeCommand('workbench.action.openSettings', 'tokenGauge.pythonPath');
            } else if (choice === 'Show Logs') {
                log.show();
            }
        }
    };

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
    return {
        statusText: () => statusBar.text,
        usage: () => server.request<Record<string, unknown>>(Methods.usage, {}),
        tokenCountCalls: () => provider.tokenCountCalls,
        diagnostics: {
            provider,
            startCountRecording: (maxCalls) => provider.recorder.start(maxCalls),
            stopCountRecording: () => provider.recorder.stop(),
            memoEntries: () => memo.size,
            clearCountMemo: () => memo.clear(),
            companionStrings,
            countUncached: countRequest,
        },
    };
}
