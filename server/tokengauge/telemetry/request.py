"""What one finished request puts in the user's trace: a `chat {model}` span's attributes, its
parent, and the two GenAI metrics' points (no OpenTelemetry import here).

The attributes are Copilot's own for a provider's chat span (OpenTelemetry's GenAI conventions,
their latest names, as Copilot Chat emits them): `gen_ai.operation.name`, `gen_ai.provider.name`,
`gen_ai.request.model`, `gen_ai.usage.input_tokens` (all the input: fresh, cache reads and cache
writes, as the conventions say) … and tokengauge's own under `tokengauge.*`: its estimate and its
error, what the recovery ladder trimmed, what the reduced tool documentation saved, the cost (and
whether the API reported it or the price table estimated it: `tokengauge.cost.source`) and
the request's kind. Prompts and answers are added only when `capture_content` is on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import urlsplit

import attrs

from tokengauge.activity.record import RequestRecord
from tokengauge.settings import ProviderSettings

AttributeValue = str | bool | int | float | Sequence[str]

OPERATION: Final = "chat"
PROVIDER_NAMES: Final = {
    "openai": "openai",
    "anthropic": "anthropic",
    "azure": "azure.ai.openai",
    "deepseek": "deepseek",
    "groq": "groq",
    "xai": "x_ai",
    "mistral": "mistral_ai",
    "gemini": "gcp.gemini",
}
"""`gen_ai.provider.name` for the presets the conventions name; any other provider is named by its
preset (`openrouter`, `ollama`, `litellm` …), else by its dialect."""
LATEST_OPT_IN: Final = "gen_ai_latest_experimental"
"""The `OTEL_SEMCONV_STABILITY_OPT_IN` value of the conventions' latest names; without it the
span also carries `gen_ai.system`, their name for the provider before `gen_ai.provider.name`."""
CONTENT_LIMIT: Final = 64 * 1024
"""The most characters of prompts or answer a span carries when content is captured."""
_HEX: Final = re.compile(r"[0-9a-f]+")


@attrs.frozen
class TraceParent:
    """The span a request's span belongs under (Copilot's `_otelTraceContext`)."""

    trace_id: int
    span_id: int
    sampled: bool

    @classmethod
    def from_model_options(cls, options: Mapping[str, object] | None) -> TraceParent | None:
        """Copilot's `{traceId, spanId, traceFlags?}` (W3C hex ids), or None for anything else."""
        context = (options or {}).get("_otelTraceContext")
        if not isinstance(context, Mapping):
            return None
        trace_id, span_id = context.get("traceId"), context.get("spanId")
        if not (_hex(trace_id, 32) and _hex(span_id, 16)):
            return None
        assert isinstance(trace_id, str) and isinstance(span_id, str)  # for mypy: _hex said so
        flags = context.get("traceFlags", 1)
        sampled = not isinstance(flags, int) or isinstance(flags, bool) or bool(flags & 1)
        return cls(int(trace_id, 16), int(span_id, 16), sampled)


@attrs.frozen
class EndedRequest:
    """A request that has ended, with what the usage record does not hold."""

    record: RequestRecord
    provider: ProviderSettings
    url: str
    """Where it went."""
    start_ns: int
    end_ns: int
    first_chunk_ns: int | None = None
    parent: TraceParent | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    finish_reason: str | None = None
    error_type: str | None = None
    """A failure's kind (`connection`, `overflow`, `cancelled` …); None when answered."""
    input_messages: str | None = None
    """The prompt as JSON, when content is captured."""
    output_text: str | None = None
    """The answer, when content is captured."""


def span_name(ended: EndedRequest) -> str:
    """`chat {model}`, as Copilot names a provider's span."""
    return f"{OPERATION} {ended.record.model_id}"


def provider_name(provider: ProviderSettings) -> str:
    """`gen_ai.provider.name` of a provider."""
    preset = provider.preset or ""
    return PROVIDER_NAMES.get(preset) or preset or provider.dialect or "openai"


def span_attributes(ended: EndedRequest, semconv_opt_in: str = "") -> dict[str, AttributeValue]:
    """The span's attributes (those that are known)."""
    record = ended.record
    attributes: dict[str, AttributeValue | None] = {
        "gen_ai.operation.name": OPERATION,
        "gen_ai.provider.name": provider_name(ended.provider),
        "gen_ai.request.model": record.model_id,
        "gen_ai.request.max_tokens": ended.max_tokens,
        "gen_ai.request.temperature": ended.temperature,
        "gen_ai.request.top_p": ended.top_p,
        "gen_ai.request.stream": True,
        "gen_ai.conversation.id": record.conversation,
        "gen_ai.response.finish_reasons": [ended.finish_reason] if ended.finish_reason else None,
        "gen_ai.response.time_to_first_chunk": _seconds(ended.first_chunk_ns, ended.start_ns),
        "gen_ai.usage.input_tokens": record.input_tokens,
        "gen_ai.usage.output_tokens": record.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": record.cached_tokens or None,
        "gen_ai.usage.cache_creation.input_tokens": record.cache_write_tokens or None,
        "gen_ai.usage.reasoning.output_tokens": record.reasoning_tokens or None,
        "error.type": ended.error_type,
        **_server(ended.url),
        "tokengauge.request.kind": record.kind,
        "tokengauge.estimate.input_tokens": record.estimated_tokens,
        "tokengauge.estimate.error": _estimate_error(record),
        "tokengauge.window": record.window,
        "tokengauge.max_input_tokens": record.max_input_tokens,
        "tokengauge.trimmed.input_tokens": record.trimmed_tokens or None,
        "tokengauge.tool_docs.saved_tokens": record.tool_docs_saved or None,
        "tokengauge.cost.usd": record.cost_usd,
        "tokengauge.cost.source": None if record.cost_usd is None else record.cost_source,
        "tokengauge.retries": record.retries or None,
        "tokengauge.prompt_cut": record.cut or None,
        "gen_ai.input.messages": _content(ended.input_messages),
        "gen_ai.output.messages": _content(_output_messages(ended.output_text)),
    }
    if LATEST_OPT_IN not in {v.strip() for v in semconv_opt_in.split(",")}:
        attributes["gen_ai.system"] = attributes["gen_ai.provider.name"]
    return {name: value for name, value in attributes.items() if value is not None}


@attrs.frozen
class MetricPoint:
    """One measurement of a GenAI metric with its attributes."""

    name: str
    value: float
    attributes: dict[str, AttributeValue]


TOKEN_USAGE: Final = "gen_ai.client.token.usage"
DURATION: Final = "gen_ai.client.operation.duration"


def metric_points(ended: EndedRequest) -> list[MetricPoint]:
    """The request's duration and, when the API reported usage, its input and output tokens."""
    record = ended.record
    common: dict[str, AttributeValue] = {
        "gen_ai.operation.name": OPERATION,
        "gen_ai.provider.name": provider_name(ended.provider),
        "gen_ai.request.model": record.model_id,
        **_server(ended.url),
    }
    duration = dict(common)
    if ended.error_type is not None:
        duration["error.type"] = ended.error_type
    points = [MetricPoint(DURATION, max(0, ended.end_ns - ended.start_ns) / 1e9, duration)]
    for kind, tokens in (("input", record.input_tokens), ("output", record.output_tokens)):
        if tokens is not None:
            points.append(MetricPoint(TOKEN_USAGE, tokens, {**common, "gen_ai.token.type": kind}))
    return points


def _server(url: str) -> dict[str, AttributeValue]:
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return {}
    if not host:
        return {}
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return {"server.address": host, "server.port": port or default or 0}


def _seconds(later: int | None, start: int) -> float | None:
    return None if later is None else max(0, later - start) / 1e9


def _estimate_error(record: RequestRecord) -> float | None:
    """How far the estimate was from what the API counted, as a share of the count."""
    if not record.input_tokens or record.cut:
        return None
    return round((record.estimated_tokens - record.input_tokens) / record.input_tokens, 4)


def _output_messages(text: str | None) -> str | None:
    if text is None:
        return None
    message = {"role": "assistant", "parts": [{"type": "text", "content": text}]}
    return json.dumps([message], ensure_ascii=False)


def _content(text: str | None) -> str | None:
    return None if text is None else text[:CONTENT_LIMIT]


def _hex(value: object, length: int) -> bool:
    return (
        isinstance(value, str)
        and len(value) == length
        and bool(_HEX.fullmatch(value))
        and int(value, 16) != 0
    )
