"""The OpenAI Responses API (`POST …/responses`) as the test upstream speaks it.

A request's `input` items and tools are read as the Chat Completions request they amount to (so
the model counts, plans and answers them as it does every request), after the checks the real API
makes of them: a `function_call_output` needs the `function_call` of its `call_id` before it, the
input must be a list of items, and a `reasoning` item must carry the encrypted content this
upstream streamed for it (nothing is stored: `store: false`). The answer streams as the real
captures do (`response.created`, output items, text and function-call argument deltas,
`response.completed` with usage); a reply with thinking, asked for with a `reasoning` effort and
`include: ["reasoning.encrypted_content"]`, starts with a reasoning item (its summary streamed,
its encrypted content bound to its id here, opaque at OpenAI). A reasoning item sent back counts
as the reasoning it holds when it is of the current turn (after the last user message), as
nothing when older: the API drops earlier turns' reasoning. A request too large for the window is
answered as the API streams it: `response.created`, then an `error` event with no token counts.

Stricter than the API in one way, so that a client dropping reasoning cannot pass: a function call
this upstream made after a reasoning item needs that item before it when it is sent back. (The
API asks for it only when the call's own item id is sent; a client that sends none loses the
model's reasoning without an error.)
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from tests.harness.fake_upstream.model import ReplyPlan, fragments, pieces_of
from tests.harness.fake_upstream.sse import Usage, call_id
from tests.harness.fake_upstream.wire import load

NO_CALL = "No tool call found for function call output with call_id {call_id}."
NOT_VERIFIED = (
    "The encrypted content for item {item_id} could not be verified. Reason: Encrypted content "
    "could not be decrypted or parsed."
)
NOT_STORED = (
    "Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)
NO_REASONING = (
    "Item '{call_item}' of type 'function_call' was provided without its required 'reasoning' "
    "item: '{item_id}'."
)


def encrypted_of(item_id: str, thinking: str) -> str:
    """The encrypted content this upstream gives a reasoning item: bound to its id, and about as
    long for its reasoning as the API's (the captures: 8.7 and 10.1 characters per reasoning
    token; here the text's bytes twice over, in base64: about 10)."""
    text = thinking.encode()
    sealed = _seal(item_id) + text + bytes(len(text))
    return "gAAAAB" + base64.urlsafe_b64encode(sealed).decode()


def reasoning_of(item_id: str, encrypted: object) -> str | None:
    """The reasoning an encrypted content holds, None if it is not this item's."""
    if not isinstance(encrypted, str) or not encrypted.startswith("gAAAAB"):
        return None
    try:
        sealed = base64.urlsafe_b64decode(encrypted.removeprefix("gAAAAB").encode())
        body = sealed[32:]
        text, filler = body[: len(body) // 2], body[len(body) // 2 :]
        if sealed[:32] != _seal(item_id) or filler != bytes(len(filler)):
            return None
        return text.decode()
    except (ValueError, UnicodeDecodeError):
        return None


def _seal(item_id: str) -> bytes:
    return hashlib.sha256(f"reasoning:{item_id}".encode()).digest()


def input_error(body: Mapping[str, Any], reasoning_by_call: Mapping[str, str]) -> str | None:
    """Why the API would refuse this body's input, or None (`reasoning_by_call`: the reasoning
    item's id of each function call made after one)."""
    items = body.get("input")
    if not isinstance(items, list):
        return "Invalid type for 'input': expected a string or an array of input items."
    called: set[str] = set()
    reasoned: set[str] = set()
    for item in items:
        if not isinstance(item, Mapping):
            return "Invalid input item: expected an object."
        kind, call_id = item.get("type"), str(item.get("call_id"))
        if kind == "reasoning":
            refused = _reasoning_error(item)
            if refused is not None:
                return refused
            reasoned.add(str(item.get("id")))
        if kind == "function_call":
            needed = reasoning_by_call.get(call_id)
            if needed is not None and needed not in reasoned:
                return NO_REASONING.format(call_item=_call_item(needed), item_id=needed)
            called.add(call_id)
        if kind == "function_call_output" and call_id not in called:
            return NO_CALL.format(call_id=item.get("call_id"))
    return None


def _reasoning_error(item: Mapping[str, Any]) -> str | None:
    item_id, encrypted = str(item.get("id")), item.get("encrypted_content")
    if encrypted is None:
        return NOT_STORED.format(item_id=item_id)
    if reasoning_of(item_id, encrypted) is None:
        return NOT_VERIFIED.format(item_id=item_id)
    return None


def _call_item(reasoning_id: str) -> str:
    return "fc_" + reasoning_id.removeprefix("rs_")


def wants_reasoning(body: Mapping[str, Any]) -> bool:
    """Whether a Responses body asks for reasoning and its encrypted content."""
    include = body.get("include")
    return isinstance(body.get("reasoning"), Mapping) and (
        isinstance(include, list) and "reasoning.encrypted_content" in include
    )


def as_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """The Chat Completions body the Responses body amounts to."""
    messages: list[dict[str, Any]] = []
    for item in body.get("input") or []:
        kind = item.get("type")
        if kind == "reasoning":  # counted as the thinking it holds, in its turn only
            thinking = reasoning_of(str(item.get("id")), item.get("encrypted_content")) or ""
            content = [{"type": "thinking", "thinking": thinking}]
            messages.append({"role": "assistant", "content": content})
        elif kind == "function_call":
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


def responses_events(
    plan: ReplyPlan, usage: Usage, model: str, serial: int, *, reasoning: bool
) -> list[bytes]:
    """The SSE events of a Responses stream (as in openai-responses-stream-*.sse); `reasoning`:
    the plan's thinking goes out as a reasoning item first."""
    response_id = f"resp_test{serial:06d}"
    sequence = iter(range(10_000))

    def event(name: str, data: dict[str, Any]) -> bytes:
        data = {"type": name, **data, "sequence_number": next(sequence)}
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    response: dict[str, Any] = {"id": response_id, "object": "response", "model": model}
    events = [event("response.created", {"response": {**response, "status": "in_progress"}})]
    output: list[dict[str, Any]] = []
    if reasoning and plan.thinking:
        item_id = f"rs_test{serial:06d}"
        item = {"id": item_id, "type": "reasoning", "summary": []}
        events.append(event("response.output_item.added", {"output_index": 0, "item": item}))
        for piece in pieces_of(plan.thinking):
            delta = {"item_id": item_id, "output_index": 0, "summary_index": 0, "delta": piece}
            events.append(event("response.reasoning_summary_text.delta", delta))
        summary = [{"type": "summary_text", "text": plan.thinking}]
        done = {
            **item,
            "summary": summary,
            "encrypted_content": encrypted_of(item_id, plan.thinking),
        }
        events.append(event("response.output_item.done", {"output_index": 0, "item": done}))
        output.append(done)
    if plan.text or not plan.tool_name:
        index, item_id = len(output), f"msg_test{serial:06d}"
        message = {"id": item_id, "type": "message", "role": "assistant", "content": []}
        events.append(event("response.output_item.added", {"output_index": index, "item": message}))
        for piece in pieces_of(plan.text):
            delta = {"item_id": item_id, "output_index": index, "content_index": 0, "delta": piece}
            events.append(event("response.output_text.delta", delta))
        done = {**message, "content": [{"type": "output_text", "text": plan.text}]}
        events.append(event("response.output_item.done", {"output_index": index, "item": done}))
        output.append(done)
    if plan.tool_name:
        index = len(output)
        call = {"id": f"fc_test{serial:06d}", "type": "function_call", "status": "in_progress"}
        call |= {"call_id": call_id(serial), "name": plan.tool_name, "arguments": ""}
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


def overflow_events(model: str, serial: int) -> list[bytes]:
    """A streamed request too large for the window, as the API answers it: `response.created`,
    then the `error` event of `error-openai-responses-context-length-exceeded-stream-event.json`
    (no token counts in it)."""
    created = {
        "type": "response.created",
        "sequence_number": 0,
        "response": {"id": f"resp_test{serial:06d}", "object": "response", "model": model},
    }
    error = load("error-openai-responses-context-length-exceeded-stream-event.json").data.strip()
    return [
        f"event: response.created\ndata: {json.dumps(created)}\n\n".encode(),
        b"event: error\ndata: " + error + b"\n\n",
    ]
