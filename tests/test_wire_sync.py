"""The wire has one source, the server's payload classes: the extension's TypeScript is generated
from them (`scripts.gen_protocol`) and must be what they say now; the test harness listens to every
notification they name; and the dashboard's hand-kept types (`extension/dashboard/data.ts`) have
the fields and values of the server's `activity.dashboard`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final, get_args

import attrs
import pytest

from scripts import gen_protocol
from tests.harness import lsp
from tokengauge import protocol
from tokengauge.activity import dashboard, record
from tokengauge.calibration.ladder import RUNGS
from tokengauge.messages import camel

REPO: Final = Path(__file__).resolve().parents[1]
DATA_TS: Final = REPO / "extension" / "dashboard" / "data.ts"


def test_the_generated_typescript_is_what_the_server_says() -> None:
    written = gen_protocol.OUTPUT.read_text(encoding="utf-8")
    assert written == gen_protocol.render(), (
        "extension/src/protocol.generated.ts is stale: run python -m scripts.gen_protocol"
    )


def test_the_check_fails_on_any_difference(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "protocol.generated.ts"
    stale.write_text(
        gen_protocol.render().replace("'openai' | 'anthropic' | 'responses'", "'openai'")
    )
    monkeypatch.setattr(gen_protocol, "OUTPUT", stale)
    monkeypatch.setattr(gen_protocol, "REPO", tmp_path)
    assert gen_protocol.main(["--check"]) == 1
    assert gen_protocol.main([]) == 0
    assert gen_protocol.main(["--check"]) == 0


def test_every_method_the_server_knows_is_generated() -> None:
    assert set(gen_protocol.REQUESTS) == protocol.REQUESTS
    assert set(gen_protocol.NOTIFICATIONS) == protocol.NOTIFICATIONS
    text = gen_protocol.OUTPUT.read_text(encoding="utf-8")
    for method in protocol.REQUESTS | protocol.NOTIFICATIONS:
        assert f"'{method}'" in text


def test_optional_and_null_say_what_the_json_may_lack() -> None:
    """Left out while None: optional, never null; sent by the extension with a default: optional;
    sent by the server: present, null when None."""
    text = gen_protocol.OUTPUT.read_text(encoding="utf-8")
    assert "    trimmed?: TrimReport;\n" in text  # OMIT_WHEN_NONE
    assert "    status?: number | null;\n" in text  # RecordErrorParams, in
    assert "    learnedLimit: number | null;\n" in text  # RecordResult, out
    assert "    type: 'statefulMarker';\n" in text  # a tagged union's member
    assert "    thinkingBudget?: Choice<number>;\n" in text
    assert "managed" not in text  # never read from the extension


def test_the_harness_listens_to_every_notification() -> None:
    assert set(lsp.NOTIFICATIONS) >= protocol.NOTIFICATIONS


# --- the dashboard ------------------------------------------------------------------------------

_INTERFACE = re.compile(r"^export interface (\w+) \{\n(.*?)^\}", re.M | re.S)
_FIELD = re.compile(r"^    (\w+)(\??): (.+);$", re.M)
_UNION = re.compile(r"^export type (\w+) = ((?:'[^']*'(?: \| )?)+);$", re.M)


def _interfaces() -> dict[str, dict[str, str]]:
    text = DATA_TS.read_text(encoding="utf-8")
    return {
        name: {field: kind for field, _, kind in _FIELD.findall(body)}
        for name, body in _INTERFACE.findall(text)
    }


def _unions() -> dict[str, tuple[str, ...]]:
    text = DATA_TS.read_text(encoding="utf-8")
    return {name: tuple(re.findall(r"'([^']*)'", body)) for name, body in _UNION.findall(text)}


def _wire_fields(cls: type) -> set[str]:
    return {camel(field.name) for field in attrs.fields(cls)}


@pytest.mark.parametrize(
    "cls",
    [
        dashboard.RequestRow,
        dashboard.DayModelRow,
        dashboard.ConversationRow,
        dashboard.ModelRow,
        dashboard.Totals,
        dashboard.DashboardData,
    ],
    ids=lambda cls: cls.__name__,
)
def test_the_dashboards_fields_are_the_servers(cls: type) -> None:
    assert set(_interfaces()[cls.__name__]) == _wire_fields(cls)


def test_the_dashboards_prices_are_the_servers() -> None:
    pricing = _interfaces()["ModelRow"]["pricing"]
    inline = re.fullmatch(r"\{ (.*) \} \| null", pricing)
    assert inline is not None, pricing
    fields = {part.split(":")[0].strip() for part in inline.group(1).split(";")}
    assert fields == _wire_fields(dashboard.PricingRow)


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("Outcome", get_args(record.Outcome)),
        ("RequestKind", get_args(record.RequestKind)),
        ("CostSource", get_args(dashboard.CostSource)),
        ("LadderRung", RUNGS),
    ],
)
def test_the_dashboards_values_are_the_servers(name: str, values: tuple[Any, ...]) -> None:
    assert _unions()[name] == tuple(values)
