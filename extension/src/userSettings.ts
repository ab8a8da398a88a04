/**
 * The settings no workspace may set: those that name where requests (and so the keys) go, the
 * program the extension runs, and how long the history that all windows share is kept. The
 * manifest gives them `application` scope (`machine` for the Python, a path on the machine the server
 * runs on), which no folder may set; they are read here from the user's (or, for the Python, the remote
 * machine's) settings or the defaults only, never from a workspace, even if VS Code handed one over.
 * (Not `machine` for the others: in a remote window VS Code ignores a machine-scoped value of the
 * local user settings, so providers set there would vanish over SSH, WSL or in code-server.)
 */

import type * as vscode from 'vscode';

import type { ProviderSettings } from './protocol';

/** The keys (under `tokenGauge.`) read from user settings only. */
export const USER_ONLY = ['providers', 'pythonPath', 'usageRetentionDays'] as const;

/** What of a configuration section `userOnly` needs (a `vscode.WorkspaceConfiguration`). */
export type Inspectable = Pick<vscode.WorkspaceConfiguration, 'inspect'>;

export interface UserOnlySettings {
    providers: ProviderSettings[];
    pythonPath: string;
    usageRetentionDays: number;
}

/** The user's value of `key`, else its default, else `fallback`: never a workspace's or a folder's. */
export function userValue<T>(config: Inspectable, key: string, fallback: T): T {
    const seen = config.inspect<T>(key);
    return seen?.globalValue ?? seen?.defaultValue ?? fallback;
}

/** The settings of `USER_ONLY`, from the user's settings or the defaults. */
export function userOnly(config: Inspectable): UserOnlySettings {
    return {
        providers: userValue<ProviderSettings[]>(config, 'providers', []),
        pythonPath: userValue(config, 'pythonPath', ''),
        usageRetentionDays: userValue(config, 'usageRetentionDays', 30),
    };
}
