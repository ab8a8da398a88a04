"""How the server writes numbers for people: token counts, shares and dollars.

Token counts are compact (`41.2k`, `1.05M`) in the status bar, the models' tooltips and the notes
in answers; shares are whole percentages; a cost is in dollars and cents, or to four places below
a cent; a price per million tokens keeps four significant digits below a cent.
"""

from __future__ import annotations


def compact(n: int) -> str:
    """`950` → `950`, `41234` → `41.2k`, `120000` → `120k`, `1048576` → `1.05M`."""
    if n < 1000:
        return str(n)
    unit, value = ("M", n / 1_000_000) if n >= 999_500 else ("k", n / 1000)
    digits = 0 if value >= 100 else 1 if value >= 10 or unit == "k" else 2
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + unit


def percent(part: int, whole: int) -> int:
    """`part` of `whole` as a whole percentage (an empty whole is full)."""
    return round(part / whole * 100) if whole > 0 else 100


def format_usd(amount: float) -> str:
    """`$1.23` from a cent up (and for nothing), `$0.0042` below a cent, `< $0.0001` below that."""
    if amount == 0 or amount >= 0.01:
        return f"${amount:,.2f}"
    return "< $0.0001" if amount < 0.0001 else f"${amount:.4f}"


def format_price(amount: float) -> str:
    """A price per million tokens: `$2.50`, `$0.075`, `$0.0001234` (four significant digits)."""
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4g}"
