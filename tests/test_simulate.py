"""The summarization simulator end to end: tokengauge keeps Copilot's agent loop inside the window.

Runs `bench/simulate.py` as its user would (a real test upstream on 127.0.0.1, a real
`python -m tokengauge` over stdio, Copilot's loop in the simulator) on a small model — 32k window,
20 tools, 12 turns — for true tokenizers that count 25% fewer, as many, and 25% more message
tokens than tokengauge assumes. Every skew must summarize at least once and never overflow, nor
even need the server's smaller-`max_tokens` retry; and calibration must make the summarization
fire at about the same true fill whatever the skew (uncalibrated counts spread it from ~0.5 to
~0.75 on this model).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SKEWS = (-0.25, 0.0, 0.25)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[float, dict[str, object]]:
    out = tmp_path_factory.mktemp("simulate")
    figures = out / "figures.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "simulate.py"),
        f"--skews={','.join(str(s) for s in SKEWS)}",
        "--variants=tokengauge",
        "--turns=12",
        "--window=32768",
        "--max-output=8192",
        "--tools=20",
        f"--out={out}",
        f"--json={figures}",
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert figures.exists(), f"no figures; exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert list(out.glob("*.svg")), "no plot was written"
    return {run["skew"]: run for run in json.loads(figures.read_text())["runs"]}


@pytest.mark.parametrize("skew", [pytest.param(s, id=f"skew{s * 100:+.0f}%") for s in SKEWS])
def test_tokengauge_summarizes_and_never_overflows(runs, skew):
    run = runs[skew]
    assert run["variant"] == "tokengauge"
    assert run["overflows"] == 0, run
    assert run["summaries"] >= 1, run
    assert run["turns_ok"] == run["turns"], run
    assert run["resized"] == 0, run
    assert all(0 < fill < 1 for fill in run["fills"]), run


def test_calibration_makes_the_summarization_point_independent_of_the_skew(runs):
    medians = [statistics.median(runs[skew]["fills"]) for skew in SKEWS]
    assert max(medians) - min(medians) <= 0.08, medians
