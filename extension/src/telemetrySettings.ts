/**
 * Where the requests' OpenTelemetry spans and metrics go, resolved as Copilot Chat resolves its own
 * (`github.copilot.chat.otel.*`, `COPILOT_OTEL_*`), so a team that points Copilot at its collector
 * gets tokengauge's spans in the same traces without setting anything twice; `tokenGauge.telemetry.*`
 * says otherwise where set. The standard `OTEL_*` variables are left to the server's SDK, which reads
 * them itself. Every value comes from user settings or the environment, never a workspace's: these
 * say where data goes (and, with content captured, what the prompts were).
 */

import { Inspectable, userValue } from './userSettings';

/** `initializationOptions.telemetry` (the server's `TelemetrySettings`). */
export interface TelemetryOptions {
    enabled: boolean;
    /** The OTLP/HTTP base URL; absent: `OTEL_EXPORTER_OTLP_*`, else `http://localhost:4318`. */
    endpoint?: string;
    headers: Record<string, string>;
    resourceAttributes: Record<string, string>;
    captureContent: boolean;
}

/** The keys (under `tokenGauge.`) of telemetry: user settings only, like `userSettings.USER_ONLY`. */
export const TELEMETRY_KEYS = [
    'telemetry.enabled',
    'telemetry.endpoint',
    'telemetry.resourceAttributes',
    'telemetry.captureContent',
] as const;

/** `tokenGauge.telemetry.enabled`: `auto` follows Copilot's own OpenTelemetry switch. */
export type TelemetrySwitch = 'auto' | 'on' | 'off';

/** Copilot exports over gRPC with this exporter type or protocol; tokengauge speaks OTLP/HTTP only. */
const GRPC = /grpc/i;

/** The telemetry options from our settings (`tokenGauge`), Copilot's (`github.copilot.chat`) and the environment. */
export function telemetryOptions(
    ours: Inspectable,
    copilot: Inspectable,
    env: Record<string, string | undefined>,
): TelemetryOptions {
    const copilotOn = userValue<unknown>(copilot, 'otel.enabled', false) === true || env.COPILOT_OTEL_ENABLED === 'true';
    const chosen = userValue<TelemetrySwitch>(ours, 'telemetry.enabled', 'auto');
    const enabled = chosen === 'on' || (chosen === 'auto' && copilotOn);
    const resourceAttributes = {
        ...strings(userValue(copilot, 'otel.resourceAttributes', {})),
        ...strings(userValue(ours, 'telemetry.resourceAttributes', {})),
    };
    const captureContent = userValue<unknown>(ours, 'telemetry.captureContent', false) === true;
    const own = userValue(ours, 'telemetry.endpoint', '').trim();
    if (own) {
        return { enabled, endpoint: own, headers: {}, resourceAttributes, captureContent };
    }
    // Copilot's endpoint, and the headers (a collector's token) that go with it; not one it reaches
    // over gRPC, and not over OTEL_EXPORTER_OTLP_ENDPOINT, which the SDK reads itself.
    const grpc =
        GRPC.test(String(userValue(copilot, 'otel.exporterType', ''))) ||
        GRPC.test(String(userValue(copilot, 'otel.protocol', '')));
    const configured = copilot.inspect<string>('otel.otlpEndpoint')?.globalValue;
    const endpoint = env.COPILOT_OTEL_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT || grpc ? undefined : configured);
    const headers = endpoint ? strings(userValue(copilot, 'otel.headers', {})) : {};
    return { enabled, ...(endpoint ? { endpoint } : {}), headers, resourceAttributes, captureContent };
}

/** The string-valued entries of a settings object (anything else in it is left out). */
function strings(value: unknown): Record<string, string> {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return {};
    }
    return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
