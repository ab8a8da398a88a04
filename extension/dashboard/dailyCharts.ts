/**
 * The per-day charts: tokens per day (cached input, fresh input and output stacked, one row per
 * model), cost per day (stacked by model, with each day's total), and the cache hit rate per day
 * and model. They share an x axis of days, the days without requests included, a week at least
 * (up to today), so that a day is seen among others.
 */
import * as Plot from '@observablehq/plot';

import { finish, MARGIN_LEFT, MARGIN_RIGHT, marginFor, modelColors, modelLegend, noData, tipStyle, type ChartContext, type ChartResult } from './chartKit';
import { costView } from './costs';
import type { DayModelRow } from './data';
import { formatCount, formatDay, formatPercent, formatTokens, formatUsd, localDay, tickFormat } from './format';
import { modelOrder, nameOf } from './models';
import { cacheRates, dailyCostTotals, dayDomain, linearAxis, SEGMENTS, thinDays, tokenSegments, type TokenSegment } from './series';
import { zoneLabel } from './timeAxis';

function dayAxis(ctx: ChartContext, width: number, marginLeft = MARGIN_LEFT): { domain: string[]; ticks: string[]; label: string; band: number; padding: number } {
    const domain = dayDomain(ctx.data.days.map((d) => d.day), localDay(ctx.data.generated));
    const band = (width - marginLeft - MARGIN_RIGHT) / Math.max(1, domain.length);
    // bars no wider than about 56 px
    const padding = Math.min(0.8, Math.max(0.22, 1 - 56 / band));
    return { domain, ticks: thinDays(domain, 52 / band), label: `local date (${zoneLabel(ctx.data.generated)})`, band, padding };
}

export function dailyTokensChart(ctx: ChartContext, width: number): ChartResult {
    const p = ctx.palette;
    const days = ctx.data.days;
    const segments = tokenSegments(days);
    const order = modelOrder(ctx.data);
    const models = order.filter((id) => days.some((d) => d.modelId === id));
    const axis = dayAxis(ctx, width);
    const segmentColors = [p.green, p.blue, p.orange];
    const facet = 118;
    // the tallest stack: cached + fresh input (the input, or the cached tokens if more) + output
    const y = linearAxis(0, Math.max(1, ...days.map((d) => Math.max(d.inputTokens, d.cachedTokens) + d.outputTokens)), 3);
    const chart = Plot.plot({
        width,
        height: 26 + 26 + models.length * facet,
        marginLeft: MARGIN_LEFT,
        marginRight: MARGIN_RIGHT,
        marginTop: 22,
        marginBottom: 40,
        x: { domain: axis.domain, ticks: axis.ticks, tickFormat: formatDay, label: axis.label, padding: axis.padding, tickSize: 0 },
        y: { domain: y.domain, ticks: y.ticks, tickFormat: tickFormat(y.ticks, 'tokens'), grid: true, label: null },
        fy: { domain: models, axis: null, padding: 0.2 },
        color: { domain: [...SEGMENTS], range: segmentColors },
        marks: [
            Plot.barY(segments, {
                x: 'day', y: 'tokens', fy: 'modelId', fill: 'segment', order: [...SEGMENTS], className: 'tg-bar',
                channels: {
                    model: { value: (d: TokenSegment) => nameOf(ctx.names, d.modelId), label: 'Model' },
                    date: { value: (d: TokenSegment) => formatDay(d.day), label: 'Day' },
                    amount: { value: (d: TokenSegment) => formatCount(d.tokens), label: 'Tokens' },
                },
                tip: { ...tipStyle(ctx), format: { x: false, y: false, fy: false, fill: true, model: true, date: true, amount: true } },
            }),
            Plot.ruleY([0], { stroke: p.muted, strokeOpacity: 0.5 }),
            Plot.text(models, {
                fy: (id: string) => id, text: (id: string) => nameOf(ctx.names, id), frameAnchor: 'top-left', textAnchor: 'start', lineAnchor: 'bottom',
                dy: -6, dx: -MARGIN_LEFT + 2, fill: p.foreground, fontWeight: 600, fontSize: 11.5,
            }),
        ],
    });
    return {
        legend: SEGMENTS.map((s, i) => ({ label: s, color: segmentColors[i], mark: 'swatch' as const })),
        nodes: [finish(ctx, chart)],
        summary: '',
    };
}

export function dailyCostChart(ctx: ChartContext, width: number): ChartResult {
    const p = ctx.palette;
    const colors = modelColors(ctx);
    const rows = ctx.data.days.filter((d) => d.costUsd !== null);
    const unpriced = ctx.data.days.filter((d) => d.unpriced > 0);
    const unpricedNames = [...new Set(unpriced.map((d) => nameOf(ctx.names, d.modelId)))].join(', ');
    if (rows.length === 0) {
        return noData(unpricedNames ? `No known cost: no price known for ${unpricedNames}.` : 'No known cost yet.');
    }
    const totals = dailyCostTotals(rows);
    const top = Math.max(...totals.map((t) => t.costUsd));
    const y = linearAxis(0, top > 0 ? top * 1.08 : 1, 4, { nice: true });
    const yFormat = tickFormat(y.ticks, 'usd');
    // tiny costs take many decimals ("$0.000005")
    const marginLeft = marginFor(y.ticks.map(yFormat));
    const axis = dayAxis(ctx, width, marginLeft);
    const labels = axis.band >= 46;
    const chart = Plot.plot({
        width,
        height: width < 560 ? 190 : 210,
        marginLeft,
        marginRight: MARGIN_RIGHT,
        marginTop: labels ? 20 : 12,
        marginBottom: 40,
        x: { domain: axis.domain, ticks: axis.ticks, tickFormat: formatDay, label: axis.label, padding: axis.padding, tickSize: 0 },
        y: { domain: y.domain, ticks: y.ticks, tickFormat: yFormat, grid: true, label: null },
        color: { domain: colors.domain, range: colors.range },
        marks: [
            Plot.barY(rows, {
                x: 'day', y: 'costUsd', fill: 'modelId', order: colors.domain, className: 'tg-bar',
                channels: {
                    model: { value: (d: DayModelRow) => nameOf(ctx.names, d.modelId), label: 'Model' },
                    date: { value: (d: DayModelRow) => formatDay(d.day), label: 'Day' },
                    cost: { value: (d: DayModelRow) => costView(d)?.text ?? formatUsd(d.costUsd), label: 'Cost' },
                    count: { value: (d: DayModelRow) => formatCount(d.requests), label: 'Requests' },
                },
                tip: { ...tipStyle(ctx), format: { x: false, y: false, fill: false, model: true, date: true, cost: true, count: true } },
            }),
            Plot.ruleY([0], { stroke: p.muted, strokeOpacity: 0.5 }),
            labels ? Plot.text(totals, { x: 'day', y: 'costUsd', text: (t: { costUsd: number }) => formatUsd(t.costUsd), lineAnchor: 'bottom', dy: -4, fill: p.foreground }) : null,
        ],
    });
    return {
        legend: modelLegend(ctx, rows.map((d) => d.modelId), 'swatch'),
        nodes: [finish(ctx, chart)],
        summary: unpricedNames ? `Not counted: the requests of ${unpricedNames} (no price known).` : '',
    };
}

/** The rows of each model with a NaN on the days between its first and last that have none,
 * so that its line breaks there instead of bridging the gap. */
function withGaps<T extends { day: string; modelId: string; percent: number }>(rows: readonly T[], days: readonly string[]): { day: string; modelId: string; percent: number }[] {
    const out: { day: string; modelId: string; percent: number }[] = [];
    for (const id of new Set(rows.map((r) => r.modelId))) {
        const mine = new Map(rows.filter((r) => r.modelId === id).map((r) => [r.day, r.percent]));
        const present = days.map((d, i) => (mine.has(d) ? i : -1)).filter((i) => i >= 0);
        for (const day of days.slice(present[0], (present[present.length - 1] ?? -1) + 1)) {
            out.push({ day, modelId: id, percent: mine.get(day) ?? NaN });
        }
    }
    return out;
}

export function cacheChart(ctx: ChartContext, width: number): ChartResult {
    const p = ctx.palette;
    const colors = modelColors(ctx);
    const rates = cacheRates(ctx.data.days).map((d) => ({ ...d, percent: d.rate * 100 }));
    if (rates.length === 0) {
        return noData('No usage reported yet.');
    }
    const axis = dayAxis(ctx, width);
    type Rate = (typeof rates)[number];
    const y = linearAxis(0, 100, 4);
    const chart = Plot.plot({
        width,
        height: width < 560 ? 190 : 210,
        marginLeft: MARGIN_LEFT,
        marginRight: MARGIN_RIGHT,
        marginTop: 12,
        marginBottom: 40,
        x: { type: 'point', domain: axis.domain, ticks: axis.ticks, tickFormat: formatDay, label: axis.label, padding: 0.5, tickSize: 0 },
        y: { domain: y.domain, ticks: y.ticks, tickFormat: tickFormat(y.ticks, 'percent'), grid: true, label: null },
        color: { domain: colors.domain, range: colors.range },
        marks: [
            Plot.line(withGaps(rates, axis.domain), { x: 'day', y: 'percent', z: 'modelId', stroke: 'modelId', strokeWidth: 1.6, strokeOpacity: 0.8, className: 'tg-line' }),
            Plot.dot(rates, {
                x: 'day', y: 'percent', fill: 'modelId', r: 3.4, stroke: p.background, strokeWidth: 0.8, className: 'tg-point',
                channels: {
                    model: { value: (d: Rate) => nameOf(ctx.names, d.modelId), label: 'Model' },
                    date: { value: (d: Rate) => formatDay(d.day), label: 'Day' },
                    cached: { value: (d: Rate) => `${formatTokens(d.cachedTokens)} of ${formatTokens(d.inputTokens)}`, label: 'Cached' },
                },
                tip: { ...tipStyle(ctx), format: { x: false, fill: false, y: (v: number) => formatPercent(v / 100), model: true, date: true, cached: true } },
            }),
        ],
    });
    return { legend: modelLegend(ctx, rates.map((d) => d.modelId), 'circle'), nodes: [finish(ctx, chart)], summary: '' };
}
