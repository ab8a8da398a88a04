/**
 * The words around the numbers (pure, no DOM): the summary tiles at the top of the page and the
 * one-sentence captions under the charts' titles (also read by screen readers).
 */
import { costView, ESTIMATED_MARK, type CostParts } from './costs';
import type { DashboardData, DayModelRow, RequestRow } from './data';
import { DASH, formatCount, formatDay, formatPercent, formatSignedPercent, formatTokens, formatUsd, formatWhen, localDay, plural } from './format';
import { listNames, modelNames, nameOf } from './models';
import { estimateError, fillCategory, fillFraction, fillRequests, type FillCategory } from './requests';
import { dailyCostTotals } from './series';

// ---- summary tiles ----------------------------------------------------------------------------

interface Tile {
    id: 'today' | 'total' | 'requests' | 'cache' | 'input' | 'output' | 'saved';
    label: string;
    value: string;
    /** A second line under the value. */
    detail: string;
    /** The explanation shown on hover (and read by screen readers). */
    title: string;
}

export function summaryTiles(data: DashboardData): Tile[] {
    const names = modelNames(data);
    const t = data.totals;
    const today = localDay(data.generated);
    const todays = data.requests.filter((r) => localDay(r.time) === today);
    const todayUnpriced = todays.filter((r) => r.inputTokens !== null && r.costUsd === null);
    const unpricedDays = data.days.filter((d) => d.unpriced > 0);
    const unpriced = unpricedDays.reduce((n, d) => n + d.unpriced, 0);

    const money = (parts: CostParts, none: boolean, missing: RequestRow[] | DayModelRow[], count: number) => {
        const ids = missing.map((x) => x.modelId);
        const known = costView(parts);
        if (known === null) {
            if (none) {
                return { value: '$0.00', detail: 'no requests', title: 'no requests' };
            }
            return { value: DASH, detail: 'unknown', title: `no price known for ${listNames(ids, names)}` };
        }
        if (count > 0) {
            return {
                value: known.text,
                detail: `+ ${formatCount(count)} unpriced`,
                title: `${known.title}; ${plural(count, 'request')} not counted: no price known for ${listNames(ids, names)}`,
            };
        }
        // a sum that mixes the API's figures with estimates says so (the mark alone is easy to miss)
        return { value: known.text, detail: known.estimated === 'part' ? 'partly estimated' : '', title: `${known.title} (US dollars)` };
    };

    const todayParts = { costUsd: t.todayUsd, reportedUsd: t.todayReportedUsd, estimatedUsd: t.todayEstimatedUsd };
    const todayTile = money(todayParts, todays.length === 0, todayUnpriced, todayUnpriced.length);
    const totalTile = money(t, t.requests === 0, unpricedDays, unpriced);
    const fresh = Math.max(0, t.inputTokens - t.cachedTokens);
    const answered = data.requests.filter((r) => r.outputTokens !== null).length;
    const saved: Tile[] = t.toolDocsRequests === 0 ? [] : [{
        id: 'saved',
        label: 'Tool docs saved',
        value: formatTokens(t.toolDocsSaved),
        detail: `in ${plural(t.toolDocsRequests, 'request')}`,
        title: `${formatCount(t.toolDocsSaved)} tokens of tool documentation left out of ${plural(t.toolDocsRequests, 'request')} `
            + '(the toolDocs setting of a model), by our estimate',
    }];
    return [
        { id: 'today', label: 'Today', ...todayTile, detail: todayTile.detail || `${formatCount(todays.length)} requests` },
        { id: 'total', label: 'Total cost', ...totalTile, detail: totalTile.detail || `${data.retentionDays} days` },
        {
            id: 'requests',
            label: 'Requests',
            value: formatCount(t.requests),
            detail: t.failed > 0 ? `${formatCount(t.failed)} failed` : 'none failed',
            title: `${formatCount(t.requests)} requests, ${formatCount(t.failed)} failed`,
        },
        {
            id: 'cache',
            label: 'Cache hits',
            value: t.cacheHitRate === null ? DASH : formatPercent(t.cacheHitRate),
            detail: t.cacheHitRate === null
                ? 'no usage yet'
                : t.cacheSavedUsd === null ? `${formatTokens(t.cachedTokens)} cached` : `${ESTIMATED_MARK}${formatUsd(t.cacheSavedUsd)} saved`,
            title: t.cacheHitRate === null
                ? 'no request has reported its usage yet'
                : `${formatCount(t.cachedTokens)} of ${formatCount(t.inputTokens)} input tokens read from the cache`
                    + (t.cacheSavedUsd === null ? '' : `; about ${formatUsd(t.cacheSavedUsd)} less than the same tokens as fresh input, at the models' prices`),
        },
        {
            id: 'input',
            label: 'Input tokens',
            value: formatTokens(t.inputTokens),
            detail: `${formatTokens(fresh)} fresh`,
            title: `${formatCount(t.inputTokens)} input tokens: ${formatCount(fresh)} fresh, ${formatCount(t.cachedTokens)} cached`,
        },
        {
            id: 'output',
            label: 'Output tokens',
            value: formatTokens(t.outputTokens),
            detail: answered > 0 ? `${formatTokens(t.outputTokens / answered)} per answer` : '',
            title: `${formatCount(t.outputTokens)} output tokens`,
        },
        ...saved,
    ];
}

// ---- the charts' captions ---------------------------------------------------------------------

export function fillSummary(data: DashboardData): string {
    const points = fillRequests(data.requests);
    if (points.length === 0) {
        return 'No conversation request has reported its size yet.';
    }
    const names = modelNames(data);
    let peak = points[0];
    for (const r of points) {
        if ((fillFraction(r) ?? 0) > (fillFraction(peak) ?? 0)) {
            peak = r;
        }
    }
    const count = (c: FillCategory) => points.filter((r) => fillCategory(r) === c).length;
    return `${plural(points.length, 'request')}; fullest ${formatPercent(fillFraction(peak) ?? 0)} of the window `
        + `(${nameOf(names, peak.modelId)}, ${formatWhen(peak.time, data.generated)}); `
        + `${plural(count('summarization'), 'summarization')}, ${plural(count('trimmed'), 'trimmed request')}.`;
}

export function accuracySummary(data: DashboardData): string {
    const errors = data.requests.map(estimateError).filter((e): e is number => e !== null);
    if (errors.length === 0) {
        return 'No request has an API count to compare our estimate with yet.';
    }
    const sorted = errors.map(Math.abs).sort((a, b) => a - b);
    const median = sorted[Math.floor((sorted.length - 1) / 2)];
    const under = errors.filter((e) => e < 0).length;
    return `${plural(errors.length, 'request')}; typical error ${formatPercent(median, 1)}; `
        + `${plural(under, 'under-estimate')}, largest error ${formatSignedPercent(errors.reduce((a, b) => (Math.abs(b) > Math.abs(a) ? b : a)))}.`;
}

export function dailySummary(data: DashboardData): string {
    const days = new Set(data.days.map((d) => d.day));
    const costs = dailyCostTotals(data.days);
    const dearest = costs.reduce<{ day: string; costUsd: number } | null>((a, b) => (a === null || b.costUsd > a.costUsd ? b : a), null);
    const tokens = data.days.reduce((n, d) => n + d.inputTokens + d.outputTokens, 0);
    return `${plural(days.size, 'day')}, ${formatTokens(tokens)} tokens`
        + (dearest ? `; dearest day ${formatDay(dearest.day)} at ${formatUsd(dearest.costUsd)}.` : '; no known cost.');
}
