/**
 * Starting and supervising the Python server: find Python, launch `python -m tokengauge` with the
 * bundled libraries on PYTHONPATH (and its bytecode in the extension's storage where the
 * extension's folder is read-only), pass settings as initializationOptions, and restart it (a
 * bounded number of times) when it dies; when it cannot start, say why. Everything else talks to
 * it through `ServerConnection`, in the types of `protocol.ts`.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
    CancellationToken,
    LanguageClient,
    LanguageClientOptions,
    ServerOptions,
    State,
} from 'vscode-languageclient/node';

import { messageOf, PlainError } from './errors';
import { LevelledChannel } from './logChannel';
import { NotificationParams, Requests } from './protocol';
import {
    findPython,
    interpreterChangeRestarts,
    PythonCommand,
    PythonNotFoundError,
    PythonRemedy,
    shown,
    untrustedNote,
} from './python';
import { activeInterpreter, PVSC_EXTENSION_ID } from './pythonExtension';
import { initializationOptions, ISettings } from './settings';

const MAX_RESTARTS = 5;
const STARTING_WAIT_MS = 30_000;
/** How long a restart waits for the old server to stop. */
const STOP_WAIT_MS = 5_000;
/** What each way out of a missing Python is called on its button, and does. */
const REMEDIES: Record<PythonRemedy, { label: string; run: () => Thenable<unknown> }> = {
    install: { label: 'Install Python', run: () => vscode.env.openExternal(vscode.Uri.parse('https://www.python.org/downloads/')) },
    choose: { label: 'Choose Interpreter', run: () => vscode.commands.executeCommand('python.setInterpreter') },
    getPythonExtension: {
        label: 'Get the Python Extension',
        run: () => vscode.commands.executeCommand('workbench.extensions.action.showExtensionsWithIds', [PVSC_EXTENSION_ID]),
    },
    setPath: { label: 'Set Python Path', run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'tokenGauge.pythonPath') },
};

const NOT_RUNNING =
    'The Token Gauge server is not running. Run "Token Gauge: Restart Server"; "Token Gauge: Show Logs" says why it stopped.';

/** Resolve once the client runs again (after a crash it restarts by itself), or after `ms`. */
function whenRunning(client: LanguageClient, ms: number): Promise<void> {
    return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        const listener = client.onDidChangeState((event) => {
            if (event.newState !== State.Starting) {
                done();
            }
        });
        function done(): void {
            clearTimeout(timer);
            listener.dispose();
            resolve();
        }
    });
}

/** The bundled dependencies for this Python (a VSIX carries one set per CPython minor version). */
export function bundledPythonPath(extensionPath: string, version: [number, number]): string[] {
    const libs = path.join(extensionPath, 'bundled', 'libs');
    const perVersion = path.join(libs, `cp${version[0]}${version[1]}`);
    const common = path.join(libs, 'common');
    return [perVersion, common].filter((dir) => fs.existsSync(dir));
}

/**
 * Where the server's Python should write and read the bytecode of what it imports
 * (`PYTHONPYCACHEPREFIX`), or undefined for beside the sources, as Python does by itself. The
 * VSIX ships no bytecode (one set per CPython would double its download to spare one start per
 * update), so the first start writes it; where the extension's folder is read-only (or the user
 * asked Python to write none) that is into the extension's storage, or every start would compile
 * the server and its libraries again. There, everything the server imports is compiled once,
 * the standard library too, so a writable folder keeps Python's own place. The tree is keyed by
 * the source's path, which an update changes: other versions' trees are removed.
 */
export async function bytecodeFolder(
    extensionPath: string,
    storage: string,
    extensionVersion: string,
    env: NodeJS.ProcessEnv,
): Promise<string | undefined> {
    const libs = path.join(extensionPath, 'bundled', 'libs');
    const writable = await fs.promises.access(libs, fs.constants.W_OK).then(() => true, () => false);
    const kept = writable && !env.PYTHONDONTWRITEBYTECODE ? undefined : extensionVersion;
    const root = path.join(storage, 'pycache');
    const stale = (await fs.promises.readdir(root).catch(() => [])).filter((name) => name !== kept);
    await Promise.all(stale.map((name) => fs.promises.rm(path.join(root, name), { recursive: true, force: true })));
    return kept === undefined ? undefined : path.join(root, kept);
}

type NotificationHandler = (params: unknown) => void;

export class ServerConnection implements vscode.Disposable {
    private client: LanguageClient | undefined;
    /** The start under way (finding Python, spawning, initializing): requests wait for it. */
    private starting: Promise<void> | undefined;
    /** Why the last start failed, for the requests that waited for it. */
    private startError: string | undefined;
    /** The Python the server runs on (undefined while none runs). */
    private python: PythonCommand | undefined;
    /** Counts the starts asked for: only the newest one runs. */
    private generation = 0;
    private readonly handlers = new Map<string, NotificationHandler>();
    /** The Python extension's interpreters the log has said are passed over (untrusted workspace). */
    private readonly passedOver = new Set<string>();
    private readonly running = new vscode.EventEmitter<void>();
    /** Fires each time the server (re)starts and answers: after `start` and after a crash. */
    readonly onRunning = this.running.event;
    /** When the server first answered after activation (the startup figures). */
    firstRunningAt: number | undefined;
    private readonly lost = new vscode.EventEmitter<void>();
    /** Fires when the server stopped without being asked to (it crashed more often than it may restart). */
    readonly onLost = this.lost.event;
    private readonly failed = new vscode.EventEmitter<string>();
    /** Fires with the reason when the server could not start (no suitable Python, …). */
    readonly onStartFailed = this.failed.event;

    constructor(
        private readonly context: vscode.ExtensionContext,
        private readonly log: vscode.LogOutputChannel,
    ) {}

    /** Register a handler for a server notification (kept across restarts). */
    onNotification<M extends keyof NotificationParams>(
        method: M,
        handler: (params: NotificationParams[M]) => void,
    ): void {
        const untyped = handler as NotificationHandler;
        this.handlers.set(method, untyped);
        this.client?.onNotification(method, untyped);
    }

    /**
     * Start (or restart) the server with these settings; requests sent meanwhile wait for it.
     * Starts run one after another (a client still starting cannot be stopped), and a start that
     * a newer one overtook while it waited is skipped.
     */
    start(settings: ISettings): Promise<void> {
        const generation = ++this.generation;
        const previous = this.starting?.catch(() => undefined) ?? Promise.resolve();
        const starting = previous.then(() => (generation === this.generation ? this.launch(settings) : undefined));
        this.starting = starting;
        this.startError = undefined;
        const settled = (): void => {
            if (this.starting === starting) {
                this.starting = undefined;
            }
        };
        starting.then(settled, (error: unknown) => {
            this.startError = messageOf(error);
            settled();
        });
        return starting;
    }

    private async launch(settings: ISettings): Promise<void> {
        await this.stop();
        const python = await findPython({
            configured: settings.pythonPath,
            fromPythonExtension: activeInterpreter,
            trusted: vscode.workspace.isTrusted,
        });
        this.python = python;
        if (python.untrustedInterpreter && !this.passedOver.has(python.untrustedInterpreter)) {
            this.passedOver.add(python.untrustedInterpreter);
            this.log.info(untrustedNote(python.untrustedInterpreter, python));
        }
        const extra = bundledPythonPath(this.context.extensionPath, python.version);
        const storage = this.context.globalStorageUri.fsPath;
        await fs.promises.mkdir(storage, { recursive: true });
        const version = String((this.context.extension.packageJSON as { version?: unknown }).version);
        const env = { ...process.env };
        const bytecode = await bytecodeFolder(this.context.extensionPath, storage, version, env);
        if (bytecode) {
            env.PYTHONPYCACHEPREFIX = bytecode;
            delete env.PYTHONDONTWRITEBYTECODE; // the user's trees get none: ours go to storage
        }
        if (extra.length) {
            env.PYTHONPATH = [...extra, env.PYTHONPATH].filter(Boolean).join(path.delimiter);
        }
        this.log.info(`starting the Token Gauge server with ${shown(python)} (Python ${python.version.join('.')}, from ${python.source})`);
        const serverOptions: ServerOptions = {
            command: python.command,
            args: [...python.args, '-m', 'tokengauge'], // stdio (no `transport`: it would append `--stdio`)
            options: { env },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [],
            outputChannel: new LevelledChannel(this.log),
            initializationOptions: initializationOptions(settings, storage, vscode.workspace.name),
            connectionOptions: { maxRestartCount: MAX_RESTARTS },
        };
        const client = new LanguageClient('tokengauge', 'Token Gauge', serverOptions, clientOptions);
        for (const [method, handler] of this.handlers) {
            client.onNotification(method, handler);
        }
        client.onDidChangeState((event) => {
            if (this.client !== client) {
                return;
            }
            if (event.newState === State.Running) {
                this.firstRunningAt ??= Date.now();
                this.running.fire();
            } else if (event.newState === State.Stopped) {
                this.lost.fire();
            }
        });
        this.client = client;
        await client.start();
    }

    /**
     * Start, or show why it could not: the error is logged and shown with the actions that help
     * (for a missing Python: install one, choose one, get the Python extension, set the path;
     * otherwise: show the logs).
     */
    async startOrExplain(settings: ISettings): Promise<void> {
        try {
            await this.start(settings);
        } catch (error) {
            const message = messageOf(error);
            this.log.error(message);
            this.failed.fire(message);
            const remedies = error instanceof PythonNotFoundError ? error.remedies : [];
            const labels = remedies.map((remedy) => REMEDIES[remedy].label);
            const choice = await vscode.window.showErrorMessage(
                message.startsWith('Token Gauge') ? message : `Token Gauge: ${message}`,
                ...(labels.length ? labels : ['Show Logs']),
            );
            const remedy = remedies.find((r) => REMEDIES[r].label === choice);
            if (remedy) {
                await REMEDIES[remedy].run();
            } else if (choice === 'Show Logs') {
                this.log.show();
            }
        }
    }

    /**
     * The Python extension selected another interpreter (or the workspace became trusted, and its
     * interpreter may be used): start again on it when the server would now be found on another
     * Python than the one it runs on (or none runs).
     */
    async followInterpreter(settings: ISettings): Promise<void> {
        const active = await activeInterpreter().catch(() => undefined);
        const running = this.isRunning ? this.python : undefined;
        if (!interpreterChangeRestarts(settings.pythonPath, running, active, vscode.workspace.isTrusted)) {
            return;
        }
        this.log.info(`the Python extension's interpreter is now ${active ?? 'none'}: starting the server again`);
        await this.startOrExplain(settings);
    }

    /** Send a request (waiting for a restarting server); rejects readably if there is none. */
    async request<M extends keyof Requests>(
        method: M,
        params: Requests[M]['params'],
        token?: CancellationToken,
    ): Promise<Requests[M]['result']> {
        await this.starting?.catch(() => undefined);
        const client = this.client;
        if (client?.state === State.Starting) {
            await whenRunning(client, STARTING_WAIT_MS);
        }
        if (!client || client.state !== State.Running) {
            throw new PlainError(
                this.startError ? `The Token Gauge server could not start: ${this.startError}` : NOT_RUNNING,
            );
        }
        return token
            ? client.sendRequest<Requests[M]['result']>(method, params, token)
            : client.sendRequest<Requests[M]['result']>(method, params);
    }

    /** Whether the server answers now (not starting, not stopped). */
    get isRunning(): boolean {
        return this.client?.state === State.Running;
    }

    /**
     * Stop the server, waiting at most `STOP_WAIT_MS`: a client whose start never completed (its
     * connection failed while starting) may never finish stopping, and a restart must not wait
     * for it (the old process ends with its closed stdin).
     */
    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        this.python = undefined;
        if (client && client.state !== State.Stopped) {
            const stopped = client.stop().then(
                () => true,
                (error: unknown) => {
                    this.log.warn(`stopping: ${String(error)}`);
                    return true;
                },
            );
            let timer: NodeJS.Timeout | undefined;
            const late = new Promise<boolean>((resolve) => {
                timer = setTimeout(() => resolve(false), STOP_WAIT_MS);
            });
            if (!(await Promise.race([stopped, late]))) {
                this.log.warn(`the server did not stop within ${STOP_WAIT_MS / 1000} s: going on without it`);
            }
            clearTimeout(timer);
        }
    }

    dispose(): void {
        this.running.dispose();
        this.lost.dispose();
        this.failed.dispose();
        void this.stop();
    }
}
