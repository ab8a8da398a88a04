"""`tokengauge report`: the dashboard as one self-contained HTML file."""

from __future__ import annotations

import html.parser
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tokengauge.activity.dashboard import build
from tokengauge.activity.record import RequestRecord
from tokengauge.activity.report import dashboard_script, page
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import LEDGER_DIR, Ledger
from tokengauge.messages import Message, TextPart, Tool, Usage
from tokengauge.protocol import RecordUsageParams
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

HOSTILE = "</script><script>alert(1)</script><!--"


class Scripts(html.parser.HTMLParser):
    """The page's `<script>` elements: attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None
        self.policy = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._open = dict(attrs)
            self.found.append((self._open, ""))
        if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy":
            self.policy = dict(attrs).get("content") or ""

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            attributes, text = self.found[-1]
            self.found[-1] = (attributes, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open = None


def parse(text: str) -> Scripts:
    parser = Scripts()
    parser.feed(text)
    return parser


def test_data_and_script_cannot_break_out_of_their_elements():
    record = RequestRecord(
        time=1.0e9,
        model_id=HOSTILE,
        kind="turn",
        outcome="failed",
        estimated_tokens=10,
        window=1_000,
        max_input_tokens=900,
        error=HOSTILE,
    )
    data = build([record], [], 1.0e9, 30)
    script = f'window.said = "{HOSTILE}";'
    parsed = parse(page(data, script, nonce="n0nce"))
    [(data_attrs, data_text), (code_attrs, code_text)] = parsed.found
    assert data_attrs == {"type": "application/json", "id": "tg-data"}
    assert json.loads(data_text)["requests"][0]["modelId"] == HOSTILE
    assert code_attrs == {"nonce": "n0nce"}
    assert "</script" not in code_text.lower() and "<!--" not in code_text
    assert "script-src 'nonce-n0nce'" in parsed.policy and "default-src 'none'" in parsed.policy


def test_each_page_has_its_own_nonce():
    data = build([], [], 1.0e9, 30)
    first, second = (parse(page(data, "")).policy for _ in range(2))
    assert first != second


def gauge_with_history(storage: Path) -> Gauge:
    settings = ServerSettings(
        storage_dir=str(storage),
        providers=(ProviderSettings(id="test"),),
        models=(ModelSettings(id="gpt-4o", provider="test"),),
    )
    return Gauge(settings, Ledger(storage / LEDGER_DIR))


def test_the_command_writes_the_history_as_a_page(tmp_path: Path):
    gauge = gauge_with_history(tmp_path / "storage")
    messages = [
        Message("system", [TextPart("You are a helpful assistant.")]),
        Message("user", [TextPart("explain the parser " * 20)]),
    ]
    tools = [Tool("read_file", "Read a file.", {"type": "object"})]
    for tokens in (115, 120, 125):
        gauge.record_usage(RecordUsageParams("gpt-4o", messages, Usage(tokens, 50), tools))
    gauge.ledger.close()
    out = tmp_path / "report.html"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tokengauge",
            "report",
            "--storage-dir",
            str(tmp_path / "storage"),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert f"3 requests from {tmp_path / 'storage'}" in result.stdout
    parsed = parse(out.read_text(encoding="utf-8"))
    [(_, data_text), (_, code)] = parsed.found
    data = json.loads(data_text)
    assert [row["inputTokens"] for row in data["requests"]] == [115, 120, 125]
    assert data["totals"]["costUsd"] == pytest.approx((360 * 2.5 + 150 * 10.0) / 1e6)
    assert code.strip() == dashboard_script().strip().replace("<!--", "<\\!--")


def test_no_history_is_a_clear_error(tmp_path: Path):
    result = subprocess.run(
        [sys.executable, "-m", "tokengauge", "report", "--storage-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert f"no usage history in {tmp_path}" in result.stderr
    assert "--storage-dir" in result.stderr
