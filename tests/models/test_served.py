"""The served window in the gauge: what limits a local model's window, what the tooltip says, what
Ollama is asked for, a prompt cut without an error, and a server's exact count."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokengauge.gauge import Gauge
from tokengauge.ledger.store import Ledger
from tokengauge.messages import Message, TextPart, Tool, Usage
from tokengauge.models.catalog import DiscoveredModel
from tokengauge.models.served import Served
from tokengauge.settings import ModelSettings, ProviderSettings, ServerSettings

OLLAMA = ProviderSettings("ollama", base_url="http://127.0.0.1:11434/v1")
VLLM = ProviderSettings("vllm", preset="vllm", base_url="http://127.0.0.1:8000/v1")
CLOUD = ProviderSettings("cloud", base_url="http://127.0.0.1:9/v1")
NATIVE = 131_072
MESSAGES = [
    Message("system", [TextPart("You are an expert AI programming assistant. " * 20)]),
    Message("user", [TextPart("Explain this log line by line. " * 200)]),
]
TOOLS = [Tool("read_file", "Read a file.", {"type": "object"})]


def gauge_for(tmp_path: Path, *models: ModelSettings) -> Gauge:
    settings = ServerSettings(providers=(OLLAMA, VLLM, CLOUD), models=models)
    return Gauge(settings, Ledger(tmp_path / "ledger"))


def local(model_id: str = "qwen3:8b", **fields: object) -> ModelSettings:
    return ModelSettings(model_id, "ollama", family="qwen3", **fields)  # type: ignore[arg-type]


def listed(gauge: Gauge, *model_ids: str) -> None:
    """Ollama lists the models with their native window (`/api/show`)."""
    gauge.apply_discovery("ollama", [DiscoveredModel(m, context_window=NATIVE) for m in model_ids])


def test_the_loaded_window_is_offered_and_its_source_told(tmp_path: Path):
    gauge = gauge_for(tmp_path, local(context_window=None, max_output_tokens=4096))
    model = gauge.offer.model("qwen3:8b")
    model_window = model.context_window
    assert gauge.windows.apply_served(model, Served(8192, "loaded in Ollama, per ollama ps"))
    info = gauge.model_info(model)
    assert info.context_window == 8192
    assert info.max_input_tokens + info.max_output_tokens <= 8192
    assert "loaded in Ollama, per ollama ps" in info.tooltip
    assert f"the model's own is {round(model_window / 1000)}k" in info.tooltip
    # The same reading again changes nothing; a new one moves the window.
    assert not gauge.windows.apply_served(model, Served(8192, "loaded in Ollama, per ollama ps"))
    assert gauge.windows.apply_served(model, Served(32768, "loaded in Ollama, per ollama ps"))
    assert gauge.model_info(model).context_window == 32768


def test_the_reading_survives_a_new_session(tmp_path: Path):
    gauge = gauge_for(tmp_path, local())
    gauge.windows.apply_served(
        gauge.offer.model("qwen3:8b"), Served(8192, "loaded in Ollama, per ollama ps")
    )
    gauge.ledger.close()
    again = gauge_for(tmp_path, local())
    assert again.model_info(again.offer.model("qwen3:8b")).context_window == 8192


def test_a_context_window_set_wins_and_a_smaller_loaded_one_is_warned_about(tmp_path: Path):
    gauge = gauge_for(tmp_path, local(context_window=32768), local("big:1", context_window=8192))
    smaller = gauge.offer.model("qwen3:8b")
    gauge.windows.apply_served(smaller, Served(4096, "loaded in Ollama, per ollama ps"))
    info = gauge.model_info(smaller)
    assert info.context_window == 32768
    assert "⚠ The server has it loaded with only 4.1k tokens" in info.tooltip
    larger = gauge.offer.model("big:1")
    gauge.windows.apply_served(larger, Served(16384, "loaded in Ollama, per ollama ps"))
    info = gauge.model_info(larger)
    assert info.context_window == 8192
    assert "⚠" not in info.tooltip and "loaded with 16.4k tokens" in info.tooltip


def test_ollama_is_asked_for_the_picked_size_else_the_setting_else_what_it_loaded(tmp_path: Path):
    gauge = gauge_for(tmp_path, local(context_window=NATIVE), local("set:1", num_ctx=16384))
    model = gauge.offer.model("qwen3:8b")
    assert gauge.num_ctx(model) is None  # nothing said yet: nothing asked
    gauge.windows.apply_served(
        model, Served(4096, "Ollama's default (assumed)", loaded=False, exact=False)
    )
    assert gauge.num_ctx(model) is None  # an assumption is never asked for
    gauge.windows.apply_served(model, Served(32768, "loaded in Ollama, per ollama ps"))
    assert gauge.num_ctx(model) == 32768  # what it has: nothing reloads
    gauge.windows.choose(model, 65536)
    assert gauge.num_ctx(model) == 65536
    assert gauge.num_ctx(gauge.offer.model("set:1")) == 16384
    cloud = gauge_for(tmp_path / "c", ModelSettings("gpt-4o", "cloud", num_ctx=8192))
    assert cloud.num_ctx(cloud.offer.model("gpt-4o")) is None


def test_a_new_served_window_replaces_the_limit_an_overflow_taught(tmp_path: Path):
    gauge = gauge_for(tmp_path, local())
    listed(gauge, "qwen3:8b")
    model = gauge.offer.model("qwen3:8b")
    gauge.ledger.set_limit(model.id, 4000)
    assert gauge.model_info(model).context_window == 4000
    gauge.windows.apply_served(model, Served(16384, "loaded in Ollama, per ollama ps"))
    assert gauge.model_info(model).context_window == 16384


def test_a_prompt_counted_far_below_its_size_was_cut(tmp_path: Path):
    gauge = gauge_for(tmp_path, local(context_window=NATIVE), ModelSettings("gpt-4o", "cloud"))
    model = gauge.offer.model("qwen3:8b")
    estimate = gauge.counts.estimate(model, MESSAGES, TOOLS)
    total = estimate.total
    assert gauge.counts.silently_cut(model, estimate, Usage(total // 3, 10))
    # A tokenizer that counts 0.6 of the prior's is not a cut, before any usage taught the fit.
    assert not gauge.counts.silently_cut(model, estimate, Usage(round(total * 0.6), 10))
    # A cloud API is never suspected: its overflows raise errors.
    cloud = gauge.offer.model("gpt-4o")
    assert not gauge.counts.silently_cut(
        cloud, gauge.counts.estimate(cloud, MESSAGES, TOOLS), Usage(10, 10)
    )


def test_a_read_of_the_whole_served_window_of_a_larger_request_was_cut(tmp_path: Path):
    """Ollama keeps exactly num_ctx tokens of a longer prompt: a read of 81% is a cut too."""
    gauge = gauge_for(tmp_path, local())
    listed(gauge, "qwen3:8b")
    model = gauge.offer.model("qwen3:8b")
    estimate = gauge.counts.estimate(model, MESSAGES, TOOLS)
    expected = gauge.calibration.expected(model, estimate)
    window = round(expected * 0.81)
    gauge.windows.apply_served(model, Served(window, "loaded in Ollama, per ollama ps"))
    assert gauge.counts.silently_cut(model, estimate, Usage(window, 10))
    assert not gauge.counts.silently_cut(model, estimate, Usage(round(window * 0.9), 10))
    gauge.windows.apply_served(
        model, Served(round(expected) + 500, "loaded in Ollama, per ollama ps")
    )
    assert not gauge.counts.silently_cut(model, estimate, Usage(round(expected), 10))
    # A conversation that grows a turn at a time overflows by a little first: 2% over is a cut.
    over = round(max(expected, estimate.total) / 1.02)
    gauge.windows.apply_served(model, Served(over, "loaded in Ollama, per ollama ps"))
    assert gauge.counts.silently_cut(model, estimate, Usage(over, 10))


def test_a_cut_teaches_the_window_the_server_reports_else_what_it_read(tmp_path: Path):
    gauge = gauge_for(tmp_path, local(), local("b:1"))
    listed(gauge, "qwen3:8b", "b:1")
    model = gauge.offer.model("qwen3:8b")
    read = Usage(2050, 100)
    assert (
        gauge.windows.learn_cut(model, read, Served(4096, "loaded in Ollama, per ollama ps"))
        == 4096
    )
    assert gauge.model_info(model).context_window == 4096
    other = gauge.offer.model("b:1")
    assert gauge.windows.learn_cut(other, read, None) == 2150
    assert gauge.model_info(other).context_window == 2150


def test_the_servers_exact_count_is_the_estimate_of_that_request(tmp_path: Path):
    gauge = gauge_for(tmp_path, ModelSettings("Qwen/Qwen3-8B", "vllm", context_window=32768))
    model = gauge.offer.model("Qwen/Qwen3-8B")
    assert gauge.counts.anchor_due(model, 0.0)
    before = gauge.counts.estimate(model, MESSAGES, TOOLS, TOOLS).total
    exact = round(before * 0.8)
    gauge.counts.anchor(model, MESSAGES, TOOLS, TOOLS, exact, 0.0)
    assert gauge.counts.estimate(model, MESSAGES, TOOLS, TOOLS).total == exact
    assert not gauge.counts.anchor_due(model, 10.0) and gauge.counts.anchor_due(model, 601.0)
    # Another request is estimated by the fit, which learned from the count.
    longer = [*MESSAGES, Message("user", [TextPart("and this one too " * 100)])]
    grown = gauge.counts.estimate(model, longer, TOOLS, TOOLS)
    assert grown.exact is None and grown.total > exact
    assert gauge.calibration.fit(model).observations == 1


def test_servers_that_do_not_count_are_never_asked(tmp_path: Path):
    gauge = gauge_for(tmp_path, local())
    assert not gauge.counts.anchor_due(gauge.offer.model("qwen3:8b"), 0.0)


@pytest.mark.parametrize("count", [None])
def test_a_count_the_server_could_not_give_waits_for_the_next_time(tmp_path: Path, count: None):
    gauge = gauge_for(tmp_path, ModelSettings("m", "vllm"))
    model = gauge.offer.model("m")
    gauge.counts.anchor(model, MESSAGES, TOOLS, TOOLS, count, 0.0)
    assert gauge.counts.estimate(model, MESSAGES, TOOLS, TOOLS).exact is None
    assert not gauge.counts.anchor_due(model, 1.0)
