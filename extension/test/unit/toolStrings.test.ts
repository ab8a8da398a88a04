import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { currentToolStrings, toolSchemaStrings } from '../../src/toolStrings';

void test('every key and string value of {name, description, parameters}, in order, each once', () => {
    const strings = toolSchemaStrings([
        {
            name: 'read_file',
            description: 'Read a file.',
            inputSchema: {
                type: 'object',
                properties: { filePath: { type: 'string', description: 'The path.' }, limit: { type: 'number', minimum: 0 } },
                required: ['filePath'],
            },
        },
        { name: 'list_dir', description: '', inputSchema: undefined },
    ]);
    assert.deepEqual(strings, [
        'name', 'read_file', 'description', 'Read a file.', 'parameters',
        'type', 'object', 'properties', 'filePath', 'string', 'The path.', 'limit', 'number',
        'required', '0',
        'list_dir',
    ]);
});

void test('falsy values are skipped with their keys; array items are keyed by index', () => {
    const strings = toolSchemaStrings([
        { name: 't', description: 'd', inputSchema: { enum: ['a', '', 'b'], flag: false, zero: 0, nothing: null, yes: true } },
    ]);
    assert.deepEqual(strings, ['name', 't', 'description', 'd', 'parameters', 'enum', '0', 'a', '2', 'b', 'yes']);
});

void test('the current tools\' strings are worked out again only when the number of tools changes', () => {
    const tools = [{ name: 'a', description: 'first' }];
    const current = currentToolStrings(() => tools);
    const first = current();
    assert.deepEqual(first, ['name', 'a', 'description', 'first']);
    assert.equal(current(), first, 'the same array while the tools stay');
    tools.push({ name: 'b', description: 'second' });
    assert.deepEqual(current(), ['name', 'a', 'description', 'first', 'b', 'second']);
});

void test('Copilot\'s own tools are walked as registered and as the model sees them', () => {
    const strings = toolSchemaStrings([
        {
            name: 'copilot_readFile',
            description: 'Read a file. Prefer copilot_readFile over copilot_findFiles; not copilot_readFileX.',
            inputSchema: { type: 'object', properties: { copilot_readFile: { description: 'see copilot_listDirectory' } } },
        },
    ]);
    assert.deepEqual(strings, [
        'name', 'copilot_readFile', 'description',
        'Read a file. Prefer copilot_readFile over copilot_findFiles; not copilot_readFileX.',
        'parameters', 'type', 'object', 'properties', 'see copilot_listDirectory', // keys already seen go once
        // the model-facing walk adds only what differs: the keys stay, every string is rewritten
        'read_file', 'Read a file. Prefer read_file over file_search; not copilot_readFileX.', 'see list_dir',
    ]);
});

void test('a tool that is not Copilot\'s is walked once, unchanged', () => {
    const tool = { name: 'mcp_search', description: 'Search, like copilot_findFiles does.', inputSchema: { enum: ['x'] } };
    assert.deepEqual(toolSchemaStrings([tool]).slice(0, 4), ['name', 'mcp_search', 'description', 'Search, like copilot_findFiles does.']);
    assert.ok(toolSchemaStrings([tool]).includes('Search, like file_search does.'), 'a mention in any description is rewritten');
});
