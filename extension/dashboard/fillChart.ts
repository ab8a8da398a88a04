/**
 * The context fill chart: how much of its model's window each conversation request took, in
 * request order, with a symbol for what happened to it (summarized, trimmed…), a faint trail
 * per conversation, and rules at the window and at the models' input budgets.
 */
import * as Plot from '@observablehq/plot';

import { finish, MARGIN_LEFT, MARGIN_RIGHT, requestAxis, tipStyle, type ChartContext, type ChartResult, type LegendItem } from './chartKit';
import { SYMBOLS, type SymbolName } from './chartSymbols';
import type { RequestRow } from './data';
import { formatCount, formatWhen, tickFormat } from './format';
import { nameOf } from './models';
import { FILL_CATEGORIES, fillCategory, fillFraction, fillRequests, whatHappenedText, type FillCategory } from './requests';
import { budgets, linearAxis, type Budget } from './series';
import type { Palette } from './theme';

const FILL_SYMBOLS: Record<FillCategory, SymbolName> = {
    turn: 'circle', summarization: 'diamond', summarized: 'triangle', trimmed: 'square',
};

function fillColors(p: Palette): Record<FillCategory, string> {
    return { turn: p.blue, summarization: p.purple, summarized: p.green, trimmed: p.red };
}

interface FillPoint {
    r: RequestRow;
    seq: number;
    percent: number;
    category: FillCategory;
    conversation: string;
}

export function fillChart(ctx: ChartContext, width: number): ChartResult {
    const p = ctx.palette;
    const colors = fillColors(p);
    const requests = fillRequests(ctx.data.requests);
    const points: FillPoint[] = requests.map((r) => ({
        r, seq: r.seq, percent: (fillFraction(r) ?? 0) * 100, category: fillCategory(r), conversation: r.conversation ?? `#${r.seq}`,
    }));
    const present = new Set(points.map((d) => d.category));
    const legend: LegendItem[] = FILL_CATEGORIES
        .filter((c) => c.id === 'turn' || present.has(c.id))
        .map((c) => ({ label: c.label, color: colors[c.id], mark: FILL_SYMBOLS[c.id] }));
    const rules = budgets(requests, ctx.names);
    if (rules.length > 0) {
        legend.push({ label: 'input budget', color: p.muted, mark: 'dash' });
    }
    legend.push({ label: 'context window', color: p.red, mark: 'line' });

    const axis = requestAxis(ctx, width);
    const top = Math.max(105, ...points.map((d) => d.percent * 1.06));
    const y = linearAxis(0, top, 5);
    const height = width < 560 ? 240 : 280;
    const margin = { top: 14, bottom: 36 };
    const labels = placeBudgetLabels(rules, top, height, margin);
    const halo = { stroke: p.background, strokeWidth: 3, strokeOpacity: 0.85 };
    const chart = Plot.plot({
        width,
        height,
        marginLeft: MARGIN_LEFT,
        marginRight: MARGIN_RIGHT,
        marginTop: margin.top,
        marginBottom: margin.bottom,
        x: { domain: axis.domain, ticks: axis.ticks, tickFormat: axis.format, label: axis.label, tickSize: 4 },
        y: { domain: y.domain, ticks: y.ticks, tickFormat: tickFormat(y.ticks, 'percent'), grid: true, label: 'context window used' },
        color: { domain: FILL_CATEGORIES.map((c) => c.id), range: FILL_CATEGORIES.map((c) => colors[c.id]) },
        symbol: { domain: FILL_CATEGORIES.map((c) => c.id), range: FILL_CATEGORIES.map((c) => SYMBOLS[FILL_SYMBOLS[c.id]]) },
        r: { type: 'identity' },
        marks: [
            Plot.ruleX(axis.days, { stroke: p.border, strokeDasharray: '2,3' }),
            Plot.ruleY([100], { stroke: p.red, strokeOpacity: 0.8 }),
            Plot.ruleY(rules, { y: (b: Budget) => b.fraction * 100, stroke: p.muted, strokeDasharray: '5,4' }),
            Plot.line(points, { x: 'seq', y: 'percent', z: 'conversation', stroke: p.muted, strokeOpacity: axis.radius > 3 ? 0.35 : 0.2, strokeWidth: 1, className: 'tg-trail' }),
            // turns first, so the rarer marks are drawn over them
            Plot.dot([...points].sort((a, b) => Number(b.category === 'turn') - Number(a.category === 'turn')), {
                x: 'seq',
                y: 'percent',
                fill: 'category',
                symbol: 'category',
                // the rarer marks stay findable when turns crowd
                r: (d: FillPoint) => (d.category === 'turn' ? axis.radius : Math.max(3.2, axis.radius)),
                stroke: p.background,
                strokeWidth: axis.radius > 3 ? 0.8 : 0.4,
                className: 'tg-point',
                channels: {
                    model: { value: (d: FillPoint) => nameOf(ctx.names, d.r.modelId), label: 'Model' },
                    when: { value: (d: FillPoint) => formatWhen(d.r.time, ctx.data.generated), label: 'Time' },
                    tokens: { value: (d: FillPoint) => `${formatCount(d.r.inputTokens ?? 0)} of ${formatCount(d.r.window)}`, label: 'Input' },
                    what: { value: (d: FillPoint) => whatHappenedText(d.r), label: 'What' },
                },
                tip: {
                    ...tipStyle(ctx),
                    format: { x: false, fill: false, symbol: false, r: false, y: (v: number) => `${v.toFixed(1)}%`, model: true, when: true, tokens: true, what: true },
                },
            }),
            Plot.text(['window'], { y: 100, text: (d: string) => d, frameAnchor: 'right', textAnchor: 'end', lineAnchor: 'bottom', dy: -3, fill: p.red, ...halo }),
            Plot.text(labels, { y: 'y', text: 'label', frameAnchor: 'right', textAnchor: 'end', lineAnchor: 'top', fill: p.muted, ...halo }),
        ],
    });
    return { legend, nodes: [finish(ctx, chart)], summary: '' };
}

/** Where the budget rules' labels go (in y units, the top of each): under their rule, pushed
 * down so that none overlaps the one above. */
function placeBudgetLabels(rules: readonly Budget[], top: number, height: number, margin: { top: number; bottom: number }): { y: number; label: string }[] {
    const inner = height - margin.top - margin.bottom;
    const toPx = (v: number) => margin.top + (1 - v / top) * inner;
    const toY = (px: number) => (1 - (px - margin.top) / inner) * top;
    const line = 13;
    let next = -Infinity;
    return [...rules].sort((a, b) => b.fraction - a.fraction).map((b) => {
        const px = Math.max(toPx(b.fraction * 100) + 3, next);
        next = px + line;
        return { y: toY(px), label: b.label };
    });
}
