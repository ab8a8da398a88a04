/**
 * The rows of the conversations and recent requests tables, as text (pure, no DOM): one `Cell`
 * per column, with a hover title for what needs explaining, and a signature that changes whenever
 * anything shown does (`tables.ts` draws them and redraws only the rows whose signature changed).
 */
import { costView, requestCostParts } from './costs';
import type { DashboardData } from './data';
import { DASH, formatClock, formatCount, formatPercent, formatSignedPercent, formatWhen, localDay } from './format';
import { listNames, modelNames, nameOf } from './models';
import { estimateError, whatHappened, type Happening } from './requests';

export interface Cell {
    text: string;
    title?: string;
    /** Right-aligned, tabular figures. */
    numeric?: boolean;
}

export interface RequestView {
    seq: number;
    cells: {
        time: Cell;
        model: Cell;
        kind: Cell;
        input: Cell;
        cached: Cell;
        output: Cell;
        cost: Cell;
        error: Cell;
    };
    happened: Happening[];
    /** Changes whenever anything shown changes (live updates redraw only such rows). */
    signature: string;
}

function tokenCell(n: number | null, missing = 'no usage reported'): Cell {
    return n === null ? { text: DASH, title: missing, numeric: true } : { text: formatCount(n), numeric: true };
}

/** The recent requests table's rows: newest first. */
export function requestRows(data: DashboardData): RequestView[] {
    const names = modelNames(data);
    const rows = [...data.requests].sort((a, b) => b.seq - a.seq);
    return rows.map((r) => {
        const error = estimateError(r);
        const known = costView(requestCostParts(r));
        const cost: Cell = known !== null
            ? { text: known.text, numeric: true, title: known.title }
            : { text: DASH, numeric: true, title: r.inputTokens === null ? 'no usage reported' : `no price known for ${nameOf(names, r.modelId)}` };
        const cells = {
            time: { text: formatWhen(r.time, data.generated), title: `request #${r.seq}, ${localDay(r.time)} ${formatClock(r.time)}` },
            model: { text: nameOf(names, r.modelId), title: r.modelId },
            kind: { text: r.kind },
            input: r.inputTokens === null
                ? { text: DASH, numeric: true, title: `no usage reported (estimated ${formatCount(r.estimatedTokens)})` }
                : { text: formatCount(r.inputTokens), numeric: true, title: `${formatPercent(r.inputTokens / Math.max(1, r.window), 1)} of the ${formatCount(r.window)}-token window` },
            cached: r.inputTokens === null ? tokenCell(null) : tokenCell(r.cachedTokens),
            output: r.outputTokens === null || r.reasoningTokens <= 0
                ? tokenCell(r.outputTokens)
                : { text: formatCount(r.outputTokens), numeric: true, title: `${formatCount(r.reasoningTokens)} of them reasoning` },
            cost,
            error: error === null
                ? { text: DASH, numeric: true, title: 'no count from the API to compare with' }
                : { text: formatSignedPercent(error), numeric: true, title: `estimated ${formatCount(r.estimatedTokens)}, the API counted ${formatCount(r.inputTokens ?? 0)}` },
        };
        const happened = whatHappened(r);
        return { seq: r.seq, cells, happened, signature: JSON.stringify([cells, happened]) };
    });
}

export interface ConversationView {
    id: string;
    cells: {
        started: Cell;
        requests: Cell;
        summarizations: Cell;
        input: Cell;
        output: Cell;
        cost: Cell;
        models: Cell;
    };
    signature: string;
}

/** The conversations table's rows: the latest started first. */
export function conversationRows(data: DashboardData): ConversationView[] {
    const names = modelNames(data);
    const rows = [...data.conversations].sort((a, b) => b.started - a.started || (a.id < b.id ? -1 : 1));
    return rows.map((c) => {
        const known = costView(c);
        const cells = {
            started: { text: formatWhen(c.started, data.generated), title: `${localDay(c.started)} ${formatClock(c.started)} to ${formatWhen(c.ended, c.started)}` },
            requests: { text: formatCount(c.requests), numeric: true },
            summarizations: { text: formatCount(c.summarizations), numeric: true },
            input: { text: formatCount(c.inputTokens), numeric: true },
            output: { text: formatCount(c.outputTokens), numeric: true },
            cost: known === null
                ? { text: DASH, numeric: true, title: `no price known for ${listNames(c.models, names)}` }
                : { text: known.text, numeric: true, title: known.title },
            models: { text: listNames(c.models, names), title: c.models.join(', ') },
        };
        return { id: c.id, cells, signature: JSON.stringify(cells) };
    });
}
