/**
 * What every chart shares: what a chart gets (`ChartContext`) and gives back (`ChartResult`: its
 * legend, its nodes already made CSP-safe with `adopt`, a summary), the margins, the models'
 * colours and legend, the tooltips' style, and the x axis of the requests' charts.
 *
 * The requests' charts (fill, accuracy, ratios) share one x axis: the requests in order (`seq`),
 * with a tick at the first request of each step of minutes, hours or days (`timeAxis.ts`). Time would
 * squeeze the busy hours into a few pixels and spend the width on nights; in request order every
 * request gets the same room and a conversation's growth and summaries read left to right.
 */
import type * as Plot from '@observablehq/plot';

import type { SymbolName } from './chartSymbols';
import type { DashboardData } from './data';
import { adopt, h } from './dom';
import { localDay } from './format';
import { modelOrder, nameOf } from './models';
import type { Palette } from './theme';
import { requestTicks } from './timeAxis';

export interface ChartContext {
    data: DashboardData;
    palette: Palette;
    names: Map<string, string>;
    nonce: string;
}

export interface LegendItem {
    label: string;
    color: string;
    /** How the swatch is drawn: a symbol, a square swatch, a line, or a dashed rule. */
    mark: SymbolName | 'swatch' | 'line' | 'dash';
}

export interface ChartResult {
    legend: LegendItem[];
    nodes: Element[];
    /** One sentence read by screen readers and shown under the title. */
    summary: string;
}

export const MARGIN_LEFT = 50;
export const MARGIN_RIGHT = 14;

/** A left margin wide enough for the y tick `labels` (about 5.8 px a character at Plot's 10 px,
 * and the tick), `MARGIN_LEFT` at least. */
export function marginFor(labels: readonly string[]): number {
    return Math.max(MARGIN_LEFT, Math.ceil(Math.max(0, ...labels.map((l) => l.length)) * 5.8 + 12));
}

/** A chart's Plot output, made CSP-safe. */
export function finish(ctx: ChartContext, chart: Element): Element {
    return adopt(chart, ctx.nonce);
}

/** A chart that has nothing to draw: a line of text instead. */
export function noData(text: string, summary = text): ChartResult {
    return { legend: [], nodes: [h('p', { class: 'tg-nodata' }, text)], summary };
}

export function tipStyle(ctx: ChartContext): Plot.TipOptions {
    return { fill: ctx.palette.background, stroke: ctx.palette.border, fontSize: 11 };
}

/** Each model's colour, in `modelOrder`, for Plot's colour scale and for `of(id)`. */
export function modelColors(ctx: ChartContext): { domain: string[]; range: string[]; of: (id: string) => string } {
    const domain = modelOrder(ctx.data);
    const range = domain.map((_, i) => ctx.palette.series[i % ctx.palette.series.length]);
    return { domain, range, of: (id) => range[domain.indexOf(id)] ?? ctx.palette.muted };
}

/** A legend of the models among `ids`, in colour order. */
export function modelLegend(ctx: ChartContext, ids: Iterable<string>, mark: LegendItem['mark']): LegendItem[] {
    const colors = modelColors(ctx);
    const present = new Set(ids);
    return colors.domain.filter((id) => present.has(id)).map((id) => ({ label: nameOf(ctx.names, id), color: colors.of(id), mark }));
}

/** The shared x axis of the requests' charts. */
export function requestAxis(ctx: ChartContext, width: number): {
    domain: [number, number]; ticks: number[]; format: (seq: number) => string; label: string; days: number[]; radius: number;
} {
    const requests = ctx.data.requests;
    const seqs = requests.map((r) => r.seq);
    const lo = Math.min(...seqs) - 0.5;
    const hi = Math.max(...seqs) + 0.5;
    const perSeq = Math.max(1e-6, (width - MARGIN_LEFT - MARGIN_RIGHT) / (hi - lo));
    const time = requestTicks(requests, 62 / perSeq);
    const labels = new Map(time.ticks.map((t) => [t.seq, t.label]));
    // a faint rule where each day starts (but the first)
    const days: number[] = [];
    let last = '';
    for (const r of [...requests].sort((a, b) => a.seq - b.seq)) {
        const day = localDay(r.time);
        if (last && day !== last) {
            days.push(r.seq - 0.5);
        }
        last = day;
    }
    // dots shrink as requests crowd (from 4.2 px down to 2 px)
    const radius = Math.max(2, Math.min(4.2, perSeq * 0.6));
    return { domain: [lo, hi], ticks: time.ticks.map((t) => t.seq), format: (seq) => labels.get(seq) ?? '', label: time.label, days, radius };
}
