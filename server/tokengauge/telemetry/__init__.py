"""OpenTelemetry for teams: each request tokengauge sends as a GenAI `chat` span and two metrics.

Copilot Chat creates no span for a request to an extension's model: it leaves the `chat` span to
the provider and passes its own trace context in `modelOptions._otelTraceContext`, so a provider
that does nothing leaves a hole in the user's trace. `request` turns a finished request into the
span's and the metrics' content (Copilot's attribute names, tokengauge's own under
`tokengauge.*`), with no OpenTelemetry import; `export` sends them with the official SDK over
OTLP/HTTP, imported only when telemetry is on.
"""
