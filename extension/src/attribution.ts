/**
 * What of the workspace the server may know for a gateway's attribution: its name, and only when a
 * provider's attribution tag names it (`${workspaceName}`); the server never learns it otherwise.
 */

import type { ProviderSettings } from './protocol';

/** The variable of an attribution tag that names the workspace. */
export const WORKSPACE_NAME_VARIABLE = '${workspaceName}';

/** Whether a provider's attribution tags name the workspace. */
export function asksWorkspaceName(providers: readonly ProviderSettings[]): boolean {
    return providers.some((provider) => provider.attribution?.tags?.some((tag) => tag.includes(WORKSPACE_NAME_VARIABLE)));
}

/** `initializationOptions`' `workspaceName`, if a tag asks for it and there is a workspace. */
export function workspaceNameOption(providers: readonly ProviderSettings[], workspaceName: string | undefined): { workspaceName?: string } {
    return workspaceName !== undefined && asksWorkspaceName(providers) ? { workspaceName } : {};
}
