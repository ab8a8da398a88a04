"""Model listings in each provider's shape (which one a server speaks is configuration).

- ``openai``: ``GET …/models`` → ``{"object": "list", "data": [{id, object, created, owned_by}]}``
- ``anthropic``: ``GET …/models`` → ``{"data": [{type, id, display_name, created_at}], has_more…}``
- ``openrouter``: ``GET …/models`` (``/api/v1/models``) → entries with ``context_length`` and
  ``top_provider.{context_length, max_completion_tokens}`` (models-openrouter-v1-models-fragment)
- ``vercel``: ``GET …/models`` → OpenAI list whose entries add ``context_window``, ``max_tokens``
- ``ollama``: ``GET /api/tags``, ``POST /api/show`` (models-ollama-api-show-gpt-oss shape,
  ``model_info["<arch>.context_length"]``, ``parameters`` with a Modelfile ``num_ctx`` if
  ``ListedModel.num_ctx``); ``GET …/models`` answers in the OpenAI shape
- ``litellm``: ``GET …/model/info`` → ``{"data": [{model_name, model_info: {max_input_tokens,
  max_output_tokens, …}}]}``; ``GET …/models`` answers in the OpenAI shape
- ``lmstudio``: ``GET …/models`` in the OpenAI shape; ``GET /api/v0/models`` and
  ``GET /api/v1/models`` (LM Studio's own, with the loaded context) in ``local_servers.py``
- ``vllm``: ``GET …/models`` with ``max_model_len``, and ``POST /tokenize``, in
  ``local_servers.py``; Ollama's ``GET /api/ps`` (the loaded models) is there too

OpenRouter also answers ``GET …/key`` (the key's own record, ``key_record``): its model list is
public, the key record is the cheap request that needs a key.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from tests.harness.fake_upstream.config import ListedModel
from tests.harness.fake_upstream.wire import load

CREATED = 1686935002
Answer = tuple[int, Any]


def listing(
    shape: str, method: str, path: str, body: Any, models: list[ListedModel]
) -> Answer | None:
    """(status, JSON) for a listing request, or None if this path is not a listing here."""
    if method == "GET" and path.endswith("/models"):
        builder = _MODELS.get(shape, _openai)
        return 200, builder(models)
    if shape == "ollama" and path == "/api/tags" and method == "GET":
        return 200, {"models": [ollama_tag(m) for m in models]}
    if shape == "ollama" and path == "/api/show" and method == "POST":
        return _ollama_show(body, models)
    if shape == "litellm" and path.endswith("/model/info") and method == "GET":
        return 200, {"data": [_litellm(m) for m in models]}
    return None


def _openai(models: list[ListedModel]) -> dict[str, Any]:
    data = [{"id": m.id, "object": "model", "created": CREATED, "owned_by": "test"} for m in models]
    return {"object": "list", "data": data}


def _anthropic(models: list[ListedModel]) -> dict[str, Any]:
    data = [
        {
            "type": "model",
            "id": m.id,
            "display_name": m.name or m.id,
            "created_at": "2025-05-14T00:00:00Z",
        }
        for m in models
    ]
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return {"data": data, "has_more": False, "first_id": first, "last_id": last}


def _openrouter(models: list[ListedModel]) -> dict[str, Any]:
    return {"data": [_openrouter_entry(m) for m in models]}


def _openrouter_entry(m: ListedModel) -> dict[str, Any]:
    return {
        "id": m.id,
        "canonical_slug": m.id,
        "name": m.name or m.id,
        "created": CREATED,
        "description": "A test model.",
        "context_length": m.context_window,
        "architecture": {
            "modality": "text->text",
            "input_modalities": ["text"],
            "output_modalities": ["text"],
            "tokenizer": "Other",
            "instruct_type": None,
        },
        "pricing": m.pricing
        or {"prompt": "0.000001", "completion": "0.000002", "request": "0", "image": "0"},
        "top_provider": {
            "context_length": m.provider_context_length or m.context_window,
            "max_completion_tokens": m.max_output_tokens,
            "is_moderated": False,
        },
        "per_request_limits": None,
        "supported_parameters": ["max_tokens", "temperature", "tools", "tool_choice"],
    }


def _vercel(models: list[ListedModel]) -> dict[str, Any]:
    data = [
        {
            "id": m.id,
            "object": "model",
            "created": CREATED,
            "owned_by": m.id.split("/", 1)[0] if "/" in m.id else "test",
            "name": m.name or m.id,
            "description": "A test model.",
            "context_window": m.context_window,
            "max_tokens": m.max_output_tokens,
            "type": "language",
            "tags": ["tool-use"],
            "pricing": {"input": "0.000001", "output": "0.000002"},
        }
        for m in models
    ]
    return {"object": "list", "data": data}


def ollama_tag(m: ListedModel) -> dict[str, Any]:
    """One ``/api/tags`` entry."""
    return {
        "name": m.id,
        "model": m.id,
        "modified_at": "2025-08-05T12:00:00.000000000Z",
        "size": 13780173839,
        "digest": "f2b8351c629c005bd3f0a0e3046f17afb2a78a9a5e7e6b3e0ed2b8f7a0c1d2e3",
        "details": _ollama_details(m),
    }


def _ollama_details(m: ListedModel) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": m.architecture,
        "families": [m.architecture],
        "parameter_size": "8.0B",
        "quantization_level": "Q4_K_M",
    }


def _ollama_show(body: Any, models: list[ListedModel]) -> Answer:
    """``/api/show`` from the real gpt-oss capture, re-keyed to the model's architecture."""
    name = (body.get("model") or body.get("name")) if isinstance(body, Mapping) else None
    model = next((m for m in models if m.id == name), None)
    if model is None:
        return 404, {"error": f"model '{name}' not found"}
    show = copy.deepcopy(json.loads(load("models-ollama-api-show-gpt-oss.json").data))
    arch = model.architecture
    show["details"] = {**show["details"], **_ollama_details(model), "parent_model": model.id}
    show["model_info"] = {
        "general.architecture": arch,
        "general.parameter_count": show["model_info"]["general.parameter_count"],
        f"{arch}.context_length": model.context_window,
        f"{arch}.embedding_length": 2880,
    }
    if model.num_ctx is not None:  # the Modelfile's parameters, as Ollama pads them
        show["parameters"] = f"num_ctx                        {model.num_ctx}"
    return 200, show


def _litellm(m: ListedModel) -> dict[str, Any]:
    return {
        "model_name": m.id,
        "litellm_params": {"model": f"openai/{m.id}"},
        "model_info": {
            "id": f"test-{m.id}",
            "key": m.id,
            "max_tokens": m.max_output_tokens,
            "max_input_tokens": m.context_window,
            "max_output_tokens": m.max_output_tokens,
            "input_cost_per_token": 1e-06,
            "output_cost_per_token": 2e-06,
            "litellm_provider": "openai",
            "mode": "chat",
            "supports_function_calling": True,
            "supports_vision": False,
        },
    }


_MODELS = {"anthropic": _anthropic, "openrouter": _openrouter, "vercel": _vercel}


def key_record(presented: str) -> dict[str, Any]:
    """OpenRouter's ``GET /api/v1/key`` answer for a key it knows (HAND, its documented shape)."""
    label = f"{presented[:12]}...{presented[-3:]}"
    return {
        "data": {
            "label": label,
            "limit": None,
            "usage": 0,
            "is_free_tier": False,
            "limit_remaining": None,
            "is_provisioning_key": False,
            "rate_limit": {"requests": 20, "interval": "10s"},
        }
    }
