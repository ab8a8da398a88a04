"""The summarization simulator end to end: Copilot's agent loop as the real client runs it.

Runs `python -m bench.sim` as its user would (a real test upstream on 127.0.0.1, a real
`python -m tokengauge` over stdio, Copilot 0.67's loop in the simulator), twice:
- the seeded scenario on a small model (32k window, 20 tools, 12 turns) for true tokenizers that
  count 25% fewer, as many, and 25% more tokens than tokengauge assumes: tokengauge must summarize
  at least once and never overflow, nor even need the server's smaller-`max_tokens` retry;
- the Copilot host suite's scenario (recorded from the real client with tokengauge as its provider,
  `bench/data/copilot-host-*`) at all four recorded skews: the simulator, running the same server,
  must make the decisions the real Copilot made (the same summarizations of the same kind in the
  same order, each at the fill the host saw ±0.03, the same largest fill, no overflow). The
  recordings hold the server's answers of the commit they were made at: a change in what the
  server answers Copilot calls for new recordings (`bench/data/README.md`), made in the real client.
Where the summarization fires no longer depends on tokengauge's message answers: Copilot 0.67
measures what it renders with its own o200k_base tokenizer, so its fill follows the true tokenizer
(perfect counts summarize at medians 0.40 / 0.51 / 0.59 across the seeded skews); tokengauge moves
only `toolTokens` and the usage it reports.
The Agents window's runtime runs for real, in the agent-host suite (scripts/test-agent-host.sh).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SKEWS = (-0.25, 0.0, 0.25)
HOST_SKEWS = (-0.4, 0.0, 0.3, 0.6)
TOLERANCE = 0.03


def simulate(out: Path, *options: str) -> dict[tuple[float, str], dict[str, object]]:
    figures = out / "figures.json"
    command = [
        sys.executable,
        "-m",
        "bench.sim",
        *options,
        f"--out={out}",
        f"--json={figures}",
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert figures.exists(), f"no figures; exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert list(out.glob("*.svg")), "no plot was written"
    runs = json.loads(figures.read_text())["runs"]
    return {(run["skew"], run["variant"]): run for run in runs}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[float, str], dict[str, object]]:
    return simulate(
        tmp_path_factory.mktemp("simulate"),
        f"--skews={','.join(str(s) for s in SKEWS)}",
        "--variants=tokengauge",
        "--turns=12",
        "--window=32768",
        "--max-output=8192",
        "--tools=20",
    )


@pytest.fixture(scope="module")
def host_runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[float, str], dict[str, object]]:
    return simulate(
        tmp_path_factory.mktemp("simulate-host"),
        "--scenario=host",
        f"--skews={','.join(str(s) for s in HOST_SKEWS)}",
        "--variants=tokengauge",
    )


def recorded_host(skew: float) -> dict[str, object]:
    path = REPO / "bench" / "data" / f"copilot-host-skew-{1 + skew:.1f}.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))["host"]


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"skew{s * 100:+.0f}%") for s in SKEWS])
def test_tokengauge_summarizes_and_never_overflows(runs, skew):
    run = runs[(skew, "tokengauge")]
    assert run["overflows"] == 0, run
    assert run["summaries"] >= 1, run
    assert run["turns_ok"] == run["turns"], run
    assert run["resized"] == 0, run
    assert all(0 < fill < 1 for fill in run["fills"]), run


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"host{1 + s:.1f}") for s in HOST_SKEWS])
def test_the_simulator_decides_as_the_real_copilot(host_runs, skew):
    run, host = host_runs[(skew, "tokengauge")], recorded_host(skew)
    assert run["overflows"] == host["overflows"] == 0, run
    assert run["turns_ok"] == run["turns"], run
    assert list(run["kinds"]) == [s["kind"] for s in host["summaries"]], (run, host)
    pairs = zip(run["fills"], (s["fill"] for s in host["summaries"]), strict=True)
    assert all(abs(ours - theirs) <= TOLERANCE for ours, theirs in pairs), (run, host)
    assert abs(run["largest_fill"] - host["largest_fill"]) <= TOLERANCE, (run, host)


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"host{1 + s:.1f}") for s in HOST_SKEWS])
def test_tokengauge_in_the_host_scenario_never_overflows(host_runs, skew):
    run = host_runs[(skew, "tokengauge")]
    assert run["overflows"] == 0, run
    assert run["summaries"] >= 1, run
    assert run["turns_ok"] == run["turns"], run
    assert run["largest_fill"] <= 1, run
