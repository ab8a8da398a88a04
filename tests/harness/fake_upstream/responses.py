"""The OpenAI Responses API (`POST …/responses`) as the test upstream speaks it.

A request's `input` items and tools are read as the Chat Completions request they amount to (so
the model counts, plans and answers them as it does every request), after the checks the real API
makes of them: a `function_call_output` needs the `function_call` of its `call_id` before it, and
the input must be a list of items. The answer streams as the real captures do
(`response.created`, output items, text and function-call argument deltas, `response.completed`
with usage).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.harness.fake_upstream.model import ReplyPlan, fragments, pieces_of
from tests.harness.fake_upstream.sse import Usage

NO_CALL = "No tool call found for function call output with call_id {call_id}."


def input_error(body: Mapping[str, Any]) -> str | None:
    """Why the API would refuse this body's input, or None."""
    items = body.get("input")
    if not isinstance(items, list):
        return "Invalid type for 'input': expected a string or an array of input items."
    called: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            return "Invalid input item: expected an object."
        if item.get("type") == "function_call":
            called.add(str(item.get("call_id")))
        if item.get("type") == "function_call_output" and item.get("call_id") not in called:
            return NO_CALL.format(call_id=item.get("call_id"))
    return None


def as_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions body the Responses body amounts to."""
    messages: list[dict[str, Any]] = []
    for item in body.get("input") or []:
        kind = item.get("type")
        if kind == "function_call":
            call = {"id": item.get("call_id"), "type": "function"}
            call["function"] = {"name": item.get("name"), "arguments": item.get("arguments")}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": item.get("output")}
            )
        elif "role" in item:
            content = item.get("content")
            texts = [p.get("text", "") for p in content] if isinstance(content, list) else [content]
            messages.append({"role": item["role"], "content": "".join(map(str, texts))})
    tools = [
        {
            "type": "function",
            "function": {k: t.get(k) for k in ("name", "description", "parameters")},
        }
        for t in body.get("tools") or []
        if isinstance(t, Mapping)
    ]
    return {"model": body.get("model"), "messages": messages, "tools": tools, "stream": True}


def responses_events(plan: ReplyPlan, usage: Usage, model: str, serial: int) -> list[bytes]:
    """The SSE events of a Responses stream (as in openai-responses-stream-*.sse)."""
    response_id = f"resp_test{serial:06d}"
    sequence = iter(range(10_000))

    def event(name: str, data: dict[str, Any]) -> bytes:
        data = {"type": name, **data, "sequence_number": next(sequence)}
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    response: dict[str, Any] = {"id": response_id, "object": "response", "model": model}
    events = [event("response.created", {"response": {**response, "status": "in_progress"}})]
    output: list[dict[str, Any]] = []
    if plan.text or not plan.tool_name:
        item_id = f"msg_test{serial:06d}"
        message = {"id": item_id, "type": "message", "role": "assistant", "content": []}
        events.append(event("response.output_item.added", {"output_index": 0, "item": message}))
        for piece in pieces_of(plan.text):
            delta = {"item_id": item_id, "output_index": 0, "content_index": 0, "delta": piece}
            events.append(event("response.output_text.delta", delta))
        done = {**message, "content": [{"type": "output_text", "text": plan.text}]}
        events.append(event("response.output_item.done", {"output_index": 0, "item": done}))
        output.append(done)
    if plan.tool_name:
        index = len(output)
        call = {"id": f"fc_test{serial:06d}", "type": "function_call", "status": "in_progress"}
        call |= {"call_id": f"call_test{serial:06d}", "name": plan.tool_name, "arguments": ""}
        events.append(event("response.output_item.added", {"output_index": index, "item": call}))
        arguments = plan.tool_arguments or "{}"
        for piece in fragments(arguments):
            delta = {"item_id": call["id"], "output_index": index, "delta": piece}
            events.append(event("response.function_call_arguments.delta", delta))
        done = {**call, "status": "completed", "arguments": arguments}
        events.append(event("response.output_item.done", {"output_index": index, "item": done}))
        output.append(done)
    totals = {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.prompt_tokens + usage.output_tokens,
    }
    finished = {**response, "status": "completed", "output": output, "usage": totals}
    events.append(event("response.completed", {"response": finished}))
    return events
