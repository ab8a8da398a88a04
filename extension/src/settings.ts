/** The `tokenGauge.*` settings (ARCHITECTURE §6) in one interface, and the server's initializationOptions. */

import * as vscode from 'vscode';

import { workspaceNameOption } from './attribution';
import { LogLevel, ModelSettings, ProviderSettings, ServerSettings } from './protocol';
import { TelemetryOptions, telemetryOptions } from './telemetrySettings';
import { userOnly } from './userSettings';

const CONFIG_SECTION = 'tokenGauge';
/** Copilot Chat's own settings: its OpenTelemetry ones are followed (`telemetrySettings`). */
const COPILOT_SECTION = 'github.copilot.chat';

export interface ISettings {
    providers: ProviderSettings[];
    /** The user wrote no providers: the defaults serve (a local Ollama), unasked for. */
    defaultProviders: boolean;
    models: ModelSettings[];
    pythonPath: string;
    statusBarEnabled: boolean;
    logLevel: LogLevel;
    idleTimeout: number;
    responseTimeout: number;
    toolResultMaxTokens: number;
    deduplicateToolResults: boolean;
    maskToolResultsAfter: number;
    usageRetentionDays: number;
    telemetry: TelemetryOptions;
}

/**
 * Read the settings; the server validates entries (and logs what it skips). Where requests go, the
 * Python that runs and the history's retention come from user settings only (`userSettings`).
 */
export function readSettings(): ISettings {
    const config = vscode.workspace.getConfiguration(CONFIG_SECTION);
    return {
        ...userOnly(config),
        defaultProviders: config.inspect('providers')?.globalValue === undefined,
        models: config.get<ModelSettings[]>('models', []),
        statusBarEnabled: config.get<boolean>('statusBar.enabled', true),
        logLevel: config.get<LogLevel>('logLevel', 'info'),
        idleTimeout: config.get<number>('idleTimeout', 120),
        responseTimeout: config.get<number>('responseTimeout', 1800),
        toolResultMaxTokens: config.get<number>('toolResultMaxTokens', 0),
        deduplicateToolResults: config.get<boolean>('deduplicateToolResults', true),
        maskToolResultsAfter: config.get<number>('maskToolResultsAfter', 0),
        telemetry: telemetryOptions(config, vscode.workspace.getConfiguration(COPILOT_SECTION), process.env),
    };
}

/** What the server receives in `initializationOptions` (the workspace's name only when an attribution
 * tag names it). */
export function initializationOptions(settings: ISettings, storageDir: string, workspaceName?: string): ServerSettings {
    return {
        storageDir,
        // None written: the server's defaults (the manifest's), which it knows nobody asked for.
        ...(settings.defaultProviders ? {} : { providers: settings.providers }),
        models: settings.models,
        logLevel: settings.logLevel,
        idleTimeout: settings.idleTimeout,
        responseTimeout: settings.responseTimeout,
        toolResultMaxTokens: settings.toolResultMaxTokens,
        deduplicateToolResults: settings.deduplicateToolResults,
        maskToolResultsAfter: settings.maskToolResultsAfter,
        usageRetentionDays: settings.usageRetentionDays,
        telemetry: settings.telemetry,
        ...workspaceNameOption(settings.providers, workspaceName),
    };
}

/** Whether a configuration change needs the server restarted (everything but the status bar; and
 * Copilot's OpenTelemetry settings, which telemetry follows). */
export function affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
    return (
        (event.affectsConfiguration(CONFIG_SECTION) &&
            !event.affectsConfiguration(`${CONFIG_SECTION}.statusBar`)) ||
        event.affectsConfiguration(`${COPILOT_SECTION}.otel`)
    );
}

/** Write `tokenGauge.providers` to the user settings (the server restarts with them). */
export async function saveProviders(providers: ProviderSettings[]): Promise<void> {
    await vscode.workspace
        .getConfiguration(CONFIG_SECTION)
        .update('providers', providers, vscode.ConfigurationTarget.Global);
}
