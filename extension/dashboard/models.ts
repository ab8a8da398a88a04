/**
 * The models the data mentions: their display names, the stable order their colours follow, and
 * lists of their names for captions and titles (pure, no DOM).
 */
import type { DashboardData } from './data';

/** Model id → display name (the id itself for models the data does not describe). */
export function modelNames(data: DashboardData): Map<string, string> {
    const names = new Map<string, string>();
    for (const m of data.models) {
        names.set(m.id, m.name || m.id);
    }
    for (const id of modelOrder(data)) {
        if (!names.has(id)) {
            names.set(id, id);
        }
    }
    return names;
}

/** The model ids the data mentions, in a stable order (the models' list, then first use):
 * the order of the models' colours. */
export function modelOrder(data: DashboardData): string[] {
    const used = new Set<string>();
    for (const r of data.requests) {
        used.add(r.modelId);
    }
    for (const d of data.days) {
        used.add(d.modelId);
    }
    const order: string[] = data.models.map((m) => m.id).filter((id) => used.has(id));
    for (const id of used) {
        if (!order.includes(id)) {
            order.push(id);
        }
    }
    return order;
}

/** The display name of model `id` (the id itself when `names` does not have it). */
export function nameOf(names: Map<string, string>, id: string): string {
    return names.get(id) ?? id;
}

/** "GPT-4.1, Claude": the names of the distinct `ids`, in order of first mention. */
export function listNames(ids: Iterable<string>, names: Map<string, string>): string {
    return [...new Set(ids)].map((id) => nameOf(names, id)).join(', ');
}
