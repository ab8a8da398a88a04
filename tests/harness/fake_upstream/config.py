"""Configuration of the test upstream: plain dataclasses that round-trip through JSON.

Every class here can be built from the JSON the standalone server takes on its command line
(``--config``) and that ``POST /_control/script`` / ``POST /_control/config`` accept, with
:func:`from_json`; :func:`to_json` turns one back into JSON. Unknown keys are an error (a typo in
a test's script should fail loudly, not be ignored).
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tests.harness.fake_upstream.wire import resolve

REASONING_SERVERS = (
    "deepseek",
    "deepseek-r1",
    "kimi",
    "glm",
    "minimax",
    "openrouter",
    "gemini",
    "strict",
)
"""The reasoning models' servers the upstream can be (``reasoning.py``)."""

T = TypeVar("T")

LISTING_SHAPES = (
    "openai",
    "anthropic",
    "openrouter",
    "vercel",
    "ollama",
    "litellm",
    "lmstudio",
    "vllm",
)
ERROR_STYLES = ("anthropic", "openai", "openrouter", "llamacpp", "gemini", "vllm")
OVERFLOWS = ("error", "truncate")
ROUTES = ("any", "chat", "messages", "responses", "ollama_chat")


@dataclass
class Chunking:
    """How response bodies are cut into writes: sizes and delays drawn from a seeded RNG.

    A delay is kept from one write's start to the next, on average: a slow write or a late wake-up
    shortens the next wait (after a stall the pace starts afresh).
    """

    min_bytes: int = 1
    max_bytes: int = 96
    min_delay: float = 0.0
    max_delay: float = 0.0
    seed: int = 0
    per_event: bool = False  # one write per SSE event, as the APIs flush them (sizes unused)


@dataclass
class ScaleRule:
    """A scale for some content: a message whose text matches ``pattern`` (``re.search``,
    multiline) counts ``scale`` × its tokens instead of ``ModelBehavior.scale``."""

    pattern: str
    scale: float

    def __post_init__(self) -> None:
        if not isinstance(self.pattern, str):
            raise ValueError(f"scale rule pattern must be a string, not {self.pattern!r}")
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"scale rule pattern {self.pattern!r}: {exc}") from None
        scale = self.scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
            raise ValueError(f"scale rule scale must be a number above 0, not {scale!r}")


@dataclass
class ModelBehavior:
    """The deterministic "model" behind ``/chat/completions`` and ``/messages``.

    True prompt tokens = ``ceil(Σ scale(message) × tokens(message)) + per_message_overhead ×
    messages + ceil(tool_scale × Σ tokens(JSON(tool))) + per_tool_overhead × tools +
    fixed_overhead``, where a message's scale is that of the first of ``scale_rules`` its text
    matches, else ``scale``; see ``model.count_prompt``.
    """

    encoding: str = "cl100k_base"
    per_message_overhead: int = 5
    scale: float = 1.0
    scale_rules: list[ScaleRule] = field(default_factory=list)  # first match wins
    tool_scale: float = 1.0
    per_tool_overhead: int = 0
    fixed_overhead: int = 3
    image_tokens: int = 85
    context_window: int | None = None  # None: never overflows (with overflow "error")
    # What a prompt over the window meets: "error" (the provider's 400, checked against
    # context_window) or "truncate" (cut silently to the window the server serves the model with,
    # as Ollama and LM Studio do; usage reports what was evaluated; see ``loading.py``).
    overflow: str = "error"
    check_max_tokens: bool = True  # also reject prompt + max_tokens > window
    max_output_tokens: int | None = None  # max_tokens above this: the output-cap error
    error_style: str | None = None  # None: the dialect's own (anthropic / openai)
    response_model: str | None = None  # model name in responses; None echoes the request's
    cached_prompt_tokens: int = 0  # reported as cache read (Anthropic) / cached_tokens (OpenAI)
    # The API's prompt cache (``prompt_cache.py``): what is read from it reported instead.
    prompt_cache: bool = False
    require_api_key: str | None = None  # set: wrong/missing key gets the 401 fixture body
    listed_only: bool = False  # a model not in the listing gets the API's 404 "no such model"
    # A reasoning model's server (``reasoning.py``): how it streams reasoning over Chat
    # Completions and what of it it refuses; None: ``reasoning_content`` deltas, nothing refused.
    reasoning: str | None = None


@dataclass
class ListedModel:
    """One model in the ``/models`` listings (independent of the enforced ``context_window``).

    ``context_window`` is the model's native window, as listings name it; ``loaded_context`` the
    window a local server has it loaded with (Ollama ``/api/ps``, LM Studio's loaded instance,
    vLLM ``max_model_len``): set, the model is loaded from the start.
    """

    id: str = "test-model"
    name: str | None = None
    context_window: int = 128000
    max_output_tokens: int = 16384
    provider_context_length: int | None = None  # OpenRouter top_provider.context_length
    architecture: str = "llama"  # Ollama model_info["<arch>.context_length"]
    loaded_context: int | None = None  # None: not loaded until a request loads it
    # Ollama: the Modelfile's ``PARAMETER num_ctx`` (in /api/show ``parameters``), which a load
    # without a requested num_ctx uses instead of the server's default_context.
    num_ctx: int | None = None
    # OpenRouter's ``pricing`` object (US dollars per token, as strings); None: a default price.
    pricing: dict[str, Any] | None = None


@dataclass
class Reply:
    """What the model answers. Defaults: text ``"ok: <first 40 chars of the last user text>"``."""

    text: str | None = None
    repeat: int = 1  # the text repeated this many times (long, slow streams)
    thinking: str | None = None  # reasoning before the answer
    tool_call: bool = False  # answer with a tool call if the request offers tools
    tool_name: str | None = None  # default: the first offered tool
    tool_arguments: dict[str, Any] = field(default_factory=dict)
    finish_reason: str | None = None  # override (OpenAI finish_reason / Anthropic stop_reason)
    # Tool-call rounds scripted by the user: a turn whose user message carries
    # ``<tg-tool-calls>[{"name": …, "arguments": {…}}, …]</tg-tool-calls>`` is answered with those
    # calls, one per request, before the text answer (see ``model.scripted_call``).
    scripted_calls: bool = False
    # A model that uses only what it was told of: a scripted call's optional arguments the
    # request's schema of the tool does not describe (no ``description``) are left out.
    documented_only: bool = False


@dataclass
class Fault:
    """Misbehaviour applied to one streamed response (fixture replay or generated)."""

    headers_delay: float = 0.0  # wait before sending the status line and headers
    drop_before_headers: bool = False  # then close the connection without any response
    drop_after_bytes: int | None = None  # abort the connection after exactly this many bytes
    drop_after_chunks: int | None = None  # ... or after this many writes
    stall_after_chunks: int | None = None  # pause after this many writes ...
    stall_seconds: float = 0.0  # ... for this long ...
    stall_then: str = "continue"  # ... then "continue" or "drop"
    garbage_after_events: int | None = None  # insert ``garbage`` after this many SSE events
    garbage: str = "data: {this is not json\n\n"
    error_event_after_events: int | None = None  # cut after N events, end with an error event
    trickle_seconds: float | None = None  # send the body one byte at a time, this far apart
    keepalive: str | None = None  # "comment" or "ping": after the headers, only keep-alives ...
    keepalive_every: float = 0.2  # ... this far apart, until the client leaves
    repeat_event: int | None = None  # after the events up to this index, that event for ever ...
    repeat_every: float = 0.1  # ... this far apart
    gzip_bomb: int | None = None  # the body: gzip of `gzip_bomb_prefix` + this many "a" bytes
    gzip_bomb_prefix: str = "data: "


@dataclass
class Scripted:
    """One scripted answer, consumed by the next matching model request(s).

    With ``fixture`` or ``body``: those bytes are sent (``status`` defaults from the fixture).
    Otherwise the model answers as usual, with ``reply`` / ``fault`` / ``status`` applied.
    """

    # "chat" (…/chat/completions), "messages" (…/messages), "responses", "ollama_chat" (Ollama's
    # /api/chat) or "any"
    route: str = "any"
    times: int = 1
    fixture: str | None = None
    body: str | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = None
    reply: Reply | None = None
    fault: Fault | None = None


@dataclass
class UpstreamConfig:
    """A whole test upstream: listing shape, models, model behaviour, chunking, initial script.

    The listing shape also says which server it is: "ollama", "lmstudio" and "vllm" answer their
    own routes (``local_servers.py``) and serve models with a loaded window (``loading.py``).
    """

    listing: str = "openai"
    models: list[ListedModel] = field(default_factory=lambda: [ListedModel()])
    model: ModelBehavior = field(default_factory=ModelBehavior)
    chunking: Chunking = field(default_factory=Chunking)
    reply: Reply = field(default_factory=Reply)
    script: list[Scripted] = field(default_factory=list)
    listing_answer: Scripted | None = None  # answers the model listing routes instead, if set
    # Set (e.g. "/v1"): the API (chat, messages, model lists, OpenRouter's key) answers only under
    # this path, elsewhere 404 as OpenAI does; Ollama's /api/* and LiteLLM's /model/info stay at
    # the root.
    api_root: str | None = None
    listing_headers: dict[str, str] = field(default_factory=dict)  # e.g. x-litellm-version
    # The context a local server (ollama, lmstudio) loads a model with when a request names one
    # not loaded and asks for no num_ctx (Ollama's 4096 below 24 GiB VRAM, OLLAMA_CONTEXT_LENGTH).
    default_context: int = 4096

    def __post_init__(self) -> None:
        if self.listing not in LISTING_SHAPES:
            raise ValueError(f"listing must be one of {LISTING_SHAPES}, not {self.listing!r}")
        if self.model.error_style not in (None, *ERROR_STYLES):
            raise ValueError(f"error_style must be one of {ERROR_STYLES}")
        if self.model.reasoning not in (None, *REASONING_SERVERS):
            raise ValueError(f"reasoning must be one of {REASONING_SERVERS} or None")
        if self.model.overflow not in OVERFLOWS:
            raise ValueError(f"overflow must be one of {OVERFLOWS}, not {self.model.overflow!r}")
        windows = [m.loaded_context for m in self.models] + [m.num_ctx for m in self.models]
        windows.append(self.default_context)
        if any(w is not None and (isinstance(w, bool) or w < 1) for w in windows):
            raise ValueError("loaded_context, num_ctx, default_context: positive token counts")
        for item in self.script:
            check_scripted(item)


def check_scripted(item: Scripted) -> Scripted:
    """Validate a scripted answer (route and counts); returns it."""
    if item.route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, not {item.route!r}")
    if item.times < 1:
        raise ValueError("times must be >= 1")
    if item.fixture:
        resolve(item.fixture)  # FileNotFoundError now rather than at request time
    if item.fault and item.fault.stall_then not in ("continue", "drop"):
        raise ValueError("stall_then must be 'continue' or 'drop'")
    return item


def from_json(cls: type[T], data: Mapping[str, Any]) -> T:
    """Build dataclass ``cls`` from JSON data (nested dataclasses and lists of them too)."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__} expects a JSON object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"unknown {cls.__name__} keys: {sorted(unknown)}")
    return cls(**{key: _convert(hints[key], value) for key, value in data.items()})


def to_json(obj: object) -> dict[str, Any]:
    """The JSON form of a config dataclass."""
    data: dict[str, Any] = dataclasses.asdict(obj)  # type: ignore[call-overload]
    return data


def merged(obj: T, changes: Mapping[str, Any]) -> T:
    """A copy of dataclass ``obj`` with JSON ``changes`` merged in (nested objects merge too)."""
    data = to_json(obj)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return from_json(type(obj), data)


def _convert(tp: Any, value: Any) -> Any:
    """Convert one JSON value to the annotated type (only dataclasses need converting)."""
    if value is None:
        return None
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return value if isinstance(value, tp) else from_json(tp, value)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg is not type(None):
                return _convert(arg, value)
    if origin is list and args:
        return [_convert(args[0], item) for item in value]
    return value
