/**
 * The estimate accuracy charts: our token estimate's error on each request, and the ratios
 * calibration learned after each request (small multiples, one per ratio component). Both use
 * the requests' x axis (`requestAxis`).
 */
import * as Plot from '@observablehq/plot';

import { finish, MARGIN_LEFT, MARGIN_RIGHT, modelColors, modelLegend, noData, requestAxis, tipStyle, type ChartContext, type ChartResult } from './chartKit';
import type { RequestRow } from './data';
import { h } from './dom';
import { formatCount, formatSignedPercent, formatWhen, tickFormat } from './format';
import { nameOf } from './models';
import { estimateError } from './requests';
import { linearAxis, ratioComponents, ratioLabel, ratioPoints, type RatioPoint } from './series';

interface ErrorPoint {
    r: RequestRow;
    seq: number;
    percent: number;
}

export function accuracyChart(ctx: ChartContext, width: number): ChartResult {
    const p = ctx.palette;
    const colors = modelColors(ctx);
    const points: ErrorPoint[] = [];
    for (const r of ctx.data.requests) {
        const error = estimateError(r);
        if (error !== null) {
            points.push({ r, seq: r.seq, percent: error * 100 });
        }
    }
    const axis = requestAxis(ctx, width);
    const values = points.map((d) => d.percent);
    const lo = Math.min(-2, ...values);
    const hi = Math.max(2, ...values);
    const y = linearAxis(lo - (hi - lo) * 0.06, hi + (hi - lo) * 0.06, 5, { nice: true });
    const chart = Plot.plot({
        width,
        height: width < 560 ? 200 : 230,
        marginLeft: MARGIN_LEFT,
        marginRight: MARGIN_RIGHT,
        marginTop: 14,
        marginBottom: 36,
        x: { domain: axis.domain, ticks: axis.ticks, tickFormat: axis.format, label: axis.label, tickSize: 4 },
        y: { domain: y.domain, ticks: y.ticks, tickFormat: tickFormat(y.ticks, 'signed-percent'), grid: true, label: 'estimate error' },
        color: { domain: colors.domain, range: colors.range },
        marks: [
            Plot.ruleX(axis.days, { stroke: p.border, strokeDasharray: '2,3' }),
            Plot.ruleY([0], { stroke: p.foreground, strokeOpacity: 0.6 }),
            Plot.dot(points, {
                x: 'seq',
                y: 'percent',
                fill: (d: ErrorPoint) => d.r.modelId,
                r: Math.min(3.4, axis.radius),
                fillOpacity: 0.9,
                stroke: p.background,
                strokeWidth: 0.6,
                className: 'tg-point',
                channels: {
                    model: { value: (d: ErrorPoint) => nameOf(ctx.names, d.r.modelId), label: 'Model' },
                    when: { value: (d: ErrorPoint) => formatWhen(d.r.time, ctx.data.generated), label: 'Time' },
                    estimate: { value: (d: ErrorPoint) => formatCount(d.r.estimatedTokens), label: 'Estimate' },
                    counted: { value: (d: ErrorPoint) => formatCount(d.r.inputTokens ?? 0), label: 'API count' },
                },
                tip: {
                    ...tipStyle(ctx),
                    format: { x: false, fill: false, y: (v: number) => formatSignedPercent(v / 100), model: true, when: true, estimate: true, counted: true },
                },
            }),
        ],
    });
    return { legend: modelLegend(ctx, points.map((d) => d.r.modelId), 'circle'), nodes: [finish(ctx, chart)], summary: '' };
}

export function ratiosChart(ctx: ChartContext, width: number): ChartResult {
    const colors = modelColors(ctx);
    const points = ratioPoints(ctx.data.requests);
    const components = ratioComponents(points);
    if (components.length === 0) {
        return noData('No ratios learned yet: they appear once the API reports usage.', 'No ratios learned yet.');
    }
    const gap = 24;
    const columns = Math.max(1, Math.min(components.length, Math.floor((width + gap) / (250 + gap))));
    const panelWidth = Math.floor((width - gap * (columns - 1)) / columns);
    const grid = h('div', { class: 'tg-multiples' });
    grid.style.gridTemplateColumns = `repeat(${columns}, minmax(0, 1fr))`;
    const axis = requestAxis(ctx, panelWidth);
    for (const component of components) {
        const mine = points.filter((d) => d.component === component);
        const last = new Map<string, RatioPoint>();
        for (const d of mine) {
            last.set(d.modelId, d);
        }
        // a flat ratio gets a band of ±0.5% around it rather than ticks in float noise
        const values = mine.map((d) => d.value);
        const lo = Math.min(...values);
        const hi = Math.max(...values);
        const y = linearAxis(lo, hi, 3, { nice: true, minSpan: Math.max(1, Math.abs(lo + hi) / 2) * 0.01 });
        const big = Math.max(...y.ticks.map(Math.abs)) >= 1000;
        const chart = Plot.plot({
            width: panelWidth,
            height: 142,
            marginLeft: MARGIN_LEFT,
            marginRight: MARGIN_RIGHT,
            marginTop: 10,
            marginBottom: 36,
            x: { domain: axis.domain, ticks: axis.ticks, tickFormat: axis.format, label: axis.label, tickSize: 3 },
            y: { domain: y.domain, ticks: y.ticks, tickFormat: tickFormat(y.ticks, big ? 'tokens' : 'number'), grid: true, label: null },
            color: { domain: colors.domain, range: colors.range },
            marks: [
                Plot.line(mine, {
                    x: 'seq', y: 'value', z: 'modelId', stroke: 'modelId', strokeWidth: 1.6, curve: 'step-after', className: 'tg-line',
                    channels: { model: { value: (d: RatioPoint) => nameOf(ctx.names, d.modelId), label: 'Model' }, when: { value: (d: RatioPoint) => formatWhen(d.time, ctx.data.generated), label: 'Time' } },
                    tip: { ...tipStyle(ctx), format: { x: false, stroke: false, z: false, y: (v: number) => String(Math.round(v * 1000) / 1000), model: true, when: true } },
                }),
                Plot.dot([...last.values()], { x: 'seq', y: 'value', fill: 'modelId', r: 2.5, className: 'tg-end' }),
            ],
        });
        grid.append(h('div', { class: 'tg-panel' }, h('p', { class: 'tg-panel-title' }, ratioLabel(component)), finish(ctx, chart)));
    }
    const series = new Set(points.map((d) => `${d.modelId}\u0000${d.component}`)).size;
    return {
        legend: modelLegend(ctx, points.map((d) => d.modelId), 'line'),
        nodes: [grid],
        summary: `${series} learned ratio${series === 1 ? '' : 's'} over ${formatCount(new Set(points.map((d) => d.seq)).size)} requests.`,
    };
}
