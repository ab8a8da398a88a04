import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { findPython, interpreterChangeRestarts, PythonCommand, PythonNotFoundError, untrustedNote } from '../../src/python';

/** A probe that knows these commands' versions (the rest do not run), and records what it ran. */
function machine(versions: Record<string, [number, number]>) {
    const ran: string[] = [];
    const probe = ({ command, args }: PythonCommand) => {
        const line = [command, ...args].join(' ');
        ran.push(line);
        return Promise.resolve(versions[line]);
    };
    return { probe, ran };
}

const noExtension = () => Promise.resolve(null);
const selected = (path: string | undefined) => () => Promise.resolve(path);

void test('the setting, when set, is the only candidate', async () => {
    const { probe, ran } = machine({ '/opt/py/bin/python3.12': [3, 12], python3: [3, 13] });
    const found = await findPython({ configured: '/opt/py/bin/python3.12', fromPythonExtension: selected('/x'), probe });
    assert.deepEqual([found.command, found.version, found.source], ['/opt/py/bin/python3.12', [3, 12], 'the tokenGauge.pythonPath setting']);
    assert.deepEqual(ran, ['/opt/py/bin/python3.12']);
    const old = machine({ '/usr/bin/python3.8': [3, 8], python3: [3, 13] });
    await assert.rejects(
        findPython({ configured: '/usr/bin/python3.8', fromPythonExtension: noExtension, probe: old.probe }),
        (error: unknown) => error instanceof PythonNotFoundError
            && /\/usr\/bin\/python3\.8 \(the tokenGauge\.pythonPath setting\) is Python 3\.8/.test(error.message)
            && error.remedies.join() === 'setPath,install',
    );
    assert.deepEqual(old.ran, ['/usr/bin/python3.8']);
});

void test("the Python extension's interpreter comes before PATH", async () => {
    const { probe, ran } = machine({ '/home/me/.venv/bin/python': [3, 11], python3: [3, 13] });
    const found = await findPython({ configured: '', fromPythonExtension: selected('/home/me/.venv/bin/python'), probe });
    assert.deepEqual([found.command, found.source], ['/home/me/.venv/bin/python', "the Python extension's interpreter"]);
    assert.deepEqual(ran, ['/home/me/.venv/bin/python']);
    // Its interpreter too old: PATH is next.
    const next = machine({ '/old/python': [3, 9], python: [3, 10] });
    const fallback = await findPython({ configured: '', fromPythonExtension: selected('/old/python'), probe: next.probe });
    assert.deepEqual([fallback.command, fallback.source], ['python', 'PATH']);
    assert.deepEqual(next.ran, ['/old/python', 'python3', 'python']);
});

void test('on Windows the launcher `py -3` is tried last, and runs the server with its argument', async () => {
    const { probe, ran } = machine({ 'py -3': [3, 12] });
    const found = await findPython({ configured: '', fromPythonExtension: noExtension, probe, platform: 'win32' });
    assert.deepEqual([found.command, found.args, found.source], ['py', ['-3'], 'the Python launcher']);
    assert.deepEqual(ran, ['python3', 'python', 'py -3']);
    const linux = machine({ 'py -3': [3, 12] });
    await assert.rejects(findPython({ configured: '', fromPythonExtension: noExtension, probe: linux.probe, platform: 'linux' }));
    assert.deepEqual(linux.ran, ['python3', 'python']);
});

void test('with no Python at all, the error says what each candidate was and offers the ways out', async () => {
    const { probe } = machine({ python: [2, 7] });
    await assert.rejects(
        findPython({ configured: '', fromPythonExtension: noExtension, probe, platform: 'win32' }),
        (error: unknown) => {
            assert.ok(error instanceof PythonNotFoundError);
            assert.match(error.message, /needs Python 3\.10 or newer for its counting server and found none/);
            assert.match(error.message, /python3 \(PATH\) did not run; python \(PATH\) is Python 2\.7; py -3 \(the Python launcher\) did not run/);
            assert.deepEqual(error.remedies, ['install', 'getPythonExtension', 'setPath']);
            return true;
        },
    );
    // With the Python extension installed (no interpreter selected): choose one there.
    await assert.rejects(
        findPython({ configured: '', fromPythonExtension: selected(undefined), probe }),
        (error: unknown) => error instanceof PythonNotFoundError && error.remedies.join() === 'install,choose,setPath',
    );
});

void test("another interpreter in the Python extension starts the server again only when it would run on another Python", async () => {
    const { probe } = machine({ '/a/python': [3, 12], '/b/python': [3, 13], python3: [3, 11] });
    const onA = await findPython({ configured: '', fromPythonExtension: selected('/a/python'), probe });
    const onPath = await findPython({ configured: '', fromPythonExtension: selected(undefined), probe });
    const onSetting = await findPython({ configured: '/a/python', fromPythonExtension: selected('/b/python'), probe });
    assert.equal(interpreterChangeRestarts('', onA, '/b/python'), true);
    assert.equal(interpreterChangeRestarts('', onA, '/a/python'), false, 'the same interpreter (a workspace switch)');
    assert.equal(interpreterChangeRestarts('', onA, undefined), true, 'none selected now: PATH is next');
    assert.equal(interpreterChangeRestarts('', onPath, '/b/python'), true, 'one selected now comes before PATH');
    assert.equal(interpreterChangeRestarts('', onPath, undefined), false);
    assert.equal(interpreterChangeRestarts('/a/python', onSetting, '/b/python'), false, 'the setting is what the person chose');
    assert.equal(interpreterChangeRestarts('', undefined, '/b/python'), true, 'no server runs: the new one may do');
    assert.equal(interpreterChangeRestarts('', undefined, null), true);
});

void test("in an untrusted workspace the Python extension's interpreter (maybe the workspace's own) is passed over for PATH", async () => {
    const venv = '/home/me/repo/.venv/bin/python';
    const { probe, ran } = machine({ [venv]: [3, 12], python3: [3, 11] });
    const found = await findPython({ configured: '', fromPythonExtension: selected(venv), trusted: false, probe });
    assert.deepEqual([found.command, found.source, found.untrustedInterpreter], ['python3', 'PATH', venv]);
    assert.deepEqual(ran, ['python3']);
    assert.equal(
        untrustedNote(venv, found),
        `the workspace is not trusted: the Python extension's interpreter (${venv}) is not used, ` +
            "as it may be the workspace's own; the server runs on python3 (PATH) instead",
    );
    // Trusted, the same machine runs it on that interpreter, and there is nothing to say.
    const trusted = await findPython({ configured: '', fromPythonExtension: selected(venv), trusted: true, probe });
    assert.deepEqual([trusted.command, trusted.untrustedInterpreter], [venv, undefined]);
    // No interpreter selected there: nothing was passed over.
    const none = await findPython({ configured: '', fromPythonExtension: selected(undefined), trusted: false, probe });
    assert.equal(none.untrustedInterpreter, undefined);
    // The setting is the person's own choice (user settings only): untrusted or not, it is the one.
    const setting = await findPython({ configured: venv, fromPythonExtension: selected('/other'), trusted: false, probe });
    assert.deepEqual([setting.command, setting.untrustedInterpreter], [venv, undefined]);
});

void test('in an untrusted workspace with no Python on PATH, the error says why the interpreter was not used', async () => {
    const { probe, ran } = machine({ '/home/me/repo/.venv/bin/python': [3, 12] });
    await assert.rejects(
        findPython({ configured: '', fromPythonExtension: selected('/home/me/repo/.venv/bin/python'), trusted: false, probe }),
        (error: unknown) => {
            assert.ok(error instanceof PythonNotFoundError);
            assert.match(error.message, /python3 \(PATH\) did not run; python \(PATH\) did not run \(in a workspace you have not trusted, the Python extension's interpreter is not used\)/);
            assert.deepEqual(error.remedies, ['install', 'setPath']);
            return true;
        },
    );
    assert.deepEqual(ran, ['python3', 'python']);
});

void test('in an untrusted workspace another interpreter in the Python extension starts nothing again', async () => {
    const { probe } = machine({ '/a/python': [3, 12], python3: [3, 11] });
    const onPath = await findPython({ configured: '', fromPythonExtension: selected('/a/python'), trusted: false, probe });
    assert.equal(interpreterChangeRestarts('', onPath, '/b/python', false), false);
    assert.equal(interpreterChangeRestarts('', onPath, undefined, false), false);
    assert.equal(interpreterChangeRestarts('', undefined, '/b/python', false), true, 'no server runs: start one');
    // Once the workspace is trusted, the interpreter selected there comes before PATH.
    assert.equal(interpreterChangeRestarts('', onPath, '/a/python', true), true);
});

void test('a candidate that ran but is not Python is said to be so, and a missing one as missing', async () => {
    const { versionOf } = await import('../../src/python');
    assert.equal(await versionOf({ command: '/bin/echo', args: [], source: 'test' }), 'notPython');
    assert.equal(await versionOf({ command: '/bin/false', args: [], source: 'test' }), 'notPython');
    assert.equal(await versionOf({ command: '/no/such/python', args: [], source: 'test' }), 'missing');
    const probe = (candidate: PythonCommand) =>
        Promise.resolve(candidate.command === '/bin/echo' ? ('notPython' as const) : ('missing' as const));
    await assert.rejects(
        findPython({ configured: '/bin/echo', fromPythonExtension: noExtension, probe }),
        (error: unknown) => error instanceof PythonNotFoundError && /\/bin\/echo \(the tokenGauge\.pythonPath setting\) ran but is not Python/.test(error.message),
    );
    await assert.rejects(
        findPython({ configured: '/no/python', fromPythonExtension: noExtension, probe }),
        (error: unknown) => error instanceof PythonNotFoundError && /\/no\/python \(the tokenGauge\.pythonPath setting\) was not found/.test(error.message),
    );
});
