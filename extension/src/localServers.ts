/** Finding an Ollama or LM Studio already running on this machine, to offer its models. */

import { Preset } from './presets';
import { ProviderSettings } from './protocol';

const LOCAL_PRESETS = ['ollama', 'lmstudio'];
const PROBE_TIMEOUT_MS = 1_500;

/** How many models a local server's `GET /models` lists; undefined when nothing answers. */
async function probe(baseUrl: string): Promise<number | undefined> {
    try {
        const response = await fetch(`${baseUrl.replace(/\/$/, '')}/models`, {
            signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        });
        if (!response.ok) {
            return undefined;
        }
        const body = (await response.json()) as { data?: unknown[] };
        return Array.isArray(body.data) ? body.data.length : undefined;
    } catch {
        return undefined;
    }
}

/** The local servers that answer and are not configured yet, with how many models each lists. */
export async function runningLocalServers(
    presets: Preset[],
    configured: ProviderSettings[],
): Promise<{ preset: Preset; models: number }[]> {
    const used = new Set(configured.map((p) => p.baseUrl ?? presets.find((x) => x.id === p.preset)?.baseUrl));
    const candidates = presets.filter((p) => LOCAL_PRESETS.includes(p.id) && p.baseUrl && !used.has(p.baseUrl));
    const found = await Promise.all(candidates.map(async (preset) => ({ preset, models: await probe(preset.baseUrl!) })));
    return found.filter((f): f is { preset: Preset; models: number } => (f.models ?? 0) > 0);
}
