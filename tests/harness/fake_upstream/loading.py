"""Local servers' loaded models: which window a model is served with, and silent truncation.

Ollama and LM Studio load a model on the first request that names it. Ollama loads it with the
request's ``options.num_ctx`` (a different one reloads it) or, without one, keeps the context it
is loaded with, else uses its Modelfile's ``num_ctx`` (``ListedModel.num_ctx``), else the server's
default (``UpstreamConfig.default_context``); LM Studio's
just-in-time load uses the default and requests cannot change it. A model with
``ListedModel.loaded_context`` is loaded from the start; vLLM serves its ``max_model_len``.

With ``ModelBehavior.overflow == "truncate"`` a prompt over the served window is cut with no
error, as Ollama's runner does (it keeps the first ``num_keep`` tokens and the last ones, so
exactly ``num_ctx`` remain) and LM Studio's "truncate middle" does: the usage reports the tokens
evaluated, and the request's record says so (``RecordedRequest.truncated``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.harness.fake_upstream.config import ListedModel, UpstreamConfig
from tests.harness.fake_upstream.records import RecordedRequest

LOCAL_SHAPES = ("ollama", "lmstudio")  # servers that load models on demand
Loads = dict[str, int]  # model id → the context a request (re)loaded it with


def loaded_contexts(config: UpstreamConfig, loads: Mapping[str, int]) -> dict[str, int]:
    """Every loaded model's context: those configured as loaded, then as requests loaded them."""
    contexts = {m.id: m.loaded_context for m in config.models if m.loaded_context is not None}
    return {**contexts, **loads}


def served_window(config: UpstreamConfig, loads: Mapping[str, int], model: str) -> int | None:
    """The window ``model`` is served with: as loaded, else the enforced ``context_window``."""
    return loaded_contexts(config, loads).get(model) or config.model.context_window


def listed(config: UpstreamConfig, model: str) -> ListedModel:
    """The listed model of that id (a default one under that id if it is not listed)."""
    return next((m for m in config.models if m.id == model), ListedModel(id=model))


def requested_num_ctx(body: Mapping[str, Any]) -> int | None:
    """The request's ``options.num_ctx`` (Ollama's native and OpenAI-compatible routes)."""
    options = body.get("options")
    value = options.get("num_ctx") if isinstance(options, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def load(config: UpstreamConfig, loads: Loads, model: str, num_ctx: int | None) -> str | None:
    """(Re)load ``model`` for a request as the server would: "loaded", "reloaded" or None."""
    if config.listing not in LOCAL_SHAPES:
        return None
    current = loaded_contexts(config, loads).get(model)
    if config.listing == "ollama" and num_ctx is not None and num_ctx != current:
        loads[model] = num_ctx
        return "loaded" if current is None else "reloaded"
    if current is None:
        modelfile = listed(config, model).num_ctx if config.listing == "ollama" else None
        loads[model] = modelfile or config.default_context
        return "loaded"
    return None


def truncation(prompt: int, window: int | None) -> dict[str, int] | None:
    """What a silent cut to ``window`` leaves of a ``prompt``-token prompt (None: it fits)."""
    if window is None or prompt <= window:
        return None
    return {"prompt": prompt, "evaluated": window}


def serve(
    config: UpstreamConfig, loads: Loads, body: Mapping[str, Any], record: RecordedRequest
) -> int:
    """Load the requested model and apply the overflow policy to the request's true prompt
    (``record.prompt_tokens``); returns the prompt tokens the model evaluated. Recorded: the
    ``num_ctx`` asked for, the load, the served window and any truncation."""
    prompt = record.prompt_tokens or 0
    model = str(body.get("model") or "")
    record.num_ctx = requested_num_ctx(body)
    record.load = load(config, loads, model, record.num_ctx)
    if config.listing in (*LOCAL_SHAPES, "vllm"):
        record.served_window = served_window(config, loads, model)
    if config.model.overflow != "truncate":
        return prompt
    record.truncated = truncation(prompt, served_window(config, loads, model))
    return record.truncated["evaluated"] if record.truncated else prompt
