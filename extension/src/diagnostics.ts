/**
 * What Copy Diagnostics puts on the clipboard: versions, settings, the Manage Models providers and
 * the server's usage, as JSON a bug report may show. Header values and the user a gateway books
 * spend to are left out; every credential
 * known to this session (the settings' and the groups' keys, header values and URL parts) and
 * whatever looks like one is redacted from the whole.
 */

import type { GroupConfiguration } from './groups';
import { groupProvider, groupSecrets } from './groups';
import type { ProviderSettings } from './protocol';
import { redact, REDACTED, settingsSecrets } from './redact';
import type { ISettings } from './settings';

/** A Manage Models group as this session knows it: its provider id, its values (key included). */
export interface SeenGroup {
    providerId: string;
    configuration: GroupConfiguration;
}

export interface DiagnosticsSources {
    about: { tokenGauge: string; vscode: string; platform: string };
    settings: ISettings;
    groups: SeenGroup[];
    /** The keys handed out this session: the settings' and those set for groups with Set API Key. */
    keys: Iterable<string>;
    /** The server's `tokenGauge/usage`. */
    server: unknown;
}

/** A provider as a bug report may show it: header values and the attribution's user (a person's
 * name, maybe) left out. */
function shareableProvider(provider: ProviderSettings): ProviderSettings {
    const shared = { ...provider };
    if (provider.headers) {
        shared.headers = Object.fromEntries(Object.keys(provider.headers).map((name) => [name, REDACTED]));
    }
    if (provider.attribution?.user !== undefined) {
        shared.attribution = { ...provider.attribution, user: REDACTED };
    }
    return shared;
}

/** Providers as a bug report may show them. */
function shareableProviders(providers: ProviderSettings[]): ProviderSettings[] {
    return providers.map(shareableProvider);
}

/** A group's provider entry; one whose headers cannot be read is shown without them. */
function groupEntry({ providerId, configuration }: SeenGroup): ProviderSettings {
    try {
        return groupProvider(providerId, configuration);
    } catch {
        return groupProvider(providerId, { ...configuration, headers: undefined });
    }
}

/** The diagnostics' text, with no credential in it. */
export function diagnosticsText({ about, settings, groups, keys, server }: DiagnosticsSources): string {
    const secrets = [
        ...settingsSecrets(settings),
        ...groups.flatMap((group) => groupSecrets(group.configuration)),
        ...keys,
    ];
    // A collector's headers are its credentials: their names only.
    const telemetry = {
        ...settings.telemetry,
        headers: Object.fromEntries(Object.keys(settings.telemetry.headers).map((name) => [name, REDACTED])),
    };
    const report = JSON.stringify(
        {
            ...about,
            settings: { ...settings, providers: shareableProviders(settings.providers), telemetry },
            // The providers of Manage Models this session (VS Code keeps their keys).
            manageModels: shareableProviders(groups.map(groupEntry)),
            server,
        },
        null,
        2,
    );
    return redact(report, secrets);
}
