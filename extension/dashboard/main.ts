/**
 * Token Gauge's usage dashboard: the browser side, bundled by extension/esbuild.mjs into
 * server/tokengauge/data/dashboard.js for the VS Code webview and the standalone report
 * (`tokengauge report`). It reads `DashboardData` (./data.ts) from `<script id="tg-data">` and
 * renders into `<main id="tg-dashboard">`.
 *
 * In the webview (`acquireVsCodeApi` exists) it posts `{type: 'ready'}` once after the first
 * render and re-renders in place on each `window` message `{type: 'data', data: DashboardData}`.
 *
 * CSP (`style-src 'nonce-…'`): every `<style>` (ours and Plot's) carries the nonce of this
 * script, read from `document.currentScript` at load; no inline style attributes (see dom.ts).
 *
 * What a test can count (one element per datum):
 *   figure[data-chart="fill"] g.tg-point path          a request with inputTokens !== null and kind !== 'helper'
 *                                                      (symbols are <path>s: shape and colour say what happened)
 *   figure[data-chart="accuracy"] g.tg-point circle    a request with inputTokens !== null (and > 0)
 *   figure[data-chart="ratios"] g.tg-line path         a model × ratio component seen in the requests' `ratios`
 *                                                      (drawn once `details[data-details="calibration"]` is opened:
 *                                                      calibration's internals are closed by default)
 *   figure[data-chart="daily-tokens"] g.tg-bar rect    three per `days` row: cached input, fresh input, output
 *                                                      (stacked in that order; 0 tokens draws a 0-high rect)
 *   figure[data-chart="daily-cost"] g.tg-bar rect      a `days` row with costUsd !== null
 *   figure[data-chart="cache"] g.tg-point circle       a `days` row with inputTokens > 0 (its cache hit rate)
 *   table[data-table="conversations"] > tbody > tr     a conversation (data-id = its id), latest started first
 *   table[data-table="requests"] > tbody > tr[data-seq] a request, newest first
 *   .tg-region.tg-stacked                              a table too wide for its region, shown as cards
 *   #tg-dashboard .tg-tile[data-tile="today|total|requests|cache|input|output|saved"] .tg-tile-value
 * With no requests only `.tg-empty` shows (the sections are `hidden`).
 */
import { accuracyChart, ratiosChart } from './accuracyCharts';
import { noData, type ChartContext, type ChartResult, type LegendItem } from './chartKit';
import { symbolPath } from './chartSymbols';
import { COST_LEGEND } from './costs';
import { cacheChart, dailyCostChart, dailyTokensChart } from './dailyCharts';
import type { DashboardData } from './data';
import { h, s, styleElement } from './dom';
import { fillChart } from './fillChart';
import { formatWhen } from './format';
import { modelNames } from './models';
import { conversationRows, requestRows } from './rows';
import { CSS } from './style';
import { accuracySummary, dailySummary, fillSummary, summaryTiles } from './summaries';
import { conversationsTable, requestsTable } from './tables';
import { paletteKey, readPalette, type Palette } from './theme';

interface VsCodeApi {
    postMessage(message: unknown): void;
}
declare const acquireVsCodeApi: (() => VsCodeApi) | undefined;

// read at load: currentScript is only set while the script first runs
const NONCE = (document.currentScript as HTMLScriptElement | null)?.nonce
    || document.querySelector<HTMLScriptElement>('script[nonce]')?.nonce
    || '';

function isData(value: unknown): value is DashboardData {
    if (typeof value !== 'object' || value === null) {
        return false;
    }
    const v = value as Partial<Record<keyof DashboardData, unknown>>;
    return Array.isArray(v.requests) && Array.isArray(v.days) && Array.isArray(v.conversations)
        && Array.isArray(v.models) && typeof v.totals === 'object' && v.totals !== null;
}

function readInitialData(): DashboardData | null {
    const text = document.getElementById('tg-data')?.textContent ?? 'null';
    try {
        const value: unknown = JSON.parse(text);
        return isData(value) ? value : null;
    } catch (error) {
        console.error('Token Gauge: unreadable dashboard data', error);
        return null;
    }
}

// ---- figures ----------------------------------------------------------------------------------

interface Figure {
    id: string;
    title: string;
    el: HTMLElement;
    legend: HTMLUListElement;
    plot: HTMLDivElement;
    summary: HTMLSpanElement;
    draw: (ctx: ChartContext, width: number) => ChartResult;
    describe: (data: DashboardData) => string;
}

function figure(id: string, title: string, explain: string, draw: Figure['draw'], describe: Figure['describe'] = () => ''): Figure {
    const summary = h('span', { class: 'tg-summary' });
    const legend = h('ul', { class: 'tg-legend', 'aria-label': `${title}: legend` });
    const plot = h('div', { class: 'tg-plot' });
    const el = h('figure', { class: 'tg-figure', 'data-chart': id },
        h('figcaption', {}, h('strong', {}, title), h('span', { class: 'tg-explain' }, explain), summary),
        legend, plot);
    return { id, title, el, legend, plot, summary, draw, describe };
}

function legendSwatch(item: LegendItem): SVGSVGElement {
    const icon = s('svg', { width: item.mark === 'line' || item.mark === 'dash' ? 18 : 12, height: 12, 'aria-hidden': 'true' });
    switch (item.mark) {
        case 'swatch':
            icon.append(s('rect', { x: 0, y: 0, width: 12, height: 12, rx: 2, fill: item.color }));
            break;
        case 'line':
            icon.append(s('line', { x1: 0, x2: 18, y1: 6, y2: 6, stroke: item.color, 'stroke-width': 2 }));
            break;
        case 'dash':
            icon.append(s('line', { x1: 0, x2: 18, y1: 6, y2: 6, stroke: item.color, 'stroke-width': 1.5, 'stroke-dasharray': '4,3' }));
            break;
        default:
            icon.append(s('path', { d: symbolPath(item.mark, 4.2 * 4.2 * Math.PI), transform: 'translate(6,6)', fill: item.color }));
    }
    return icon;
}

// ---- the page ---------------------------------------------------------------------------------

class Dashboard {
    private data: DashboardData | null = null;
    private palette: Palette;
    private readonly sub = h('span', { class: 'tg-sub' });
    private readonly tiles = h('ul', { class: 'tg-tiles', 'aria-label': 'Summary' });
    private readonly costLegend = h('p', { class: 'tg-legend', 'data-legend': 'costs' }, COST_LEGEND);
    private readonly empty: HTMLDivElement;
    private readonly sections: HTMLElement[];
    private readonly figures: Figure[];
    private readonly conversations = conversationsTable();
    private readonly requests = requestsTable();
    private renderedWidth = 0;

    constructor(private readonly root: HTMLElement) {
        this.palette = readPalette(root);
        const fill = figure('fill', 'How full each request was',
            'Each mark is a conversation request, in order: how much of the model\u2019s context window its input took. Faint lines join the requests of a conversation.',
            fillChart, fillSummary);
        const accuracy = figure('accuracy', 'Estimate vs. the API\u2019s count',
            'Our token estimate\u2019s error on each request: above zero we over-estimated (safe), below we under-estimated.',
            accuracyChart, accuracySummary);
        const ratios = figure('ratios', 'Learned ratios',
            'What calibration learned after each request: the API\u2019s tokens per token we count, per model.',
            ratiosChart);
        const dailyTokens = figure('daily-tokens', 'Tokens per day',
            'Input read from the cache, fresh input and output, per model.', dailyTokensChart, dailySummary);
        const dailyCost = figure('daily-cost', 'Cost per day', 'Known costs in US dollars, per model.', dailyCostChart);
        const cache = figure('cache', 'Cache hit rate per day', 'Share of the input tokens read from the cache, per model.', cacheChart);
        this.figures = [fill, accuracy, ratios, dailyTokens, dailyCost, cache];

        this.empty = h('div', { class: 'tg-empty', hidden: true },
            h('strong', {}, 'No requests yet'),
            'This page fills in as you chat with Token Gauge models. It will show:',
            h('ul', {},
                h('li', {}, 'how full each request\u2019s context window was, and when Copilot summarized or Token Gauge trimmed'),
                h('li', {}, 'how close the token estimates came to what the API counted'),
                h('li', {}, 'tokens, cost and cache hits per day and model'),
                h('li', {}, 'your conversations and the most recent requests')));

        // calibration's internals, one click away for those who want them
        const calibration = h('details', { class: 'tg-details', 'data-details': 'calibration' },
            h('summary', {}, 'Calibration details: the ratios learned from the API\u2019s counts'), ratios.el);
        calibration.addEventListener('toggle', () => {
            if (calibration.open) {
                this.renderCharts();
            }
        });

        const section = (id: string, title: string, ...children: Element[]) =>
            h('section', { class: 'tg-section', 'aria-labelledby': `tg-h-${id}` }, h('h2', { id: `tg-h-${id}` }, title), ...children);
        this.sections = [
            section('fill', 'Context fill', fill.el),
            section('accuracy', 'Estimate accuracy', accuracy.el, calibration),
            section('daily', 'Tokens and cost per day', dailyTokens.el, h('div', { class: 'tg-pair' }, dailyCost.el, cache.el)),
            section('conversations', 'Conversations', this.conversations.region),
            section('requests', 'Recent requests', this.requests.region),
        ];
        const head = h('header', {},
            h('div', { class: 'tg-head' }, h('h1', {}, 'Token Gauge usage'), this.sub),
            this.tiles, this.costLegend);
        root.replaceChildren(head, this.empty, ...this.sections);
    }

    /** Show `data` (null: nothing yet), keeping what did not change. */
    update(data: DashboardData | null): void {
        this.data = data;
        this.renderHeader(data);
        const empty = data === null || data.requests.length === 0;
        this.empty.hidden = !empty;
        this.tiles.hidden = empty;
        this.costLegend.hidden = empty;
        for (const section of this.sections) {
            section.hidden = empty;
        }
        if (empty) {
            return;
        }
        this.conversations.update(conversationRows(data));
        this.requests.update(requestRows(data));
        this.renderCharts();
    }

    private renderHeader(data: DashboardData | null): void {
        if (data === null) {
            this.sub.textContent = 'no data yet';
            this.tiles.replaceChildren();
            return;
        }
        const days = data.retentionDays;
        this.sub.textContent = `last ${days} day${days === 1 ? '' : 's'} kept \u00b7 updated ${formatWhen(data.generated, data.generated)}`;
        this.tiles.replaceChildren(...summaryTiles(data).map((t) =>
            h('li', { class: 'tg-tile', 'data-tile': t.id, title: t.title },
                h('span', { class: 'tg-tile-label' }, t.label),
                h('span', { class: 'tg-tile-value' }, t.value),
                h('span', { class: 'tg-tile-detail' }, t.detail))));
    }

    /** (Re)draw every chart at its current width in the current colours. */
    renderCharts(): void {
        const data = this.data;
        if (data === null || data.requests.length === 0) {
            return;
        }
        this.palette = readPalette(this.root);
        this.renderedWidth = this.root.clientWidth;
        const ctx: ChartContext = { data, palette: this.palette, names: modelNames(data), nonce: NONCE };
        for (const fig of this.figures) {
            const width = Math.floor(fig.plot.clientWidth);
            if (width <= 0) {
                continue;
            }
            let result: ChartResult;
            try {
                result = fig.draw(ctx, width);
            } catch (error) {
                console.error(`Token Gauge: the ${fig.id} chart failed`, error);
                result = noData('This chart could not be drawn.', '');
            }
            const summary = result.summary || fig.describe(data);
            fig.summary.textContent = summary;
            fig.el.setAttribute('aria-label', summary ? `${fig.title}. ${summary}` : fig.title);
            fig.legend.replaceChildren(...result.legend.map((item) => h('li', {}, legendSwatch(item), item.label)));
            fig.legend.hidden = result.legend.length === 0;
            fig.plot.replaceChildren(...result.nodes);
        }
    }

    /** Redraw the charts if the width changed since they were drawn; lay the tables out anew. */
    resized(): void {
        if (this.root.clientWidth !== this.renderedWidth) {
            this.renderCharts();
        }
        this.conversations.fit();
        this.requests.fit();
    }

    /** Redraw the charts if the theme's colours changed. */
    themed(): void {
        if (paletteKey(readPalette(this.root)) !== paletteKey(this.palette)) {
            this.renderCharts();
        }
    }
}

// ---- start ------------------------------------------------------------------------------------

function start(): void {
    const root = document.getElementById('tg-dashboard');
    if (root === null) {
        return;
    }
    document.head.append(styleElement(CSS, NONCE));
    const dashboard = new Dashboard(root);
    dashboard.update(readInitialData());

    // width: charts follow the panel (debounced)
    let resizeTimer: ReturnType<typeof setTimeout> | undefined;
    new ResizeObserver(() => {
        clearTimeout(resizeTimer);
        resizeTimer = setTimeout(() => dashboard.resized(), 150);
    }).observe(root);

    // theme: VS Code switches body's class (and its variables on <html>); the report follows the OS
    let themeFrame = 0;
    const themed = () => {
        cancelAnimationFrame(themeFrame);
        themeFrame = requestAnimationFrame(() => dashboard.themed());
    };
    const observer = new MutationObserver(themed);
    observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['class', 'style'] });
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', themed);

    if (typeof acquireVsCodeApi === 'function') {
        const vscode = acquireVsCodeApi();
        window.addEventListener('message', (event: MessageEvent<unknown>) => {
            const message = event.data;
            if (typeof message === 'object' && message !== null && (message as { type?: unknown }).type === 'data') {
                const data = (message as { data?: unknown }).data;
                dashboard.update(isData(data) ? data : null);
            }
        });
        vscode.postMessage({ type: 'ready' });
    }
}

if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start, { once: true });
} else {
    start();
}
