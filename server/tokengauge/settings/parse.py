"""Reading `initializationOptions` into `ServerSettings`, forgiving: what is invalid is logged and
skipped (the package's docstring says what is dropped, and why)."""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import attrs

from tokengauge.messages import InvalidInput, camel, structure
from tokengauge.settings.schema import (
    ATTRIBUTION_VARIABLES,
    DEFAULT_PROVIDERS,
    MAX_ATTEMPTS,
    MAX_ATTRIBUTION_TEXT,
    MAX_PRICE_PER_M_TOK,
    MAX_RETENTION_DAYS,
    MAX_TOKENS,
    MIN_TOOL_RESULT_TOKENS,
    MODEL_TOKEN_FLOORS,
    AttributionSettings,
    LogLevel,
    ModelSettings,
    ProviderSettings,
    ServerSettings,
    TelemetrySettings,
)

log = logging.getLogger("tokengauge.settings")  # every settings warning under one name
T = TypeVar("T")


def token_count(value: object, least: int) -> int | None:
    """`value` if it is an integer from `least` to `MAX_TOKENS`, else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if least <= value <= MAX_TOKENS else None


def is_price(value: object) -> bool:
    """Whether `value` is a price per million tokens: a number from 0 to `MAX_PRICE_PER_M_TOK`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return 0 <= value <= MAX_PRICE_PER_M_TOK


def _entries(options: dict[str, Any], key: str, parse: Callable[[Any, str], T]) -> list[T]:
    raw = options.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list):
        log.warning("setting %s must be a list, got %s: ignored", key, type(raw).__name__)
        return []
    entries = []
    for index, item in enumerate(raw):
        try:
            entries.append(parse(item, f"{key}[{index}]"))
        except InvalidInput as exc:
            log.warning("%s: entry ignored", exc)
    return entries


def _model(raw: Any, where: str) -> ModelSettings:
    return structure(raw, ModelSettings, where)


def _scalar(options: dict[str, Any], key: str, cls: Any, default: Any) -> Any:
    if options.get(key) is None:
        return default
    try:
        return structure(options[key], cls, key)
    except InvalidInput as exc:
        log.warning("%s: using %r", exc, default)
        return default


_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_HEADER_VALUE = re.compile(r"[\t\x20-\x7e]*")


def parse_provider(raw: Any, where: str, *, managed: bool = False) -> ProviderSettings:
    """One provider entry (of settings, or of Manage Models when `managed`), without the
    headers HTTP cannot carry; `InvalidInput` for an entry that is not one, or whose base URL
    cannot even be taken apart (every request would fail before it could say why)."""
    attribution = raw.get("attribution") if isinstance(raw, dict) else None
    if isinstance(raw, dict):  # a bad attribution costs the entry its attribution, not more
        raw = {name: value for name, value in raw.items() if name != "attribution"}
    provider = structure(raw, ProviderSettings, where)
    if attribution is not None:
        provider = attrs.evolve(provider, attribution=_attribution(attribution, where))
    try:
        urlsplit(provider.base_url)
    except ValueError as exc:  # an unclosed IPv6 bracket
        raise InvalidInput(f"invalid {where}.baseUrl: it is not a URL ({exc})") from None
    return attrs.evolve(_checked_provider(provider), managed=managed)


def _checked_provider(provider: ProviderSettings) -> ProviderSettings:
    """The provider without the headers HTTP cannot carry; a warning for a URL that is not one."""
    if provider.base_url and not _is_http_url(provider.base_url):
        log.warning(
            "provider %s: baseUrl %r is not an http(s) URL; its requests will fail",
            provider.id,
            provider.base_url,
        )
    headers = {}
    for name, value in provider.headers.items():
        if _valid_header(name, value):
            headers[name] = value
        else:
            log.warning(
                "provider %s: header %r has characters HTTP headers cannot carry: ignored",
                provider.id,
                name[:40],
            )
    return attrs.evolve(provider, headers=headers)


def _attribution(raw: Any, where: str) -> AttributionSettings | None:
    """`attribution` without what cannot be sent (each said without its value, which may be
    personal); None when nothing is left."""
    try:
        settings = structure(raw, AttributionSettings, f"{where}.attribution")
    except InvalidInput as exc:
        log.warning("%s: attribution ignored", exc)
        return None
    user = settings.user
    if user is not None and not _attribution_text(user, header=True):
        log.warning(
            "%s.attribution.user must be 1 to %d printable ASCII characters: ignored",
            where,
            MAX_ATTRIBUTION_TEXT,
        )
        user = None
    tags = []
    for index, tag in enumerate(settings.tags):
        unknown = [
            name for name in re.findall(r"\$\{([^}]*)\}", tag) if name not in ATTRIBUTION_VARIABLES
        ]
        if not _attribution_text(tag, header=False):
            log.warning(
                "%s.attribution.tags[%d] must be 1 to %d characters: ignored",
                where,
                index,
                MAX_ATTRIBUTION_TEXT,
            )
        elif unknown:
            known = ", ".join(f"${{{name}}}" for name in ATTRIBUTION_VARIABLES)
            log.warning(
                "%s.attribution.tags[%d] names ${%s}, which is none of %s: ignored",
                where,
                index,
                unknown[0][:40],
                known,
            )
        else:
            tags.append(tag)
    if user is None and not tags and not settings.session:
        return None
    return AttributionSettings(user=user, tags=tuple(tags), session=settings.session)


def _attribution_text(text: str, *, header: bool) -> bool:
    """Whether `text` can be an attribution value: not blank, not too long, and (`header`)
    printable ASCII."""
    if not text.strip() or len(text) > MAX_ATTRIBUTION_TEXT:
        return False
    return not header or bool(re.fullmatch(r"[\x20-\x7e]+", text))


def _is_http_url(text: str) -> bool:
    try:
        url = urlsplit(text)
        return url.scheme in ("http", "https") and bool(url.hostname) and url.port != 0
    except ValueError:  # a bad port or bracket
        return False


def _checked_model(model: ModelSettings) -> ModelSettings:
    """The model without the sizes and prices that are not sensible (each logged)."""
    changes: dict[str, Any] = {}
    for field, floor in MODEL_TOKEN_FLOORS.items():
        value = getattr(model, field)
        if value is not None and token_count(value, floor) is None:
            log.warning(
                "model %s: %s must be from %s to %s, got %s: ignored",
                model.id,
                camel(field),
                f"{floor:,}",
                f"{MAX_TOKENS:,}",
                f"{value:,}",
            )
            changes[field] = None
    prices = attrs.astuple(model.pricing) if model.pricing else ()
    if not all(price is None or is_price(price) for price in prices):
        log.warning(
            "model %s: pricing must be from 0 to %s US dollars per million tokens: ignored",
            model.id,
            f"{MAX_PRICE_PER_M_TOK:,.0f}",
        )
        changes["pricing"] = None
    return attrs.evolve(model, **changes)


def _unique_providers(
    providers: list[tuple[str, ProviderSettings]],
) -> tuple[ProviderSettings, ...]:
    """The providers, an id given twice kept in its first entry only (each entry named by its
    place in `providers`)."""
    kept: dict[str, tuple[str, ProviderSettings]] = {}
    for where, provider in providers:
        first = kept.get(provider.id)
        if first is None:
            kept[provider.id] = (where, provider)
        else:
            log.warning(
                "%s and %s both have the id %r: %s is ignored (give each provider its own id)",
                first[0],
                where,
                provider.id,
                where,
            )
    return tuple(provider for _, provider in kept.values())


def _unique_models(models: list[ModelSettings]) -> tuple[ModelSettings, ...]:
    kept: dict[str, ModelSettings] = {}
    for model in models:
        if model.id in kept:
            log.warning("model %s is configured twice: the first entry is used", model.id)
        else:
            kept[model.id] = _checked_model(model)
    return tuple(kept.values())


def parse_settings(options: Any) -> ServerSettings:
    """Read `initializationOptions`, logging and skipping whatever is invalid."""
    if options is None:
        return ServerSettings()
    if not isinstance(options, dict):
        log.warning("initializationOptions must be an object: using defaults")
        return ServerSettings()
    providers = _entries(
        options, "providers", lambda raw, where: (where, parse_provider(raw, where))
    )
    return ServerSettings(
        storage_dir=_scalar(options, "storageDir", str, None),
        providers=_unique_providers(providers) if "providers" in options else DEFAULT_PROVIDERS,
        models=_unique_models(_entries(options, "models", _model)),
        log_level=_scalar(options, "logLevel", LogLevel, "info"),
        connect_timeout=_positive(options, "connectTimeout", 15.0),
        idle_timeout=_positive(options, "idleTimeout", 120.0),
        response_timeout=_positive(options, "responseTimeout", 1800.0),
        max_attempts=_whole(options, "maxAttempts", 3, MAX_ATTEMPTS),
        retry_base_delay=_positive(options, "retryBaseDelay", 1.0),
        tool_result_max_tokens=_tool_result_cap(options),
        deduplicate_tool_results=_scalar(options, "deduplicateToolResults", bool, True),
        mask_tool_results_after=_mask_after(options),
        usage_retention_days=_whole(options, "usageRetentionDays", 30, MAX_RETENTION_DAYS),
        telemetry=_telemetry(options),
        workspace_name=_scalar(options, "workspaceName", str, None) or None,
    )


def _telemetry(options: dict[str, Any]) -> TelemetrySettings:
    """`telemetry`, its endpoint an http(s) URL and its headers ones HTTP can carry (invalid:
    off, said without the headers' values)."""
    settings: TelemetrySettings = _scalar(
        options, "telemetry", TelemetrySettings, TelemetrySettings()
    )
    if settings.endpoint is not None and not _is_http_url(settings.endpoint):
        log.warning("telemetry.endpoint is not an http(s) URL: telemetry is off")
        return TelemetrySettings()
    bad = [n for n, v in settings.headers.items() if not _valid_header(n, v)]
    if bad:
        log.warning("telemetry.headers %s cannot be sent over HTTP: telemetry is off", bad[:3])
        return TelemetrySettings()
    return settings


def _valid_header(name: str, value: str) -> bool:
    return bool(_HEADER_NAME.fullmatch(name) and _HEADER_VALUE.fullmatch(value))


def _tool_result_cap(options: dict[str, Any]) -> int | None:
    """`toolResultMaxTokens`: at least `MIN_TOOL_RESULT_TOKENS`; absent, 0 or invalid: no cap."""
    value = _scalar(options, "toolResultMaxTokens", int, None)
    if value is None or value <= 0:
        return None
    if value < MIN_TOOL_RESULT_TOKENS:
        log.warning("toolResultMaxTokens %d is too small: using %d", value, MIN_TOOL_RESULT_TOKENS)
        return MIN_TOOL_RESULT_TOKENS
    return int(value)


def _mask_after(options: dict[str, Any]) -> int | None:
    """`maskToolResultsAfter`: a number of tool rounds; absent, 0 or invalid: never."""
    value = _scalar(options, "maskToolResultsAfter", int, None)
    return int(value) if value is not None and value > 0 else None


def _positive(options: dict[str, Any], key: str, default: float) -> float:
    value = _scalar(options, key, float, default)
    if not 0 < value < math.inf:
        log.warning("%s must be positive, got %r: using %r", key, value, default)
        return default
    return float(value)


def _whole(options: dict[str, Any], key: str, default: int, most: int) -> int:
    """A positive setting as a whole number from 1 to `most` (above it: `most`, warned)."""
    value = _positive(options, key, default)
    if value > most:
        log.warning("%s must be at most %s, got %r: using %s", key, f"{most:,}", value, f"{most:,}")
        return most
    return max(1, int(value))
