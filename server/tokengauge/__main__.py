"""`python -m tokengauge`: the same entry point as the `tokengauge` console script."""

from __future__ import annotations

from tokengauge.cli import main

raise SystemExit(main())
