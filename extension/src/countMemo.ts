/**
 * Memo and batching for token counts: Copilot asks ~4,900 times per agent turn, one call at a
 * time, so every answer the extension can give without crossing the pipe is time the user gets
 * back. Strings are memoized by their raw tokenizer count (valid across calibration: the count is
 * `ceil(raw × scale)`); messages by their final count, dropped when the server's epoch changes.
 * Calls that arrive while a request is in flight are sent together in one batch. The first miss
 * for a model also carries `companions` (strings likely to be asked next: the tools' schemas),
 * so they are counted in that one round trip instead of one round trip each; when the companions
 * change (a new array: tools were registered), the next miss carries the new ones.
 */

export type CountInput = string | object;

export interface CountResult {
    tokens: number[];
    raw: number[];
    epoch: number;
    scale: number;
}

export type CountRequest = (modelId: string, inputs: CountInput[]) => Promise<CountResult>;

export type Digest = (text: string) => string;

interface Pending {
    input: CountInput;
    key: string;
    resolve: (tokens: number) => void;
    reject: (error: unknown) => void;
}

/** Strings worth counting ahead of time; the same array for as long as they stay the same (called on every miss). */
export type Companions = () => readonly string[];

/** `ceil(raw × scale)` exactly as the server computes it. */
export function scaled(raw: number, scale: number): number {
    return raw > 0 ? Math.ceil(raw * scale - 1e-9) : 0;
}

function memoKey(modelId: string, digest: string): string {
    return `${modelId}\u0000${digest}`;
}

export class CountMemo {
    private readonly strings = new Map<string, number>();
    private readonly messages = new Map<string, number>();
    private readonly scales = new Map<string, number>();
    private readonly queues = new Map<string, Pending[]>();
    private readonly inFlight = new Set<string>();
    /** Per model, the companions that went (or are going) to the server since the memo was last cleared. */
    private readonly accompanied = new Map<string, readonly string[]>();
    private epoch: number | undefined;

    private readonly maxEntries: number;
    private readonly companions: Companions;

    constructor(
        private readonly request: CountRequest,
        private readonly digest: Digest,
        options: { maxEntries?: number; companions?: Companions } = {},
    ) {
        this.maxEntries = options.maxEntries ?? 50_000;
        this.companions = options.companions ?? (() => []);
    }

    /** The count of one input for one model, from the memo or the server. */
    count(modelId: string, input: CountInput): Promise<number> {
        const isString = typeof input === 'string';
        const key = this.keyOf(modelId, isString ? input : JSON.stringify(input));
        const scale = this.scales.get(modelId);
        if (isString && scale !== undefined) {
            const raw = this.strings.get(key);
            if (raw !== undefined) {
                return Promise.resolve(scaled(raw, scale));
            }
        } else if (!isString) {
            const tokens = this.messages.get(key);
            if (tokens !== undefined) {
                return Promise.resolve(tokens);
            }
        }
        return new Promise((resolve, reject) => {
            const queue = this.queues.get(modelId) ?? [];
            queue.push({ input, key, resolve, reject });
            const companions = this.companions();
            if (this.accompanied.get(modelId) !== companions) {
                queue.push(...this.companionsOf(modelId, companions, key));
            }
            this.queues.set(modelId, queue);
            if (!this.inFlight.has(modelId)) {
                void this.flush(modelId);
            }
        });
    }

    /** Fill the memo with raw string counts the server kept from earlier sessions. */
    prewarm(modelId: string, entries: Iterable<[string, number]>, scale: number): void {
        this.scales.set(modelId, scale);
        for (const [sha, raw] of entries) {
            this.remember(this.strings, memoKey(modelId, sha), raw);
        }
    }

    /** Forget every count (diagnostics: the benchmark's "new session" starts from an empty memo). */
    clear(): void {
        this.strings.clear();
        this.messages.clear();
        this.scales.clear();
        this.accompanied.clear();
        this.epoch = undefined;
    }

    get size(): number {
        return this.strings.size + this.messages.size;
    }

    private keyOf(modelId: string, text: string): string {
        return memoKey(modelId, this.digest(text));
    }

    /** The model's companion strings not yet memoized (nor `askedKey`), as pending entries nobody awaits. */
    private companionsOf(modelId: string, companions: readonly string[], askedKey: string): Pending[] {
        this.accompanied.set(modelId, companions);
        const retryLater = (): void => {
            this.accompanied.delete(modelId); // the batch failed: the next miss brings them again
        };
        const pending = new Map<string, Pending>();
        for (const text of companions) {
            const key = this.keyOf(modelId, text);
            if (key !== askedKey && !this.strings.has(key) && !pending.has(key)) {
                pending.set(key, { input: text, key, resolve: () => undefined, reject: retryLater });
            }
        }
        return [...pending.values()];
    }

    private async flush(modelId: string): Promise<void> {
        this.inFlight.add(modelId);
        try {
            for (;;) {
                const batch = this.queues.get(modelId) ?? [];
                this.queues.delete(modelId);
                if (batch.length === 0) {
                    return;
                }
                await this.send(modelId, batch);
            }
        } finally {
            this.inFlight.delete(modelId);
        }
    }

    private async send(modelId: string, batch: Pending[]): Promise<void> {
        try {
            const result = await this.request(modelId, batch.map((p) => p.input));
            this.observeEpoch(result.epoch);
            this.scales.set(modelId, result.scale);
            batch.forEach((pending, i) => {
                const map = typeof pending.input === 'string' ? this.strings : this.messages;
                const value = typeof pending.input === 'string' ? result.raw[i] : result.tokens[i];
                this.remember(map, pending.key, value);
                pending.resolve(result.tokens[i]);
            });
        } catch (error) {
            batch.forEach((pending) => pending.reject(error));
        }
    }

    private observeEpoch(epoch: number): void {
        if (this.epoch !== undefined && epoch !== this.epoch) {
            this.messages.clear(); // message counts may now come from new API actuals
        }
        this.epoch = epoch;
    }

    private remember(map: Map<string, number>, key: string, value: number): void {
        if (map.size >= this.maxEntries) {
            const oldest = map.keys().next();
            if (!oldest.done) {
                map.delete(oldest.value);
            }
        }
        map.set(key, value);
    }
}
