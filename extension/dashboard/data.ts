/**
 * What the dashboard shows: the server's `tokenGauge/dashboard` answer (Python:
 * `tokengauge.activity.dashboard.DashboardData`; tests/test_wire_sync.py holds both to the same
 * fields), the same JSON in the webview and in `tokengauge report`.
 * Times are Unix seconds; days are local dates (`2026-11-24`); money is US dollars, null when unknown.
 */

/** What became of a request. */
export type Outcome = 'answered' | 'failed' | 'cancelled';

/** What a request was for: a conversation turn, one of Copilot's helpers (a title, a progress line),
 * or a summarization of the conversation (Copilot's own, in the foreground or the background). */
export type RequestKind = 'turn' | 'helper' | 'summarize';

export interface RequestRow {
    /** Increasing over the whole history (stable across updates: a key for the table). */
    seq: number;
    time: number;
    modelId: string;
    /** The conversation it belongs to (`ConversationRow.id`), null for helpers. */
    conversation: string | null;
    kind: RequestKind;
    outcome: Outcome;
    /** Why it failed or was cancelled, in a few words (`rate limited (429)`); null when answered. */
    error: string | null;
    /** Our estimate of the input sent. */
    estimatedTokens: number;
    /** The API's count of the input (all of it: fresh, cached and cache writes); null without usage. */
    inputTokens: number | null;
    cachedTokens: number;
    cacheWriteTokens: number;
    outputTokens: number | null;
    reasoningTokens: number;
    costUsd: number | null;
    /** Where `costUsd` comes from: the API's own figure, or the model's prices (older records: `estimate`). */
    costSource: CostSource;
    /** What its cache reads saved against fresh input at the model's prices; null: none read, or no cached price. */
    cacheSavedUsd: number | null;
    /** The model's window and input budget (`maxInputTokens`) when the request was sent. */
    window: number;
    maxInputTokens: number;
    /** Input tokens the recovery ladder removed to make the request fit (0: none). */
    trimmedTokens: number;
    /** Tokens each rung of the ladder removed (`output`: room for the answer given up); absent in older records. */
    ladder?: Partial<Record<LadderRung, number>>;
    /** Tokens of tool documentation left out of the request (`toolDocs`), by our estimate (0: none). */
    toolDocsSaved: number;
    /** Tries after the first (rate limits, dropped connections, a resized `max_tokens`). */
    retries: number;
    /** It is the first request to carry the summary a summarization produced. */
    summarized: boolean;
    /** Learned ratios of the model after this request (component → API tokens per counted token). */
    ratios: Record<string, number>;
    /** The local server cut the prompt without an error: it read `inputTokens` of `estimatedTokens`; absent in older records. */
    cut?: boolean;
}

/** Where a cost comes from: what the API reported, or the price table's estimate. */
export type CostSource = 'reported' | 'estimate';

/** The recovery ladder's rungs, in the order they are taken (the server's `calibration/ladder.py`). */
export type LadderRung = 'reasoning' | 'toolResults' | 'history' | 'toolDocs' | 'output' | 'userMessage';

export interface DayModelRow {
    day: string;
    modelId: string;
    requests: number;
    inputTokens: number;
    cachedTokens: number;
    outputTokens: number;
    /** The known costs of the day's requests; null when none is known. */
    costUsd: number | null;
    /** The parts of `costUsd` the API reported and the price table estimated; null: no such part. */
    reportedUsd: number | null;
    estimatedUsd: number | null;
    /** Requests answered without a known cost (no price for the model). */
    unpriced: number;
}

export interface ConversationRow {
    id: string;
    started: number;
    ended: number;
    requests: number;
    summarizations: number;
    inputTokens: number;
    outputTokens: number;
    costUsd: number | null;
    models: string[];
    /** The parts of `costUsd` the API reported and the price table estimated; null: no such part. */
    reportedUsd: number | null;
    estimatedUsd: number | null;
}

export interface ModelRow {
    id: string;
    name: string;
    window: number;
    maxInputTokens: number;
    /** Prices per million tokens, when known. */
    pricing: { input: number; cachedInput: number | null; cacheWrite: number | null; output: number; reasoning: number | null } | null;
}

export interface Totals {
    requests: number;
    failed: number;
    inputTokens: number;
    cachedTokens: number;
    outputTokens: number;
    costUsd: number | null;
    todayUsd: number | null;
    /** Cached ÷ input tokens over the answered requests; null without any. */
    cacheHitRate: number | null;
    /** Tokens of tool documentation left out (`toolDocs`), over all the requests. */
    toolDocsSaved: number;
    /** Requests that sent some tools' documentation reduced. */
    toolDocsRequests: number;
    /** The parts of `costUsd` and `todayUsd` the API reported and the price table estimated; null: no such part. */
    reportedUsd: number | null;
    estimatedUsd: number | null;
    todayReportedUsd: number | null;
    todayEstimatedUsd: number | null;
    /** What reading from the cache saved against fresh input, at the known prices; null: nothing known. */
    cacheSavedUsd: number | null;
}

export interface DashboardData {
    /** When the data was read. */
    generated: number;
    /** How many days of requests the ledger keeps (`tokenGauge.usageRetentionDays`). */
    retentionDays: number;
    models: ModelRow[];
    /** Oldest first. */
    requests: RequestRow[];
    days: DayModelRow[];
    conversations: ConversationRow[];
    totals: Totals;
}
