/**
 * The API presets, as the manifest offers them in VS Code's Add Models form
 * (`languageModelChatProviders[].configuration.properties.preset`): id, label and default base URL
 * (its enum description). The server knows the rest of each preset (wire format, how the key goes).
 */

export interface Preset {
    id: string;
    label: string;
    /** The default base URL; undefined when the user must give one (Azure OpenAI, other APIs). */
    baseUrl: string | undefined;
    /** A server on this machine (Ollama, LM Studio, vLLM, llama.cpp, LiteLLM): a key is optional. */
    local: boolean;
}

interface PresetSchema {
    enum: string[];
    enumItemLabels: string[];
    enumDescriptions: string[];
}

/** The presets of a manifest (`context.extension.packageJSON`). */
export function readPresets(manifest: unknown): Preset[] {
    const schema = (manifest as {
        contributes: { languageModelChatProviders: { configuration: { properties: { preset: PresetSchema } } }[] };
    }).contributes.languageModelChatProviders[0].configuration.properties.preset;
    return schema.enum.map((id, index) => {
        const description = schema.enumDescriptions[index];
        const baseUrl = /^https?:\/\//.test(description) ? description : undefined;
        return {
            id,
            label: schema.enumItemLabels[index],
            baseUrl,
            local: baseUrl?.startsWith('http://localhost') ?? false,
        };
    });
}
