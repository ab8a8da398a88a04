/**
 * One API key per provider, kept in VS Code's SecretStorage and nowhere else, bound to the base URL
 * it was given for: when the provider's URL has changed since, the key is not handed out (so it is
 * never sent to the new address) until the person confirms it or enters another one.
 */

import type * as vscode from 'vscode';

const PREFIX = 'tokenGauge.apiKey.';

/** What is stored for a provider: the key and the base URL it was given for. */
interface Stored {
    key: string;
    /** Undefined for a key stored before keys were bound (or before its provider was configured). */
    baseUrl?: string;
}

/** A stored key whose provider now points elsewhere. */
export interface MovedKey {
    providerId: string;
    /** The base URL the key was given for. */
    from: string;
    /** The provider's base URL now. */
    to: string;
}

function parse(value: string | undefined): Stored | undefined {
    if (!value) {
        return undefined;
    }
    try {
        const stored = JSON.parse(value) as Partial<Stored> | null;
        if (typeof stored?.key === 'string' && (stored.baseUrl === undefined || typeof stored.baseUrl === 'string')) {
            return { key: stored.key, baseUrl: stored.baseUrl };
        }
    } catch {
        // A key stored before keys were bound: the value is the key itself.
    }
    return { key: value };
}

/** A URL as compared: scheme and host in lower case, no trailing slash. */
function normalized(url: string): string {
    try {
        const parsed = new URL(url.trim());
        return `${parsed.protocol}//${parsed.username}:${parsed.password}@${parsed.host}${parsed.pathname.replace(/\/+$/, '')}${parsed.search}`;
    } catch {
        return url.trim().replace(/\/+$/, '');
    }
}

/** The host of `url` (never its user information), or the text itself when it is no URL. */
export function hostOf(url: string): string {
    try {
        return new URL(url).host || url;
    } catch {
        return url;
    }
}

/** What to tell the person about a moved key, and the action that sends it to the new address. */
export function movedKeyMessage({ providerId, from, to }: MovedKey): { message: string; confirm: string } {
    const [before, now] = [hostOf(from), hostOf(to)];
    const where = before === now ? `${from} to ${to}` : `${before} to ${now}`;
    return {
        message:
            `Token Gauge: ${providerId}'s base URL changed from ${where} since its API key was stored, ` +
            `so the key is not sent there. Enter the key for ${now}, or confirm that the stored key belongs there.`,
        confirm: `Use the Stored Key at ${now}`,
    };
}

export class ApiKeys {
    /** The keys handed out this session (the log redacts them). */
    readonly seen = new Set<string>();
    /** The moves already reported, one per provider and URL. */
    private readonly reported = new Set<string>();

    /**
     * @param urlOf the provider's base URL now (undefined for a provider not configured)
     * @param onMoved told once per provider and URL of a key that is not handed out because it moved
     */
    constructor(
        private readonly storage: vscode.SecretStorage,
        private readonly urlOf: (providerId: string) => string | undefined,
        private readonly onMoved: (moved: MovedKey) => void,
    ) {}

    /**
     * The provider's key, if it was given for the provider's base URL now; a key not yet bound is
     * bound to it now. Undefined when there is none, it was given for another URL, or the provider
     * is not configured (nothing says where the key would go).
     */
    async get(providerId: string): Promise<string | undefined> {
        const stored = parse(await this.storage.get(PREFIX + providerId));
        const url = this.urlOf(providerId);
        if (!stored || url === undefined) {
            return undefined;
        }
        if (stored.baseUrl === undefined) {
            await this.store(providerId, stored.key, url);
        } else if (normalized(stored.baseUrl) !== normalized(url)) {
            const move = `${providerId}\n${url}`;
            if (!this.reported.has(move)) {
                this.reported.add(move);
                this.onMoved({ providerId, from: stored.baseUrl, to: url });
            }
            return undefined;
        }
        this.seen.add(stored.key);
        return stored.key;
    }

    /** Store `key` for the provider's base URL now (an empty key removes it). */
    async set(providerId: string, key: string): Promise<void> {
        if (key) {
            this.seen.add(key);
            await this.store(providerId, key, this.urlOf(providerId));
        } else {
            await this.storage.delete(PREFIX + providerId);
        }
    }

    /** The person confirmed that the stored key belongs at the provider's base URL now. */
    async confirm(providerId: string): Promise<void> {
        const stored = parse(await this.storage.get(PREFIX + providerId));
        if (stored) {
            await this.store(providerId, stored.key, this.urlOf(providerId));
        }
    }

    private async store(providerId: string, key: string, baseUrl: string | undefined): Promise<void> {
        const stored: Stored = baseUrl === undefined ? { key } : { key, baseUrl };
        await this.storage.store(PREFIX + providerId, JSON.stringify(stored));
    }

    /** Call `listener` with the provider id whenever one of the keys is set or removed. */
    onDidChange(listener: (providerId: string) => void): vscode.Disposable {
        return this.storage.onDidChange((event) => {
            if (event.key.startsWith(PREFIX)) {
                listener(event.key.slice(PREFIX.length));
            }
        });
    }

    /** `{providerId: {apiKey}}` for the providers that have a key for their URL (for model discovery). */
    async all(providerIds: string[]): Promise<Record<string, { apiKey: string }>> {
        const entries = await Promise.all(providerIds.map(async (id) => [id, await this.get(id)] as const));
        return Object.fromEntries(
            entries.filter(([, key]) => key).map(([id, key]) => [id, { apiKey: key as string }]),
        );
    }
}

/** The base URL a settings provider's requests go to: its own, else its preset's. */
export function providerUrl(
    providers: { id: string; preset?: string | null; baseUrl?: string }[],
    presets: { id: string; baseUrl: string | undefined }[],
    providerId: string,
): string | undefined {
    const entry = providers.find((provider) => provider.id === providerId);
    if (!entry) {
        return undefined;
    }
    return entry.baseUrl?.trim() || presets.find((preset) => preset.id === entry.preset)?.baseUrl || '';
}
