/**
 * Providers configured in VS Code's own UI (Chat: Manage Language Models → Add Models → Token
 * Gauge). VS Code keeps each one (a "group": its name, and the values of the manifest's
 * `configuration`, the API key in its secret storage) and hands its configuration to
 * `provideLanguageModelChatInformation`; the group's name is the provider's id.
 */

import { PlainError } from './errors';
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
