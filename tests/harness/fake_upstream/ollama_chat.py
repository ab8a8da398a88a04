"""Ollama's native chat, ``POST /api/chat``: the model's answer as Ollama's NDJSON.

Streaming (the default, ``"stream": true``): one JSON object a line, ``{"model", "created_at",
"message": {"role": "assistant", "content": …}, "done": false}`` per piece (``thinking`` pieces
and ``tool_calls`` in the message too), then the final ``{"done": true, "done_reason": "stop",
"total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count",
"eval_duration"}`` with an empty message. ``"stream": false``: one object, the whole message and
the counts. ``prompt_eval_count`` is what the model evaluated (after a silent truncation). A
scripted answer's ``reply`` and ``fault`` apply here (fixtures and bodies are other dialects').
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.harness.fake_upstream.faults import send_stream
from tests.harness.fake_upstream.loading import serve
from tests.harness.fake_upstream.model import ReplyPlan, count_prompt, pieces_of, plan_reply
from tests.harness.fake_upstream.records import RecordedRequest
from tests.harness.fake_upstream.sse import call_id

if TYPE_CHECKING:
    from tests.harness.fake_upstream.server import Upstream

NDJSON = "application/x-ndjson"
CREATED_AT = "2025-08-05T12:00:00.000000000Z"
NS_PER_TOKEN = 1_000_000  # durations: a millisecond a token


async def answer(up: Upstream, request: web.Request, record: RecordedRequest) -> web.StreamResponse:
    """Answer one ``/api/chat`` request (errors in Ollama's ``{"error": …}`` shape)."""
    body = record.json
    if not isinstance(body, dict) or not body.get("model"):
        return _error(400, "model is required")
    model = str(body["model"])
    if up.config.model.listed_only and model not in {m.id for m in up.config.models}:
        return _error(404, f'model "{model}" not found, try pulling it first')
    item = up.take_script("ollama_chat")
    record.scripted = item is not None
    behavior = up.config.model
    count = count_prompt(body, "openai", behavior)
    record.prompt_tokens = count.total
    record.prompt_tools, record.prompt_messages = count.tools, count.message_tokens()
    evaluated = serve(up.config, up.loads, body, record)
    if not body.get("messages"):  # an empty chat loads the model, as Ollama documents
        loaded = {"role": "assistant", "content": ""}
        return web.json_response(
            {
                "model": model,
                "created_at": CREATED_AT,
                "message": loaded,
                "done_reason": "load",
                "done": True,
            }
        )
    reply = (item.reply if item else None) or up.config.reply
    plan = plan_reply(body, "openai", reply, behavior.encoding)
    record.output_tokens = plan.output_tokens
    final = _final(model, evaluated, plan.output_tokens)
    if body.get("stream") is False:
        return web.json_response({**final, "message": _message(plan, record.answer)})
    messages = _messages(plan, record.answer)
    lines = [_line(_chunk(model, message)) for message in messages] + [_line(final)]
    return await send_stream(
        request,
        record,
        status=200,
        headers={"Content-Type": NDJSON},
        events=lines,
        chunking=up.config.chunking,
        rng=random.Random(f"{up.config.chunking.seed}:{record.id}"),
        fault=item.fault if item else None,
    )


def _messages(plan: ReplyPlan, serial: int) -> list[dict[str, Any]]:
    """The streamed messages: thinking pieces, content pieces, then the tool call."""
    messages = [_assistant(thinking=p) for p in pieces_of(plan.thinking)] if plan.thinking else []
    messages += [_assistant(content=p) for p in pieces_of(plan.text)] if plan.text else []
    if plan.tool_name:
        messages.append({**_assistant(), "tool_calls": _tool_calls(plan, serial)})
    return messages


def _message(plan: ReplyPlan, serial: int) -> dict[str, Any]:
    """The whole message of a non-streamed answer."""
    message = _assistant(content=plan.text, thinking=plan.thinking or None)
    if plan.tool_name:
        message["tool_calls"] = _tool_calls(plan, serial)
    return message


def _assistant(content: str = "", thinking: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    return message


def _tool_calls(plan: ReplyPlan, serial: int) -> list[dict[str, Any]]:
    arguments = json.loads(plan.tool_arguments or "{}")
    function = {"index": 0, "name": plan.tool_name, "arguments": arguments}
    return [{"id": call_id(serial), "function": function}]


def _chunk(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "created_at": CREATED_AT, "message": message, "done": False}


def _final(model: str, evaluated: int, output: int) -> dict[str, Any]:
    prompt_ns, eval_ns = evaluated * NS_PER_TOKEN // 10, output * NS_PER_TOKEN
    return {
        **_chunk(model, _assistant()),
        "done": True,
        "done_reason": "stop",
        "total_duration": prompt_ns + eval_ns + 1_000_000,
        "load_duration": 1_000_000,
        "prompt_eval_count": evaluated,
        "prompt_eval_duration": prompt_ns,
        "eval_count": output,
        "eval_duration": eval_ns,
    }


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)
