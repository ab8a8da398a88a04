/**
 * A model's options in VS Code's model picker: the `configurationSchema` VS Code 1.139 reads from a
 * model's information (a proposed field: older hosts ignore it) and the pick it hands back with
 * each request as `modelConfiguration`. Offered for models of Manage Models providers, whose picks
 * VS Code keeps in that provider's group; the settings' models take `tokenGauge.models[].options`.
 */

import { Choice, ModelChoices } from './protocol';

/** One property of the schema, in the shape VS Code's own Copilot models use. */
interface SchemaProperty {
    type: 'string' | 'number';
    title: string;
    enum: (string | number)[];
    enumItemLabels: string[];
    enumDescriptions?: string[];
    default: string | number;
    group: 'navigation' | 'tokens';
}

export interface ConfigurationSchema {
    properties: Record<string, SchemaProperty>;
}

/** A token count as the picker shows it: 200K, 1M, 1.5M. */
export function tokensLabel(tokens: number): string {
    if (tokens >= 1_000_000) {
        const millions = Math.floor((tokens / 1_000_000) * 10) / 10;
        return `${Number.isInteger(millions) ? millions.toFixed(0) : millions.toFixed(1)}M`;
    }
    return tokens >= 1_000 ? `${Math.round(tokens / 1_000)}K` : String(tokens);
}

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** What each `toolDocs` value sends, as the picker describes it. */
const TOOL_DOCS: Record<string, string> = {
    full: 'Every tool with its whole documentation',
    progressive: 'Tools not yet called in short form; a called tool whole',
    minimal: 'Every tool in short form: more room, fewer tokens',
};

function property<T extends string | number>(
    choice: Choice<T>,
    type: SchemaProperty['type'],
    title: string,
    label: (value: T) => string,
    group: SchemaProperty['group'] = 'navigation',
): SchemaProperty {
    return { type, title, enum: choice.values, enumItemLabels: choice.values.map(label), default: choice.default, group };
}

/** A choice of windows, each described as `smaller` but the largest, `whole`. */
function windowProperty(choice: Choice<number>, title: string, smaller: string, whole: string): SchemaProperty {
    const windows = property(choice, 'number', title, tokensLabel, 'tokens');
    const largest = Math.max(...choice.values);
    windows.enumDescriptions = choice.values.map((tokens) => (tokens < largest ? smaller : whole));
    return windows;
}

/** The schema for a model's choices; undefined when it has none. */
export function configurationSchema(choices: ModelChoices | undefined): ConfigurationSchema | undefined {
    const properties: Record<string, SchemaProperty> = {};
    if (choices?.reasoningEffort) {
        properties.reasoningEffort = property(choices.reasoningEffort, 'string', 'Thinking Effort', capitalized);
    }
    if (choices?.thinkingBudget) {
        properties.thinkingBudget = property(choices.thinkingBudget, 'number', 'Thinking Budget', (tokens) =>
            tokens === 0 ? 'Off' : `${tokensLabel(tokens)} tokens`,
        );
    }
    if (choices?.contextSize) {
        properties.contextSize = windowProperty(choices.contextSize, 'Context Size',
            'Every request stays within it: less cost and latency, summarized sooner', "The model's whole window");
    }
    if (choices?.compactAt) {
        properties.compactAt = windowProperty(choices.compactAt, 'Summarize At',
            'Copilot summarizes sooner (cheaper turns); a long tool round may still use the whole window', 'When the whole window fills');
    }
    if (choices?.toolDocs) {
        const docs = property(choices.toolDocs, 'string', 'Tool Documentation', capitalized, 'tokens');
        docs.enumDescriptions = choices.toolDocs.values.map((value) => TOOL_DOCS[value] ?? '');
        properties.toolDocs = docs;
    }
    return Object.keys(properties).length ? { properties } : undefined;
}

/**
 * The request's model options with the picker's choice for this model: what the person picked
 * (VS Code passes the schema's defaults too) goes over what the caller set.
 */
export function withPicked(
    modelOptions: Record<string, unknown>,
    picked: unknown,
    choices: ModelChoices | undefined,
): Record<string, unknown> {
    if (typeof picked !== 'object' || picked === null || !choices) {
        return modelOptions;
    }
    const chosen: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(picked as Record<string, unknown>)) {
        const choice = (choices as Record<string, Choice<unknown> | undefined>)[name];
        if (choice?.values.includes(value)) {
            chosen[name] = value;
        }
    }
    return { ...modelOptions, ...chosen };
}
