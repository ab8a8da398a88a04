/**
 * The dashboard's stylesheet (one nonce'd `<style>`). Colours come from VS Code's theme variables,
 * with fallbacks for the standalone report: light by default, dark under `prefers-color-scheme`.
 * The `--tg-*` colour properties are also read by `theme.ts` for the charts.
 */
export const CSS = String.raw`
:root {
  color-scheme: light dark;
  --tg-background: var(--vscode-editor-background, #ffffff);
  --tg-foreground: var(--vscode-foreground, #1f2328);
  --tg-muted: var(--vscode-descriptionForeground, #59636e);
  --tg-border: var(--vscode-panel-border, #d0d7de);
  --tg-focus: var(--vscode-focusBorder, #0969da);
  --tg-hover: var(--vscode-list-hoverBackground, rgba(31, 35, 40, 0.05));
  /* a tint (VS Code's is translucent): the header lays it over the background */
  --tg-header: var(--vscode-keybindingTable-headerBackground, transparent);
  --tg-blue: var(--vscode-charts-blue, #1a85ff);
  --tg-red: var(--vscode-charts-red, #e51400);
  --tg-yellow: var(--vscode-charts-yellow, #bf8803);
  --tg-orange: var(--vscode-charts-orange, #d18616);
  --tg-green: var(--vscode-charts-green, #388a34);
  --tg-purple: var(--vscode-charts-purple, #652d90);
  --tg-font: var(--vscode-font-family, system-ui, -apple-system, "Segoe UI", Roboto, Ubuntu, sans-serif);
  --tg-mono: var(--vscode-editor-font-family, ui-monospace, "SF Mono", Menlo, Consolas, monospace);
  --tg-size: var(--vscode-font-size, 13px);
}
@media (prefers-color-scheme: dark) {
  :root {
    --tg-background: var(--vscode-editor-background, #1e1e1e);
    --tg-foreground: var(--vscode-foreground, #cccccc);
    --tg-muted: var(--vscode-descriptionForeground, #9d9d9d);
    --tg-border: var(--vscode-panel-border, #3c3c3c);
    --tg-focus: var(--vscode-focusBorder, #2188ff);
    --tg-hover: var(--vscode-list-hoverBackground, rgba(255, 255, 255, 0.06));
    --tg-blue: var(--vscode-charts-blue, #3794ff);
    --tg-red: var(--vscode-charts-red, #f14c4c);
    --tg-yellow: var(--vscode-charts-yellow, #cca700);
    --tg-orange: var(--vscode-charts-orange, #d18616);
    --tg-green: var(--vscode-charts-green, #89d185);
    --tg-purple: var(--vscode-charts-purple, #b180d7);
  }
}
body.vscode-light, body.vscode-high-contrast-light { color-scheme: light; }
body.vscode-dark, body.vscode-high-contrast { color-scheme: dark; }

html, body { margin: 0; padding: 0; background: var(--tg-background); }
body {
  color: var(--tg-foreground);
  font-family: var(--tg-font);
  font-size: var(--tg-size);
  line-height: 1.45;
}
#tg-dashboard {
  box-sizing: border-box;
  max-width: 1280px;
  margin: 0 auto;
  padding: 18px 20px 48px;
}
#tg-dashboard *, #tg-dashboard *::before, #tg-dashboard *::after { box-sizing: inherit; }
#tg-dashboard :focus-visible { outline: 2px solid var(--tg-focus); outline-offset: 2px; }
#tg-dashboard [hidden] { display: none !important; }

.tg-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 14px; }
.tg-head h1 { margin: 0; font-size: 1.55em; font-weight: 600; letter-spacing: -0.01em; }
.tg-sub { color: var(--tg-muted); }
.tg-legend { margin: 6px 0 0; color: var(--tg-muted); font-size: 0.85em; }

.tg-tiles {
  list-style: none; margin: 14px 0 0; padding: 0;
  display: grid; grid-template-columns: repeat(auto-fill, minmax(132px, 1fr)); gap: 8px;
}
.tg-tile {
  border: 1px solid var(--tg-border); border-radius: 8px; padding: 8px 12px 9px;
  background: color-mix(in srgb, var(--tg-foreground) 3%, var(--tg-background));
  min-width: 0;
}
.tg-tile-label { color: var(--tg-muted); font-size: 0.85em; }
.tg-tile-value {
  display: block; font-size: 1.7em; font-weight: 600; line-height: 1.2;
  font-variant-numeric: tabular-nums; white-space: nowrap; overflow: hidden; text-overflow: ellipsis;
}
.tg-tile-detail { display: block; color: var(--tg-muted); font-size: 0.85em; min-height: 1.3em; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tg-tile[data-tile="today"] .tg-tile-value, .tg-tile[data-tile="total"] .tg-tile-value { color: var(--tg-foreground); }

.tg-empty {
  margin: 28px 0 0; padding: 22px 24px; max-width: 64ch;
  border: 1px dashed var(--tg-border); border-radius: 10px; color: var(--tg-muted);
}
.tg-empty strong { display: block; color: var(--tg-foreground); font-size: 1.1em; margin-bottom: 6px; }
.tg-empty ul { margin: 8px 0 0; padding-left: 1.2em; }

.tg-section { margin-top: 30px; }
.tg-section > h2 {
  margin: 0 0 4px; padding-bottom: 6px; font-size: 1.15em; font-weight: 600;
  border-bottom: 1px solid var(--tg-border);
}
.tg-pair { display: grid; grid-template-columns: minmax(0, 1fr); gap: 0 28px; }
@media (min-width: 900px) { .tg-pair { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); } }

.tg-figure { margin: 14px 0 0; min-width: 0; }
.tg-figure figcaption { margin-bottom: 4px; }
.tg-figure figcaption strong { display: block; font-weight: 600; }
.tg-explain { display: block; color: var(--tg-muted); font-size: 0.92em; }
.tg-summary { display: block; color: var(--tg-muted); font-size: 0.92em; font-variant-numeric: tabular-nums; }
.tg-plot { min-height: 40px; }
.tg-plot svg, .tg-panel svg {
  display: block; overflow: visible;
  color: var(--tg-foreground);
  font-family: var(--tg-font); font-size: 11px;
  --plot-background: var(--tg-background);
}
.tg-nodata { color: var(--tg-muted); font-style: italic; margin: 8px 0; }

.tg-legend {
  list-style: none; margin: 4px 0 6px; padding: 0;
  display: flex; flex-wrap: wrap; gap: 3px 16px; font-size: 0.9em;
}
.tg-legend li { display: inline-flex; align-items: center; gap: 6px; white-space: nowrap; }
.tg-legend svg { flex: none; overflow: visible; }

.tg-multiples { display: grid; gap: 10px 24px; }
.tg-panel { min-width: 0; }
.tg-panel-title { font-size: 0.88em; color: var(--tg-muted); margin: 4px 0 0; }

.tg-region {
  margin-top: 10px; max-height: 30em; overflow: auto;
  border: 1px solid var(--tg-border); border-radius: 8px;
}
.tg-region.tg-short { max-height: 22em; }
.tg-table { border-collapse: separate; border-spacing: 0; width: 100%; font-size: 0.95em; }
.tg-table th, .tg-table td { padding: 5px 10px; text-align: left; vertical-align: top; border-bottom: 1px solid color-mix(in srgb, var(--tg-border) 60%, transparent); }
.tg-table thead th {
  position: sticky; top: 0; z-index: 1; white-space: nowrap; font-weight: 600;
  background-color: var(--tg-background);
  background-image: linear-gradient(var(--tg-header), var(--tg-header));
  border-bottom: 1px solid var(--tg-border);
}
.tg-table tbody th { font-weight: normal; white-space: nowrap; }
.tg-table tbody tr:last-child > * { border-bottom: none; }
.tg-table tbody tr:hover { background: var(--tg-hover); }
.tg-table .tg-num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.tg-table td, .tg-table th { white-space: nowrap; }
.tg-table .tg-happened { white-space: normal; min-width: 11em; }
.tg-table thead th, .tg-table .tg-model { white-space: normal; }
.tg-table .tg-muted { color: var(--tg-muted); }

/* a table too wide for its region: each row a card of labelled cells */
.tg-stacked { overflow-x: hidden; }
.tg-stacked .tg-table, .tg-stacked tbody { display: block; }
.tg-stacked thead {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;
}
.tg-stacked tbody tr {
  display: grid; grid-template-columns: repeat(auto-fill, minmax(6.5em, 1fr)); gap: 4px 12px;
  padding: 7px 10px; border-bottom: 1px solid color-mix(in srgb, var(--tg-border) 60%, transparent);
}
.tg-stacked tbody tr:last-child { border-bottom: none; }
.tg-stacked .tg-table tbody tr > * { display: block; padding: 0; border: none; text-align: left; white-space: normal; min-width: 0; }
.tg-stacked .tg-table tbody tr > *::before {
  content: attr(data-label); display: block; color: var(--tg-muted); font-size: 0.8em; font-weight: normal;
}
.tg-stacked .tg-table .tg-model { grid-column: span 2; }
.tg-stacked .tg-table .tg-happened { grid-column: 1 / -1; }

.tg-details { margin-top: 16px; }
.tg-details > summary {
  cursor: pointer; width: fit-content; padding: 3px 0; color: var(--tg-muted); font-weight: 600;
}
.tg-details > summary:hover { color: var(--tg-foreground); }
.tg-details[open] > summary { color: var(--tg-foreground); }

.tg-tag {
  display: inline-block; margin: 0 4px 2px 0; padding: 0 7px; border-radius: 10px;
  font-size: 0.88em; line-height: 1.55; white-space: nowrap;
  border: 1px solid color-mix(in srgb, currentColor 45%, transparent);
  background: color-mix(in srgb, currentColor 9%, transparent);
}
.tg-tag.tg-tone-ok { border-color: transparent; background: none; padding: 0; color: var(--tg-muted); }
.tg-tag.tg-tone-muted { color: var(--tg-muted); }
.tg-tag.tg-tone-info { color: color-mix(in srgb, var(--tg-purple) 80%, var(--tg-foreground)); }
.tg-tag.tg-tone-good { color: color-mix(in srgb, var(--tg-green) 80%, var(--tg-foreground)); }
.tg-tag.tg-tone-warn { color: color-mix(in srgb, var(--tg-orange) 75%, var(--tg-foreground)); }
.tg-tag.tg-tone-bad { color: color-mix(in srgb, var(--tg-red) 85%, var(--tg-foreground)); white-space: normal; }
.tg-err-under { color: color-mix(in srgb, var(--tg-red) 80%, var(--tg-foreground)); }
`;
