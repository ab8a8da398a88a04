/**
 * What the extension offers other extensions and its own tests (what `activate` returns), and its
 * diagnostics. Among them a bounded record of what `provideTokenCount` was asked to count, as
 * ARCHITECTURE §3 JSON (strings, and messages already converted), the answer each call got, and where in
 * that sequence each chat request was sent. Off by default and free when off (one check per call);
 * the Copilot host suite records agent turns with it (to decompose what Copilot's budget added up
 * from our answers) and the counting benchmark (bench/count_compare.sh) replays the inputs.
 */

// Types only: the recorder's unit test loads this module without VS Code.
import type * as vscode from 'vscode';

import type { CountMemo, CountRequest } from './countMemo';
import type { DashboardPanel } from './dashboardPanel';
import { CountInput, CountTokensResult, DashboardData, Methods } from './protocol';
import type { TokenGaugeProvider } from './provider';
import type { ServerConnection } from './server';
import type { StatusBar } from './statusBar';

/** What the extension offers other extensions (and its own tests). */
export interface TokenGaugeApi {
    /** The status-bar text now, if a response has reported usage. */
    statusText(): string | undefined;
    /** The server's usage report (`tokenGauge/usage`). */
    usage(): Promise<Record<string, unknown>>;
    /** The dashboard's data now (`tokenGauge/dashboard`). */
    dashboard(): Promise<DashboardData>;
    /** The data the open dashboard panel was last sent, if it is open. */
    dashboardShown(): DashboardData | undefined;
    /** How many `provideTokenCount` calls VS Code made since activation. */
    tokenCountCalls(): number;
    /** The status bar's text and tooltip as shown now. */
    statusShown(): { text: string; tooltip: string };
    /** For tests and the counting benchmark (bench/count_compare.sh); nothing here runs unless called. */
    diagnostics: TokenGaugeDiagnostics;
}

export interface TokenGaugeDiagnostics {
    /** The provider registered with VS Code (the benchmark calls its `provideTokenCount` directly). */
    readonly provider: vscode.LanguageModelChatProvider;
    /** Keep the inputs of the next `provideTokenCount` calls (ARCHITECTURE §3 JSON), at most `maxCalls`. */
    startCountRecording(maxCalls?: number): void;
    /** Stop recording and hand over the inputs kept. */
    stopCountRecording(): CountRecording;
    /** Entries in the extension's count memo. */
    memoEntries(): number;
    /** Empty the count memo (a new session's memo, before the server's warmCounts refill it). */
    clearCountMemo(): void;
    /** Ask the server for counts directly, past the memo (the benchmark's first answer of a new server). */
    countUncached(modelId: string, inputs: string[]): Promise<CountTokensResult>;
    /** The strings the memo counts ahead: every key and string of `vscode.lm.tools`' schemas. */
    companionStrings(): readonly string[];
    /** Count the tools' strings ahead now, as every start does: how many strings went. */
    countAhead(): Promise<number>;
    /** Milliseconds from activation to the first models offered (and from where) and to the server's first answer. */
    startup(): StartupFigures;
}

export interface StartupFigures {
    modelsMs: number | undefined;
    modelsFrom: 'cache' | 'server' | undefined;
    serverMs: number | undefined;
}

/** The parts of the running extension the API reads. */
export interface ApiSources {
    server: ServerConnection;
    statusBar: StatusBar;
    provider: TokenGaugeProvider;
    recorder: CountRecorder;
    memo: CountMemo;
    countUncached: CountRequest;
    companionStrings: () => readonly string[];
    activatedAt: number;
    dashboard: DashboardPanel;
}

/** The API over the running extension's parts. */
export function createApi(sources: ApiSources): TokenGaugeApi {
    const { server, statusBar, provider, recorder, memo } = sources;
    return {
        statusText: () => statusBar.text,
        usage: () => server.request(Methods.usage, {}),
        dashboard: () => server.request(Methods.dashboard, {}),
        dashboardShown: () => sources.dashboard.lastSent,
        tokenCountCalls: () => provider.tokenCountCalls,
        statusShown: () => statusBar.shown,
        diagnostics: {
            provider,
            startCountRecording: (maxCalls) => recorder.start(maxCalls),
            stopCountRecording: () => recorder.stop(),
            memoEntries: () => memo.size,
            clearCountMemo: () => memo.clear(),
            companionStrings: sources.companionStrings,
            countAhead: () => provider.countAhead(),
            countUncached: sources.countUncached,
            startup: () => {
                const since = (at: number | undefined): number | undefined =>
                    at === undefined ? undefined : at - sources.activatedAt;
                return {
                    modelsMs: since(provider.firstModels?.at),
                    modelsFrom: provider.firstModels?.from,
                    serverMs: since(server.firstRunningAt),
                };
            },
        },
    };
}

/** A chat request as the server got it: sent after `afterCalls` recorded count calls. */
export interface RecordedChat {
    afterCalls: number;
    messages: unknown[];
    tools: unknown[];
}

/** What one recording kept: the inputs in call order with their answers, the chats, and how many calls came after it was full. */
export interface CountRecording {
    inputs: CountInput[];
    answers: (number | null)[];
    chats: RecordedChat[];
    dropped: number;
}

/** The provider's `CountObserver` for the diagnostics: records nothing until started. */
export class CountRecorder {
    private current: CountRecording | undefined;
    private limit = 0;

    /** Start a new recording of at most `maxCalls` inputs (dropping any unfinished one). */
    start(maxCalls = 100_000): void {
        this.current = { inputs: [], answers: [], chats: [], dropped: 0 };
        this.limit = Math.max(0, Math.floor(maxCalls));
    }

    /** Stop and hand over what was recorded (empty if nothing was started). */
    stop(): CountRecording {
        const recording = this.current ?? { inputs: [], answers: [], chats: [], dropped: 0 };
        this.current = undefined;
        return recording;
    }

    /**
     * Note one input (the converted value, never mutated later: no copy is needed); returns the
     * callback that records its answer.
     */
    note(input: CountInput): (tokens: number) => void {
        const recording = this.current;
        if (recording === undefined) {
            return ignore;
        }
        if (recording.inputs.length >= this.limit) {
            recording.dropped++;
            return ignore;
        }
        const index = recording.inputs.push(input) - 1;
        recording.answers.push(null);
        return (tokens) => {
            recording.answers[index] = tokens;
        };
    }

    /** Note a chat request, after the count calls recorded so far. */
    chat(messages: unknown[], tools: unknown[]): void {
        this.current?.chats.push({ afterCalls: this.current.inputs.length, messages, tools });
    }
}

const ignore = (): void => undefined;
