/** One API key per provider, kept in VS Code's SecretStorage and nowhere else. */

import * as vscode from 'vscode';

const PREFIX = 'tokenGauge.apiKey.';

export class ApiKeys {
    constructor(private readonly storage: vscode.SecretStorage) {}

    get(providerId: string): Thenable<string | undefined> {
        return this.storage.get(PREFIX + providerId);
    }

    async set(providerId: string, key: string): Promise<void> {
        if (key) {
            await this.storage.store(PREFIX + providerId, key);
        } else {
            await this.storage.delete(PREFIX + providerId);
        }
    }

    /** Call `listener` with the provider id whenever one of the keys is set or removed. */
    onDidChange(listener: (providerId: string) => void): vscode.Disposable {
        return this.storage.onDidChange((event) => {
            if (event.key.startsWith(PREFIX)) {
                listener(event.key.slice(PREFIX.length));
            }
        });
    }

    /** `{providerId: {apiKey}}` for the providers that have a key (for model discovery). */
    async all(providerIds: string[]): Promise<Record<string, { apiKey: string }>> {
        const entries = await Promise.all(
            providerIds.map(async (id) => [id, await this.get(id)] as const),
        );
        return Object.fromEntries(
            entries.filter(([, key]) => key).map(([id, key]) => [id, { apiKey: key as string }]),
        );
    }
}
