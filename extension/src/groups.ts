/**
 * Providers configured in VS Code's own UI (Chat: Manage Language Models → Add Models → Token
 * Gauge). VS Code keeps each one (a "group": its name, and the values of the manifest's
 * `configuration`, the API key in its secret storage) and hands its values, not its name, to
 * `provideLanguageModelChatInformation`; the provider is named after its API and address.
 */

import { PlainError } from './errors';
import { Preset } from './presets';
import { ProviderEntry } from './protocol';

/** What the Add Models form asks for (package.json `languageModelChatProviders[].configuration`). */
export interface GroupConfiguration {
    preset?: string;
    baseUrl?: string;
    apiKey?: string;
    headers?: string;
}

/** `Name: value; Name2: value2` as a header map; a pair without a name or colon is an error. */
export function parseHeaders(text: string | undefined): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const pair of (text ?? '').split(';')) {
        if (!pair.trim()) {
            continue;
        }
        const colon = pair.indexOf(':');
        const name = colon > 0 ? pair.slice(0, colon).trim() : '';
        if (!name) {
            throw new PlainError(
                `The extra header "${pair.trim()}" has no name. Write each as Name: value, separated by semicolons.`,
            );
        }
        headers[name] = pair.slice(colon + 1).trim();
    }
    return headers;
}

/** The server's provider entry for a group. */
export function groupProvider(group: string, configuration: GroupConfiguration): ProviderEntry {
    const baseUrl = configuration.baseUrl?.trim();
    return {
        id: group,
        ...(configuration.preset ? { preset: configuration.preset } : {}),
        ...(baseUrl ? { baseUrl } : {}),
        headers: parseHeaders(configuration.headers),
    };
}

/**
 * The provider's name for a group: the API's label at its usual address, else the host it is at
 * (short: Manage Models shows a listing error in one narrow cell, and the group's name above it).
 */
export function groupName(configuration: GroupConfiguration, presets: Preset[]): string {
    const preset = presets.find((p) => p.id === configuration.preset);
    const url = configuration.baseUrl?.trim();
    if (!url || url === preset?.baseUrl) {
        return preset?.label ?? configuration.preset ?? 'API';
    }
    try {
        return new URL(url).host;
    } catch {
        return url;
    }
}

/**
 * The groups seen this session: each a provider id and its key. Two groups with the same API and
 * address but different keys get `name (2)`, `name (3)`, in the order VS Code asks for them.
 */
export class Groups {
    private readonly values = new Map<string, GroupConfiguration>();

    /** The provider id for a group with these values (remembered for its chats). */
    bind(configuration: GroupConfiguration, presets: Preset[]): string {
        const name = groupName(configuration, presets);
        const key = configuration.apiKey || undefined;
        for (let n = 1; ; n++) {
            const id = n === 1 ? name : `${name} (${n})`;
            const bound = this.values.get(id);
            if (!bound || (bound.apiKey || undefined) === key) {
                this.values.set(id, configuration);
                return id;
            }
        }
    }

    has(providerId: string): boolean {
        return this.values.has(providerId);
    }

    /** The group's values as VS Code last handed them over. */
    configuration(providerId: string): GroupConfiguration | undefined {
        return this.values.get(providerId);
    }

    key(providerId: string): string | undefined {
        return this.values.get(providerId)?.apiKey || undefined;
    }

    get ids(): string[] {
        return [...this.values.keys()];
    }
}
