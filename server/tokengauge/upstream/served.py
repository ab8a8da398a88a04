"""Reading the window a local server has loaded a model with, from the server's own API.

- Ollama: `GET /api/ps` lists the loaded models with the `context_length` allocated; a model not
  loaded will be loaded with the `num_ctx` tokengauge asks for, else its Modelfile's `num_ctx`
  (`POST /api/show` `parameters`), else Ollama's default, taken as the smallest it picks (4,096,
  below 24 GiB of VRAM) since the machine's is unknown here; before a chat sends to a model not
  loaded, `load_in_ollama` loads it (as that request would) so the window is read, not assumed;
- LM Studio: `GET /api/v0/models` gives `loaded_context_length` for a loaded model (else
  `/api/v1/models`' `loaded_instances[].config.context_length`); one not loaded is loaded with
  the loader's default, taken as 4,096;
- llama.cpp: `GET /props` `default_generation_settings.n_ctx`, the window of each slot (the server
  splits its context between `total_slots` parallel requests);
- vLLM: `GET {base}/models` `max_model_len`.

`read_served` answers one model's reading, or None when the server could not say (logged, never
raised: a probe never blocks a chat).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from typing import Any, Final

import httpx

from tokengauge.models.catalog import ModelSpec
from tokengauge.models.served import LOCAL_KINDS, Kind, Served, plausible_window
from tokengauge.settings import ProviderSettings
from tokengauge.upstream.http import join_url, json_or_none, server_root
from tokengauge.upstream.presets import preset_of

log = logging.getLogger(__name__)

PROBE_SECONDS: Final = 3.0
"""Most time one reading may take."""
OLLAMA_SMALLEST_DEFAULT: Final = 4_096
"""Ollama's default context below 24 GiB of VRAM (32K to 48 GiB, 256K above): the machine's VRAM
is not known here, so the smallest is taken."""
LMSTUDIO_DEFAULT: Final = 4_096
"""LM Studio's loader default for a model loaded on demand."""
_KINDS: Final[dict[str, Kind]] = {kind: kind for kind in LOCAL_KINDS}
_NUM_CTX: Final = re.compile(r"^\s*num_ctx\s+(\d{1,12})\s*$", re.MULTILINE)


def served_kind(provider: ProviderSettings) -> Kind | None:
    """Which local server the provider is (by its preset, or Ollama by its id or port)."""
    preset = preset_of(provider)
    return _KINDS.get(preset.sizing) if preset is not None else None


def _window(value: Any) -> int | None:
    """A window a server reports, if it can be one (`served.plausible_window`)."""
    return value if plausible_window(value) else None


def _entries(payload: Any, key: str) -> list[Mapping[str, Any]]:
    entries = payload.get(key) if isinstance(payload, Mapping) else None
    return [entry for entry in entries or [] if isinstance(entry, Mapping)]


def _same_ollama_name(listed: Any, model_id: str) -> bool:
    """Ollama names a model `name:tag`; `name` alone is `name:latest`."""
    if not isinstance(listed, str):
        return False
    full = model_id if ":" in model_id else f"{model_id}:latest"
    return listed in (model_id, full)


def ollama_loaded(ps: Any, model_id: str) -> int | None:
    """The context an Ollama `/api/ps` answer says the model is loaded with, if it is."""
    for entry in _entries(ps, "models"):
        if _same_ollama_name(entry.get("name"), model_id) or _same_ollama_name(
            entry.get("model"), model_id
        ):
            return _window(entry.get("context_length"))
    return None


def modelfile_num_ctx(show: Any) -> int | None:
    """The `num_ctx` an Ollama `/api/show` answer's Modelfile parameters set, if any."""
    parameters = show.get("parameters") if isinstance(show, Mapping) else None
    if not isinstance(parameters, str):
        return None
    found = _NUM_CTX.search(parameters)
    return _window(int(found.group(1))) if found else None


def ollama_served(
    loaded: int | None, asked: int | None, sent: int | None, modelfile: int | None
) -> Served:
    """What Ollama serves the model with: what it has loaded, unless tokengauge asks for another
    `num_ctx` it has not sent yet (Ollama reloads the model with it at the next request)."""
    if asked is not None and not (sent == asked and loaded is not None) and loaded != asked:
        return Served(asked, f"num_ctx {asked:,} asked of Ollama", loaded=False)
    if loaded is not None:
        return Served(loaded, "loaded in Ollama, per ollama ps")
    if modelfile is not None:
        return Served(modelfile, "its Modelfile's num_ctx, not loaded yet", loaded=False)
    return Served(
        OLLAMA_SMALLEST_DEFAULT,
        "Ollama's default below 24 GiB of VRAM, assumed: not loaded yet",
        loaded=False,
        exact=False,
    )


def lmstudio_served(v0: Any, v1: Any, model_id: str) -> Served | None:
    """What LM Studio serves the model with, from `/api/v0/models` (or `/api/v1/models`)."""
    for entry in _entries(v0, "data"):
        if entry.get("id") == model_id:
            loaded = _window(entry.get("loaded_context_length"))
            if entry.get("state") == "loaded" and loaded is not None:
                return Served(loaded, "loaded in LM Studio")
            return _lmstudio_default(_window(entry.get("max_context_length")))
    for entry in _entries(v1, "models"):
        if entry.get("key") == model_id:
            for instance in _entries(entry, "loaded_instances"):
                config = instance.get("config")
                if isinstance(config, Mapping) and _window(config.get("context_length")):
                    return Served(config["context_length"], "loaded in LM Studio")
            return _lmstudio_default(_window(entry.get("max_context_length")))
    return None


def _lmstudio_default(native: int | None) -> Served:
    window = min(LMSTUDIO_DEFAULT, native or LMSTUDIO_DEFAULT)
    return Served(
        window, "LM Studio's default load, assumed: not loaded yet", loaded=False, exact=False
    )


def llamacpp_served(props: Any) -> Served | None:
    """What a llama.cpp server serves each request with, from `/props`."""
    settings = props.get("default_generation_settings") if isinstance(props, Mapping) else None
    window = _window(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    if window is None:
        return None
    slots = props.get("total_slots")
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < 2:
        slots = None
    split = f", {slots} slots sharing the server's context" if slots else ""
    return Served(window, f"llama.cpp's n_ctx per slot{split}")


def vllm_served(models: Any, model_id: str) -> Served | None:
    """What vLLM serves the model with, from its `/models` list."""
    for entry in _entries(models, "data"):
        if entry.get("id") == model_id:
            window = _window(entry.get("max_model_len"))
            return None if window is None else Served(window, "vLLM's max_model_len")
    return None


async def _read(
    client: httpx.AsyncClient,
    kind: Kind,
    model: ModelSpec,
    headers: Mapping[str, str],
    asked: int | None,
    sent: int | None,
) -> Served | None:
    root = server_root(model.provider.base_url)
    if kind == "ollama":
        ps = await json_or_none(client, join_url(root, "api/ps"), headers=headers)
        if ps is None:
            return None
        loaded = ollama_loaded(ps, model.id)
        modelfile = None
        if loaded is None and asked is None:
            show = await json_or_none(
                client, join_url(root, "api/show"), headers=headers, body={"model": model.id}
            )
            modelfile = modelfile_num_ctx(show)
        return ollama_served(loaded, asked, sent, modelfile)
    if kind == "lmstudio":
        v0 = await json_or_none(client, join_url(root, "api/v0/models"), headers=headers)
        found = lmstudio_served(v0, None, model.id)
        if found is not None:
            return found
        # LM Studio answers a route it lacks with 200 and {"error": …}: ask the newer one.
        return lmstudio_served(
            None,
            await json_or_none(client, join_url(root, "api/v1/models"), headers=headers),
            model.id,
        )
    if kind == "llamacpp":
        return llamacpp_served(await json_or_none(client, join_url(root, "props"), headers=headers))
    return vllm_served(
        await json_or_none(client, join_url(model.provider.base_url, "models"), headers=headers),
        model.id,
    )


async def load_in_ollama(
    client: httpx.AsyncClient, model: ModelSpec, headers: Mapping[str, str], num_ctx: int | None
) -> None:
    """Have Ollama load the model (a chat without messages loads it, as its first request would,
    with `num_ctx` if one is asked for): what it then serves is known before the first request is
    sized, not assumed. A failure is logged: the request itself will say what is wrong."""
    body: dict[str, Any] = {"model": model.id, "messages": [], "stream": False}
    if num_ctx is not None:
        body["options"] = {"num_ctx": num_ctx}
    url = join_url(server_root(model.provider.base_url), "api/chat")
    await json_or_none(client, url, headers=headers, body=body)


async def read_served(
    client: httpx.AsyncClient,
    model: ModelSpec,
    headers: Mapping[str, str],
    asked: int | None = None,
    sent: int | None = None,
) -> Served | None:
    """The window the model's server serves it with; None if it is not a local server or could
    not say (`asked`: the `num_ctx` tokengauge asks Ollama for; `sent`: the last it sent)."""
    kind = served_kind(model.provider)
    if kind is None:
        return None
    try:
        return await asyncio.wait_for(
            _read(client, kind, model, headers, asked, sent), PROBE_SECONDS
        )
    except asyncio.TimeoutError:
        log.debug("%s: its server did not say its window within %g s", model.id, PROBE_SECONDS)
        return None
