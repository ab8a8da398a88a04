// Large, varied, deterministic content for the Copilot suite: each turn's question with code, logs,
// JSON, prose or CJK text, cut to a number of *true* tokens (the test upstream's tokenizer: o200k_base
// or cl100k_base × skew), and the workspace files the test upstream makes Copilot read with its
// read_file tool (scripted tool-call rounds, see tests/harness/fake_upstream/model.py `scripted_call`).
// Scenarios: `standard` (the kinds in turn), `large` (every third turn from the first a pasted
// service log of at least 5,000 o200k tokens and 150 lines), `shifting` (prose and CJK, then code and logs, which
// the upstream counts at different scales: `scaleRules`), and `local` / `local-set` (the standard
// kinds and reads, sized for a local server's small loaded window: `SIZES`), `rereads` (three files
// read four times each, turns a third the size: what deduplication and masking save); `otel` is the standard's
// content (what differs there is where Copilot's and tokengauge's spans go).
'use strict';
const path = require('path');

function rng(seed) {
    let s = seed >>> 0;
    return () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let t = s;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

const WORDS = ('account ledger invoice cache shard replica window budget token stream parser buffer ' +
    'session tenant quota retry backoff schema payload cursor offset checksum digest snapshot queue ' +
    'worker lease heartbeat gateway router upstream downstream metric sample bucket histogram').split(' ');

function pick(r, list) { return list[Math.floor(r() * list.length)]; }
function ident(r) { return `${pick(r, WORDS)}_${pick(r, WORDS)}`; }
function camel(r) { const a = pick(r, WORDS); const b = pick(r, WORDS); return a + b[0].toUpperCase() + b.slice(1); }

function pythonModule(r, size) {
    const lines = ['from __future__ import annotations', '', 'import dataclasses', 'import logging', '',
        'log = logging.getLogger(__name__)', ''];
    while (lines.join('\n').length < size) {
        const cls = camel(r).replace(/^./, (c) => c.toUpperCase());
        lines.push('', '@dataclasses.dataclass', `class ${cls}:`, `    """Tracks the ${pick(r, WORDS)} of one ${pick(r, WORDS)}."""`, '');
        for (let f = 0; f < 3 + Math.floor(r() * 4); f++) lines.push(`    ${ident(r)}: int = ${Math.floor(r() * 1000)}`);
        for (let m = 0; m < 2 + Math.floor(r() * 3); m++) {
            const name = ident(r);
            lines.push('', `    def ${name}(self, ${pick(r, WORDS)}: int, limit: int = ${Math.floor(r() * 64) + 1}) -> int:`,
                `        """Return the ${pick(r, WORDS)} after applying ${pick(r, WORDS)} rules."""`,
                `        total = 0`,
                `        for i in range(limit):`,
                `            if i % ${2 + Math.floor(r() * 7)} == 0:`,
                `                total += self.${ident(r)} if hasattr(self, "${ident(r)}") else i`,
                `            else:`,
                `                log.debug("${name}: %s %d", "${pick(r, WORDS)}", i)`,
                `        return total * ${Math.floor(r() * 9) + 1}`);
        }
    }
    return lines.join('\n');
}

function typescriptModule(r, size) {
    const lines = ["import { EventEmitter } from 'node:events';", ''];
    while (lines.join('\n').length < size) {
        const iface = camel(r).replace(/^./, (c) => c.toUpperCase());
        lines.push(`export interface ${iface} {`);
        for (let f = 0; f < 4; f++) lines.push(`    ${camel(r)}: ${pick(r, ['number', 'string', 'boolean', 'string[]'])};`);
        lines.push('}', '', `export class ${iface}Store extends EventEmitter {`,
            `    private readonly items = new Map<string, ${iface}>();`, '');
        for (let m = 0; m < 3; m++) {
            const name = camel(r);
            lines.push(`    async ${name}(key: string, retries = ${1 + Math.floor(r() * 5)}): Promise<${iface} | undefined> {`,
                `        for (let attempt = 0; attempt < retries; attempt++) {`,
                `            const found = this.items.get(\`\${key}:${pick(r, WORDS)}\`);`,
                `            if (found && found.${camel(r)} !== undefined) return found;`,
                `            await new Promise((resolve) => setTimeout(resolve, ${10 * (1 + Math.floor(r() * 20))}));`,
                `        }`,
                `        this.emit('${pick(r, WORDS)}', key);`,
                `        return undefined;`,
                `    }`, '');
        }
        lines.push('}', '');
    }
    return lines.join('\n');
}

function serviceLog(r, size) {
    const lines = [];
    let t = Date.UTC(2025, 2, 14, 9, 30, 0);
    while (lines.join('\n').length < size) {
        t += Math.floor(r() * 2500);
        const level = pick(r, ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR']);
        const rid = Math.floor(r() * 0xffffffff).toString(16).padStart(8, '0');
        lines.push(`${new Date(t).toISOString()} ${level.padEnd(5)} [${pick(r, WORDS)}-${Math.floor(r() * 8)}] ` +
            `req=${rid} ${pick(r, WORDS)} ${pick(r, ['started', 'finished', 'retrying', 'timed out', 'rejected'])} ` +
            `in ${Math.floor(r() * 4000)}ms tenant=${Math.floor(r() * 500)} bytes=${Math.floor(r() * 1e6)}`);
        if (level === 'ERROR') {
            lines.push(`Traceback (most recent call last):`,
                `  File "/srv/app/${pick(r, WORDS)}/${ident(r)}.py", line ${Math.floor(r() * 900)}, in ${ident(r)}`,
                `    return self.${ident(r)}(payload, timeout=${Math.floor(r() * 30)})`,
                `${pick(r, ['TimeoutError', 'KeyError', 'ConnectionResetError', 'ValueError'])}: ${pick(r, WORDS)} ${pick(r, WORDS)} unavailable`);
        }
    }
    return lines.join('\n');
}

function jsonRecords(r, size) {
    const records = [];
    while (JSON.stringify(records, null, 2).length < size) {
        records.push({
            id: `${pick(r, WORDS)}-${Math.floor(r() * 1e6)}`,
            tenant: Math.floor(r() * 500),
            status: pick(r, ['active', 'suspended', 'pending', 'archived']),
            limits: { [camel(r)]: Math.floor(r() * 1e4), [camel(r)]: Math.floor(r() * 1e4), burst: r() < 0.5 },
            tags: [pick(r, WORDS), pick(r, WORDS), pick(r, WORDS)],
            updatedAt: new Date(Date.UTC(2025, 0, 1) + Math.floor(r() * 3e10)).toISOString(),
            note: `${pick(r, WORDS)} ${pick(r, WORDS)} ${pick(r, WORDS)} ${pick(r, WORDS)}`,
        });
    }
    return JSON.stringify(records, null, 2);
}


// CJK prose: Chinese sentences built from a fixed vocabulary, with Japanese kana now and then.
const HANZI = ('系统 缓存 账本 发票 分片 副本 窗口 预算 令牌 数据流 解析器 缓冲区 会话 租户 配额 重试 退避 模式 负载 游标 ' +
    '偏移 校验和 摘要 快照 队列 工作者 租约 心跳 网关 路由 上游 下游 指标 样本 桶 直方图 服务 请求 响应 错误').split(' ');
const KANA = 'の は を に が で と も から まで より'.split(' ');

function cjkText(r, size) {
    const lines = [];
    while (lines.join('\n').length < size) {
        const sentence = [];
        for (let w = 0; w < 6 + Math.floor(r() * 10); w++) {
            sentence.push(pick(r, HANZI), r() < 0.3 ? pick(r, KANA) : '');
        }
        lines.push(`${sentence.join('')}。${r() < 0.2 ? '\n' : ''}`);
    }
    return lines.join('');
}

// English prose: an incident write-up in plain sentences.
const VERBS = 'dropped retried stalled recovered overflowed drained rotated rejected throttled replayed'.split(' ');

function prose(r, size) {
    const lines = [];
    while (lines.join(' ').length < size) {
        lines.push(`The ${pick(r, WORDS)} ${pick(r, VERBS)} while the ${pick(r, WORDS)} ${pick(r, WORDS)} ` +
            `was ${pick(r, VERBS)}, so the team ${pick(r, VERBS)} every ${pick(r, WORDS)} before the ` +
            `${pick(r, WORDS)} window closed${r() < 0.25 ? '.\n\n' : '.'}`);
    }
    return lines.join(' ');
}

const KINDS = {
    python: ['python', 'Review this Python module and list the three riskiest functions', pythonModule],
    cjk: ['text', '请审阅这份中文事故报告，并指出最早出现的问题', cjkText],
    log: ['log', 'These are the service logs from last night\'s incident; what went wrong first', serviceLog],
    prose: ['markdown', 'Here is the incident write-up; summarise the timeline', prose],
    json: ['json', 'Here is the tenant configuration export; which tenants look misconfigured', jsonRecords],
    typescript: ['typescript', 'Review this TypeScript store for race conditions', typescriptModule],
};
const ORDER = ['python', 'cjk', 'log', 'prose', 'json', 'typescript'];
// The shifting scenario: its first half prose and CJK, its second half code and logs.
const SHIFT_ORDER = [['prose', 'cjk'], ['python', 'log', 'typescript', 'log', 'python', 'json']];

// The large scenario's pasted log: at least this many o200k tokens and lines, every third turn from
// the first (which has no history to summarize or drop).
const PASTED = { tokens: 5000, lines: 150, every: 3 };

// Workspace files Copilot reads in scripted tool-call rounds: [relative path, kind, true tokens].
const FILES = [
    ['src/ledger_service.py', 'python', 2400],
    ['logs/gateway.log', 'log', 2000],
    ['docs/incident-notes.md', 'prose', 1800],
    ['config/tenants.json', 'json', 2200],
];
// Per turn (cycled): which FILES Copilot is made to read before it answers.
const READS = [[], [0], [], [1, 2], [], [3], [0], [], [2], [1], [], [3, 0]];
// The rereads scenario's: the first three FILES read four times each in 12 turns.
const REREADS = [[0, 1, 2], [], [0, 1], [2], [], [0, 1, 2], [], [], [0], [1, 2], [], []];
// The shifting scenario's reads: the prose notes in its first half, code and logs in its second.
const SHIFT_READS = [[[], [2], [], [2], [], []], [[0], [], [1], [], [0, 1], []]];

// Per turn (cycled): the true tokens of the turn's content.
const TOKENS = [5000, 4200, 5800, 4600, 5400, 4000];

// Each scenario's share of TOKENS and of the FILES' sizes. The local scenarios run against a model a
// local server has loaded with a small window (scripts/test-copilot.sh: 12K, of which Copilot's own
// system prompt and its 39 tools, minimal, take 7.1k before the person says anything), so their turns
// (400–580 true tokens of content) and files (360–480) are what such a window holds beside them, and
// the conversation still outgrows it within a turn or two.
// The rereads scenario's turns are a third the size, so that what is read again weighs.
const SIZES = { local: { turn: 0.1, file: 0.2 }, 'local-set': { turn: 0.1, file: 0.2 }, rereads: { turn: 0.3, file: 1 } };
const SCENARIOS = ['standard', 'large', 'shifting', 'otel', ...Object.keys(SIZES)];

// How the test upstream counts each kind in the shifting scenario (ModelBehavior.scale_rules, first
// match wins; patterns as both Python's `re` and JavaScript read them): code and logs at 1.4 of
// o200k, prose and CJK at 0.9, anything else (Copilot's prompt, summaries) at the run's skew.
const SHIFTING_RULES = [
    { pattern: 'from __future__ import annotations|import \\{ EventEmitter \\} from', scale: 1.4 },
    { pattern: '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z (INFO|DEBUG|WARN|ERROR)', scale: 1.4 },
    { pattern: '"updatedAt": "\\d{4}-', scale: 1.4 },
    { pattern: 'The [a-z]+ (dropped|retried|stalled|recovered|overflowed|drained|rotated|rejected|throttled|replayed) while', scale: 0.9 },
    { pattern: '[\u4e00-\u9fff]{8}', scale: 0.9 },
];

/** The upstream's scale rules of a scenario (none: one scale for all text); throws for an unknown one. */
function scaleRules(scenario) {
    if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario ${scenario}`);
    return scenario === 'shifting' ? SHIFTING_RULES : [];
}

/**
 * Builds turns and files for one true tokenizer: `count(text)` is the encoder's token count, `skew`
 * its scale (or a scenario's rule's, see `scaleRules`), so content is cut to `ceil(count × scale)`
 * ≈ the wanted true tokens; `o200k(text)` is Copilot's own count (the large scenario's measure).
 */
class Content {
    constructor(count, skew, workspace, { scenario = 'standard', o200k = count } = {}) {
        if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario ${scenario}`);
        this.count = count;
        this.skew = skew;
        this.workspace = workspace;
        this.scenario = scenario;
        this.o200k = o200k;
        this.rules = scaleRules(scenario).map((r) => ({ re: new RegExp(r.pattern, 'm'), scale: r.scale }));
        this.sizes = SIZES[scenario] || { turn: 1, file: 1 };
    }

    /** The upstream's true tokens of `text` as one message. */
    trueTokens(text) {
        const rule = this.rules.find((r) => r.re.test(text));
        return Math.ceil(this.count(text) * (rule ? rule.scale : this.skew));
    }

    /** `make`'s text from seed `seed`, cut at a line end once `enough(text)` holds. */
    cut(make, seed, enough, size) {
        for (;;) {
            const text = make(rng(seed), size);
            if (!enough(text)) {
                size *= 2;
                continue;
            }
            const lines = text.split('\n');
            let lo = 1;
            let hi = lines.length;
            while (lo < hi) { // the fewest whole lines that are enough
                const mid = (lo + hi) >> 1;
                if (enough(lines.slice(0, mid).join('\n'))) hi = mid; else lo = mid + 1;
            }
            return lines.slice(0, lo).join('\n');
        }
    }

    /** `make`'s text from seed `seed`, cut at a line end once it reaches `tokens` true tokens. */
    sized(make, seed, tokens) {
        return this.cut(make, seed, (text) => this.trueTokens(text) >= tokens, Math.ceil(tokens / this.skew * 3));
    }

    /** The workspace files: [{relative, absolute, text, lines}]. */
    files() {
        return FILES.map(([relative, kind, tokens], i) => {
            const text = this.sized(KINDS[kind][2], 500 + i, Math.round(tokens * this.sizes.file));
            return { relative, absolute: path.join(this.workspace, relative), text, lines: text.split('\n').length };
        });
    }

    /** Turn `i`'s kind and the FILES it reads, by the scenario. */
    plan(i, turns) {
        if (this.scenario === 'shifting') {
            const half = i < Math.ceil(turns / 2) ? 0 : 1;
            const j = i - half * Math.ceil(turns / 2); // the turn within its half
            const cycled = (lists) => lists[half][j % lists[half].length];
            return { kind: cycled(SHIFT_ORDER), reads: cycled(SHIFT_READS) };
        }
        if (this.scenario === 'large' && i % PASTED.every === 0) return { kind: 'pasted', reads: [] };
        if (this.scenario === 'rereads') return { kind: ORDER[i % ORDER.length], reads: REREADS[i % REREADS.length] };
        return { kind: ORDER[i % ORDER.length], reads: READS[i % READS.length] };
    }

    /** Turn `i`'s query (of `turns`): the question, the scripted reads, and its content in a fenced block. */
    query(i, files, turns = READS.length) {
        const plan = this.plan(i, turns);
        const reads = plan.reads.map((f) => files[f]);
        const calls = reads.map((f) => ({ name: 'read_file', arguments: { filePath: f.absolute, startLine: 1, endLine: f.lines } }));
        const readLine = reads.length ? `\nRead ${reads.map((f) => f.relative).join(' and ')} first.` : '';
        const script = `\n<tg-tool-calls>${JSON.stringify(calls)}</tg-tool-calls>\n\n`;
        if (plan.kind === 'pasted') {
            const enough = (text) => text.split('\n').length >= PASTED.lines && this.o200k(text) >= PASTED.tokens;
            const log = this.cut(serviceLog, 2000 + i, enough, PASTED.tokens * 4);
            return {
                kind: 'pasted log', reads: 0, o200k: this.o200k(log), lines: log.split('\n').length,
                text: `I pasted the payment service's log from the outage below; what failed first, and why (part ${i + 1})?` +
                    `${script}\`\`\`log\n${log}\n\`\`\`\n`,
            };
        }
        const [lang, ask, make] = KINDS[plan.kind];
        const content = this.sized(make, 1000 + i, Math.round(TOKENS[i % TOKENS.length] * this.sizes.turn));
        return {
            kind: plan.kind,
            reads: reads.length,
            text: `${ask} (part ${i + 1}).${readLine}${script}\`\`\`${lang}\n${content}\n\`\`\`\n`,
        };
    }
}

module.exports = { Content, scaleRules };
