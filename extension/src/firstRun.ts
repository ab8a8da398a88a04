/**
 * The first run with nothing to offer: say what to do, once per session, and offer the models of
 * an Ollama or LM Studio already running on this machine.
 */

import * as vscode from 'vscode';

import { Commands, MANAGE_MODELS } from './commands';
import { runningLocalServers } from './localServers';
import { Preset } from './presets';
import { ProviderSettings } from './protocol';
import { saveProviders } from './settings';

const DONT_SHOW = "Don't Show Again";
const MUTED_KEY = 'tokenGauge.firstRunMuted';

/** With no model to offer: one notification that says what to do (and offers local servers). */
export async function welcome(
    state: vscode.Memento,
    presets: Preset[],
    configured: ProviderSettings[],
): Promise<void> {
    if (state.get<boolean>(MUTED_KEY)) {
        return;
    }
    const local = await runningLocalServers(presets, configured);
    const offers = local.map(({ preset, models }) => ({ label: `Use ${preset.label} (${models} models)`, preset }));
    const choice = await vscode.window.showInformationMessage(
        'Token Gauge has no models to offer yet. Add a provider with your API key' +
            (offers.length ? `, or use the ${offers.map((o) => o.preset.label).join(' and ')} running on this machine.` : ', or start Ollama or LM Studio on this machine.'),
        ...offers.map((o) => o.label),
        'Add Provider',
        'Manage Models',
        DONT_SHOW,
    );
    const offer = offers.find((o) => o.label === choice);
    if (offer) {
        await saveProviders([...configured, { id: offer.preset.id, preset: offer.preset.id }]);
    } else if (choice === 'Add Provider') {
        await vscode.commands.executeCommand(Commands.addProvider);
    } else if (choice === 'Manage Models') {
        await vscode.commands.executeCommand(MANAGE_MODELS);
    } else if (choice === DONT_SHOW) {
        await state.update(MUTED_KEY, true);
    }
}
