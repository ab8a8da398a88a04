"""Answering recorded requests: fixture replay, the model routes, listings, 404."""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.harness.fake_upstream import ollama_chat
from tests.harness.fake_upstream.config import ModelBehavior, Reply, Scripted
from tests.harness.fake_upstream.faults import apply_event_faults, error_for_status, send_stream
from tests.harness.fake_upstream.listings import key_record, listing
from tests.harness.fake_upstream.loading import serve
from tests.harness.fake_upstream.local_servers import local_answer
from tests.harness.fake_upstream.model import (
    count_prompt,
    invalid_url_body,
    limit_error,
    no_such_model_body,
    openrouter_unauthorized_body,
    plan_reply,
    requested_max_tokens,
    unauthorized_body,
)
from tests.harness.fake_upstream.prompt_cache import CacheUse, breakpoint_error
from tests.harness.fake_upstream.reasoning import issue, refusal
from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.responses import (
    as_chat,
    input_error,
    overflow_events,
    responses_events,
    wants_reasoning,
)
from tests.harness.fake_upstream.sse import (
    Usage,
    anthropic_events,
    anthropic_message,
    call_id,
    openai_events,
    openai_message,
)
from tests.harness.fake_upstream.thinking import thinking_error
from tests.harness.fake_upstream.wire import load, split_events

if TYPE_CHECKING:
    from tests.harness.fake_upstream.server import Upstream

SSE = "text/event-stream; charset=utf-8"


async def dispatch(
    up: Upstream, request: web.Request, record: RecordedRequest
) -> web.StreamResponse:
    parts = request.path.split("/")
    if len(parts) > 2 and parts[1] == "replay":
        status = request.query.get("status")
        item = Scripted(fixture=parts[2], status=int(status) if status else None)
        return await send_fixed(up, request, record, item, None)
    if _outside_root(up, record):
        return _json(404, invalid_url_body(request.method, request.path))
    if record.route == "ollama_chat" and up.config.listing == "ollama":
        return await ollama_chat.answer(up, request, record)
    if record.route in ("chat", "messages", "responses"):
        return await _model(
            up, request, record, "anthropic" if record.route == "messages" else "openai"
        )
    if record.route in ("models", "key") and up.config.listing_answer is not None:
        return await send_fixed(up, request, record, up.config.listing_answer, "listing")
    body = record.json if isinstance(record.json, dict) else {}
    if record.route == "count_tokens":
        count = count_prompt(body, "anthropic", up.config.model)
        return web.json_response({"input_tokens": count.total})
    if record.route in ("models", "key"):
        refused = _listing_unauthorized(up, request, record)
        if refused is not None:
            return refused
    if record.route == "key" and up.config.listing == "openrouter":
        return web.json_response(key_record(_api_key(request, "openai") or ""))
    answer = local_answer(up.config, up.loads, request.method, request.path, body)
    answer = answer or listing(
        up.config.listing, request.method, request.path, body, up.config.models
    )
    if answer is not None:
        return web.json_response(answer[1], status=answer[0], headers=up.config.listing_headers)
    return _json(404, invalid_url_body(request.method, request.path))


async def send_fixed(
    up: Upstream, request: web.Request, record: RecordedRequest, item: Scripted, dialect: str | None
) -> web.StreamResponse:
    """Answer with a fixture's (or a literal body's) bytes; SSE and faulted bodies stream."""
    record.route = "replay" if dialect is None else record.route
    if item.fixture:
        try:
            fixture = load(item.fixture)
        except FileNotFoundError as exc:
            return _json(404, {"error": {"message": str(exc), "type": "not_found"}})
        data, status, ctype = fixture.data, fixture.status, fixture.content_type
        headers = dict(fixture.headers)
    else:
        data, status, headers = (item.body or "").encode(), 200, {}
        sse = data.lstrip().startswith((b"data:", b"event:"))
        ctype = SSE if sse else "application/json"
    status = item.status or status
    headers = {**headers, **item.headers, "Content-Type": item.content_type or ctype}
    if not headers["Content-Type"].startswith("text/event-stream") and item.fault is None:
        record.status = status
        return web.Response(body=data, status=status, headers=headers)
    if dialect is None:
        dialect = "anthropic" if b"event:" in data else "openai"
    events = apply_event_faults(split_events(data), item.fault, dialect)
    return await send_stream(
        request,
        record,
        status=status,
        headers=headers,
        events=events,
        chunking=up.config.chunking,
        rng=random.Random(f"{up.config.chunking.seed}:{record.id}"),
        fault=item.fault,
    )


async def _model(
    up: Upstream, request: web.Request, record: RecordedRequest, dialect: str
) -> web.StreamResponse:
    item = up.take_script(record.route)
    record.scripted = item is not None
    if item is not None and (item.fixture or item.body is not None):
        return await send_fixed(up, request, record, item, dialect)
    item = item or Scripted()
    body = record.json
    behavior = up.config.model
    rid = f"req_test{record.id:020d}"
    if not isinstance(body, dict):
        return _json(400, _invalid(dialect, "request body is not a JSON object", rid))
    if behavior.require_api_key is not None:
        presented = _api_key(request, dialect)
        if presented != behavior.require_api_key:
            return _json(401, unauthorized_body(dialect, presented or ""))
    if behavior.listed_only and body.get("model") not in {m.id for m in up.config.models}:
        return _json(404, no_such_model_body(dialect, str(body.get("model")), rid))
    refused = (thinking_error(body) or breakpoint_error(body)) if dialect == "anthropic" else None
    reasoning = record.route == "responses" and wants_reasoning(body)
    if record.route == "responses":
        refused = input_error(body, up.reasoning_by_call)
        body = as_chat(body)  # counted, planned and answered as the request it amounts to
    if refused is not None:
        return _json(400, _invalid(dialect, refused, rid))
    server = behavior.reasoning if dialect == "openai" else None
    if server is not None:
        refused_reasoning = refusal(server, body, up.reasoning_issued)
        if refused_reasoning is not None:
            record.refused = json.dumps(refused_reasoning[1])
            return _json(*refused_reasoning)
    count = count_prompt(body, dialect, behavior)
    record.prompt_tokens = count.total
    record.prompt_tools, record.prompt_messages = count.tools, count.message_tokens()
    record.prompt_encoded, record.prompt_text_ratio = count.encoded(), count.text_ratio()
    evaluated = serve(up.config, up.loads, body, record)  # a local server's load and truncation
    model = behavior.response_model or str(body.get("model") or "test-model")
    rng = random.Random(f"{up.config.chunking.seed}:{record.id}")

    async def stream(
        events: list[bytes], headers: dict[str, str], status: int
    ) -> web.StreamResponse:
        return await send_stream(
            request,
            record,
            status=status,
            headers={**headers, "Content-Type": SSE},
            events=events,
            chunking=up.config.chunking,
            rng=rng,
            fault=item.fault,
        )

    error = limit_error(count.total, requested_max_tokens(body), behavior, dialect, model, rid)
    if error is not None and record.route == "responses":  # the API streams its overflow
        return await stream(overflow_events(model, record.answer), _ok_headers(dialect, rid), 200)
    if error is not None:
        return _json(400, error)
    if item.status and item.status >= 400:
        return await send_fixed(up, request, record, error_for_status(item, dialect), dialect)
    plan = plan_reply(body, dialect, item.reply or up.config.reply, behavior.encoding)
    cache = CacheUse(behavior.cached_prompt_tokens)
    if behavior.prompt_cache:
        cache = up.prompt_cache.use(body, dialect, behavior.encoding, evaluated)
        record.cached_tokens, record.cache_written = cache.read, cache.written
    usage = Usage(evaluated, plan.output_tokens, cache.read, plan.reasoning_tokens, cache.written)
    record.output_tokens = plan.output_tokens
    headers = {**_ok_headers(dialect, rid), **item.headers}
    if not body.get("stream"):
        build = openai_message if dialect == "openai" else anthropic_message
        return web.json_response(build(plan, usage, model, record.answer), headers=headers)
    if record.route == "responses":
        events = responses_events(plan, usage, model, record.answer, reasoning=reasoning)
        if reasoning and plan.thinking and plan.tool_name:
            up.reasoning_by_call[call_id(record.answer)] = f"rs_test{record.answer:06d}"
    elif dialect == "openai":
        events = openai_events(plan, usage, body, model, record.answer, server)
        if plan.tool_name and server is not None:
            issue(up.reasoning_issued, server, plan, call_id(record.answer), body)
    else:
        events = anthropic_events(plan, usage, model, record.answer, rng)
    events = apply_event_faults(events, item.fault, dialect)
    return await stream(events, headers, item.status or 200)


def rendered(dialect: str, reply: Reply, prompt_tokens: int, model: str) -> Scripted:
    """The model's streamed answer rendered ahead, as a scripted body: ``reply`` in ``dialect``
    (its usage reports ``prompt_tokens`` in), sent whatever the request, with no true count and no
    window check. Answering then costs the upstream nothing but its writes (benchmarks)."""
    plan = plan_reply({}, dialect, reply, ModelBehavior().encoding)
    usage = Usage(prompt_tokens, plan.output_tokens)
    if dialect == "openai":
        request = {"stream_options": {"include_usage": True}}
        events = openai_events(plan, usage, request, model, 0)
    else:
        events = anthropic_events(plan, usage, model, 0, random.Random(0))
    route = "chat" if dialect == "openai" else "messages"
    return Scripted(route=route, body=b"".join(events).decode())


def route_of(method: str, path: str) -> str:
    if path.startswith("/replay/"):
        return "replay"
    if method == "POST" and path.endswith("/chat/completions"):
        return "chat"
    if method == "POST" and path.endswith("/messages/count_tokens"):
        return "count_tokens"
    if method == "POST" and path.endswith("/messages"):
        return "messages"
    if method == "POST" and path.endswith("/responses"):
        return "responses"
    if method == "POST" and path == "/api/chat":
        return "ollama_chat"
    if method == "POST" and path == "/tokenize":
        return "tokenize"
    if path.endswith(("/models", "/model/info", "/api/tags", "/api/show", "/api/ps")):
        return "models"
    if path.startswith("/api/v0/models/"):
        return "models"
    if method == "GET" and path.endswith("/key"):
        return "key"
    return "other"


def _outside_root(up: Upstream, record: RecordedRequest) -> bool:
    """A request for the API outside ``api_root`` (where a real API has nothing)."""
    root = up.config.api_root
    routes = ("chat", "messages", "responses", "count_tokens", "models", "key")
    if root is None or record.route not in routes:
        return False
    if record.route == "models" and not record.path.endswith("/models"):
        return False  # Ollama's /api/* and LiteLLM's /model/info live at the server's root
    if up.config.listing == "lmstudio" and record.path.startswith("/api/"):
        return False  # so do LM Studio's own /api/v0 and /api/v1
    return not record.path.startswith(root.rstrip("/") + "/")


def _listing_unauthorized(
    up: Upstream, request: web.Request, record: RecordedRequest
) -> web.Response | None:
    """The 401 of a listing or key request without the key ``require_api_key`` asks for; an
    OpenRouter key record always needs a key, its model list never does."""
    shape = up.config.listing
    dialect = "anthropic" if shape == "anthropic" else "openai"
    presented = _api_key(request, dialect) or ""
    expected = up.config.model.require_api_key
    if shape == "openrouter":
        if record.route == "models" or (presented and expected in (None, presented)):
            return None
        return _json(401, openrouter_unauthorized_body(presented))
    if expected is None or presented == expected:
        return None
    return _json(401, unauthorized_body(dialect, presented))


def _json(status: int, body: Any) -> web.Response:
    """A compact JSON error body, as the providers send them."""
    return web.json_response(body, status=status, dumps=_compact)


def _compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _invalid(dialect: str, message: str, rid: str) -> dict[str, Any]:
    if dialect == "anthropic":
        error = {"type": "invalid_request_error", "message": message}
        return {"type": "error", "error": error, "request_id": rid}
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }


def _api_key(request: web.Request, dialect: str) -> str | None:
    if dialect == "anthropic" and "x-api-key" in request.headers:
        return request.headers["x-api-key"]
    auth = request.headers.get("Authorization", "")
    return auth[7:] if auth.startswith("Bearer ") else None


def _ok_headers(dialect: str, rid: str) -> dict[str, str]:
    """The real 200 response headers of the dialect (rate-limit headers etc.), fresh request id."""
    name = (
        "headers-anthropic-200-ratelimit"
        if dialect == "anthropic"
        else "headers-openai-chat-200-ratelimit"
    )
    headers: dict[str, str] = json.loads(load(name + ".json").data)
    headers.pop("content-type", None)
    headers["request-id" if dialect == "anthropic" else "x-request-id"] = rid
    return headers
