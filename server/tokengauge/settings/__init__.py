"""The settings contract (ARCHITECTURE §6) as the server receives it in `initializationOptions`.

Each field mirrors a `tokenGauge.*` VS Code setting. Invalid entries are logged and skipped, and
invalid scalars fall back to their defaults: a typo in settings never stops the server. Within an
entry, a value that would make nonsense downstream is dropped the same way: a header no HTTP
request can carry, a window, output cap or reservation that is not a sensible token count (a
negative one made negative budgets, 10^18 was offered to VS Code), a price that is negative or
absurd (its costs overflowed to infinity); a provider or a model configured twice keeps its first
entry. The bounds on windows and prices here hold for what providers list too. A provider's
`preset` (an API known by name) is resolved above this layer, by `upstream.presets`, which also
knows what each name stands for. The shapes and bounds are in `schema`, the reading in `parse`;
every name is importable from here.
"""

from __future__ import annotations

from tokengauge.settings.parse import (
    is_price,
    parse_provider,
    parse_settings,
    token_count,
)
from tokengauge.settings.schema import (
    ATTRIBUTION_VARIABLES,
    DEFAULT_PROVIDERS,
    MAX_ATTEMPTS,
    MAX_ATTRIBUTION_TEXT,
    MAX_PRICE_PER_M_TOK,
    MAX_RETENTION_DAYS,
    MAX_TOKENS,
    MIN_TOOL_RESULT_TOKENS,
    MIN_WINDOW,
    MODEL_TOKEN_FLOORS,
    REASONING_REPLAYS,
    SERVER_ONLY,
    TOOL_DOCS,
    AttributionSettings,
    DialectName,
    LogLevel,
    ModelSettings,
    Pricing,
    ProviderSettings,
    ReasoningReplay,
    ServerSettings,
    TelemetrySettings,
    ToolDocs,
)

__all__ = [
    "ATTRIBUTION_VARIABLES",
    "DEFAULT_PROVIDERS",
    "MAX_ATTEMPTS",
    "MAX_ATTRIBUTION_TEXT",
    "MAX_PRICE_PER_M_TOK",
    "MAX_RETENTION_DAYS",
    "MAX_TOKENS",
    "MIN_TOOL_RESULT_TOKENS",
    "MIN_WINDOW",
    "MODEL_TOKEN_FLOORS",
    "REASONING_REPLAYS",
    "SERVER_ONLY",
    "TOOL_DOCS",
    "AttributionSettings",
    "DialectName",
    "LogLevel",
    "ModelSettings",
    "Pricing",
    "ProviderSettings",
    "ReasoningReplay",
    "ServerSettings",
    "TelemetrySettings",
    "ToolDocs",
    "is_price",
    "parse_provider",
    "parse_settings",
    "token_count",
]
