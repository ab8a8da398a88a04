"""The server's own count of a whole request, where a local server tokenizes with its template.

- vLLM: `POST /tokenize` takes the chat `messages` and `tools` as a request carries them, applies
  the chat template and answers `{count, max_model_len, tokens}`;
- llama.cpp: `POST /apply-template` turns the messages (and tools, where its template takes them)
  into the prompt, and `POST /tokenize` counts it (`add_special` and `parse_special`, as the chat
  route tokenizes it).

Asked once before a model's first request and now and then after (`Counts.anchor_due`), never per
`provideTokenCount`: `count_request` answers None, logged, whenever the server cannot say.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Final

import httpx

from tokengauge.messages import InvalidInput
from tokengauge.models.catalog import ModelSpec
from tokengauge.upstream.errors import UpstreamError
from tokengauge.upstream.http import get_json_retried, join_url, server_root
from tokengauge.upstream.served import served_kind

log = logging.getLogger(__name__)

COUNT_SECONDS: Final = 5.0
"""Most time the count may take (it delays the model's first request)."""


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


async def _vllm(
    client: httpx.AsyncClient, root: str, model: ModelSpec, body: Mapping[str, Any], headers: Any
) -> int | None:
    request = {"model": model.id, "messages": body["messages"], "add_generation_prompt": True}
    if body.get("tools"):
        request["tools"] = body["tools"]
    answer = await get_json_retried(
        client, "POST", join_url(root, "tokenize"), headers=headers, body=request
    )
    data = answer.data
    return _whole(data.get("count")) if isinstance(data, Mapping) else None


async def _llamacpp(
    client: httpx.AsyncClient, root: str, body: Mapping[str, Any], headers: Any
) -> int | None:
    request: dict[str, Any] = {"messages": body["messages"]}
    if body.get("tools"):
        request["tools"] = body["tools"]
    templated = await get_json_retried(
        client, "POST", join_url(root, "apply-template"), headers=headers, body=request
    )
    prompt = templated.data.get("prompt") if isinstance(templated.data, Mapping) else None
    if not isinstance(prompt, str):
        return None
    tokenized = await get_json_retried(
        client,
        "POST",
        join_url(root, "tokenize"),
        headers=headers,
        body={"content": prompt, "add_special": True, "parse_special": True},
    )
    tokens = tokenized.data.get("tokens") if isinstance(tokenized.data, Mapping) else None
    return len(tokens) if isinstance(tokens, list) and tokens else None


async def count_request(
    client: httpx.AsyncClient,
    model: ModelSpec,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
) -> int | None:
    """The model's server's count of the OpenAI-style request `body` (its `messages` and
    `tools`); None where the server does not count or could not."""
    kind = served_kind(model.provider)
    if kind not in ("vllm", "llamacpp") or not isinstance(body.get("messages"), list):
        return None
    root = server_root(model.provider.base_url)
    try:
        if kind == "vllm":
            counting = _vllm(client, root, model, body, headers)
        else:
            counting = _llamacpp(client, root, body, headers)
        return await asyncio.wait_for(counting, COUNT_SECONDS)
    except (UpstreamError, InvalidInput) as exc:
        log.info("%s: its server did not count the request: %s", model.id, exc)
    except asyncio.TimeoutError:
        log.info("%s: its server did not count the request within %g s", model.id, COUNT_SECONDS)
    return None
