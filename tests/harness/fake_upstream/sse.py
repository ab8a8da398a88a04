"""The model's reply in each dialect's real wire format (event shapes copied from the fixtures).

OpenAI Chat Completions: ``data: {chunk}`` lines with ``choices[].delta``, a ``finish_reason``
chunk, a final ``choices: []`` usage chunk when ``stream_options.include_usage`` is set (and then
``"usage": null`` on every other chunk, as OpenAI does), and ``data: [DONE]``.
Anthropic Messages: ``event:``/``data:`` pairs message_start, content_block_start, ping,
content_block_delta, content_block_stop, message_delta, message_stop, with the real trailing-space
padding after the JSON.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.harness.fake_upstream.model import ReplyPlan, fragments, pieces_of
from tests.harness.fake_upstream.reasoning import reasoning_deltas, signature_for_call
from tests.harness.fake_upstream.thinking import signature_of

CREATED = 1747148049


@dataclass(frozen=True)
class Usage:
    """True usage of one response."""

    prompt_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cache_written: int = 0  # Anthropic's cache_creation_input_tokens


def _dump(obj: object) -> str:
    """Compact JSON, non-ASCII as is; a lone surrogate (echoed from a prompt) as its escape."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def openai_usage(usage: Usage) -> dict[str, Any]:
    """OpenAI's usage object (as in openai-chat-stream-usage-*.sse)."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.prompt_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def openai_events(
    plan: ReplyPlan,
    usage: Usage,
    body: Mapping[str, Any],
    model: str,
    serial: int,
    server: str | None = None,
) -> list[bytes]:
    """The SSE events of an OpenAI Chat Completions stream; `server`, a reasoning model's server
    (``reasoning.py``), says how its reasoning streams."""
    options = body.get("stream_options")
    include_usage = isinstance(options, Mapping) and bool(options.get("include_usage"))
    base: dict[str, Any] = {
        "id": f"chatcmpl-test{serial:06d}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_test000000",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        data = {**base, "choices": [choice]}
        if include_usage:
            data["usage"] = None
        return f"data: {_dump(data)}\n\n".encode()

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk(delta) for delta in reasoning_deltas(server, plan, body)]
    if plan.text:
        events += [chunk({"content": piece}) for piece in pieces_of(plan.text)]
    if plan.tool_name:
        call: dict[str, Any] = {"index": 0, "id": call_id(serial), "type": "function"}
        call["function"] = {"name": plan.tool_name, "arguments": ""}
        if server == "gemini":
            signature = signature_for_call(call_id(serial))
            call["extra_content"] = {"google": {"thought_signature": signature}}
        events.append(chunk({"tool_calls": [call]}))
        for fragment in fragments(plan.tool_arguments):
            events.append(
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})
            )
    finish = plan.finish_reason or ("tool_calls" if plan.tool_name else "stop")
    events.append(chunk({}, finish))
    if include_usage:
        final = {**base, "choices": [], "usage": openai_usage(usage)}
        events.append(f"data: {_dump(final)}\n\n".encode())
    events.append(b"data: [DONE]\n\n")
    return events


def call_id(serial: int) -> str:
    """The id of the tool call of the upstream's answer `serial`."""
    return f"call_test{serial:06d}"


def tool_use_id(serial: int) -> str:
    """The id of the `tool_use` block of the upstream's Anthropic answer `serial`."""
    return f"toolu_test{serial:06d}"


def anthropic_usage(usage: Usage) -> dict[str, int]:
    """Anthropic's split: input_tokens excludes what was read from the cache and written to it."""
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    written = min(usage.cache_written, usage.prompt_tokens - cached)
    return {
        "input_tokens": usage.prompt_tokens - cached - written,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": cached,
    }


def anthropic_events(
    plan: ReplyPlan, usage: Usage, model: str, serial: int, rng: random.Random
) -> list[bytes]:
    """The SSE events of an Anthropic Messages stream."""

    def event(name: str, data: dict[str, Any]) -> bytes:
        pad = " " * rng.randint(0, 15)
        return f"event: {name}\ndata: {_dump(data)}{pad}\n\n".encode()

    split = anthropic_usage(usage)
    message: dict[str, Any] = {
        "model": model,
        "id": f"msg_test{serial:06d}",
        "type": "message",
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "stop_details": None,
        "usage": {
            **split,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 1,
            "service_tier": "standard",
            "inference_geo": "not_available",
        },
    }
    events = [event("message_start", {"type": "message_start", "message": message})]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if plan.thinking:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces_of(plan.thinking)]
        deltas.append({"type": "signature_delta", "signature": signature_of(plan.thinking)})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if plan.text or not plan.tool_name:
        deltas = [{"type": "text_delta", "text": p} for p in pieces_of(plan.text)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    if plan.tool_name:
        start: dict[str, Any] = {
            "type": "tool_use",
            "id": tool_use_id(serial),
            "name": plan.tool_name,
        }
        start |= {"input": {}, "caller": {"type": "direct"}}
        args = fragments(plan.tool_arguments if plan.tool_arguments != "{}" else "")
        blocks.append((start, [{"type": "input_json_delta", "partial_json": a} for a in args]))
    for index, (start, deltas) in enumerate(blocks):
        events.append(event("content_block_start", _block_start(index, start)))
        if index == 0:
            events.append(b'event: ping\ndata: {"type": "ping"}\n\n')
        for delta in deltas:
            events.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = plan.finish_reason or ("tool_use" if plan.tool_name else "end_turn")
    stop_delta: dict[str, Any] = {"stop_reason": stop, "stop_sequence": None, "stop_details": None}
    final_usage = {**split, "output_tokens": usage.output_tokens}
    events.append(
        event("message_delta", {"type": "message_delta", "delta": stop_delta, "usage": final_usage})
    )
    events.append(event("message_stop", {"type": "message_stop"}))
    return events


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def openai_message(plan: ReplyPlan, usage: Usage, model: str, serial: int) -> dict[str, Any]:
    """A non-streaming ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": plan.text or None, "refusal": None}
    if plan.tool_name:
        function = {"name": plan.tool_name, "arguments": plan.tool_arguments}
        message["tool_calls"] = [{"id": call_id(serial), "type": "function", "function": function}]
    finish = plan.finish_reason or ("tool_calls" if plan.tool_name else "stop")
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    return {
        "id": f"chatcmpl-test{serial:06d}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [choice],
        "usage": openai_usage(usage),
    }


def anthropic_message(plan: ReplyPlan, usage: Usage, model: str, serial: int) -> dict[str, Any]:
    """A non-streaming Anthropic ``message`` object."""
    content: list[dict[str, Any]] = []
    if plan.thinking:
        signature = signature_of(plan.thinking)
        content.append({"type": "thinking", "thinking": plan.thinking, "signature": signature})
    if plan.text or not plan.tool_name:
        content.append({"type": "text", "text": plan.text})
    if plan.tool_name:
        block = {"type": "tool_use", "id": tool_use_id(serial), "name": plan.tool_name}
        content.append({**block, "input": json.loads(plan.tool_arguments or "{}")})
    stop = plan.finish_reason or ("tool_use" if plan.tool_name else "end_turn")
    return {
        "model": model,
        "id": f"msg_test{serial:06d}",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {**anthropic_usage(usage), "output_tokens": usage.output_tokens},
    }
