/**
 * The conversations and recent requests tables: each in a focusable, labelled scroll region, with
 * one `<tr>` per row kept by key across live updates (a row is rebuilt only when what it shows
 * changed; scroll position and focus stay). A table whose columns cannot all fit the region's
 * width, even wrapped, is shown stacked (`tg-stacked`): each row a card of labelled cells, so
 * nothing is cut or hidden past a horizontal scroll. The ARIA roles keep it a table to screen
 * readers in either layout.
 */
import { h, reconcile } from './dom';
import type { Happening } from './requests';
import type { Cell, ConversationView, RequestView } from './rows';

interface Column<V> {
    label: string;
    numeric?: boolean;
    /** The row's header cell (`<th scope="row">`). */
    rowHeader?: boolean;
    className?: string;
    cell: (row: V) => Cell | Happening[];
}

function isCell(value: Cell | Happening[]): value is Cell {
    return !Array.isArray(value);
}

function cellNode<V>(column: Column<V>, row: V): HTMLTableCellElement {
    const value = column.cell(row);
    const classes = [column.numeric ? 'tg-num' : '', column.className ?? ''].filter(Boolean).join(' ') || null;
    const attrs = column.rowHeader
        ? { scope: 'row', role: 'rowheader', class: classes, 'data-label': column.label }
        : { role: 'cell', class: classes, 'data-label': column.label };
    const el = column.rowHeader ? h('th', attrs) : h('td', attrs);
    if (isCell(value)) {
        el.textContent = value.text;
        if (value.title) {
            el.title = value.title;
        }
    } else {
        el.append(...value.map((part) => h('span', { class: `tg-tag tg-tone-${part.tone}` }, part.text)));
    }
    return el;
}

class KeyedTable<V> {
    readonly region: HTMLDivElement;
    private readonly table: HTMLTableElement;
    private readonly body: HTMLTableSectionElement;
    private readonly rows = new Map<string, { tr: HTMLTableRowElement; signature: string }>();

    constructor(
        private readonly name: string,
        label: string,
        private readonly columns: Column<V>[],
        private readonly key: (row: V) => string,
        private readonly signature: (row: V) => string,
        short = false,
    ) {
        this.body = h('tbody', { role: 'rowgroup' });
        const head = h('tr', { role: 'row' }, ...columns.map((c) => h('th', { scope: 'col', role: 'columnheader', class: c.numeric ? 'tg-num' : null }, c.label)));
        this.table = h('table', { class: 'tg-table', role: 'table', 'data-table': name }, h('thead', { role: 'rowgroup' }, head), this.body);
        this.region = h('div', { class: short ? 'tg-region tg-short' : 'tg-region', role: 'region', tabindex: 0, 'aria-label': label }, this.table);
    }

    /** Stack the rows if the table's columns overflow the region (measured as a table). */
    fit(): void {
        if (this.region.clientWidth === 0) {
            return;
        }
        this.region.classList.remove('tg-stacked');
        this.region.classList.toggle('tg-stacked', this.table.scrollWidth > this.region.clientWidth);
    }

    update(views: readonly V[]): void {
        const next: HTMLTableRowElement[] = [];
        const seen = new Set<string>();
        for (const view of views) {
            const key = this.key(view);
            seen.add(key);
            const signature = this.signature(view);
            let entry = this.rows.get(key);
            if (!entry || entry.signature !== signature) {
                const tr = h('tr', { role: 'row', [this.name === 'requests' ? 'data-seq' : 'data-id']: key }, ...this.columns.map((c) => cellNode(c, view)));
                if (entry) {
                    entry.tr.replaceWith(tr);
                }
                entry = { tr, signature };
                this.rows.set(key, entry);
            }
            next.push(entry.tr);
        }
        for (const key of [...this.rows.keys()]) {
            if (!seen.has(key)) {
                this.rows.delete(key);
            }
        }
        reconcile(this.body, next);
        this.fit();
    }
}

export function requestsTable(): KeyedTable<RequestView> {
    return new KeyedTable<RequestView>('requests', 'Recent requests, newest first', [
        { label: 'Time', rowHeader: true, cell: (r) => r.cells.time },
        { label: 'Model', className: 'tg-model', cell: (r) => r.cells.model },
        { label: 'Kind', cell: (r) => r.cells.kind },
        { label: 'Input', numeric: true, cell: (r) => r.cells.input },
        { label: 'Cached', numeric: true, cell: (r) => r.cells.cached },
        { label: 'Output', numeric: true, cell: (r) => r.cells.output },
        { label: 'Cost', numeric: true, cell: (r) => r.cells.cost },
        { label: 'Estimate error', numeric: true, cell: (r) => r.cells.error },
        { label: 'What happened', className: 'tg-happened', cell: (r) => r.happened },
    ], (r) => String(r.seq), (r) => r.signature);
}

export function conversationsTable(): KeyedTable<ConversationView> {
    return new KeyedTable<ConversationView>('conversations', 'Conversations, latest first', [
        { label: 'Started', rowHeader: true, cell: (c) => c.cells.started },
        { label: 'Requests', numeric: true, cell: (c) => c.cells.requests },
        { label: 'Summarizations', numeric: true, cell: (c) => c.cells.summarizations },
        { label: 'Input', numeric: true, cell: (c) => c.cells.input },
        { label: 'Output', numeric: true, cell: (c) => c.cells.output },
        { label: 'Cost', numeric: true, cell: (c) => c.cells.cost },
        { label: 'Models', className: 'tg-model', cell: (c) => c.cells.models },
    ], (c) => c.id, (c) => c.signature, true);
}
