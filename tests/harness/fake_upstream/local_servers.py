"""What local servers answer besides chat: loaded models, served windows, tokenization.

- ``ollama``: ``GET /api/ps`` → ``{"models": [{name, model, size, digest, details, expires_at,
  size_vram, context_length}]}``, only the loaded models, ``context_length`` the loaded context
  (docs.ollama.com/api/ps)
- ``lmstudio``: ``GET /api/v0/models`` → ``{"object": "list", "data": [{id, object, type,
  publisher, arch, compatibility_type, quantization, state, max_context_length,
  loaded_context_length (loaded only)}]}``, ``GET /api/v0/models/<id>`` one of them, and
  ``GET /api/v1/models`` → ``{"models": [{type, publisher, key, display_name, architecture,
  quantization, size_bytes, params_string, loaded_instances: [{id, config: {context_length, …}}],
  max_context_length, format, capabilities, description}]}`` (lmstudio-ai/docs
  1_developer/2_rest/endpoints.md and list.md)
- ``vllm``: ``GET …/models`` → the OpenAI list whose entries add ``root``, ``parent``,
  ``max_model_len`` and ``permission``; ``POST /tokenize`` (at the root) with ``{model, prompt}`` or
  ``{model, messages, tools?, add_generation_prompt?, …}`` → ``{count, max_model_len, tokens,
  token_strs}``, ``count`` the same true count the chat route reports as ``prompt_tokens``

``max_context_length`` is the listed (native) ``ListedModel.context_window``; the loaded context
and vLLM's ``max_model_len`` come from ``loading.py``.
"""

from __future__ import annotations

import datetime
import math
import zlib
from collections.abc import Mapping
from typing import Any

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.listings import CREATED, Answer, ollama_tag
from tests.harness.fake_upstream.loading import listed, loaded_contexts, served_window
from tests.harness.fake_upstream.model import count_prompt, encoding, message_scale, tokens

QUANTIZATION = "Q4_K_M"
SIZE = 13780173839  # bytes, as in the Ollama tags listing


def local_answer(
    config: UpstreamConfig, loads: Mapping[str, int], method: str, path: str, body: Any
) -> Answer | None:
    """(status, JSON) for a local server's own route, or None if this is not one here."""
    shape, contexts = config.listing, loaded_contexts(config, loads)
    if shape == "ollama" and path == "/api/ps" and method == "GET":
        running = [_ollama_running(listed(config, i), ctx) for i, ctx in contexts.items()]
        return 200, {"models": running}
    if shape == "lmstudio" and method == "GET" and path.startswith("/api/v0/models"):
        return _lmstudio_v0(config, contexts, path.removeprefix("/api/v0/models").strip("/"))
    if shape == "lmstudio" and method == "GET" and path == "/api/v1/models":
        return 200, {"models": [_lmstudio_v1(m, contexts.get(m.id)) for m in config.models]}
    if shape == "vllm" and method == "GET" and path.endswith("/models"):
        data = [_vllm_model(m, max_model_len(config, loads, m.id)) for m in config.models]
        return 200, {"object": "list", "data": data}
    if shape == "vllm" and method == "POST" and path == "/tokenize":
        return vllm_tokenize(config, loads, body)
    return None


def max_model_len(config: UpstreamConfig, loads: Mapping[str, int], model: str) -> int:
    """vLLM's ``max_model_len``: the served window, else the listed one."""
    return served_window(config, loads, model) or listed(config, model).context_window


def _ollama_running(m: ListedModel, context: int) -> dict[str, Any]:
    expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=5)
    tag = ollama_tag(m)
    return {
        "name": tag["name"],
        "model": tag["model"],
        "size": tag["size"],
        "digest": tag["digest"],
        "details": tag["details"],
        "expires_at": expires.isoformat(timespec="microseconds").replace("+00:00", "Z"),
        "size_vram": tag["size"],
        "context_length": context,
    }


def _publisher(m: ListedModel) -> str:
    return m.id.split("/", 1)[0] if "/" in m.id else "lmstudio-community"


def _lmstudio_v0(config: UpstreamConfig, contexts: Mapping[str, int], model: str) -> Answer:
    """``/api/v0/models`` (all) or ``/api/v0/models/<id>`` (one; 404 HAND if unknown)."""
    entries = [_lmstudio_v0_entry(m, contexts.get(m.id)) for m in config.models]
    if not model:
        return 200, {"object": "list", "data": entries}
    entry = next((e for e in entries if e["id"] == model), None)
    return (200, entry) if entry else (404, {"error": f"Model '{model}' not found"})


def _lmstudio_v0_entry(m: ListedModel, context: int | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": m.id,
        "object": "model",
        "type": "llm",
        "publisher": _publisher(m),
        "arch": m.architecture,
        "compatibility_type": "gguf",
        "quantization": QUANTIZATION,
        "state": "not-loaded" if context is None else "loaded",
        "max_context_length": m.context_window,
    }
    if context is not None:
        entry["loaded_context_length"] = context
    return entry


def _lmstudio_v1(m: ListedModel, context: int | None) -> dict[str, Any]:
    config = {
        "context_length": context,
        "eval_batch_size": 512,
        "flash_attention": False,
        "offload_kv_cache_to_gpu": True,
    }
    return {
        "type": "llm",
        "publisher": _publisher(m),
        "key": m.id,
        "display_name": m.name or m.id,
        "architecture": m.architecture,
        "quantization": {"name": QUANTIZATION, "bits_per_weight": 4},
        "size_bytes": SIZE,
        "params_string": "8B",
        "loaded_instances": [] if context is None else [{"id": m.id, "config": config}],
        "max_context_length": m.context_window,
        "format": "gguf",
        "capabilities": {"vision": False, "trained_for_tool_use": True},
        "description": None,
    }


def _vllm_model(m: ListedModel, window: int) -> dict[str, Any]:
    permission = {
        "id": f"modelperm-{zlib.crc32(m.id.encode()):08x}",
        "object": "model_permission",
        "created": CREATED,
        "allow_create_engine": False,
        "allow_sampling": True,
        "allow_logprobs": True,
        "allow_search_indices": False,
        "allow_view": True,
        "allow_fine_tuning": False,
        "organization": "*",
        "group": None,
        "is_blocking": False,
    }
    return {
        "id": m.id,
        "object": "model",
        "created": CREATED,
        "owned_by": "vllm",
        "root": m.id,
        "parent": None,
        "max_model_len": window,
        "permission": [permission],
    }


def vllm_tokenize(config: UpstreamConfig, loads: Mapping[str, int], body: Any) -> Answer:
    """vLLM's ``POST /tokenize``: a chat body counts as the chat route counts it (messages, tools
    and overheads), a ``prompt`` as one message's scaled text. ``tokens`` are real ids of the
    text, repeated to ``count``; ``token_strs`` only with ``return_token_strs``."""
    behavior = config.model
    if isinstance(body, Mapping) and isinstance(body.get("messages"), list):
        count, text = count_prompt(body, "openai", behavior).total, str(body["messages"])
    elif isinstance(body, Mapping) and isinstance(body.get("prompt"), str):
        text = body["prompt"]
        raw = tokens(text, behavior.encoding)
        count = math.ceil(round(message_scale([text], behavior) * raw, 6))
    else:
        message = "the body needs either `prompt` (a string) or `messages` (a list)"  # HAND
        error = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
        return 400, {"error": error}
    model = str(body.get("model") or (config.models[0].id if config.models else ""))
    ids = encoding(behavior.encoding).encode(text, disallowed_special=()) or [0]
    token_ids = [ids[i % len(ids)] for i in range(count)]
    strs = None
    if body.get("return_token_strs"):
        decode = encoding(behavior.encoding).decode_single_token_bytes
        strs = [decode(t).decode("utf-8", "replace") for t in token_ids]
    window = max_model_len(config, loads, model)
    return 200, {"count": count, "max_model_len": window, "tokens": token_ids, "token_strs": strs}
