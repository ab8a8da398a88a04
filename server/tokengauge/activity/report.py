"""`tokengauge report`: the dashboard as one self-contained HTML file.

The page is the webview's: the same bundle (`data/dashboard.js`, built by `npm run build` from
`extension/dashboard/`) and the same data, inline, under a strict Content-Security-Policy whose
nonce is made for this file. Nothing is loaded from anywhere; the file opens in any browser and
can be attached to a bug report (it holds counts, costs, model ids and times, never a message).
"""

from __future__ import annotations

import json
import re
import secrets
from importlib import resources
from typing import Final

from tokengauge.activity.dashboard import DashboardData, build, kept_since, models_seen
from tokengauge.activity.record import read_record
from tokengauge.ledger.store import Ledger

SCRIPT: Final = "data/dashboard.js"
"""The dashboard's bundle, inside the tokengauge package."""


class ReportError(Exception):
    """The report cannot be written; the message says why and what to do."""


def dashboard_script() -> str:
    """The dashboard's bundle, or `ReportError` if it was never built."""
    try:
        return resources.files("tokengauge").joinpath(SCRIPT).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        raise ReportError(
            f"the dashboard's script ({SCRIPT}) is missing from this installation: "
            "build it with `npm run build` in the repository"
        ) from None


def report_data(ledger: Ledger, now: float, days: int) -> DashboardData:
    """The dashboard of the requests `ledger` kept over the last `days` days."""
    since = kept_since(now, days)
    records = [record for record in map(read_record, ledger.recent_usage(since=since)) if record]
    kept = [record for record in records if record.time >= since]
    return build(kept, models_seen(kept), now, days)


def page(data: DashboardData, script: str, nonce: str | None = None) -> str:
    """The HTML page of the dashboard of `data`, the bundle `script` inline."""
    nonce = nonce or secrets.token_urlsafe(18)
    policy = (
        f"default-src 'none'; img-src data:; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}';"
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>Token Gauge: Usage</title></head>\n"
        '<body><main id="tg-dashboard" data-mode="report"></main>\n'
        f'<script type="application/json" id="tg-data">{_json_inline(data)}</script>\n'
        f'<script nonce="{nonce}">{_script_inline(script)}</script>\n'
        "</body></html>\n"
    )


def _json_inline(data: DashboardData) -> str:
    """The data as JSON that cannot end its `<script>` element (`<` escaped as in JSON)."""
    return json.dumps(data.to_json()).replace("<", "\\u003c")


def _script_inline(script: str) -> str:
    """The bundle safe inside a `<script>` element: `</script` and `<!--` can only occur in its
    strings (they are not JavaScript elsewhere), where the escaped forms mean the same."""
    return _SCRIPT_END.sub(r"<\\/\1", script).replace("<!--", "<\\!--")


_SCRIPT_END: Final = re.compile(r"</(script)", re.IGNORECASE)
