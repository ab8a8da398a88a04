"""The loopback collector reads what Node's OTLP/HTTP exporters send (Copilot Chat's): OTLP/JSON
with hex ids, in a chunked body; run as a process, it writes each span as a JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from http.client import HTTPConnection
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.harness.otlp import running_collector

TRACE_ID = "5b8efff798038103d269b633813fc60c"
SPAN_ID = "eee19b7ec3c1b174"
PARENT_ID = "051581bf3cb55c13"

# As @opentelemetry/otlp-transformer's JSON serializer writes a span: ids in hex, 64-bit integers
# as strings.
EXPORT = {
    "resourceSpans": [
        {
            "resource": {
                "attributes": [{"key": "service.name", "value": {"stringValue": "copilot-chat"}}]
            },
            "scopeSpans": [
                {
                    "scope": {"name": "copilot-chat", "version": "0.67.0"},
                    "spans": [
                        {
                            "traceId": TRACE_ID,
                            "spanId": SPAN_ID,
                            "parentSpanId": PARENT_ID,
                            "name": "invoke_agent GitHub Copilot Chat",
                            "kind": 1,
                            "startTimeUnixNano": "1795729172482000000",
                            "endTimeUnixNano": "1795729173482000000",
                            "attributes": [
                                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "20829"}}
                            ],
                            "status": {"code": 0},
                        }
                    ],
                }
            ],
        }
    ]
}


def post(url: str, body: bytes, headers: dict[str, str], chunked: bool) -> int:
    """POST `body` to `url`'s /v1/traces, in one piece or in chunks; the status."""
    parts = urlsplit(url)
    connection = HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        if chunked:
            pieces = [body[i : i + 100] for i in range(0, len(body), 100)]
            connection.request("POST", "/v1/traces", iter(pieces), headers, encode_chunked=True)
        else:
            connection.request("POST", "/v1/traces", body, headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


@pytest.mark.parametrize(
    "chunked", [pytest.param(True, id="chunked"), pytest.param(False, id="sized")]
)
def test_reads_otlp_json(chunked: bool) -> None:
    body = json.dumps(EXPORT).encode()
    with running_collector() as collector:
        status = post(collector.url, body, {"Content-Type": "application/json"}, chunked)
    assert status == 200
    [span] = collector.spans
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE_ID, SPAN_ID, PARENT_ID)
    assert (span.name, span.kind, span.start_ns) == (
        "invoke_agent GitHub Copilot Chat",
        1,
        1795729172482000000,
    )
    assert span.attributes == {"gen_ai.usage.input_tokens": 20829}
    assert span.resource == {"service.name": "copilot-chat"}


def test_process_writes_each_span_as_a_json_line(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.harness.otlp", "--spans", str(spans)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps(EXPORT).encode()
        assert post(url, body, {"Content-Type": "application/json"}, chunked=True) == 200
        [line] = spans.read_text().splitlines()
    finally:
        process.terminate()
        process.wait(10)
    written = json.loads(line)
    assert (written["trace_id"], written["span_id"], written["parent_span_id"]) == (
        TRACE_ID,
        SPAN_ID,
        PARENT_ID,
    )
    assert written["resource"] == {"service.name": "copilot-chat"}
    assert written["attributes"] == {"gen_ai.usage.input_tokens": 20829}
    assert process.returncode == 0
