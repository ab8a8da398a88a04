/**
 * Memo and batching for token counts: Copilot asks ~4,900 times per agent turn, one call at a
 * time, so every answer the extension can give without crossing the pipe is time the user gets
 * back. Strings are memoized by their raw tokenizer counts (total and CJK share), valid across
 * calibration: a string of text counts `ceil((raw − cjk) × text + cjk × cjk)`, a tool-schema string
 * `ceil(raw × tools)`, with the model's current scales (the server pushes new scales as soon as a
 * response or an error changed them). Tool-schema strings are those of the registered tools and of
 * the tools of the last chat requests: Copilot sums them by its own formula, and their scale makes
 * that sum land on the tools' true cost. Messages are memoized by their final count, dropped when
 * the server's epoch changes. Calls that arrive while a request is in flight are sent together in
 * one batch. The first miss for a model also carries `companions` (strings likely to be asked
 * next: the tools' schemas), so they are counted in that one round trip instead of one round trip
 * each; when the companions change (a new array: tools were registered), the next miss carries
 * the new ones. `countAhead` sends them before any miss: at start, so that the first turn ever
 * finds them counted.
 */

import { CountInput, CountTokensResult, Scales } from './protocol';

export type CountRequest = (modelId: string, inputs: CountInput[]) => Promise<CountTokensResult>;

export type Digest = (text: string) => string;

interface Pending {
    input: CountInput;
    /** The input's key in the memo (`memoKey`), and the text's own (`textKey`). */
    key: string;
    textKey: string;
    resolve: (tokens: number) => void;
    reject: (error: unknown) => void;
}

/** A string's raw counts: all tokens, and how many of them are CJK text. */
type Raw = readonly [total: number, cjk: number];

/** Strings worth counting ahead of time; the same array for as long as they stay the same (called on every miss). */
export type Companions = () => readonly string[];

const EPSILON = 1e-9;

/** `ceil(raw × scale)` exactly as the server computes it. */
export function scaled(raw: number, scale: number): number {
    return raw > 0 ? Math.ceil(raw * scale - EPSILON) : 0;
}

/** A string's count from its raw counts, exactly as the server computes it. */
export function stringTokens([total, cjk]: Raw, scales: Scales, tool: boolean): number {
    if (total <= 0) {
        return 0;
    }
    if (tool) {
        return scaled(total, scales.tools);
    }
    return Math.ceil((total - cjk) * scales.text + cjk * scales.cjk - EPSILON);
}

function memoKey(modelId: string, textKey: string): string {
    return `${modelId}\u0000${textKey}`;
}

/**
 * Texts up to this length are their own key; longer ones are keyed by their digest. A digest costs
 * a few microseconds a call, and Copilot asks ~4,700 times a turn, mostly short tool-schema
 * strings (the memo then holds at most `maxEntries` × this many characters of them).
 */
const SHORT_TEXT = 256;
/** Begins a digest key: a short text would have to begin with it and be a digest to be taken for one. */
const HASHED = '\u0000#';

export class CountMemo {
    private readonly strings = new Map<string, Raw>();
    private readonly messages = new Map<string, number>();
    private readonly scales = new Map<string, Scales>();
    private readonly queues = new Map<string, Pending[]>();
    private readonly inFlight = new Set<string>();
    /** Per model, the companions that went (or are going) to the server since the memo was last cleared. */
    private readonly accompanied = new Map<string, readonly string[]>();
    /** Digests of tool-schema strings: the companions seen, and the tools of chat requests. */
    private readonly toolStrings = new Set<string>();
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
        const textKey = this.textKey(isString ? input : JSON.stringify(input));
        const key = memoKey(modelId, textKey);
        const scales = this.scales.get(modelId);
        if (isString && scales !== undefined) {
            const raw = this.strings.get(key) ?? this.prewarmed(modelId, input, key);
            if (raw !== undefined) {
                return Promise.resolve(stringTokens(raw, scales, this.toolStrings.has(textKey)));
            }
        } else if (!isString) {
            const tokens = this.messages.get(key);
            if (tokens !== undefined) {
                return Promise.resolve(tokens);
            }
        }
        return new Promise((resolve, reject) => {
            const queue = this.queues.get(modelId) ?? [];
            queue.push({ input, key, textKey, resolve, reject });
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

    /**
     * Count the model's companions now, unless they went to the server already: how many were sent
     * (0 when none were new), once they are counted. If the server fails them, this rejects and
     * the next miss brings them again.
     */
    async countAhead(modelId: string): Promise<number> {
        const companions = this.companions();
        if (this.accompanied.get(modelId) === companions) {
            return 0;
        }
        let settle: (error?: unknown) => void = () => undefined;
        const counted = new Promise<void>((resolve, reject) => {
            settle = (error) =>
                error === undefined ? resolve() : reject(error instanceof Error ? error : new Error('the count request failed'));
        });
        const batch = this.companionsOf(modelId, companions, undefined, settle);
        if (batch.length === 0) {
            return 0;
        }
        this.queues.set(modelId, [...(this.queues.get(modelId) ?? []), ...batch]);
        if (!this.inFlight.has(modelId)) {
            void this.flush(modelId);
        }
        await counted;
        return batch.length;
    }

    /** Fill the memo with raw string counts the server kept from earlier sessions (no CJK text). */
    prewarm(modelId: string, entries: Iterable<[string, number]>, scales: Scales): void {
        this.scales.set(modelId, scales);
        for (const [sha, raw] of entries) {
            this.remember(this.strings, memoKey(modelId, HASHED + sha), [raw, 0]);
        }
    }

    /** The server's calibration changed: the model's new scales, and the epoch (messages go stale). */
    calibrate(modelId: string, scales: Scales, epoch: number): void {
        this.scales.set(modelId, scales);
        this.observeEpoch(epoch);
    }

    /** Count these strings with the tool scale from now on (the tools of a chat request). */
    addToolStrings(strings: Iterable<string>): void {
        for (const text of strings) {
            this.toolStrings.add(this.textKey(text));
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

    /**
     * The model's companion strings not yet memoized (nor `askedKey`), as pending entries nobody
     * awaits; `settled` is called once they all have an answer, or with the error of a failed batch.
     */
    private companionsOf(
        modelId: string,
        companions: readonly string[],
        askedKey: string | undefined,
        settled: (error?: unknown) => void = () => undefined,
    ): Pending[] {
        this.accompanied.set(modelId, companions);
        this.addToolStrings(companions);
        const pending = new Map<string, Pending>();
        let left = 0;
        const resolve = (): void => {
            if (--left === 0) {
                settled();
            }
        };
        const reject = (error: unknown): void => {
            this.accompanied.delete(modelId); // the batch failed: the next miss brings them again
            left = -1;
            settled(error);
        };
        for (const text of companions) {
            const textKey = this.textKey(text);
            const key = memoKey(modelId, textKey);
            if (key !== askedKey && !this.strings.has(key) && !this.prewarmed(modelId, text, key) && !pending.has(key)) {
                pending.set(key, { input: text, key, textKey, resolve, reject });
            }
        }
        left = pending.size;
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
            this.scales.set(modelId, result.scales);
            batch.forEach((pending, i) => {
                if (typeof pending.input === 'string') {
                    const raw: Raw = [result.raw[i], result.cjk[i]];
                    this.remember(this.strings, pending.key, raw);
                    const tool = this.toolStrings.has(pending.textKey);
                    pending.resolve(stringTokens(raw, result.scales, tool));
                } else {
                    this.remember(this.messages, pending.key, result.tokens[i]);
                    pending.resolve(result.tokens[i]);
                }
            });
        } catch (error) {
            batch.forEach((pending) => pending.reject(error));
        }
    }

    /** The memo's key of a text: the text itself when short, else its digest. */
    private textKey(text: string): string {
        return text.length <= SHORT_TEXT ? text : HASHED + this.digest(text);
    }

    /**
     * A short string's raw counts that `prewarm` filed under its digest (the server knows strings
     * by digest only), moved to the string's own key; undefined when there are none.
     */
    private prewarmed(modelId: string, text: string, key: string): Raw | undefined {
        if (text.length > SHORT_TEXT) {
            return undefined;
        }
        const hashedKey = memoKey(modelId, HASHED + this.digest(text));
        const raw = this.strings.get(hashedKey);
        if (raw !== undefined) {
            this.strings.delete(hashedKey);
            this.remember(this.strings, key, raw);
        }
        return raw;
    }

    private observeEpoch(epoch: number): void {
        if (this.epoch !== undefined && epoch !== this.epoch) {
            this.messages.clear(); // message counts may now come from new API actuals
        }
        this.epoch = epoch;
    }

    private remember<V>(map: Map<string, V>, key: string, value: V): void {
        if (map.size >= this.maxEntries) {
            const oldest = map.keys().next();
            if (!oldest.done) {
                map.delete(oldest.value);
            }
        }
        map.set(key, value);
    }
}
