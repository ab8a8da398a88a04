import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { contrast, isDark, legible, MIN_CONTRAST, parseColor, SERIES, seriesColors } from '../../dashboard/colors';

/** VS Code's default editor backgrounds (Light Modern, Dark Modern, Dark+, 2026 Dark, High Contrast). */
const DEFAULTS = ['#ffffff', '#1f1f1f', '#1e1e1e', '#121314', '#000000'];

/** The editor backgrounds of the themes VS Code ships (light and dark), and its high-contrast ones. */
const BACKGROUNDS = {
    light: ['#ffffff', '#f5f5f5', '#fdf6e3'],
    dark: ['#1f1f1f', '#1e1e1e', '#121314', '#000000', '#000c18', '#221a0f', '#272822', '#390000', '#002b36', '#002451'],
};

const ratio = (color: string, background: string) => contrast(parseColor(color)!, parseColor(background)!);

void test('reads the colours themes and computed styles give', () => {
    assert.deepEqual(parseColor('#abc'), { r: 0xaa, g: 0xbb, b: 0xcc, a: 1 });
    assert.deepEqual(parseColor('#1f1f1f'), { r: 31, g: 31, b: 31, a: 1 });
    assert.deepEqual(parseColor('#ff000080'), { r: 255, g: 0, b: 0, a: 128 / 255 });
    assert.deepEqual(parseColor('rgba(128, 128, 128, 0.04)'), { r: 128, g: 128, b: 128, a: 0.04 });
    assert.deepEqual(parseColor('rgb(1 2 3 / 50%)'), { r: 1, g: 2, b: 3, a: 0.5 });
    assert.equal(parseColor('var(--x)'), null);
    assert.equal(parseColor('color-mix(in srgb, red, blue)'), null);
});

void test('contrast ratios as WCAG defines them', () => {
    assert.equal(Math.round(ratio('#000000', '#ffffff') * 100) / 100, 21);
    assert.equal(ratio('#777777', '#777777'), 1);
    // a translucent colour is measured as painted over the background
    assert.ok(ratio('#00000010', '#ffffff') < 1.2);
    assert.ok(isDark(parseColor('#1f1f1f')!) && isDark(parseColor('#390000')!) && !isDark(parseColor('#fdf6e3')!));
});

void test('every model colour stands out against every shipped theme\u2019s background, light and dark', () => {
    for (const kind of ['light', 'dark'] as const) {
        for (const background of BACKGROUNDS[kind]) {
            const colors = seriesColors(background);
            assert.deepEqual(colors, [...SERIES[kind]], `${background} takes the ${kind} colours as they are`);
            for (const color of colors) {
                const r = ratio(color, background);
                const least = DEFAULTS.includes(background) ? 4.5 : 4;
                assert.ok(r >= least && r >= MIN_CONTRAST, `${color} on ${background}: ${r.toFixed(2)}:1`);
            }
        }
    }
});

void test('the models\u2019 colours are told apart: no two alike', () => {
    for (const kind of ['light', 'dark'] as const) {
        const list = SERIES[kind].map((c) => parseColor(c)!);
        for (let i = 0; i < list.length; i++) {
            for (let j = i + 1; j < list.length; j++) {
                const [a, b] = [list[i], list[j]];
                const distance = Math.hypot(a.r - b.r, a.g - b.g, a.b - b.b);
                assert.ok(distance > 80, `${SERIES[kind][i]} and ${SERIES[kind][j]}: ${distance.toFixed(0)}`);
            }
        }
    }
});

void test('a theme colour too faint for its background is deepened until it stands out, others kept', () => {
    // VS Code's charts.orange on its light themes' white: 2.9:1
    assert.ok(ratio('#d18616', '#ffffff') < MIN_CONTRAST);
    const orange = legible('#d18616', '#ffffff');
    assert.ok(ratio(orange, '#ffffff') >= MIN_CONTRAST, orange);
    assert.ok(ratio(orange, '#d18616') < 1.5, `${orange} is still orange`);
    // a dark blue on a dark background is lightened
    const blue = legible('#1a3a6a', '#1f1f1f');
    assert.ok(ratio(blue, '#1f1f1f') >= MIN_CONTRAST && parseColor(blue)!.b > parseColor(blue)!.r, blue);
    assert.equal(legible('#3794ff', '#1f1f1f'), '#3794ff');
    assert.equal(legible('not a colour', '#ffffff'), 'not a colour');
    // every colour, even the background's own, is made to stand out
    for (const background of [...BACKGROUNDS.light, ...BACKGROUNDS.dark]) {
        assert.ok(ratio(legible(background, background), background) >= MIN_CONTRAST, background);
    }
});

void test('an unreadable or translucent background takes the light colours', () => {
    assert.deepEqual(seriesColors('var(--vscode-editor-background)'), [...SERIES.light]);
    assert.deepEqual(seriesColors('rgba(0, 0, 0, 0)'), [...SERIES.light]);
});
