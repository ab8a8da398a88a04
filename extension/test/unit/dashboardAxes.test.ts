import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { dayDomain, thinDays } from '../../dashboard/series';
import { requestTicks, zoneLabel } from '../../dashboard/timeAxis';

/** A local time (Unix seconds), so the tests read the same in every time zone. */
function at(month: number, day: number, hour: number, minute = 0, second = 0): number {
    return new Date(2026, month - 1, day, hour, minute, second).getTime() / 1000;
}

const zone = zoneLabel(at(11, 24, 12));

void test('requests all in one hour: ticks by minutes, two at least, and a label with the date and zone', () => {
    const hour = [{ seq: 1, time: at(11, 24, 14, 3) }, { seq: 2, time: at(11, 24, 14, 10) }, { seq: 3, time: at(11, 24, 14, 22) }, { seq: 4, time: at(11, 24, 14, 41) }];
    const wide = requestTicks(hour, 1);
    assert.deepEqual(wide.ticks, [{ seq: 1, label: '14:03' }, { seq: 2, label: '14:10' }, { seq: 3, label: '14:22' }, { seq: 4, label: '14:41' }]);
    assert.equal(wide.label, `requests in order, time on Nov 24 (${zone})`);
    // room for two labels: half hours
    assert.deepEqual(requestTicks(hour, 2).ticks, [{ seq: 1, label: '14:00' }, { seq: 4, label: '14:30' }]);
});

void test('a busy hour: the smallest step of minutes whose ticks fit, on whole steps', () => {
    const busy = Array.from({ length: 120 }, (_, i) => ({ seq: i + 1, time: at(11, 24, 9, 0, i * 20) }));
    const { ticks } = requestTicks(busy, 8);
    assert.deepEqual(ticks.map((t) => t.label), ['09:00', '09:05', '09:10', '09:15', '09:20', '09:25', '09:30', '09:35']);
    assert.deepEqual(ticks.map((t) => t.seq), [1, 16, 31, 46, 61, 76, 91, 106]);
});

void test('requests in one minute: the first and the last, to the second', () => {
    const minute = [{ seq: 7, time: at(11, 24, 14, 3, 5) }, { seq: 8, time: at(11, 24, 14, 3, 40) }];
    assert.deepEqual(requestTicks(minute, 0.5).ticks, [{ seq: 7, label: '14:03:05' }, { seq: 8, label: '14:03:40' }]);
    assert.deepEqual(requestTicks([minute[0]], 0.5).ticks.length, 1);
    assert.deepEqual(requestTicks([], 1), { ticks: [], label: 'requests in order' });
});

void test('several days: each day named where its ticks begin, times between, none too close', () => {
    const rows = [
        { seq: 1, time: at(11, 20, 9) }, { seq: 2, time: at(11, 20, 15) },
        { seq: 3, time: at(11, 21, 9) }, { seq: 4, time: at(11, 22, 9) }, { seq: 5, time: at(11, 22, 10) },
    ];
    const wide = requestTicks(rows, 1);
    assert.deepEqual(wide.ticks.map((t) => t.label), ['Nov 20', '15:00', 'Nov 21', 'Nov 22', '10:00']);
    assert.equal(wide.label, `requests in order, date and time (${zone})`);
    // less room: a tick a day
    assert.deepEqual(requestTicks(rows, 2), { ticks: [{ seq: 1, label: 'Nov 20' }, { seq: 3, label: 'Nov 21' }], label: `requests in order, date (${zone})` });
    // the first ticks of Nov 21 and 22 are too close to Nov 20's: the next one kept names its day
    const night = [{ seq: 1, time: at(11, 20, 22) }, { seq: 2, time: at(11, 21, 22) }, ...Array.from({ length: 30 }, (_, i) => ({ seq: i + 3, time: at(11, 22, 0, i * 10) }))];
    assert.deepEqual(requestTicks(night, 6).ticks, [{ seq: 1, label: 'Nov 20' }, { seq: 15, label: 'Nov 22' }, { seq: 27, label: '04:00' }]);
});

void test('a month of requests, crowded: ticks by weeks, labelled as dates', () => {
    const month = Array.from({ length: 30 }, (_, i) => ({ seq: i + 1, time: at(11, 1 + i, 9) }));
    const { ticks, label } = requestTicks(month, 5);
    assert.ok(ticks.length >= 2 && ticks.length <= 6, JSON.stringify(ticks));
    assert.ok(ticks.every((t, i) => i === 0 || t.seq - ticks[i - 1].seq >= 5), JSON.stringify(ticks));
    assert.ok(ticks.every((t) => /^Nov \d+$/.test(t.label)), JSON.stringify(ticks));
    assert.equal(label, `requests in order, date (${zone})`);
});

void test('the zone as an offset from UTC', () => {
    const before = process.env.TZ;
    try {
        process.env.TZ = 'UTC';
        assert.equal(zoneLabel(at(1, 15, 12)), 'UTC');
        process.env.TZ = 'Asia/Kolkata';
        assert.equal(zoneLabel(at(1, 15, 12)), 'UTC+5:30');
        process.env.TZ = 'America/St_Johns';
        assert.equal(zoneLabel(at(1, 15, 12)), 'UTC\u22123:30');
    } finally {
        if (before === undefined) {
            delete process.env.TZ;
        } else {
            process.env.TZ = before;
        }
    }
});

void test('a per-day axis shows a week at least, up to today, so one day has ticks around it', () => {
    const week = dayDomain(['2026-11-24'], '2026-11-24');
    assert.deepEqual(week, ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22', '2026-11-23', '2026-11-24']);
    assert.ok(thinDays(week, 2).length >= 2);
    assert.deepEqual(dayDomain(['2026-11-02', '2026-11-12'], '2026-11-14').slice(0, 1), ['2026-11-02']);
    assert.equal(dayDomain(['2026-11-02', '2026-11-12'], '2026-11-14').at(-1), '2026-11-14');
    assert.equal(dayDomain(['2026-11-30', '2026-12-02'], '2026-12-01').at(-1), '2026-12-02');
});
