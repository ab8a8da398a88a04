/**
 * Keys set with Token Gauge: Set API Key for a Manage Models group. VS Code keeps a group's own key
 * and offers no way to change it when the group is alone; a key set here replaces it for as long as
 * the group stays as it was when the key was set (the same key in VS Code, the same API and
 * address): one changed in Manage Models wins again. Kept in the secret storage, never elsewhere.
 */

import { createHash } from 'node:crypto';

import { GroupConfiguration } from './groups';

const PREFIX = 'tokenGauge.groupKey.';

/** The part of VS Code's secret storage used here. */
export interface Secrets {
    get(key: string): PromiseLike<string | undefined>;
    store(key: string, value: string): PromiseLike<void>;
    delete(key: string): PromiseLike<void>;
}

/** What a key set here replaces: the group as VS Code hands it over, as a digest. */
function replaced(configuration: GroupConfiguration): string {
    const { apiKey, preset, baseUrl } = configuration;
    return createHash('sha256')
        .update(JSON.stringify([apiKey ?? '', preset ?? '', baseUrl?.trim() ?? '']))
        .digest('hex');
}

export class GroupKeys {
    /** The keys set here that were used or set this session (the log and diagnostics redact them). */
    readonly seen = new Set<string>();

    constructor(private readonly secrets: Secrets) {}

    /** The group's values with the key set here, while it replaces the one VS Code holds. */
    async apply(providerId: string, configuration: GroupConfiguration): Promise<GroupConfiguration> {
        const stored = await this.secrets.get(PREFIX + providerId);
        if (stored === undefined) {
            return configuration;
        }
        const { apiKey, replaces } = JSON.parse(stored) as { apiKey: string; replaces: string };
        if (replaces !== replaced(configuration)) {
            // Changed in Manage Models since: VS Code's values are the person's last word.
            await this.secrets.delete(PREFIX + providerId);
            return configuration;
        }
        this.seen.add(apiKey);
        return { ...configuration, apiKey };
    }

    /** Use `apiKey` for the group that VS Code hands over as `configuration` (empty: VS Code's again). */
    async set(providerId: string, configuration: GroupConfiguration, apiKey: string): Promise<void> {
        if (!apiKey) {
            await this.secrets.delete(PREFIX + providerId);
            return;
        }
        this.seen.add(apiKey);
        await this.secrets.store(PREFIX + providerId, JSON.stringify({ apiKey, replaces: replaced(configuration) }));
    }
}
