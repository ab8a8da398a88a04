"""Draw the extension's icon: ``images/icon.svg`` (the source) and ``images/icon.png`` (256 px).

A gauge on a dark rounded square: an arc in the status bar's three severities (fine up to 75% of
the input budget, warning to 90%, error beyond), and a needle at about two thirds. The SVG is
written from the geometry below; the PNG is Chromium's rendering of it (headless, transparent
background): ``python scripts/make_icon.py [--chromium PATH]``.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Final

REPO = Path(__file__).resolve().parent.parent
SVG = REPO / "images" / "icon.svg"
PNG = REPO / "images" / "icon.png"
PIXELS: Final = 256

VIEW: Final = 128
CENTRE: Final = (64.0, 74.0)
RADIUS: Final = 42.0
ARC_WIDTH: Final = 16.0
START, END = 210.0, -30.0  # degrees, counter-clockwise from 3 o'clock; the arc runs clockwise
GAP: Final = 3.0  # degrees between two zones
ZONES: Final = ((0.0, 0.75, "#34d399"), (0.75, 0.9, "#fbbf24"), (0.9, 1.0, "#f87171"))
NEEDLE_AT: Final = 0.62
INK: Final = "#f8fafc"
BACKGROUND: Final = ("#23314f", "#141c2e")


def angle(fraction: float) -> float:
    """The angle (degrees) of a fraction of the gauge's sweep."""
    return START + (END - START) * fraction


def point(degrees: float, radius: float) -> tuple[float, float]:
    """The point at ``degrees`` on a circle of ``radius`` round the centre (SVG's y points down)."""
    x, y = CENTRE
    theta = math.radians(degrees)
    return x + radius * math.cos(theta), y - radius * math.sin(theta)


def arc(start: float, end: float) -> str:
    """An SVG path along the gauge's circle from ``start`` to ``end`` degrees, clockwise."""
    (x1, y1), (x2, y2) = point(start, RADIUS), point(end, RADIUS)
    large = 1 if abs(start - end) > 180 else 0
    return f"M {x1:.2f} {y1:.2f} A {RADIUS} {RADIUS} 0 {large} 1 {x2:.2f} {y2:.2f}"


def end_cap(fraction: float, colour: str) -> str:
    """A disc that rounds the gauge's end at ``fraction`` (0 or 1)."""
    x, y = point(angle(fraction), RADIUS)
    return f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{ARC_WIDTH / 2}" fill="{colour}"/>'


def needle() -> str:
    """The needle: a slim triangle from behind the hub to just inside the arc."""
    direction = angle(NEEDLE_AT)
    tip = point(direction, RADIUS - ARC_WIDTH / 2 - 1)
    left = point(direction + 90, 6.5)
    right = point(direction - 90, 6.5)
    tail = point(direction + 180, 10)
    corners = " ".join(f"{x:.2f},{y:.2f}" for x, y in (tip, left, tail, right))
    return f'<polygon points="{corners}" fill="{INK}"/>'


def svg() -> str:
    """The icon as an SVG document."""
    zones = []
    for low, high, colour in ZONES:
        start = angle(low) - (GAP / 2 if low > 0 else 0)
        end = angle(high) + (GAP / 2 if high < 1 else 0)
        zones.append(
            f'<path d="{arc(start, end)}" fill="none" stroke="{colour}" '
            f'stroke-width="{ARC_WIDTH}" stroke-linecap="butt"/>'
        )
    zones += [end_cap(0.0, ZONES[0][2]), end_cap(1.0, ZONES[-1][2])]
    x, y = CENTRE
    top, bottom = BACKGROUND
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{VIEW}" height="{VIEW}" '
            f'viewBox="0 0 {VIEW} {VIEW}">',
            '<defs><linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">'
            f'<stop offset="0" stop-color="{top}"/><stop offset="1" stop-color="{bottom}"/>'
            "</linearGradient></defs>",
            f'<rect x="4" y="4" width="{VIEW - 8}" height="{VIEW - 8}" rx="26" fill="url(#bg)"/>',
            *zones,
            needle(),
            f'<circle cx="{x}" cy="{y}" r="11" fill="{INK}"/>',
            f'<circle cx="{x}" cy="{y}" r="4" fill="{bottom}"/>',
            "</svg>",
            "",
        ]
    )


def render(svg_file: Path, png_file: Path, chromium: str) -> None:
    """Render ``svg_file`` at ``PIXELS`` square into ``png_file`` with headless Chromium."""
    with tempfile.TemporaryDirectory(prefix="tg-icon-") as tmp:
        page = Path(tmp) / "icon.html"
        page.write_text(
            '<html><body style="margin:0;background:transparent">'
            f'<img src="{svg_file.as_uri()}" width="{PIXELS}" height="{PIXELS}">'
            "</body></html>"
        )
        subprocess.run(
            [
                chromium,
                *("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"),
                *("--force-device-scale-factor=1", f"--window-size={PIXELS},{PIXELS}"),
                "--default-background-color=00000000",
                f"--user-data-dir={tmp}/profile",
                f"--screenshot={png_file}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
        )


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python scripts/make_icon.py [--chromium PATH]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args(argv)
    SVG.parent.mkdir(exist_ok=True)
    SVG.write_text(svg())
    render(SVG, PNG, args.chromium)
    print(f"== {SVG.relative_to(REPO)}, {PNG.relative_to(REPO)} ({PNG.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
