/**
 * The LSP contract with the server (ARCHITECTURE §3), this side's one copy: every custom method's name,
 * its params and its result, and the payload of every notification. camelCase JSON on the wire.
 */

/** Requests, extension → server. */
export const Methods = {
    models: 'tokenGauge/models',
    countTokens: 'tokenGauge/countTokens',
    chat: 'tokenGauge/chat',
    usage: 'tokenGauge/usage',
    discoverModels: 'tokenGauge/discoverModels',
    warmCounts: 'tokenGauge/warmCounts',
    addProvider: 'tokenGauge/addProvider',
    checkKey: 'tokenGauge/checkKey',
    dashboard: 'tokenGauge/dashboard',
} as const;

/** Notifications, server → extension. */
export const Notifications = {
    chatPart: 'tokenGauge/chatPart',
    status: 'tokenGauge/status',
    modelsChanged: 'tokenGauge/modelsChanged',
    calibration: 'tokenGauge/calibration',
    /** A request was added to the usage history. */
    activity: 'tokenGauge/activity',
    /** Something a person must know and can fix, e.g. a local server that cut a prompt. */
    notice: 'tokenGauge/notice',
} as const;

/** A warning for the person, with the setting that fixes it (if one of ours does). */
export interface Notice {
    message: string;
    setting: string | null;
}

export type Role = 'system' | 'user' | 'assistant';

/** A part of a message; a response streams `text`, `thinking` and `toolCall` parts (`StreamPart`). */
export type Part =
    | { type: 'text'; value: string }
    /** With `signature` (Anthropic's) `value` is a whole thinking block to send back as it was;
     * `redacted` is a redacted block's data; `encrypted` an OpenAI Responses reasoning item's
     * encrypted content, `id` that item's id. */
    | { type: 'thinking'; value: string; signature?: string; redacted?: string; id?: string; encrypted?: string }
    | { type: 'toolCall'; callId: string; name: string; input: unknown }
    | { type: 'toolResult'; callId: string; content: Part[] }
    | { type: 'data'; mimeType: string; data: string }
    | { type: 'unknown'; json: unknown };

export interface Message {
    role: Role;
    name?: string;
    content: Part[];
}

export interface Tool {
    name: string;
    description: string;
    inputSchema: unknown;
}

/** What `tokenGauge/countTokens` counts: a string, or a `Message` (opaque on this side: the memo only digests it). */
export type CountInput = string | object;

/** The multipliers of raw string counts (`tokenGauge/countTokens`, `tokenGauge/calibration`). */
export interface Scales {
    text: number;
    cjk: number;
    tools: number;
}

/** `tokenGauge/countTokens`' result: per input its count, its raw count and the CJK part of that. */
export interface CountResult {
    tokens: number[];
    raw: number[];
    cjk: number[];
    epoch: number;
    scales: Scales;
}

/** One model of `tokenGauge/models`. */
export interface ModelInfo {
    id: string;
    name: string;
    family: string;
    version: string;
    providerId: string;
    maxInputTokens: number;
    maxOutputTokens: number;
    capabilities: { toolCalling: boolean; imageInput: boolean };
    tooltip: string;
    detail: string;
    /** The prices in words, when known (VS Code's model picker shows them). */
    pricing?: string;
    isByok: boolean;
    /** What VS Code's model picker may offer for the model (none: absent). */
    choices?: ModelChoices;
}

/** The values a person may pick for one model option, and the one used when none is. */
export interface Choice<T> {
    values: T[];
    default: T;
}

/** The options of a model the picker may offer; a chat carries the pick in its `modelOptions`. */
export interface ModelChoices {
    reasoningEffort?: Choice<string>;
    thinkingBudget?: Choice<number>;
    contextSize?: Choice<number>;
    toolDocs?: Choice<string>;
}

/** A model's scales, and with `tokenGauge/calibration` the epoch they belong to. */
export interface ModelScales {
    modelId: string;
    scales: Scales;
    epoch?: number | null;
}

/** `tokenGauge/warmCounts`: the raw counts of the strings the server remembers, by SHA-256. */
export interface WarmCounts {
    entries: { modelId: string; sha256: string; raw: number; tokens: number }[];
    epoch: number;
    scales: ModelScales[];
}

/** `tokenGauge/discoverModels`: per provider, how many models it listed, or why it could not (and whether it wants a key). */
export interface DiscoveryReport {
    providers: { providerId: string; models: number | null; error: string | null; keyRejected: boolean }[];
}

/** A provider entry: `tokenGauge.providers[]` of the settings, or one configured in Manage Models. */
/**
 * What a gateway that meters spend (a LiteLLM proxy, OpenRouter) is told of each request; nothing
 * unless set. `${workspaceName}` and `${requestKind}` in a tag are replaced by the server.
 */
export interface Attribution {
    /** Whom the spend is booked to (LiteLLM's customer, OpenRouter's user). */
    user?: string;
    /** A LiteLLM proxy's tags. */
    tags?: string[];
    /** A session id per Copilot conversation. */
    session?: boolean;
}

export interface ProviderEntry {
    id: string;
    preset?: string;
    dialect?: 'openai' | 'anthropic';
    baseUrl?: string;
    headers?: Record<string, string>;
    discover?: boolean;
    attribution?: Attribution;
}

/** `tokenGauge/addProvider`: a Manage Models provider's models, or why they could not be listed. */
export interface AddedProvider {
    providerId: string;
    models: ModelInfo[];
    error: string | null;
}

/** `tokenGauge/checkKey`: whether the provider accepted a key (null: it could not be asked). */
export interface KeyCheck {
    accepted: boolean | null;
    message: string;
}

/** `tokenGauge/chat`: one request; the response comes in `tokenGauge/chatPart` notifications. */
export interface ChatParams {
    requestId: string;
    modelId: string;
    messages: Message[];
    tools: Tool[];
    toolMode: number | undefined;
    modelOptions: Record<string, unknown>;
    credentials: { apiKey: string | null };
}

/** `tokenGauge/usage`: the latest breakdown, learned ratios and limits, recent history. */
import type { DashboardData } from '../dashboard/data';

export type { DashboardData };

export type UsageReport = Record<string, unknown>;

/** Each request's params and result. */
export interface Requests {
    [Methods.models]: { params: Record<string, never>; result: ModelInfo[] };
    [Methods.countTokens]: { params: { modelId: string; inputs: CountInput[] }; result: CountResult };
    // `{usage, finishReason}`: the extension reads nothing of it (the parts carry the response).
    [Methods.chat]: { params: ChatParams; result: unknown };
    [Methods.usage]: { params: Record<string, never>; result: UsageReport };
    [Methods.discoverModels]: {
        params: { credentials: Record<string, { apiKey: string }> };
        result: DiscoveryReport;
    };
    [Methods.warmCounts]: { params: { modelIds: string[] }; result: WarmCounts };
    [Methods.addProvider]: { params: { provider: ProviderEntry; apiKey: string | null }; result: AddedProvider };
    [Methods.checkKey]: { params: { providerId: string; apiKey: string }; result: KeyCheck };
    [Methods.dashboard]: { params: Record<string, never>; result: DashboardData };
}

/**
 * A streamed part of `tokenGauge/chatPart`; the last one is `usage`, OpenAI-style usage JSON in `data`.
 * `statefulMarker`: state the conversation's next request must bring back (a `stateful_marker` data part).
 */
export type StreamPart = Part | { type: 'statefulMarker'; value: string } | { type: 'usage'; data: unknown };

/** `tokenGauge/chatPart`: one part of the response to the chat request `requestId`. */
export interface ChatPartParams {
    requestId: string;
    part: StreamPart;
}

/** `tokenGauge/status`: the status bar's text, shown as it is. */
export interface ServerStatus {
    text: string;
    tooltip: string;
    severity: 'info' | 'warning' | 'error';
}

/** Each notification's params. */
export interface NotificationParams {
    [Notifications.chatPart]: ChatPartParams;
    [Notifications.status]: ServerStatus;
    [Notifications.modelsChanged]: Record<string, never>;
    [Notifications.calibration]: ModelScales;
    [Notifications.activity]: Record<string, never>;
    [Notifications.notice]: Notice;
}
