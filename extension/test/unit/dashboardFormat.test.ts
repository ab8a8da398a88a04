import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { COST_LEGEND, costView, ESTIMATED_MARK } from '../../dashboard/costs';
import type { DashboardData, DayModelRow, RequestRow } from '../../dashboard/data';
import {
    dayRange, formatCount, formatDay, formatPercent, formatSignedPercent, formatTokens, formatUsd, formatWhen, localDay, tickDecimals, tickFormat,
} from '../../dashboard/format';
import { modelNames, modelOrder } from '../../dashboard/models';
import { estimateError, fillCategory, fillFraction, fillRequests, whatHappened, whatHappenedText } from '../../dashboard/requests';
import { conversationRows, requestRows } from '../../dashboard/rows';
import {
    budgets, cacheRates, dailyCostTotals, linearAxis, ratioComponents, ratioPoints, thinDays, tokenSegments,
} from '../../dashboard/series';
import { summaryTiles } from '../../dashboard/summaries';

/** A local time (Unix seconds), so the tests read the same in every time zone. */
function at(month: number, day: number, hour: number, minute = 0): number {
    return new Date(2026, month - 1, day, hour, minute).getTime() / 1000;
}

function request(over: Partial<RequestRow> = {}): RequestRow {
    return {
        seq: 1, time: at(11, 24, 14, 3), modelId: 'm', conversation: 'c1', kind: 'turn', outcome: 'answered', error: null,
        estimatedTokens: 1050, inputTokens: 1000, cachedTokens: 400, cacheWriteTokens: 0, outputTokens: 50, reasoningTokens: 0,
        costUsd: 0.01, costSource: 'estimate', cacheSavedUsd: null, window: 10000, maxInputTokens: 8000, trimmedTokens: 0, toolDocsSaved: 0, retries: 0, summarized: false, ratios: {},
        ...over,
    };
}

function day(over: Partial<DayModelRow> = {}): DayModelRow {
    return { day: '2026-11-24', modelId: 'm', requests: 1, inputTokens: 1000, cachedTokens: 400, outputTokens: 50, costUsd: 0.01, reportedUsd: null, estimatedUsd: 0.01, unpriced: 0, ...over };
}

function data(over: Partial<DashboardData> = {}): DashboardData {
    return {
        generated: at(11, 24, 18),
        retentionDays: 30,
        models: [
            { id: 'm', name: 'Model M', window: 10000, maxInputTokens: 8000, pricing: { input: 1, cachedInput: 0.1, cacheWrite: null, output: 2, reasoning: null } },
            { id: 'free', name: 'Free', window: 4000, maxInputTokens: 3000, pricing: null },
        ],
        requests: [request()],
        days: [day()],
        conversations: [],
        totals: {
            requests: 1, failed: 0, inputTokens: 1000, cachedTokens: 400, outputTokens: 50, costUsd: 0.01, todayUsd: 0.01, cacheHitRate: 0.4, toolDocsSaved: 0, toolDocsRequests: 0,
            reportedUsd: null, estimatedUsd: 0.01, todayReportedUsd: null, todayEstimatedUsd: 0.01, cacheSavedUsd: null,
        },
        ...over,
    };
}

void test('formats counts, tokens, money and percentages', () => {
    assert.equal(formatCount(1234567), '1,234,567');
    assert.equal(formatCount(999), '999');
    assert.deepEqual([950, 12345, 128000, 999_999, 1_234_567, 2e9].map(formatTokens), ['950', '12.3k', '128k', '1M', '1.23M', '2G']);
    assert.deepEqual([null, 0, 0.00042, 0.0346, 0.966, 1.5, 12345.6].map(formatUsd), ['\u2014', '$0.00', '$0.00042', '$0.035', '$0.97', '$1.50', '$12,346']);
    assert.equal(formatPercent(0.623), '62%');
    assert.equal(formatPercent(0.6234, 1), '62.3%');
    assert.equal(formatSignedPercent(0.032), '+3.2%');
    assert.equal(formatSignedPercent(-0.01), '\u22121.0%');
    assert.equal(formatSignedPercent(0.00001), '0.0%');
});

void test('formats local days and times, the date only when not today', () => {
    assert.equal(localDay(at(11, 24, 0, 5)), '2026-11-24');
    assert.equal(formatDay('2026-11-04'), 'Nov 4');
    assert.equal(formatWhen(at(11, 24, 9, 7), at(11, 24, 23)), '09:07');
    assert.equal(formatWhen(at(11, 23, 21, 30), at(11, 24, 1)), 'Nov 23 21:30');
    assert.deepEqual(dayRange('2026-11-29', '2026-12-02'), ['2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
    assert.deepEqual(dayRange('2026-11-24', '2026-11-24'), ['2026-11-24']);
    assert.deepEqual(thinDays(['a', 'b', 'c', 'd', 'e'], 2), ['a', 'c', 'e']);
    assert.deepEqual(thinDays(['a', 'b', 'c', 'd'], 0.4), ['a', 'b', 'c', 'd']);
});

void test('says what happened to a request, every part that applies', () => {
    assert.equal(whatHappenedText(request()), 'answered');
    assert.equal(whatHappenedText(request({ kind: 'summarize' })), 'summarization');
    assert.equal(whatHappenedText(request({ summarized: true, trimmedTokens: 12345, retries: 2 })), 'summarized, trimmed 12,345 tokens, retried 2\u00d7');
    assert.equal(
        whatHappenedText(request({ trimmedTokens: 9000, ladder: { userMessage: 2000, toolDocs: 7000, output: 3072 } })),
        'trimmed 9,000 tokens (tool docs, answer room, your message)',
    );
    assert.equal(whatHappenedText(request({ ladder: { output: 1500 } })), 'fitted (answer room)');
    assert.equal(fillCategory(request({ ladder: { output: 1500 } })), 'trimmed');
    assert.equal(whatHappenedText(request({ outcome: 'failed', error: 'rate limited (429)', retries: 3 })), 'retried 3\u00d7, failed: rate limited (429)');
    assert.equal(whatHappenedText(request({ outcome: 'failed' })), 'failed');
    assert.equal(whatHappenedText(request({ toolDocsSaved: 8823 })), '8,823 tokens of tool docs saved');
    assert.equal(whatHappenedText(request({ cut: true, inputTokens: 2050, estimatedTokens: 7900 })), 'cut by the server (read 2,050 of 7,900)');
    assert.deepEqual(whatHappened(request({ cut: true })).map((p) => p.tone), ['bad']);
    assert.equal(estimateError(request({ cut: true, inputTokens: 8192, estimatedTokens: 16751 })), null);
    assert.equal(whatHappenedText(request({ outcome: 'cancelled' })), 'cancelled');
    assert.equal(whatHappenedText(request({ outcome: 'cancelled', error: 'cancelled by the user' })), 'cancelled by the user');
    assert.deepEqual(whatHappened(request({ outcome: 'failed', error: '<b>x</b>' })), [{ text: 'failed: <b>x</b>', tone: 'bad' }]);
});

void test('estimate error, window fill and the fill chart\u2019s categories', () => {
    assert.equal(estimateError(request({ estimatedTokens: 1100, inputTokens: 1000 })), 0.1);
    assert.equal(estimateError(request({ inputTokens: null })), null);
    assert.equal(fillFraction(request({ inputTokens: 2500, window: 10000 })), 0.25);
    assert.equal(fillFraction(request({ inputTokens: null })), null);
    assert.equal(fillCategory(request()), 'turn');
    assert.equal(fillCategory(request({ kind: 'summarize', trimmedTokens: 5 })), 'summarization');
    assert.equal(fillCategory(request({ summarized: true, trimmedTokens: 5 })), 'trimmed');
    assert.equal(fillCategory(request({ summarized: true })), 'summarized');
    const rows = [request({ seq: 1 }), request({ seq: 2, kind: 'helper' }), request({ seq: 3, inputTokens: null }), request({ seq: 4, kind: 'summarize' })];
    assert.deepEqual(fillRequests(rows).map((r) => r.seq), [1, 4]);
});

void test('budget rules: each model\u2019s latest, close ones merged, none at the window itself', () => {
    const names = new Map([['a', 'A'], ['b', 'B'], ['c', 'C']]);
    const rows = [
        request({ modelId: 'a', window: 1000, maxInputTokens: 500 }),
        request({ modelId: 'a', window: 1000, maxInputTokens: 800 }),
        request({ modelId: 'b', window: 2000, maxInputTokens: 1620 }),
        request({ modelId: 'c', window: 100, maxInputTokens: 100 }),
    ];
    assert.deepEqual(budgets(rows, names), [{ fraction: 0.8, label: 'budget 80%: A, B' }]);
    assert.deepEqual(budgets(rows, names, 0.001).map((b) => b.label), ['budget 80%: A', 'budget 81%: B']);
});

void test('summary tiles: unknown costs show a dash that names the models without a price', () => {
    const unpriced = data({
        requests: [request({ modelId: 'free', costUsd: null })],
        days: [day({ modelId: 'free', costUsd: null, unpriced: 1 })],
        totals: {
            requests: 1, failed: 0, inputTokens: 1000, cachedTokens: 400, outputTokens: 50, costUsd: null, todayUsd: null, cacheHitRate: 0.4, toolDocsSaved: 0, toolDocsRequests: 0,
            reportedUsd: null, estimatedUsd: null, todayReportedUsd: null, todayEstimatedUsd: null, cacheSavedUsd: null,
        },
    });
    const tiles = Object.fromEntries(summaryTiles(unpriced).map((t) => [t.id, t]));
    assert.equal(tiles.today.value, '\u2014');
    assert.equal(tiles.today.title, 'no price known for Free');
    assert.equal(tiles.total.value, '\u2014');
    assert.equal(tiles.total.title, 'no price known for Free');
    assert.equal(tiles.cache.value, '40%');
    assert.equal(tiles.requests.detail, 'none failed');

    const mixed = data({
        requests: [request(), request({ seq: 2, modelId: 'free', costUsd: null, time: at(11, 20, 10) })],
        days: [day(), day({ day: '2026-11-20', modelId: 'free', costUsd: null, unpriced: 1 })],
        totals: {
            requests: 2, failed: 1, inputTokens: 2000, cachedTokens: 400, outputTokens: 100, costUsd: 0.01, todayUsd: 0.01, cacheHitRate: 0.2, toolDocsSaved: 0, toolDocsRequests: 0,
            reportedUsd: null, estimatedUsd: 0.01, todayReportedUsd: null, todayEstimatedUsd: 0.01, cacheSavedUsd: null,
        },
    });
    const t2 = Object.fromEntries(summaryTiles(mixed).map((t) => [t.id, t]));
    assert.equal(t2.today.value, '\u2248$0.010');
    assert.equal(t2.total.detail, '+ 1 unpriced');
    assert.equal(t2.total.title, "$0.010, estimated from the model's prices; 1 request not counted: no price known for Free");
    assert.equal(t2.requests.detail, '1 failed');
    assert.equal(t2.saved, undefined); // no request had its tool documentation reduced

    const reduced = data({ totals: { ...mixed.totals, toolDocsSaved: 17646, toolDocsRequests: 2 } });
    const t3 = Object.fromEntries(summaryTiles(reduced).map((t) => [t.id, t]));
    assert.equal(t3.saved.value, '17.6k');
    assert.equal(t3.saved.detail, 'in 2 requests');
    assert.equal(t2.input.value, '2k');
    assert.equal(t2.cache.detail, '400 cached'); // no cached price known: nothing said of savings

    const saving = data({ totals: { ...mixed.totals, cacheSavedUsd: 0.5 } });
    const t4 = Object.fromEntries(summaryTiles(saving).map((t) => [t.id, t]));
    assert.equal(t4.cache.detail, '\u2248$0.50 saved'); // the tokens cached: in its title, and the input tile's
    assert.equal(t4.cache.title, "400 of 2,000 input tokens read from the cache; about $0.50 less than the same tokens as fresh input, at the models' prices");
});

void test('request rows: newest first, a dash and its reason for what is unknown', () => {
    const d = data({
        requests: [
            request({ seq: 7, time: at(11, 23, 9, 5) }),
            request({ seq: 8, modelId: 'free', costUsd: null, estimatedTokens: 900, inputTokens: 1000 }),
            request({ seq: 9, outcome: 'failed', error: 'timeout', inputTokens: null, outputTokens: null, costUsd: null, cachedTokens: 0 }),
        ],
    });
    const rows = requestRows(d);
    assert.deepEqual(rows.map((r) => r.seq), [9, 8, 7]);
    const [failed, free, old] = rows;
    assert.equal(failed.cells.input.text, '\u2014');
    assert.equal(failed.cells.cost.title, 'no usage reported');
    assert.equal(failed.cells.error.text, '\u2014');
    assert.equal(failed.happened[0].text, 'failed: timeout');
    assert.equal(free.cells.model.text, 'Free');
    assert.equal(free.cells.cost.title, 'no price known for Free');
    assert.equal(free.cells.error.text, '\u221210.0%');
    assert.equal(free.cells.time.text, '14:03');
    assert.equal(old.cells.time.text, 'Nov 23 09:05');
    assert.equal(old.cells.input.text, '1,000');
    assert.notEqual(old.signature, requestRows(data({ requests: [request({ seq: 7, time: at(11, 23, 9, 5), outputTokens: 51 })] }))[0].signature);
});

void test('conversation rows: latest started first, unknown cost explained', () => {
    const d = data({
        conversations: [
            { id: 'a', started: at(11, 20, 9), ended: at(11, 20, 10), requests: 3, summarizations: 1, inputTokens: 5000, outputTokens: 300, costUsd: 0.2, models: ['m'], reportedUsd: 0.2, estimatedUsd: null },
            { id: 'b', started: at(11, 24, 9), ended: at(11, 24, 10), requests: 2, summarizations: 0, inputTokens: 900, outputTokens: 30, costUsd: null, models: ['free', 'x'], reportedUsd: null, estimatedUsd: null },
        ],
    });
    const rows = conversationRows(d);
    assert.deepEqual(rows.map((r) => r.id), ['b', 'a']);
    assert.equal(rows[0].cells.cost.title, 'no price known for Free, x');
    assert.equal(rows[0].cells.models.text, 'Free, x');
    assert.equal(rows[1].cells.cost.text, '$0.20');
    assert.equal(rows[1].cells.started.text, 'Nov 20 09:00');
});

void test('costs: the API\u2019s figures as they are, estimates marked, mixed sums marked with both parts', () => {
    assert.equal(costView({ costUsd: null, reportedUsd: null, estimatedUsd: null }), null);
    assert.deepEqual(costView({ costUsd: 0.25, reportedUsd: 0.25, estimatedUsd: null }), {
        text: '$0.25', title: '$0.25, as the API reported it', estimated: 'none',
    });
    assert.deepEqual(costView({ costUsd: 0.25, reportedUsd: null, estimatedUsd: 0.25 }), {
        text: '\u2248$0.25', title: "$0.25, estimated from the model's prices", estimated: 'all',
    });
    const mixed = costView({ costUsd: 0.3, reportedUsd: 0.25, estimatedUsd: 0.05 });
    assert.equal(mixed?.text, '\u2248$0.30');
    assert.equal(mixed?.title, "$0.30, partly estimated: $0.25 as the API reported it, $0.050 estimated from the model's prices");
    assert.ok(COST_LEGEND.includes(ESTIMATED_MARK));

    const d = data({
        requests: [request({ seq: 1, costUsd: 0.25, costSource: 'reported' }), request({ seq: 2, costUsd: 0.05 })],
        conversations: [
            { id: 'c1', started: at(11, 24, 9), ended: at(11, 24, 10), requests: 2, summarizations: 0, inputTokens: 2000, outputTokens: 100, costUsd: 0.3, models: ['m'], reportedUsd: 0.25, estimatedUsd: 0.05 },
        ],
        totals: { ...data().totals, costUsd: 0.3, todayUsd: 0.3, reportedUsd: 0.25, estimatedUsd: 0.05, todayReportedUsd: 0.25, todayEstimatedUsd: 0.05 },
    });
    const [estimated, reported] = requestRows(d);
    assert.deepEqual([reported.cells.cost.text, reported.cells.cost.title], ['$0.25', '$0.25, as the API reported it']);
    assert.equal(estimated.cells.cost.text, '\u2248$0.050');
    assert.equal(conversationRows(d)[0].cells.cost.title, mixed?.title);
    const tiles = Object.fromEntries(summaryTiles(d).map((t) => [t.id, t]));
    assert.deepEqual([tiles.total.value, tiles.total.detail], ['\u2248$0.30', 'partly estimated']);
    assert.equal(tiles.today.title, `${mixed?.title} (US dollars)`);
    const allReported = data({ totals: { ...d.totals, estimatedUsd: null, todayEstimatedUsd: null, costUsd: 0.25, todayUsd: 0.25 } });
    const reportedTiles = Object.fromEntries(summaryTiles(allReported).map((t) => [t.id, t]));
    assert.deepEqual([reportedTiles.total.value, reportedTiles.total.detail], ['$0.25', '30 days']);
});

void test('models: names from the list, unknown ids kept, in a stable order', () => {
    const d = data({ requests: [request({ modelId: 'x' }), request({ modelId: 'm' })], days: [day({ modelId: 'free' })] });
    assert.deepEqual(modelOrder(d), ['m', 'free', 'x']);
    assert.equal(modelNames(d).get('x'), 'x');
    assert.equal(modelNames(d).get('m'), 'Model M');
});

void test('per-day rows: three token segments, cost totals, cache rates', () => {
    const days = [day(), day({ modelId: 'free', costUsd: null, inputTokens: 0, cachedTokens: 0, outputTokens: 0 }), day({ day: '2026-11-23', costUsd: 0.5 })];
    const segments = tokenSegments(days);
    assert.equal(segments.length, 9);
    assert.deepEqual(segments.slice(0, 3).map((s) => [s.segment, s.tokens]), [['cached input', 400], ['fresh input', 600], ['output', 50]]);
    assert.deepEqual(dailyCostTotals(days), [{ day: '2026-11-23', costUsd: 0.5 }, { day: '2026-11-24', costUsd: 0.01 }]);
    assert.deepEqual(cacheRates(days).map((r) => r.rate), [0.4, 0.4]);
});

void test('ratio points per request and component, the known components first', () => {
    const points = ratioPoints([
        request({ seq: 2, ratios: { text: 1.1, zeta: 3 } }),
        request({ seq: 1, ratios: { fixed: 6, text: 1.2 } }),
        request({ seq: 3, ratios: {} }),
    ]);
    assert.deepEqual(points.map((p) => [p.seq, p.component, p.value]), [[1, 'fixed', 6], [1, 'text', 1.2], [2, 'text', 1.1], [2, 'zeta', 3]]);
    assert.deepEqual(ratioComponents(points), ['text', 'fixed', 'zeta']);
});

void test('tick labels: the fewest decimals that keep every tick apart, the same on the whole axis', () => {
    const labels = (ticks: number[], style?: Parameters<typeof tickFormat>[1]) => ticks.map(tickFormat(ticks, style));
    // the report's "Learned ratios" panel: rounding to 2 decimals wrote 1.3, 1.3, 1.31
    assert.deepEqual(labels([1.295, 1.3, 1.305]), ['1.295', '1.300', '1.305']);
    assert.deepEqual(labels([0.96, 0.97, 0.98, 0.99, 1]), ['0.96', '0.97', '0.98', '0.99', '1.00']);
    assert.deepEqual(labels([5, 6, 7]), ['5', '6', '7']);
    assert.deepEqual(labels([-0.5, 0, 0.5]), ['\u22120.5', '0.0', '0.5']);
    assert.deepEqual(labels([1000, 1500, 2000]), ['1,000', '1,500', '2,000']);
    assert.equal(tickDecimals([0.1 + 0.2, 0.4]), 1); // float noise is not a decimal
    assert.equal(tickDecimals([1e-7, 2e-7]), 7);
    assert.equal(tickDecimals([]), 0);
    assert.deepEqual(labels([0, 20, 40, 60, 80, 100], 'percent'), ['0%', '20%', '40%', '60%', '80%', '100%']);
    assert.deepEqual(labels([-5, 0, 5, 10], 'signed-percent'), ['\u22125%', '0%', '+5%', '+10%']);
    assert.deepEqual(labels([-0.5, 0, 0.5], 'signed-percent'), ['\u22120.5%', '0.0%', '+0.5%']);
    assert.deepEqual(labels([0, 0.5, 1], 'usd'), ['$0.0', '$0.5', '$1.0']);
    assert.deepEqual(labels([0, 0.0002, 0.0004], 'usd'), ['$0.0000', '$0.0002', '$0.0004']);
    assert.deepEqual(labels([0, 1e-7, 2e-7], 'usd'), ['$0.0000000', '$0.0000001', '$0.0000002']);
    // token counts: each in its own unit, exact, no trailing zeros
    assert.deepEqual(labels([0, 500_000, 1_000_000, 1_500_000], 'tokens'), ['0', '500k', '1M', '1.5M']);
    assert.deepEqual(labels([2990, 2995, 3000, 3005], 'tokens'), ['2.99k', '2.995k', '3k', '3.005k']);
    // distinct labels for the ticks of any narrow range
    for (const [lo, hi, count] of [[1.2921, 1.3042, 3], [4.9216, 5.1167, 3], [0.00001, 0.000013, 4], [123456.7, 123457.1, 5], [-3.001, -2.999, 3]]) {
        const y = linearAxis(lo, hi, count, { nice: true });
        for (const style of ['number', 'tokens', 'usd'] as const) {
            const text = labels(y.ticks, style);
            assert.equal(new Set(text).size, y.ticks.length, `${style} ${text.join(' ')}`);
        }
    }
});

void test('linear axes: d3\u2019s ticks and nice domain, a flat range widened', () => {
    assert.deepEqual(linearAxis(1.2921, 1.3042, 3, { nice: true }), { domain: [1.292, 1.305], ticks: [1.295, 1.3, 1.305] });
    assert.deepEqual(linearAxis(0, 105, 5), { domain: [0, 105], ticks: [0, 20, 40, 60, 80, 100] });
    assert.deepEqual(linearAxis(0, 100, 4).ticks, [0, 20, 40, 60, 80, 100]);
    assert.deepEqual(linearAxis(-2.6, 17.3, 5, { nice: true }), { domain: [-4, 18], ticks: [0, 5, 10, 15] });
    assert.deepEqual(linearAxis(0, 0.0119, 4, { nice: true }).ticks, [0, 0.002, 0.004, 0.006, 0.008, 0.01, 0.012]);
    // a flat series: a band of minSpan around it, not one tick in float noise
    assert.deepEqual(linearAxis(1.3, 1.3, 3, { nice: true, minSpan: 0.013 }), { domain: [1.293, 1.307], ticks: [1.295, 1.3, 1.305] });
    assert.deepEqual(linearAxis(0, 0, 3).domain, [-0.5, 0.5]);
    assert.deepEqual(linearAxis(NaN, 1, 3).domain, [0, 1]);
});
