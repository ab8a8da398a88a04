/**
 * The `LanguageModelChatProvider`: VS Code's calls converted to ARCHITECTURE §3 JSON and sent to the
 * server; streamed parts reported back as VS Code parts, ending with the `usage` data part.
 */

import { randomUUID } from 'node:crypto';
import * as vscode from 'vscode';

import { ApiKeys } from './apiKeys';
import { clientOf } from './client';
import { toCountInput, toMessage, toTool } from './convert';
import { CountMemo } from './countMemo';
import { carriesReasoning, encodeReasoning } from './reasoning';
import { plain, PlainError } from './errors';
import { GroupKeys } from './groupKeys';
import { SeenGroup } from './diagnostics';
import { GroupConfiguration, groupProvider, Groups, groupSecrets } from './groups';
import { configurationSchema, withPicked } from './modelChoices';
import { Preset } from './presets';
import {
    AddProviderResult,
    ChatPartParams,
    CountInput,
    DiscoverModelsResult,
    Message,
    Methods,
    ModelChoices,
    ModelInfo,
    ModelScales,
    ChatPart,
    Tool,
} from './protocol';
import { ServerConnection } from './server';
import { toolSchemaStrings } from './toolStrings';

/** The vendor the provider registers as (package.json `languageModelChatProviders`). */
export const VENDOR = 'tokengauge';

/** What the diagnostics' recorder (api.ts) is told: each count call and its answer, each chat request. */
export interface CountObserver {
    note(input: CountInput): (tokens: number) => void;
    chat(messages: Message[], tools: Tool[]): void;
}

type PartListener = (part: ChatPart) => void;

/** VS Code 1.139's options (newer than the 1.104 typings): a Manage Models group's values, if any. */
interface InformationOptions {
    silent: boolean;
    configuration?: GroupConfiguration;
}

/** VS Code 1.139's request options carry the model picker's choices (newer than the typings). */
function picked(options: vscode.ProvideLanguageModelChatResponseOptions): unknown {
    return (options as { modelConfiguration?: unknown }).modelConfiguration;
}

/** The models last listed, by source ('' for the settings' providers, else the group's name). */
export interface ModelCache {
    get(source: string): ModelInfo[] | undefined;
    set(source: string, models: ModelInfo[]): void;
}

/** A cache in the extension's global state: the next session lists its models before the server is up. */
export function stateCache(state: vscode.Memento): ModelCache {
    const KEY = 'tokenGauge.models';
    const all = (): Record<string, ModelInfo[]> => state.get<Record<string, ModelInfo[]>>(KEY, {});
    return {
        get: (source) => all()[source],
        set: (source, models) => void state.update(KEY, { ...all(), [source]: models }),
    };
}

function toInformation(m: ModelInfo, inGroup: boolean): vscode.LanguageModelChatInformation {
    // The picker's options, for a group's models only: VS Code keeps a pick in the group of the
    // model it was made for (the settings' models take `tokenGauge.models[].options`).
    const schema = inGroup ? configurationSchema(m.choices) : undefined;
    return {
        id: m.id,
        name: m.name,
        family: m.family,
        version: m.version,
        maxInputTokens: m.maxInputTokens,
        maxOutputTokens: m.maxOutputTokens,
        tooltip: m.tooltip,
        // A group's models: VS Code shows the group's name (the user's name for the provider).
        detail: inGroup ? undefined : m.detail,
        capabilities: { toolCalling: m.capabilities.toolCalling, imageInput: m.capabilities.imageInput },
        // Not in the 1.104 typings; VS Code 1.139 reads them (the user's own key and API; the prices
        // its model picker shows). Hosts without them ignore them.
        isBYOK: m.isByok,
        ...(m.pricing ? { pricing: m.pricing } : {}),
        ...(schema ? { configurationSchema: schema } : {}),
    } as vscode.LanguageModelChatInformation;
}

export class TokenGaugeProvider implements vscode.LanguageModelChatProvider {
    private readonly changed = new vscode.EventEmitter<void>();
    /** The models whose tools' strings are counted ahead (`prewarm`, `countAhead`). */
    private likelyModels: string[] = [];
    readonly onDidChangeLanguageModelChatInformation = this.changed.event;
    private readonly listeners = new Map<string, PartListener>();
    /** Each offered model's provider id. */
    private readonly providers = new Map<string, string>();
    /** Each offered model's picker options (a group's models only). */
    private readonly choices = new Map<string, ModelChoices | undefined>();
    /** Each group's `addProvider` with the running server (a new server knows none). */
    private registrations = new Map<string, { values: string; added: Promise<AddProviderResult> }>();
    /** How many times VS Code asked `provideTokenCount` (Copilot's counting load; tests report it). */
    tokenCountCalls = 0;
    /** When models were first offered after activation, and from where (the startup figures). */
    firstModels: { at: number; count: number; from: 'cache' | 'server' } | undefined;

    constructor(
        private readonly server: ServerConnection,
        private readonly keys: ApiKeys,
        private readonly memo: CountMemo,
        private readonly observer: CountObserver,
        private readonly cache: ModelCache,
        private readonly log: vscode.LogOutputChannel,
        private readonly presets: Preset[],
        /** The providers configured in Manage Models, with their keys (VS Code hands them over). */
        private readonly groups: Groups,
        private readonly groupKeys: GroupKeys,
    ) {}

    /** The ids of the providers configured in Manage Models so far this session. */
    get groupProviderIds(): string[] {
        return this.groups.ids;
    }

    /** The groups seen this session, with their values as VS Code handed them over (key included). */
    get seenGroups(): SeenGroup[] {
        return this.groups.ids.flatMap((providerId) => {
            const configuration = this.groups.configuration(providerId);
            return configuration ? [{ providerId, configuration }] : [];
        });
    }

    /** The keys set for groups with Set API Key that were used or set this session. */
    get setGroupKeys(): ReadonlySet<string> {
        return this.groupKeys.seen;
    }

    /** Every credential of the groups seen: their keys (either kind), secret header values, URL parts. */
    groupSecrets(): string[] {
        return [...this.seenGroups.flatMap((group) => groupSecrets(group.configuration)), ...this.groupKeys.seen];
    }

    /**
     * Use `apiKey` for a Manage Models group instead of the key VS Code holds for it (empty: that
     * one again); VS Code then lists its models anew, with it.
     */
    async setGroupKey(providerId: string, apiKey: string): Promise<void> {
        const configuration = this.groups.configuration(providerId);
        if (!configuration) {
            throw new PlainError(`No provider of Manage Models is named ${providerId} in this session.`);
        }
        await this.groupKeys.set(providerId, configuration, apiKey);
        this.registrations.delete(providerId);
        this.refresh();
    }

    /** A group's values with the key it is used with (one set with Set API Key, else VS Code's). */
    private effective(providerId: string, configuration: GroupConfiguration): Promise<GroupConfiguration> {
        return this.groupKeys.apply(providerId, configuration);
    }

    /** Tell VS Code to ask for the models again (the server's `modelsChanged`). */
    refresh(): void {
        this.changed.fire();
    }

    /** A server (re)started: it knows no Manage Models provider yet; VS Code asks for the models again. */
    onServerRunning(): void {
        this.registrations.clear();
        this.refresh();
    }

    /** Tell the running server about a Manage Models provider, once per server and set of values. */
    private register(group: string, configuration: GroupConfiguration): Promise<AddProviderResult> {
        const params = { provider: groupProvider(group, configuration), apiKey: configuration.apiKey || null };
        const values = JSON.stringify(params);
        const known = this.registrations.get(group);
        if (known?.values === values) {
            return known.added;
        }
        const added = this.server.request(Methods.addProvider, params);
        this.registrations.set(group, { values, added });
        // The server logs a failed listing itself; a failed request is logged here, once, and
        // asked again next time.
        added.catch((error: unknown) => {
            this.log.warn(`${group}: ${plain(error).message}`);
            if (this.registrations.get(group)?.added === added) {
                this.registrations.delete(group);
            }
        });
        return added;
    }

    /** Fill the count memo with the strings the server remembers (Copilot's tool schemas). */
    async prewarm(): Promise<number> {
        const models = await this.server.request(Methods.models, {});
        const warm = await this.server.request(Methods.warmCounts, {
            modelIds: models.map((m) => m.id),
        });
        for (const { modelId, scales } of warm.scales) {
            const entries = warm.entries.filter((e) => e.modelId === modelId);
            this.memo.prewarm(modelId, entries.map((e) => [e.sha256, e.raw]), scales);
        }
        this.likelyModels = warm.ahead;
        return warm.entries.length;
    }

    /**
     * Count the registered tools' strings ahead of the first turn for the models the server named
     * in `prewarm` (of an encoding it loads at start, those counted before first): how many went.
     */
    async countAhead(): Promise<number> {
        let sent = 0;
        for (const modelId of this.likelyModels) {
            sent += await this.memo.countAhead(modelId);
        }
        return sent;
    }

    /** `tokenGauge/calibration`: a model's scales changed; counts follow at once. */
    onCalibration({ modelId, scales, epoch }: ModelScales): void {
        if (typeof epoch === 'number') {
            this.memo.calibrate(modelId, scales, epoch);
        }
    }

    /**
     * Have the server list the models of every provider with `discover` on, with their keys; it
     * announces new models itself (`tokenGauge/modelsChanged`).
     */
    async discover(providerIds: string[]): Promise<DiscoverModelsResult> {
        const credentials = await this.keys.all(providerIds);
        return this.server.request(Methods.discoverModels, { credentials });
    }

    /** Route one `tokenGauge/chatPart` notification to its request. */
    onChatPart({ requestId, part }: ChatPartParams): void {
        this.listeners.get(requestId)?.(part);
    }

    async provideLanguageModelChatInformation(
        options: vscode.PrepareLanguageModelChatModelOptions,
        token: vscode.CancellationToken,
    ): Promise<vscode.LanguageModelChatInformation[]> {
        const { configuration } = options as InformationOptions;
        if (!configuration) {
            // VS Code asks for the models of settings first, then for each of its groups in order.
            this.groups.startPass();
        } else if (!configuration.preset && !configuration.baseUrl) {
            // A group of VS Code's own, holding only picks for models it lists elsewhere.
            this.groups.skip();
            return [];
        }
        const group = configuration && (await this.groups.bind(configuration, this.presets));
        const source = group ?? '';
        // While the server starts, the last session's list (VS Code asks again once it runs).
        const running = this.server.isRunning;
        const models = running
            ? await this.listModels(group, configuration && (await this.effective(group ?? '', configuration)), token)
            : (this.cache.get(source) ?? []);
        this.log.debug(`${group ?? 'settings'}: ${models.length} models offered${running ? '' : ' (from the last session)'}`);
        this.cache.set(source, models);
        if (models.length && !this.firstModels) {
            this.firstModels = { at: Date.now(), count: models.length, from: running ? 'server' : 'cache' };
        }
        for (const m of models) {
            this.providers.set(m.id, m.providerId);
            this.choices.set(m.id, group !== undefined ? m.choices : undefined);
        }
        return models.map((m) => toInformation(m, group !== undefined));
    }

    /** The settings' models (`group` undefined), or a Manage Models group's. */
    private async listModels(
        group: string | undefined,
        configuration: GroupConfiguration | undefined,
        token: vscode.CancellationToken,
    ): Promise<ModelInfo[]> {
        try {
            if (group === undefined || configuration === undefined) {
                const models = await this.server.request(Methods.models, {}, token);
                return models.filter((m) => !this.groups.has(m.providerId));
            }
            const added = await this.register(group, configuration);
            if (added.error !== null && added.models.length === 0) {
                throw new PlainError(added.error);
            }
            // As they are now: a window learned or picked since the group was added changes them.
            const models = await this.server.request(Methods.models, {}, token);
            return models.filter((m) => m.providerId === group);
        } catch (error) {
            // VS Code shows this beside the group in Manage Models.
            throw plain(error);
        }
    }

    async provideLanguageModelChatResponse(
        model: vscode.LanguageModelChatInformation,
        messages: readonly vscode.LanguageModelChatRequestMessage[],
        options: vscode.ProvideLanguageModelChatResponseOptions,
        progress: vscode.Progress<vscode.LanguageModelResponsePart>,
        token: vscode.CancellationToken,
    ): Promise<void> {
        const requestId = randomUUID();
        const providerId = this.providers.get(model.id);
        const group = providerId !== undefined ? this.groups.configuration(providerId) : undefined;
        const used = providerId !== undefined && group !== undefined ? await this.effective(providerId, group) : undefined;
        if (providerId !== undefined && used !== undefined) {
            // A chat right after a (re)start may come before VS Code listed the group's models again.
            await this.register(providerId, used).catch((error: unknown) => {
                throw plain(error);
            });
        }
        const apiKey = used !== undefined ? used.apiKey || undefined : providerId ? await this.keys.get(providerId) : undefined;
        this.listeners.set(requestId, (part) => report(progress, part, model.id));
        const converted = messages.map(toMessage);
        const tools = (options.tools ?? []).map(toTool);
        this.observer.chat(converted, tools);
        // Copilot counts the strings of exactly these tools (its names for them, too).
        this.memo.addToolStrings(toolSchemaStrings(options.tools ?? []));
        try {
            await this.server.request(
                Methods.chat,
                {
                    requestId,
                    modelId: model.id,
                    messages: converted,
                    tools,
                    toolMode: options.toolMode,
                    modelOptions: withPicked(options.modelOptions ?? {}, picked(options), this.choices.get(model.id)),
                    credentials: { apiKey: apiKey ?? null },
                    client: clientOf(options),
                },
                token,
            );
        } catch (error) {
            if (token.isCancellationRequested) {
                throw new vscode.CancellationError();
            }
            throw plain(error);
        } finally {
            this.listeners.delete(requestId);
        }
    }

    provideTokenCount(
        model: vscode.LanguageModelChatInformation,
        text: string | vscode.LanguageModelChatRequestMessage,
    ): Promise<number> {
        this.tokenCountCalls++;
        const input = toCountInput(text);
        const answered = this.observer.note(input);
        const count = this.memo.count(model.id, input);
        void count.then(answered, () => undefined);
        return count.catch((error: unknown) => {
            throw plain(error);
        });
    }
}

/**
 * Part classes newer than the `engines` floor (1.104): present in the VS Code that runs us, absent
 * from its typings. Reported when the host has them.
 */
const newerParts = vscode as unknown as {
    LanguageModelThinkingPart?: new (value: string, id?: string, metadata?: Record<string, unknown>) => unknown;
    LanguageModelDataPart?: new (data: Uint8Array, mimeType: string) => unknown;
};

/**
 * A thinking part's arguments: the text shown, or for a signed or redacted block, an encrypted
 * reasoning item or a Chat Completions server's reasoning (shown already, piece by piece) nothing
 * to show and, in its id and metadata, what the next request must send back (the names Copilot's
 * own Anthropic and Responses clients use, or ours: `reasoning.ts`; it keeps them in the history
 * it sends us).
 */
function thinkingArgs(part: Extract<ChatPart, { type: 'thinking' }>): [string, string?, Record<string, unknown>?] {
    if (carriesReasoning(part)) {
        return ['', undefined, { encrypted_content: encodeReasoning(part) }];
    }
    if (part.encrypted && part.id) {
        return ['', part.id, { encrypted_content: part.encrypted }];
    }
    if (part.redacted) {
        return ['', undefined, { redactedData: part.redacted }];
    }
    if (part.signature) {
        return ['', undefined, { signature: part.signature, _completeThinking: part.value }];
    }
    return [part.value];
}

function report(progress: vscode.Progress<vscode.LanguageModelResponsePart>, part: ChatPart, modelId: string): void {
    const emit = (value: unknown): void => progress.report(value as vscode.LanguageModelResponsePart);
    const data = (text: string, mimeType: string): void => {
        if (newerParts.LanguageModelDataPart) {
            emit(new newerParts.LanguageModelDataPart(Buffer.from(text, 'utf8'), mimeType));
        }
    };
    switch (part.type) {
        case 'text':
            emit(new vscode.LanguageModelTextPart(part.value));
            break;
        case 'thinking':
            if (newerParts.LanguageModelThinkingPart) {
                emit(new newerParts.LanguageModelThinkingPart(...thinkingArgs(part)));
            }
            break;
        case 'toolCall':
            emit(new vscode.LanguageModelToolCallPart(part.callId, part.name, part.input as object));
            break;
        case 'statefulMarker':
            // Copilot keeps it in the history as `modelId\marker` and sends it back with the next
            // request; of the data parts a provider gives, only this kind survives in both runtimes.
            data(`${modelId}\\${part.value}`, 'stateful_marker');
            break;
        case 'usage':
            // Copilot reads real usage only from a data part with mime type `usage`.
            data(JSON.stringify(part.data), 'usage');
            break;
        default:
            break;
    }
}
