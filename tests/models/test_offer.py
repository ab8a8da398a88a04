"""The model offer: what VS Code is told of each model's window."""

from __future__ import annotations

from pathlib import Path

import attrs

from tests.usage_reports import AGENT, TOOLS, report
from tokengauge.formatting import compact
from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings


def test_a_picked_context_size_is_the_window_everything_uses_and_is_kept(tmp_path: Path):
    settings = ServerSettings(
        providers=(ProviderSettings(id="test"),),
        models=(ModelSettings(id="gpt-4.1", provider="test"),),
    )
    gauge = Gauge(settings, Ledger(tmp_path / "ledger"))
    model = gauge.offer.model("gpt-4.1")
    [full] = gauge.models()
    assert full.context_window > 200_000 and full.choices is not None
    assert gauge.windows.choose(model, 200_000) is True
    assert gauge.windows.choose(model, 200_000) is False  # no change, nothing to re-list
    [small] = gauge.models()
    assert small.context_window == 200_000
    assert small.max_input_tokens + small.max_output_tokens == 200_000
    listed = compact(full.context_window)
    assert f"200k-token window (picked in the model's options; {listed} listed)" in small.tooltip
    assert "errors" not in small.tooltip
    assert gauge.max_input_tokens(model) < 200_000 and small.max_input_tokens < 200_000
    assert small.max_input_tokens < full.max_input_tokens
    report(gauge, AGENT, TOOLS, 100_000, model="gpt-4.1")
    assert gauge.bar.status().text == "$(pulse) 100k / 184k · 54%"
    # A new session keeps the pick; picking the whole window again drops it.
    later = Gauge(settings, Ledger(tmp_path / "ledger"))
    assert later.models()[0].context_window == 200_000
    assert later.windows.choose(later.offer.model("gpt-4.1"), full.context_window) is True
    assert later.models()[0] == full


def test_a_compaction_window_is_what_copilot_is_told_and_the_send_path_keeps_the_window(
    tmp_path: Path,
):
    settings = ServerSettings(
        providers=(ProviderSettings(id="test"),),
        models=(ModelSettings(id="gpt-4.1", provider="test", compact_at=200_000),),
    )
    gauge = Gauge(settings, Ledger(tmp_path / "ledger"))
    model = gauge.offer.model("gpt-4.1")
    [info] = gauge.models()
    window = model.context_window
    assert info.context_window == window > 200_000
    assert info.max_input_tokens + info.max_output_tokens == 200_000
    assert gauge.windows.sizes(model).window == window  # the send path's and the status bar's
    assert gauge.max_input_tokens(model) > 200_000
    assert "Copilot is told of a 200k window" in info.tooltip
    report(gauge, AGENT, TOOLS, 100_000, model="gpt-4.1")
    status = gauge.bar.status()
    budget = compact(gauge.windows.sizes(model).max_input)
    assert status.text == f"$(pulse) 100k / {budget} · 10%"  # the whole window's budget
    assert "Copilot is told of a 200k window: it summarizes the chat against that" in status.tooltip
    # A pick goes over the setting and is kept; a compaction window at or above the model's
    # window is none.
    assert gauge.windows.choose_compaction(model, 128_000) is True
    later = Gauge(settings, Ledger(tmp_path / "ledger"))
    [picked] = later.models()
    assert picked.max_input_tokens + picked.max_output_tokens == 128_000
    assert later.windows.choose_compaction(later.offer.model("gpt-4.1"), window) is True
    assert later.models()[0] == info
    wide = attrs.evolve(model, compact_at=window * 2)
    assert later.windows.compaction(wide) is None
