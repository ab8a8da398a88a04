import { strict as assert } from 'node:assert';
import { test } from 'node:test';

import { workspaceNameOption } from '../../src/attribution';
import type { ProviderSettings } from '../../src/protocol';

const gateway = (tags: string[]): ProviderSettings => ({ id: 'gw', preset: 'litellm', attribution: { user: 'ana-lopez', tags } });

void test("the server learns the workspace's name only when an attribution tag names it", () => {
    const cases: [ProviderSettings[], string | undefined, object][] = [
        [[{ id: 'or', preset: 'openrouter' }], 'payroll-service', {}],
        [[gateway(['team:payments', 'kind:${requestKind}'])], 'payroll-service', {}],
        [[{ id: 'or', preset: 'openrouter' }, gateway(['ws:${workspaceName}'])], 'payroll-service', { workspaceName: 'payroll-service' }],
        [[gateway(['ws:${workspaceName}'])], undefined, {}],
    ];
    for (const [providers, name, expected] of cases) {
        assert.deepEqual(workspaceNameOption(providers, name), expected);
    }
});
