"""The `tokenGauge.*` settings say the same thing in all three places: the manifest
(`package.json` `contributes.configuration`), the server's settings classes (`tokengauge.settings`)
and the extension that reads them (`extension/src/settings.ts` and the modules it reads through).
Same keys, same enumerations, same defaults where both state one, and the manifest's bounds are
the server's. The extension's types of the entries are generated from the server's classes
(`tests/test_wire_sync.py` holds them to it)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final, get_args

import attrs
import pytest

from tokengauge.messages import camel
from tokengauge.settings import (
    MAX_ATTRIBUTION_TEXT,
    MAX_PRICE_PER_M_TOK,
    MAX_TOKENS,
    MODEL_TOKEN_FLOORS,
    SERVER_ONLY,
    TOOL_DOCS,
    AttributionSettings,
    DialectName,
    LogLevel,
    ModelSettings,
    Pricing,
    ProviderSettings,
    ServerSettings,
    TelemetrySettings,
    parse_settings,
)
from tokengauge.upstream.presets import PRESETS

REPO: Final = Path(__file__).resolve().parents[1]
MANIFEST: Final = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
SETTINGS: Final[dict[str, Any]] = {
    key.removeprefix("tokenGauge."): schema
    for key, schema in MANIFEST["contributes"]["configuration"]["properties"].items()
}
EXTENSION_SOURCES: Final = ("settings.ts", "userSettings.ts", "telemetrySettings.ts")

EXTENSION_ONLY: Final = {"pythonPath", "statusBar.enabled"}
"""Settings of the extension's own, which the server never receives."""
NOT_SETTINGS: Final = {
    "storageDir",
    "workspaceName",
    "connectTimeout",
    "maxAttempts",
    "retryBaseDelay",
}
"""`initializationOptions` no setting gives: the extension's own (where the ledger lives, the
workspace's name) and what only tests and the bench set."""
TELEMETRY_FROM_ELSEWHERE: Final = {"headers", "serviceName"}
"""`telemetry` the extension takes from Copilot's OpenTelemetry settings and the environment."""


def _fields(cls: type) -> dict[str, attrs.Attribute[Any]]:
    return {
        camel(field.name): field
        for field in attrs.fields(cls)
        if not all(field.metadata.get(key) == value for key, value in SERVER_ONLY.items())
    }


def _required(cls: type) -> set[str]:
    return {name for name, field in _fields(cls).items() if field.default is attrs.NOTHING}


def _default(cls: type, name: str) -> Any:
    default = _fields(cls)[name].default
    return default.factory() if isinstance(default, attrs.Factory) else default


def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), name)


PROVIDER: Final = SETTINGS["providers"]["items"]
MODEL: Final = SETTINGS["models"]["items"]
ENTRIES: Final = {
    "provider": (PROVIDER, ProviderSettings),
    "attribution": (PROVIDER["properties"]["attribution"], AttributionSettings),
    "model": (MODEL, ModelSettings),
    "pricing": (MODEL["properties"]["pricing"], Pricing),
}
"""The objects of the settings' lists, and the server's class of each."""


def test_every_setting_the_server_reads_is_in_the_manifest_and_no_other() -> None:
    telemetry = {key for key in SETTINGS if key.startswith("telemetry.")}
    server = set(_fields(ServerSettings)) - NOT_SETTINGS - {"telemetry"}
    assert set(SETTINGS) - EXTENSION_ONLY - telemetry == server
    telemetry_fields = set(_fields(TelemetrySettings)) - TELEMETRY_FROM_ELSEWHERE
    assert {key.removeprefix("telemetry.") for key in telemetry} == telemetry_fields


@pytest.mark.parametrize(("schema", "cls"), ENTRIES.values(), ids=ENTRIES.keys())
def test_each_entry_has_the_servers_fields(schema: dict[str, Any], cls: type) -> None:
    assert set(schema["properties"]) == set(_fields(cls))
    assert set(schema.get("required", [])) == _required(cls)


@pytest.mark.parametrize(
    ("schema", "values"),
    [
        (PROVIDER["properties"]["dialect"], get_args(DialectName)),
        (MODEL["properties"]["toolDocs"], TOOL_DOCS),
        (SETTINGS["logLevel"], get_args(LogLevel)),
    ],
    ids=["dialect", "toolDocs", "logLevel"],
)
def test_each_enumeration_is_the_servers(schema: dict[str, Any], values: tuple[str, ...]) -> None:
    assert tuple(schema["enum"]) == values


def _preset_schemas() -> list[dict[str, Any]]:
    manage_models = MANIFEST["contributes"]["languageModelChatProviders"][0]["configuration"]
    return [PROVIDER["properties"]["preset"], manage_models["properties"]["preset"]]


@pytest.mark.parametrize("schema", _preset_schemas(), ids=["settings", "manage models"])
def test_the_presets_are_the_servers(schema: dict[str, Any]) -> None:
    """Ids and names as the server knows them, and the base URL where a preset has one (the
    extension reads Manage Models' presets from the manifest)."""
    assert schema["enum"] == list(PRESETS)
    assert schema["enumItemLabels"] == [preset.label for preset in PRESETS.values()]
    for preset, description in zip(PRESETS.values(), schema["enumDescriptions"], strict=True):
        if preset.base_url is not None:
            assert description == preset.base_url, preset.id
        else:
            assert not description.startswith(("http://", "https://")), preset.id


@pytest.mark.parametrize(
    "key",
    [key for key in SETTINGS if _snake(key) in attrs.fields_dict(ServerSettings)],
)
def test_the_manifests_default_is_the_servers(key: str) -> None:
    """The default the manifest states, read by the server, is the server's own default (an
    unset `toolResultMaxTokens` is 0 in the one, None in the other: both no cap; the providers'
    default is `DEFAULT_PROVIDERS`)."""
    field = attrs.fields_dict(ServerSettings)[_snake(key)]
    read = getattr(parse_settings({key: SETTINGS[key]["default"]}), field.name)
    assert read == getattr(ServerSettings(), field.name)


@pytest.mark.parametrize(
    ("schema", "cls", "name"),
    [
        (schema, cls, name)
        for schema, cls in ENTRIES.values()
        for name, field in schema["properties"].items()
        if "default" in field
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_an_entrys_default_is_the_servers(schema: dict[str, Any], cls: type, name: str) -> None:
    assert schema["properties"][name]["default"] == _default(cls, name)


@pytest.mark.parametrize("name", ["resourceAttributes", "captureContent"])
def test_telemetrys_defaults_are_the_servers(name: str) -> None:
    """`telemetry.enabled` is not compared: `auto`, `on` or `off`, which the extension resolves
    to the server's true or false (`auto` follows Copilot's own switch)."""
    assert SETTINGS[f"telemetry.{name}"]["default"] == _default(TelemetrySettings, name)


def test_telemetrys_endpoint_is_unset_in_both() -> None:
    assert (SETTINGS["telemetry.endpoint"]["default"], _default(TelemetrySettings, "endpoint")) == (
        "",
        None,
    )


# --- the bounds ---------------------------------------------------------------------------------


@pytest.mark.parametrize("field", sorted(MODEL_TOKEN_FLOORS))
def test_a_models_token_counts_are_bounded_as_the_server_bounds_them(field: str) -> None:
    schema = MODEL["properties"][camel(field)]
    assert (schema["minimum"], schema["maximum"]) == (MODEL_TOKEN_FLOORS[field], MAX_TOKENS)


@pytest.mark.parametrize("name", sorted(_fields(Pricing)))
def test_prices_are_bounded_as_the_server_bounds_them(name: str) -> None:
    schema = MODEL["properties"]["pricing"]["properties"][name]
    assert (schema["minimum"], schema["maximum"]) == (0, MAX_PRICE_PER_M_TOK)


def test_attribution_text_is_bounded_as_the_server_bounds_it() -> None:
    attribution = PROVIDER["properties"]["attribution"]["properties"]
    assert attribution["user"]["maxLength"] == MAX_ATTRIBUTION_TEXT
    assert attribution["tags"]["items"]["maxLength"] == MAX_ATTRIBUTION_TEXT


# --- the extension ------------------------------------------------------------------------------

_READ = re.compile(
    r"(?:config\.get(?:<[^>]*>)?\(|userValue(?:<[^>]*>)?\((?:config|ours), )"
    r"'(?P<key>[\w.]+)'(?:, (?P<default>[^)]*))?\)"
)
_INSPECT = re.compile(r"config\.inspect(?:<[^>]*>)?\('(?P<key>[\w.]+)'\)")
FALLBACK_ONLY: Final = {"providers"}
"""A default the extension states that the manifest's may differ from: no providers written is
`[]` to the extension, which then sends none and leaves the server its defaults."""


def _extension_reads() -> dict[str, str | None]:
    reads: dict[str, str | None] = {}
    for name in EXTENSION_SOURCES:
        text = (REPO / "extension" / "src" / name).read_text(encoding="utf-8")
        for match in _READ.finditer(text):
            reads[match["key"]] = match["default"]
        for match in _INSPECT.finditer(text):
            reads.setdefault(match["key"], None)
    return reads


def _ts_value(text: str) -> Any:
    return json.loads(re.sub(r"'([^']*)'", lambda m: json.dumps(m.group(1)), text))


def test_the_extension_reads_every_setting_and_no_other() -> None:
    assert set(_extension_reads()) == set(SETTINGS)


@pytest.mark.parametrize(
    "key", sorted(key for key, default in _extension_reads().items() if default is not None)
)
def test_the_extensions_default_is_the_manifests(key: str) -> None:
    stated = _ts_value(_extension_reads()[key] or "null")
    if key in FALLBACK_ONLY:
        assert stated == []
    else:
        assert stated == SETTINGS[key]["default"]


def test_the_extensions_telemetry_switch_is_the_manifests() -> None:
    text = (REPO / "extension" / "src" / "telemetrySettings.ts").read_text(encoding="utf-8")
    switch = re.search(r"export type TelemetrySwitch = ([^;]*);", text)
    assert switch is not None
    assert re.findall(r"'([^']*)'", switch.group(1)) == SETTINGS["telemetry.enabled"]["enum"]
