/**
 * What a single request's figures say (pure, no DOM): how far our estimate was off, how full the
 * window was, how the context fill chart draws it, and what happened to it.
 */
import type { LadderRung, RequestRow } from './data';
import { formatCount } from './format';

/** How far our estimate was off the API's count: (estimate − count) ÷ count; null without a count. */
export function estimateError(r: RequestRow): number | null {
    if (r.inputTokens === null || r.inputTokens <= 0 || r.cut) {
        return null; // a request the server cut: what it read is not what was sent
    }
    return (r.estimatedTokens - r.inputTokens) / r.inputTokens;
}

/** The share of the model's window the request filled; null without a count or a window. */
export function fillFraction(r: RequestRow): number | null {
    if (r.inputTokens === null || r.window <= 0) {
        return null;
    }
    return r.inputTokens / r.window;
}

// ---- the context fill chart's categories ------------------------------------------------------

/** How a request is drawn in the context fill chart (the first that applies, in this order). */
export type FillCategory = 'summarization' | 'trimmed' | 'summarized' | 'turn';

export const FILL_CATEGORIES: readonly { id: FillCategory; label: string }[] = [
    { id: 'turn', label: 'conversation turn' },
    { id: 'summarization', label: 'summarization' },
    { id: 'summarized', label: 'first turn after a summary' },
    { id: 'trimmed', label: 'trimmed to fit' },
];

/** What each rung of the recovery ladder took, for a person. */
const RUNG_NAMES: Record<LadderRung, string> = {
    reasoning: 'earlier reasoning',
    toolResults: 'tool results',
    history: 'older messages',
    toolDocs: 'tool docs',
    output: 'answer room',
    userMessage: 'your message',
};

function wasFitted(r: RequestRow): boolean {
    return r.trimmedTokens > 0 || Object.keys(r.ladder ?? {}).length > 0;
}

/** "trimmed 12,345 tokens (tool results, tool docs)": what the ladder did to a request. */
function fittedText(r: RequestRow): string {
    const rungs = (Object.keys(RUNG_NAMES) as LadderRung[]).filter((rung) => (r.ladder?.[rung] ?? 0) > 0);
    const what = r.trimmedTokens > 0 ? `trimmed ${formatCount(r.trimmedTokens)} tokens` : 'fitted';
    return rungs.length ? `${what} (${rungs.map((rung) => RUNG_NAMES[rung]).join(', ')})` : what;
}

export function fillCategory(r: RequestRow): FillCategory {
    if (r.kind === 'summarize') {
        return 'summarization';
    }
    if (wasFitted(r)) {
        return 'trimmed';
    }
    return r.summarized ? 'summarized' : 'turn';
}

/** The requests the context fill chart shows: counted by the API, not Copilot's helpers. */
export function fillRequests(requests: readonly RequestRow[]): RequestRow[] {
    return requests.filter((r) => r.inputTokens !== null && r.kind !== 'helper');
}

// ---- what happened ----------------------------------------------------------------------------

type Tone = 'ok' | 'info' | 'good' | 'warn' | 'bad' | 'muted';

export interface Happening {
    text: string;
    tone: Tone;
}

/** What happened to a request, every part that applies: summarization, summarized, trimmed, cut
 * by a local server without an error, tool documentation saved, retried, and how it ended ("answered" only when nothing else is worth saying). */
export function whatHappened(r: RequestRow): Happening[] {
    const parts: Happening[] = [];
    if (r.kind === 'summarize') {
        parts.push({ text: 'summarization', tone: 'info' });
    }
    if (r.summarized) {
        parts.push({ text: 'summarized', tone: 'good' });
    }
    if (wasFitted(r)) {
        parts.push({ text: fittedText(r), tone: 'warn' });
    }
    if (r.cut) {
        const read = r.inputTokens === null ? '' : ` (read ${formatCount(r.inputTokens)} of ${formatCount(r.estimatedTokens)})`;
        parts.push({ text: `cut by the server${read}`, tone: 'bad' });
    }
    if (r.toolDocsSaved > 0) {
        parts.push({ text: `${formatCount(r.toolDocsSaved)} tokens of tool docs saved`, tone: 'good' });
    }
    if (r.retries > 0) {
        parts.push({ text: `retried ${r.retries}\u00d7`, tone: 'warn' });
    }
    if (r.outcome === 'failed') {
        parts.push({ text: r.error ? `failed: ${r.error}` : 'failed', tone: 'bad' });
    } else if (r.outcome === 'cancelled') {
        const said = r.error && /^cancel/i.test(r.error) ? r.error : r.error ? `cancelled: ${r.error}` : 'cancelled';
        parts.push({ text: said, tone: 'muted' });
    } else if (parts.length === 0) {
        parts.push({ text: 'answered', tone: 'ok' });
    }
    return parts;
}

/** `whatHappened` in one line: "summarized, retried 2×". */
export function whatHappenedText(r: RequestRow): string {
    return whatHappened(r).map((p) => p.text).join(', ');
}
