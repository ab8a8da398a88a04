"""The settings' shapes (ARCHITECTURE §6): the attrs classes `initializationOptions` is read into,
their enumerations and the bounds a sensible value stays within."""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

MIN_TOOL_RESULT_TOKENS: Final = 256
"""`toolResultMaxTokens` below this would leave a tool result no use to the model."""
MIN_WINDOW: Final = 256
"""The smallest window taken as a model's: less leaves no room for a request and its answer."""
MAX_TOKENS: Final = 100_000_000
"""The largest window or output cap taken as a model's (the largest windows are 10M tokens)."""
MAX_PRICE_PER_M_TOK: Final = 100_000.0
"""The highest price per million tokens taken as one (list prices stay under $1,000): above it a
price is a mistake, and the costs of a few requests could overflow to infinity."""
MAX_RETENTION_DAYS: Final = 3650
"""The longest `usageRetentionDays` (the manifest's maximum)."""
MAX_ATTEMPTS: Final = 10
"""The most tries `maxAttempts` may ask for (each waits twice as long as the one before)."""
MAX_ATTRIBUTION_TEXT: Final = 128
"""The longest attribution user or tag (OpenRouter takes ids of up to 128 characters)."""
ATTRIBUTION_VARIABLES: Final = ("workspaceName", "requestKind")
"""What an attribution tag may name as `${…}`: the workspace's name, the request's kind."""

MODEL_TOKEN_FLOORS: Final = {
    "context_window": MIN_WINDOW,
    "max_output_tokens": 1,
    "reserved_output_tokens": 0,
    "num_ctx": MIN_WINDOW,
    "compact_at": MIN_WINDOW,
}
"""The least each of a model's token counts may be (the most: `MAX_TOKENS`); what is outside is
dropped."""
SERVER_ONLY: Final = {"server_only": True}
"""Field metadata: set by the server, never read from `initializationOptions` (so no setting)."""

DialectName = Literal["openai", "anthropic", "responses"]
"""The wire dialects an API may speak (`upstream.dialects.dialect.Dialect` implements each)."""
LogLevel = Literal["off", "error", "warning", "info", "debug", "trace"]
ToolDocs = Literal["full", "progressive", "minimal"]
TOOL_DOCS: Final[tuple[ToolDocs, ...]] = get_args(ToolDocs)
ReasoningReplay = Literal["auto", "always", "never"]
REASONING_REPLAYS: Final[tuple[ReasoningReplay, ...]] = get_args(ReasoningReplay)


@attrs.frozen
class AttributionSettings:
    """What a gateway that meters spend (a LiteLLM proxy, OpenRouter) is told of each request
    (`upstream.attribution`, where the provider's preset says it reads it); nothing unless set."""

    user: str | None = None
    """Whom the gateway books the spend to (LiteLLM's customer, OpenRouter's user): a name or
    id the person types, printable ASCII (it may travel in a header)."""
    tags: tuple[str, ...] = ()
    """Tags (a LiteLLM proxy's): text of the person's choosing, in which `${workspaceName}` is
    replaced by the workspace's name and `${requestKind}` by the request's kind (`turn`,
    `helper` or `summarize`)."""
    session: bool = False
    """A session id per Copilot conversation, the same for all its requests (OpenRouter's
    `session_id`, a LiteLLM proxy's session)."""


@attrs.frozen
class ProviderSettings:
    """One LLM API endpoint."""

    id: str
    """Provider id that models refer to, e.g. `openai`, `anthropic`, `openrouter`, `ollama`."""
    dialect: DialectName | None = None
    """Wire format: OpenAI-compatible Chat Completions or Anthropic Messages; None: the
    preset's, else `openai`."""
    base_url: str = ""
    """API base URL, e.g. `https://api.openai.com/v1`; empty: the preset's."""
    headers: dict[str, str] = attrs.field(factory=dict)
    """Extra HTTP headers for every request (never the API key: that is in SecretStorage)."""
    discover: bool = True
    """Whether to list the provider's models from `GET {baseUrl}/models`."""
    preset: str | None = None
    """A preset id (`upstream.presets`, e.g. `openrouter`): the API's dialect and base URL, how
    its key is sent and checked, how its models are sized. The entry's own `dialect` and
    `baseUrl` win over the preset's."""
    managed: bool = attrs.field(default=False, metadata=SERVER_ONLY)
    """Configured in VS Code's Manage Models (`tokenGauge/addProvider`), not in settings: it
    decides where a person is sent to fix a rejected key. Never taken from settings."""
    attribution: AttributionSettings | None = None
    """The identifiers its gateway attributes spend by; None: none are sent."""


@attrs.frozen
class Pricing:
    """Prices in US dollars per million tokens (`cost` prices a request with them).

    Absent prices: cached input (cache reads) costs what input does; reasoning costs what
    output does; a cache write has no price (a request that wrote the cache has no known cost),
    since writes cost more than input at some APIs (Anthropic: 1.25x) -- a source that bills
    them as input says so by giving the input price here.
    """

    input_per_m_tok: float
    output_per_m_tok: float
    cached_input_per_m_tok: float | None = None
    cache_write_per_m_tok: float | None = None
    reasoning_per_m_tok: float | None = None


@attrs.frozen
class ModelSettings:
    """One model offered to VS Code; unset fields come from discovery or the built-in table."""

    id: str
    """The model id sent to the API and shown to VS Code."""
    provider: str
    """The `ProviderSettings.id` that serves it."""
    name: str | None = None
    """Display name in the model picker."""
    family: str | None = None
    """Model family (decides the tokenizer), e.g. `gpt-4o`, `claude-sonnet-4.5`."""
    context_window: int | None = None
    """Total tokens the model accepts (input + output)."""
    max_output_tokens: int | None = None
    """The model's output cap."""
    reserved_output_tokens: int | None = None
    """Output tokens kept free when telling VS Code the input budget."""
    compact_at: int | None = None
    """A window to tell Copilot of instead of the model's, smaller than it, so that Copilot
    summarizes a chat before its requests get dear; requests may still use the whole window."""
    pricing: Pricing | None = None
    """Prices; they win over discovery's and the built-in table's."""
    options: dict[str, Any] = attrs.field(factory=dict, hash=False)
    """Model options sent with every request unless the request sets them (`thinkingBudget`,
    `reasoningEffort`, `temperature`, …: `modelOptions`' keys)."""
    tool_docs: ToolDocs = "full"
    """How much of each tool's documentation requests carry (`upstream.tool_docs`)."""
    num_ctx: int | None = None
    """Ollama: the window to ask Ollama to load the model with (`options.num_ctx`); None: the
    window it has loaded (nothing reloads unasked)."""
    reasoning_replay: ReasoningReplay = "auto"
    """Whether a Chat Completions server gets the model's reasoning back in later requests:
    `auto` as its API wants (known for the APIs of the presets and the built-in table, else
    learned from its errors), `always` every assistant message's, `never` none."""


DEFAULT_PROVIDERS: tuple[ProviderSettings, ...] = (
    ProviderSettings(id="ollama", dialect="openai", base_url="http://localhost:11434/v1"),
)


@attrs.frozen
class TelemetrySettings:
    """Where the requests' OpenTelemetry spans and metrics go (the extension resolves them from
    `tokenGauge.telemetry.*`, Copilot's own OTel settings and its environment variables; the
    standard `OTEL_*` variables apply beneath)."""

    enabled: bool = False
    endpoint: str | None = None
    """The OTLP/HTTP collector's base URL (`/v1/traces`, `/v1/metrics` are added); None:
    `OTEL_EXPORTER_OTLP_*`, else `http://localhost:4318`."""
    headers: dict[str, str] = attrs.field(factory=dict)
    """Sent with every export (a collector's token: never logged)."""
    resource_attributes: dict[str, str] = attrs.field(factory=dict)
    """Added to `OTEL_RESOURCE_ATTRIBUTES` (e.g. `team.id`)."""
    service_name: str | None = None
    """`service.name` unless `OTEL_SERVICE_NAME` says otherwise; None: `tokengauge`."""
    capture_content: bool = False
    """Prompts and answers in the spans (off unless the user turns this on)."""


@attrs.frozen
class ServerSettings:
    """Everything the server reads from `initializationOptions`."""

    storage_dir: str | None = None
    """Directory for the ledger (the extension passes its globalStorage path)."""
    providers: tuple[ProviderSettings, ...] = DEFAULT_PROVIDERS
    """Configured API endpoints."""
    models: tuple[ModelSettings, ...] = ()
    """Configured models."""
    log_level: LogLevel = "info"
    """Server log level."""
    connect_timeout: float = 15.0
    """Seconds to wait for the API to accept a connection."""
    idle_timeout: float = 120.0
    """Seconds a stream may go without an event that carries data before the request fails."""
    response_timeout: float = 1800.0
    """Seconds a whole response may take (a stream still going after that is cut off)."""
    max_attempts: int = 3
    """Tries for a request that fails with 429/529/5xx or a broken connection."""
    retry_base_delay: float = 1.0
    """First backoff delay in seconds (doubled on each retry) when the API names none."""
    tool_result_max_tokens: int | None = None
    """Cut every tool result to this many tokens (head and tail kept); None: no cap."""
    deduplicate_tool_results: bool = True
    """Send a tool result that repeats an earlier one word for word as a reference to it
    (`calibration.repeats`)."""
    mask_tool_results_after: int | None = None
    """Send the results of tool rounds older than this many (in steps of it) as stubs
    (`calibration.masking`); None: never."""
    usage_retention_days: int = 30
    """Days the usage history keeps a request (the dashboard's reach)."""
    telemetry: TelemetrySettings = TelemetrySettings()
    """OpenTelemetry spans and metrics of every request (off by default)."""
    workspace_name: str | None = None
    """The workspace's name, for the attribution tags that name it (the extension gives it only
    when one does)."""
