/**
 * The data series the charts draw, derived from the dashboard data (pure, no DOM): budget rules,
 * per-day token segments, costs and cache rates, learned ratios, the days of the per-day axes, and
 * the ticks of the value axes.
 */
import type { DayModelRow, RequestRow } from './data';
import { dayRange, formatPercent, shiftDay } from './format';
import { listNames } from './models';

// ---- input budgets ----------------------------------------------------------------------------

export interface Budget {
    /** maxInputTokens ÷ window. */
    fraction: number;
    /** "budget: GPT-4.1, Claude" */
    label: string;
}

/** The input budgets of the models of `requests` (each model's latest), as shares of the window;
 * budgets less than `merge` apart share a rule and a label. */
export function budgets(requests: readonly RequestRow[], names: Map<string, string>, merge = 0.03): Budget[] {
    const latest = new Map<string, number>();
    for (const r of requests) {
        if (r.window > 0 && r.maxInputTokens > 0) {
            latest.set(r.modelId, Math.min(1, r.maxInputTokens / r.window));
        }
    }
    const sorted = [...latest].sort((a, b) => a[1] - b[1]);
    const groups: { fraction: number; ids: string[] }[] = [];
    for (const [id, fraction] of sorted) {
        const last = groups.at(-1);
        if (last && fraction - last.fraction < merge) {
            last.ids.push(id);
        } else {
            groups.push({ fraction, ids: [id] });
        }
    }
    return groups
        .filter((g) => g.fraction < 0.9995)
        .map((g) => ({ fraction: g.fraction, label: `budget ${formatPercent(g.fraction)}: ${listNames(g.ids, names)}` }));
}

// ---- per day ----------------------------------------------------------------------------------

type Segment = 'cached input' | 'fresh input' | 'output';
export const SEGMENTS: readonly Segment[] = ['cached input', 'fresh input', 'output'];

export interface TokenSegment {
    day: string;
    modelId: string;
    segment: Segment;
    tokens: number;
}

/** Three stacked segments per `days` row: cached input, fresh input (the rest of the input,
 * cache writes included), output. */
export function tokenSegments(days: readonly DayModelRow[]): TokenSegment[] {
    return days.flatMap((d) => [
        { day: d.day, modelId: d.modelId, segment: 'cached input' as const, tokens: d.cachedTokens },
        { day: d.day, modelId: d.modelId, segment: 'fresh input' as const, tokens: Math.max(0, d.inputTokens - d.cachedTokens) },
        { day: d.day, modelId: d.modelId, segment: 'output' as const, tokens: d.outputTokens },
    ]);
}

/** Each day's known cost over all models (the days with a known cost only). */
export function dailyCostTotals(days: readonly DayModelRow[]): { day: string; costUsd: number }[] {
    const totals = new Map<string, number>();
    for (const d of days) {
        if (d.costUsd !== null) {
            totals.set(d.day, (totals.get(d.day) ?? 0) + d.costUsd);
        }
    }
    return [...totals].map(([day, costUsd]) => ({ day, costUsd })).sort((a, b) => (a.day < b.day ? -1 : 1));
}

/** Cache hit rate of each `days` row that has input tokens. */
export function cacheRates(days: readonly DayModelRow[]): { day: string; modelId: string; rate: number; cachedTokens: number; inputTokens: number }[] {
    return days
        .filter((d) => d.inputTokens > 0)
        .map((d) => ({ day: d.day, modelId: d.modelId, rate: d.cachedTokens / d.inputTokens, cachedTokens: d.cachedTokens, inputTokens: d.inputTokens }));
}

// ---- learned ratios ---------------------------------------------------------------------------

const RATIO_COMPONENTS: readonly { id: string; label: string }[] = [
    { id: 'text', label: 'text: API tokens per counted token' },
    { id: 'cjk', label: 'CJK text: API tokens per counted token' },
    { id: 'tools', label: 'tools: API tokens per counted token' },
    { id: 'message', label: 'per message: API tokens' },
    { id: 'fixed', label: 'per request: fixed API tokens' },
];

export interface RatioPoint {
    seq: number;
    time: number;
    modelId: string;
    component: string;
    value: number;
}

/** The learned ratios after each request, one point per request × component. */
export function ratioPoints(requests: readonly RequestRow[]): RatioPoint[] {
    const points: RatioPoint[] = [];
    for (const r of [...requests].sort((a, b) => a.seq - b.seq)) {
        for (const [component, value] of Object.entries(r.ratios)) {
            if (Number.isFinite(value)) {
                points.push({ seq: r.seq, time: r.time, modelId: r.modelId, component, value });
            }
        }
    }
    return points;
}

/** The components present in `points`, the known ones first in their usual order. */
export function ratioComponents(points: readonly RatioPoint[]): string[] {
    const present = new Set(points.map((p) => p.component));
    const known = RATIO_COMPONENTS.map((c) => c.id).filter((id) => present.has(id));
    return [...known, ...[...present].filter((id) => !known.includes(id)).sort()];
}

export function ratioLabel(component: string): string {
    return RATIO_COMPONENTS.find((c) => c.id === component)?.label ?? component;
}

// ---- day axes -------------------------------------------------------------------------------

/** The fewest days a per-day axis shows. */
const MIN_DAYS = 7;

/** The days from the first of `days` to `today` (or the last of `days`, if later), `MIN_DAYS`
 * at least. */
export function dayDomain(days: readonly string[], today: string): string[] {
    const sorted = [...days, today].sort();
    const last = sorted[sorted.length - 1];
    const first = sorted[0] < shiftDay(last, 1 - MIN_DAYS) ? sorted[0] : shiftDay(last, 1 - MIN_DAYS);
    return dayRange(first, last);
}

/** Every `step`-th day of `days` (so that labels of narrow bars do not overlap), the last kept. */
export function thinDays(days: readonly string[], step: number): string[] {
    const n = Math.max(1, Math.ceil(step));
    return days.filter((_, i) => (days.length - 1 - i) % n === 0);
}

/** d3's tick increment for about `count` ticks over [lo, hi]: 1, 2 or 5 times a power of ten;
 * a step under 1 is given as −1/step (an integer), which keeps the ticks exact. */
function tickIncrement(lo: number, hi: number, count: number): number {
    const step = (hi - lo) / Math.max(1, count);
    const power = Math.floor(Math.log10(step));
    const error = step / 10 ** power;
    const factor = error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.sqrt(2) ? 2 : 1;
    return power >= 0 ? factor * 10 ** power : -(10 ** -power) / factor;
}

/** [lo, hi] rounded out to the steps of about `count` ticks, as d3's `nice` does. */
function niceDomain(lo: number, hi: number, count: number): [number, number] {
    let previous = 0;
    for (let i = 0; i < 10; i++) {
        const inc = tickIncrement(lo, hi, count);
        if (inc === previous || !Number.isFinite(inc) || inc === 0) {
            break;
        }
        if (inc > 0) {
            lo = Math.floor(lo / inc) * inc;
            hi = Math.ceil(hi / inc) * inc;
        } else {
            lo = Math.floor(lo * -inc) / -inc;
            hi = Math.ceil(hi * -inc) / -inc;
        }
        previous = inc;
    }
    return [lo, hi];
}

/** About `count` ticks at d3's steps within [lo, hi], as d3's `ticks` (the ends found by
 * rounding, so that float noise does not drop a tick that is on an end of the domain). */
function linearTicks(lo: number, hi: number, count: number): number[] {
    const inc = tickIncrement(lo, hi, count);
    if (!Number.isFinite(inc) || inc === 0) {
        return [lo];
    }
    const at = (i: number) => (inc > 0 ? i * inc : i / -inc);
    let first = Math.round(inc > 0 ? lo / inc : lo * -inc);
    let last = Math.round(inc > 0 ? hi / inc : hi * -inc);
    if (at(first) < lo) {
        first++;
    }
    if (at(last) > hi) {
        last--;
    }
    const ticks: number[] = [];
    for (let i = first; i <= last; i++) {
        ticks.push(at(i));
    }
    return ticks;
}

export interface LinearAxis {
    domain: [number, number];
    ticks: number[];
}

/** A linear axis over the values from `lo` to `hi`: about `count` ticks and the domain, rounded
 * out with `nice` as Plot's `nice: true` does (d3's nice for ten ticks). The charts give Plot
 * both, so that `tickFormat` sees every tick of the axis. A range narrower than `minSpan` (a
 * flat series, say) is widened to it around its middle, so float noise does not become ticks
 * with many decimals. */
export function linearAxis(lo: number, hi: number, count: number, options: { nice?: boolean; minSpan?: number } = {}): LinearAxis {
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
        return { domain: [0, 1], ticks: linearTicks(0, 1, count) };
    }
    if (lo > hi) {
        [lo, hi] = [hi, lo];
    }
    const minSpan = options.minSpan ?? 0;
    if (hi - lo < minSpan || hi === lo) {
        const mid = (lo + hi) / 2;
        const half = (minSpan > 0 ? minSpan : Math.max(Math.abs(mid), 1)) / 2;
        [lo, hi] = [mid - half, mid + half];
    }
    const domain = options.nice ? niceDomain(lo, hi, 10) : [lo, hi] as [number, number];
    return { domain, ticks: linearTicks(domain[0], domain[1], count) };
}
