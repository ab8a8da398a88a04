/**
 * Money as the dashboard shows it (pure, no DOM): a cost the API reported as it is, one the price
 * table estimated marked `≈`, and a sum of both marked too, its title giving both parts, so that
 * no total passes an estimate off as what the API said.
 */
import type { RequestRow } from './data';
import { formatUsd } from './format';

/** The mark of a cost estimated from the model's prices, wholly or in part. */
export const ESTIMATED_MARK = '\u2248';

/** What the mark means, said once under the summary tiles. */
export const COST_LEGEND = `Costs as the API reported them; ${ESTIMATED_MARK} marks a cost estimated from the model's prices, or a sum partly so (hover for its parts).`;

/** A sum of costs with its parts (null: no such part). */
export interface CostParts {
    costUsd: number | null;
    reportedUsd: number | null;
    estimatedUsd: number | null;
}

export interface CostView {
    text: string;
    title: string;
    /** How much of it is an estimate. */
    estimated: 'none' | 'all' | 'part';
}

/** A cost as text and the words of its hover; null when no cost is known. */
export function costView(parts: CostParts): CostView | null {
    const total = parts.costUsd;
    if (total === null) {
        return null;
    }
    const { reportedUsd: reported, estimatedUsd: estimated } = parts;
    if (estimated === null && reported !== null) {
        return { text: formatUsd(total), title: `${formatUsd(total)}, as the API reported it`, estimated: 'none' };
    }
    if (reported === null) {
        return { text: ESTIMATED_MARK + formatUsd(total), title: `${formatUsd(total)}, estimated from the model's prices`, estimated: 'all' };
    }
    return {
        text: ESTIMATED_MARK + formatUsd(total),
        title: `${formatUsd(total)}, partly estimated: ${formatUsd(reported)} as the API reported it, ${formatUsd(estimated)} estimated from the model's prices`,
        estimated: 'part',
    };
}

/** A request's cost as parts: all of it reported, or all of it estimated. */
export function requestCostParts(r: RequestRow): CostParts {
    const reported = r.costSource === 'reported';
    return { costUsd: r.costUsd, reportedUsd: reported ? r.costUsd : null, estimatedUsd: reported ? null : r.costUsd };
}
