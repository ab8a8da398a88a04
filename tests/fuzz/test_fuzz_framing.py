"""Hypothesis over the raw bytes on the server's stdin: valid requests mixed with stray bytes,
wrong Content-Lengths, LF-only headers, cut messages, huge header lines, bodies that are not JSON.

After each example a request behind some blank lines must be answered, and counted exactly: the
stream never stays out of step. Every error answered is one of JSON-RPC's for bad input, with a
readable message, never InternalError; the server never dies.
"""

from __future__ import annotations

import json
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.conftest import DERANDOMIZE, budget, report
from tests.fuzz.pipe_client import PipeServer
from tests.fuzz.strategies import texts
from tokengauge.counting.encodings import EncodingRegistry

EXAMPLES = budget(600)
FRAMING_CODES = {-32700, -32600, -32602, -32601}
SENTINEL_TEXT = "the stream is in step"
RESYNC = b"\r\n" * 2100  # longer than any body the pieces below declare


def body(request_id: int, text: str) -> bytes:
    params = {"modelId": "gpt-4o", "inputs": [text]}
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tokenGauge/countTokens",
        "params": params,
    }
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


@st.composite
def pieces(draw: st.DrawFn, ids: list[int]) -> bytes:
    """One stretch of input: a request framed right or wrong, or junk."""
    request_id = 10_000_000 + len(ids)
    text = draw(texts)
    data = body(request_id, text)
    kind = draw(
        st.sampled_from(
            [
                "valid",
                "valid",
                "lf-only",
                "lowercase",
                "length-in-characters",
                "too-long",
                "too-short",
                "cut",
                "stray",
                "long-line",
                "not-json",
                "array",
                "deep",
                "empty",
                "nan-id",
                "header-only",
            ]
        )
    )
    if kind in ("valid", "lf-only", "lowercase", "too-long"):
        ids.append(request_id)
    end = b"\n" if kind == "lf-only" else b"\r\n"
    name = b"content-length" if kind == "lowercase" else b"Content-Length"
    length = len(data)
    if kind == "length-in-characters":
        length = len(data.decode("utf-8", "surrogatepass"))
    elif kind == "too-long":
        length += draw(st.integers(1, 40))
    elif kind == "too-short":
        length = draw(st.integers(0, max(0, length - 1)))
    elif kind == "cut":
        return b"%s: %d\r\n\r\n%s" % (name, length, data[: draw(st.integers(0, length))])
    elif kind == "stray":
        return draw(st.binary(min_size=1, max_size=300))
    elif kind == "long-line":
        return b"X-Junk: " + b"y" * draw(st.integers(60_000, 130_000)) + b"\r\n"
    elif kind == "not-json":
        data = b'{"jsonrpc": "2.0", "id": %d, "method": ' % request_id
    elif kind == "array":
        data = b"[1, 2, 3]"
    elif kind == "deep":
        data = b"[" * 100_000 + b"]" * 100_000
    elif kind == "empty":
        data = b""
    elif kind == "nan-id":
        data = b'{"jsonrpc": "2.0", "id": NaN, "method": "tokenGauge/models"}'
    elif kind == "header-only":
        return b"%s: %d\r\n\r\n" % (name, draw(st.integers(0, 4000)))
    length = len(data) if kind in ("not-json", "array", "deep", "empty", "nan-id") else length
    return b"%s: %d%s%s%s" % (name, length, end, end, data)


def check(response: dict[str, Any]) -> None:
    error = response.get("error")
    if error is not None:
        assert error["code"] in FRAMING_CODES, error
        assert error["message"].strip() and "Traceback" not in error["message"], error


def test_raw_stdin_never_desynchronises_the_server(server: PipeServer) -> None:
    exact = len(EncodingRegistry().get("o200k_base").encode_ordinary(SENTINEL_TEXT))
    totals = {"examples": 0, "bytes": 0, "valid_sent": 0, "valid_answered": 0}
    started = time.monotonic()

    @settings(
        max_examples=EXAMPLES,
        derandomize=DERANDOMIZE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        ids: list[int] = []
        stream = b"".join(data.draw(st.lists(pieces(ids), min_size=1, max_size=8)))
        sentinel = f"sentinel-{totals['examples']}"
        message = {
            "jsonrpc": "2.0",
            "id": sentinel,
            "method": "tokenGauge/countTokens",
            "params": {"modelId": "gpt-4o", "inputs": [SENTINEL_TEXT]},
        }
        encoded = json.dumps(message).encode()
        server.send(stream + RESYNC + b"Content-Length: %d\r\n\r\n%s" % (len(encoded), encoded))
        answer = server.wait(sentinel, timeout=30)
        assert answer["result"]["raw"] == [exact], answer
        for request_id in ids:
            found = server.responses.pop(request_id, None)
            totals["valid_answered"] += found is not None
            if found is not None:
                check(found)
        for orphan in server.orphans:
            check(orphan)
        server.orphans.clear()
        totals["examples"] += 1
        totals["bytes"] += len(stream)
        totals["valid_sent"] += len(ids)

    one()
    assert server.alive
    report(
        "framing",
        {**totals, "deaths": 0, "seconds": round(time.monotonic() - started, 1)},
    )
