"""A direct client of the bench upstream, for `stream_bench` to compare with: what a provider
that calls the API from the editor's own process does (VS Code's Custom Endpoint, the in-process
providers), here with httpx and httpx-sse and none of tokengauge's code: post the request, read
the SSE events, parse each one's JSON, stamp each text delta as it is parsed.
"""

from __future__ import annotations

import json
from typing import Any, Final

import httpx
from httpx_sse import aconnect_sse

from bench.benchlib import now
from bench.stream_script import StreamModel

MAX_TOKENS: Final = 1024
ANTHROPIC_VERSION: Final = "2023-06-01"


def request(model: StreamModel, base_url: str, api_key: str) -> tuple[str, dict[str, str], Any]:
    """The URL, headers and body of a streamed “hi” in the model's dialect."""
    messages = [{"role": "user", "content": "hi"}]
    if model.dialect == "anthropic":
        headers = {"x-api-key": api_key, "anthropic-version": ANTHROPIC_VERSION}
        body = {"model": model.model_id, "max_tokens": MAX_TOKENS, "messages": messages}
        return f"{base_url}/v1/messages", headers, {**body, "stream": True}
    body = {"model": model.model_id, "messages": messages, "stream": True}
    headers = {"Authorization": f"Bearer {api_key}"}
    return f"{base_url}/v1/chat/completions", headers, body


def delta_text(model: StreamModel, event: str, data: str) -> str | None:
    """The text an event adds, if any."""
    if data == "[DONE]":
        return None
    payload = json.loads(data)
    if model.dialect == "anthropic":
        delta = payload.get("delta") or {}
        return delta.get("text") if event == "content_block_delta" else None
    choices = payload.get("choices") or [{}]
    text = (choices[0].get("delta") or {}).get("content")
    return text if isinstance(text, str) else None


async def stream_chat(
    client: httpx.AsyncClient, model: StreamModel, base_url: str, api_key: str
) -> list[tuple[int, dict[str, Any]]]:
    """One streamed chat: (arrival ns, text part) for each text delta, in arrival order."""
    url, headers, body = request(model, base_url, api_key)
    parts: list[tuple[int, dict[str, Any]]] = []
    async with aconnect_sse(client, "POST", url, headers=headers, json=body) as source:
        source.response.raise_for_status()
        async for sse in source.aiter_sse():
            text = delta_text(model, sse.event, sse.data)
            if text:
                parts.append((now(), {"type": "text", "value": text}))
    return parts
