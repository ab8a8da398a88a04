/**
 * Providers configured in VS Code's own UI (Chat: Manage Language Models → Add Models → Token
 * Gauge). VS Code keeps each one (a "group": the name the person gave it, and the values of the
 * manifest's `configuration`, the API key in its secret storage) and hands its values, not its
 * name, to `provideLanguageModelChatInformation`; the name is read from VS Code's list of groups
 * (`chatLanguageModels.json`), which it asks in order. A group's provider id is its name in a
 * namespace of its own, so it never shares an id with a provider of settings.
 */

import { PlainError } from './errors';
import { Preset } from './presets';
import { ProviderSettings } from './protocol';
import { providerSecrets } from './redact';

/** What the Add Models form asks for (package.json `languageModelChatProviders[].configuration`). */
export interface GroupConfiguration {
    preset?: string;
    baseUrl?: string;
    apiKey?: string;
    headers?: string;
}

/** A group as VS Code lists it: its name and its values (the key as a reference to its secret). */
export interface ListedGroup {
    name: string;
    values: GroupConfiguration;
}

/** What sets a Manage Models provider's id apart from every id of settings. */
export const MANAGED = ' (Manage Models)';

/** The provider id of the group named `name`. */
export function managedId(name: string): string {
    return `${name}${MANAGED}`;
}

/** The group's name again, from its provider id (undefined for a provider of settings). */
export function groupOf(providerId: string): string | undefined {
    return providerId.endsWith(MANAGED) ? providerId.slice(0, -MANAGED.length) : undefined;
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
export function groupProvider(providerId: string, configuration: GroupConfiguration): ProviderSettings {
    const baseUrl = configuration.baseUrl?.trim();
    return {
        id: providerId,
        ...(configuration.preset ? { preset: configuration.preset } : {}),
        ...(baseUrl ? { baseUrl } : {}),
        headers: parseHeaders(configuration.headers),
    };
}

/** Every credential a group's values hold: its key, its secret headers' values, its URL's parts. */
export function groupSecrets(configuration: GroupConfiguration): string[] {
    let headers: Record<string, string>;
    try {
        headers = parseHeaders(configuration.headers);
    } catch {
        // Headers that cannot be read: every value-like part of them.
        headers = Object.fromEntries((configuration.headers ?? '').split(/[;:]/).map((part, i) => [`h${i}`, part.trim()]));
    }
    const { apiKey, baseUrl } = configuration;
    return [...(apiKey ? [apiKey] : []), ...providerSecrets({ id: '', ...(baseUrl ? { baseUrl } : {}), headers })];
}

/**
 * A name for a group VS Code's list does not give: the API's label at its usual address, else the
 * host it is at.
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

/** Whether two groups' values are the same but for their keys (held apart, as references). */
function sameValues(a: GroupConfiguration, b: GroupConfiguration): boolean {
    const text = (value: string | undefined): string => value?.trim() ?? '';
    return text(a.preset) === text(b.preset) && text(a.baseUrl) === text(b.baseUrl) && text(a.headers) === text(b.headers);
}

/**
 * The name of the group VS Code hands over as the `index`th of its pass: that one of `listed` if
 * its values are these, else the only one with these values; undefined when the list cannot say.
 */
export function listedName(listed: ListedGroup[], index: number, configuration: GroupConfiguration): string | undefined {
    const inOrder = listed[index];
    if (inOrder && sameValues(inOrder.values, configuration)) {
        return inOrder.name;
    }
    const alike = listed.filter((group) => sameValues(group.values, configuration));
    return alike.length === 1 ? alike[0].name : undefined;
}

/**
 * The groups seen this session: each a provider id and its values. A group is named as in VS
 * Code's list; one the list does not give is named by `groupName`, and two of those with the same
 * API and address but different keys get `name 2`, `name 3`, in the order VS Code asks for them.
 */
export class Groups {
    private readonly values = new Map<string, GroupConfiguration>();
    /** The position of the next group in VS Code's pass over its list. */
    private next = 0;

    /** `listed`: VS Code's groups of this extension, in order; `taken`: the ids of settings. */
    constructor(
        private readonly listed: () => Promise<ListedGroup[]>,
        private readonly taken: () => string[],
    ) {}

    /** VS Code begins a pass over its groups (it asks for the models of settings first). */
    startPass(): void {
        this.next = 0;
    }

    /** VS Code handed over a group that is no provider (one of its own, holding model picks). */
    skip(): void {
        this.next++;
    }

    /** The provider id for a group with these values (remembered for its chats). */
    async bind(configuration: GroupConfiguration, presets: Preset[]): Promise<string> {
        const index = this.next++;
        const named = listedName(await this.listed(), index, configuration);
        const name = named ?? groupName(configuration, presets);
        const taken = this.taken();
        const key = configuration.apiKey || undefined;
        for (let n = 1; ; n++) {
            const id = managedId(n === 1 ? name : `${name} ${n}`);
            const bound = this.values.get(id);
            // A listed name is the group's own: its values may change, its name stays.
            if (!taken.includes(id) && (named !== undefined || !bound || (bound.apiKey || undefined) === key)) {
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

    get ids(): string[] {
        return [...this.values.keys()];
    }
}

/** VS Code's groups of `vendor` in its list (`chatLanguageModels.json`); none for a list it cannot read. */
export function parseListedGroups(text: string, vendor: string): ListedGroup[] {
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch {
        return [];
    }
    if (!Array.isArray(parsed)) {
        return [];
    }
    const strings = (entry: Record<string, unknown>): GroupConfiguration =>
        Object.fromEntries(
            (['preset', 'baseUrl', 'apiKey', 'headers'] as const)
                .filter((field) => typeof entry[field] === 'string')
                .map((field) => [field, entry[field]]),
        );
    return parsed
        .filter((entry): entry is Record<string, unknown> => typeof entry === 'object' && entry !== null)
        .filter((entry) => entry.vendor === vendor && typeof entry.name === 'string')
        .map((entry) => ({ name: entry.name as string, values: strings(entry) }));
}
