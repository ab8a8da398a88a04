"""``/_control/*``: scripting and inspecting a test upstream over HTTP (subprocess mode).

- ``GET  /_control/health`` → ``{"ok": true, "base_url"}``
- ``GET  /_control/config`` → the :class:`UpstreamConfig` JSON
- ``POST /_control/config`` ``{…partial config…}`` → merged (nested objects merge one level deep)
- ``GET  /_control/script`` → ``{"pending": [Scripted…]}``
- ``POST /_control/script`` ``{"responses": [Scripted…], "replace": false}`` → ``{"pending": n}``
- ``DELETE /_control/script`` → ``{"pending": 0}``
- ``GET  /_control/requests[?route=chat&since=<id>&wait_count=<n>&timeout=<s>&truncated=1]`` →
  ``{"requests": [RecordedRequest.to_json()…]}`` (``since``: ids greater than it; ``truncated``:
  only those whose prompt reached the model silently truncated)
- ``GET  /_control/requests/<id>[?wait=finished|disconnected&timeout=<s>]`` → the record;
  404 unknown id; 408 (with the record) if the wait timed out
- ``POST /_control/reset`` ``{"config": false}`` → forget requests and script (and config changes)
- ``POST /_control/count`` ``{"dialect": "openai"|"anthropic", "body": {…}}`` → the true count
- ``GET  /_control/stats`` → ``{"requests", "model_requests", "truncated": n, "loaded": {model:
  context}}`` (``truncated``: model requests silently truncated; ``loaded``: a local server's
  loaded models)
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.harness.fake_upstream.config import Scripted, from_json, merged, to_json
from tests.harness.fake_upstream.model import count_prompt

if TYPE_CHECKING:
    from tests.harness.fake_upstream.records import RecordedRequest
    from tests.harness.fake_upstream.server import Upstream


async def handle(up: Upstream, request: web.Request) -> web.Response:
    """Dispatch one control request; bad input answers 400 with the reason."""
    path = request.path.removeprefix("/_control/").strip("/")
    try:
        body = await _body(request)
        return await _dispatch(up, request, path, body)
    except (ValueError, TypeError, KeyError, FileNotFoundError) as exc:
        return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=400)


async def _dispatch(up: Upstream, request: web.Request, path: str, body: Any) -> web.Response:
    method = request.method
    if path == "health":
        return web.json_response({"ok": True, "base_url": up.base_url})
    if path == "config":
        if method == "POST":
            up.config = merged(up.config, body or {})
        return web.json_response(to_json(up.config))
    if path == "script":
        if method == "POST":
            items = [from_json(Scripted, item) for item in body.get("responses", [])]
            if body.get("replace"):
                up.clear_script()
            up.script(*items)
        elif method == "DELETE":
            up.clear_script()
        return web.json_response({"pending": [asdict(item) for item in up.pending_script]})
    if path == "requests":
        return web.json_response({"requests": await _requests(up, request)})
    if path.startswith("requests/"):
        return await _one_request(up, request, int(path.split("/", 1)[1]))
    if path == "reset" and method == "POST":
        up.reset(config=bool((body or {}).get("config")))
        return web.json_response({"ok": True})
    if path == "stats":
        return web.json_response(_stats(up))
    if path == "count" and method == "POST":
        count = count_prompt(body["body"], body.get("dialect", "openai"), up.config.model)
        return web.json_response(asdict(count))
    return web.json_response({"error": f"no control route {method} {path}"}, status=404)


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    return json.loads(raw) if raw.strip() else None


def _stats(up: Upstream) -> dict[str, Any]:
    return {
        "requests": len(up.requests),
        "model_requests": len(up.model_requests),
        "truncated": len(up.truncated_requests),
        "loaded": up.loaded,
    }


def _matching(
    up: Upstream, route: str | None, since: int, truncated: bool = False
) -> list[RecordedRequest]:
    return [
        r
        for r in up.requests
        if r.id > since and (route is None or r.route == route) and (r.truncated or not truncated)
    ]


async def _requests(up: Upstream, request: web.Request) -> list[dict[str, Any]]:
    route = request.query.get("route")
    since = int(request.query.get("since", 0))
    truncated = request.query.get("truncated", "") in ("1", "true")
    wait_count = int(request.query.get("wait_count", 0))
    timeout = float(request.query.get("timeout", 5))
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while len(_matching(up, route, since, truncated)) < wait_count and loop.time() < end:
        await asyncio.sleep(0.005)
    return [r.to_json() for r in _matching(up, route, since, truncated)]


async def _one_request(up: Upstream, request: web.Request, request_id: int) -> web.Response:
    record = next((r for r in up.requests if r.id == request_id), None)
    if record is None:
        return web.json_response({"error": f"no request {request_id}"}, status=404)
    wait = request.query.get("wait")
    event = {"finished": record.finished, "disconnected": record.disconnected}.get(wait or "")
    if wait and event is None:
        raise ValueError("wait must be 'finished' or 'disconnected'")
    status = 200
    if event is not None:
        try:
            await asyncio.wait_for(event.wait(), float(request.query.get("timeout", 5)))
        except asyncio.TimeoutError:
            status = 408
    return web.json_response(record.to_json(), status=status)
