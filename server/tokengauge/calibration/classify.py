"""Classify LLM provider error bodies: context overflow, output cap, rate limit, auth, reasoning
wanted back or refused, other.

Bodies arrive in whatever shape the caller captured them: JSON, a Python repr printed by an SDK
(possibly terminal-wrapped), an SSE ``event: error`` frame, a ``529 {...}`` dump, or a bare
message. ``classify_error`` never raises; when it understands nothing it returns
``ErrorKind.OTHER`` with the trimmed raw text as the message.
"""

from __future__ import annotations

import ast
import enum
import json
import re
import warnings
from collections.abc import Mapping

import attrs

from tokengauge.messages import unstructure
from tokengauge.protocol import ErrorReport, OverflowReport

_MAX_MESSAGE = 500
_MAX_DEPTH = 8
# Python reprs of error bodies (SDK dumps) are a few KB; `ast.literal_eval` costs ~80 ms per
# 200 KB line that almost parses, so anything bigger, or not shaped like a dict or list of
# strings, is never tried, and a body offers at most `_MAX_CANDIDATES` payloads.
_MAX_REPR = 16 * 1024
_REPR_START = ("{'", "[{'", "['", '{"', '[{"')
_MAX_CANDIDATES = 16
_MAX_SCAN = 64 * 1024
_JSON = json.JSONDecoder()
_Layer = Mapping[object, object]

# A token count, optionally with thousands separators ("143653", "143,653"). The lookbehind keeps
# matching linear on long digit runs.
_NUM = r"(?<![\d,])(?:\d{1,3}(?:,\d{3})+|\d+)"
_IN, _OUT, _LIM, _EXCESS = (
    rf"(?P<{name}>{_NUM})" for name in ("input", "output", "limit", "excess")
)


def _rx(*parts: str) -> re.Pattern[str]:
    """One case-insensitive regex from adjacent pieces (keeps long provider shapes readable)."""
    return re.compile("".join(parts), re.IGNORECASE)


# Shapes that name the numbers of a context overflow. Groups: input, output, limit.
_OVERFLOW_SHAPES = (
    # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
    _rx(rf"prompt is too long:\s*{_IN}\s*tokens\s*>\s*{_LIM}"),
    # Anthropic: "input length and `max_tokens` exceed context limit: 143653 + 64000 > 200000"
    _rx(rf"exceed context limit:\s*{_IN}\s*\+\s*{_OUT}\s*>\s*{_LIM}"),
    # OpenAI / Azure / DeepSeek / OpenRouter / vLLM: "maximum context length is 4097 tokens"
    _rx(rf"maximum context length is\s*{_LIM}\s*tokens"),
    # OpenAI: "your messages resulted in 4294 tokens"; vLLM: "your request has 24235 input tokens"
    _rx(rf"(?:your messages resulted in|your request has)\s*{_IN}\s*(?:input\s+)?tokens"),
    # OpenAI / DeepSeek: "(3120 in the messages, 1000 in the completion)";
    # Azure: "(8000 in your prompt; 1000 for the completion)"
    _rx(
        rf"\({_IN}\s*in (?:the|your) (?:messages|prompt)\s*[,;]\s*",
        rf"{_OUT}\s*(?:in|for) the completion\)",
    ),
    # OpenRouter: "(10535 of text input, 131072 in the output)"
    _rx(rf"\({_IN}\s*of text input\s*,\s*{_OUT}\s*in the output\)"),
    # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum
    # context length is 64001 tokens and your request has 24235 input tokens"
    _rx(rf"is too large:\s*{_OUT}\.\s*This model's maximum context length"),
    # Gemini: "The input token count (3475108) exceeds the maximum number of tokens allowed
    # (1048576)." -- the count is absent in some streaming responses.
    _rx(
        rf"input token count\s*(?:\(\s*{_IN}\s*\)\s*)?",
        rf"exceeds the maximum number of tokens allowed\s*\(\s*{_LIM}\s*\)",
    ),
    # Ollama: "prompt too long; exceeded max context length by 4021 tokens" (the excess only)
    _rx(rf"exceeded max context length by\s*{_EXCESS}\s*tokens"),
    # Cohere: "too many tokens: size limit exceeded by 11326 tokens. Try using shorter or fewer
    # inputs. The limit for this model is 4096 tokens." (the limit sentence is not always there)
    _rx(rf"size limit exceeded by\s*{_EXCESS}\s*tokens"),
    _rx(rf"The limit for this model is\s*{_LIM}\s*tokens"),
    # Cohere: "total number of tokens in the prompt cannot exceed 4081 - received 4292"
    _rx(rf"tokens in the prompt cannot exceed\s*{_LIM}\s*-\s*received\s*{_IN}"),
    # Perplexity: "User input tokens exceeds 127072 tokens"
    _rx(rf"input tokens exceeds\s*{_LIM}\s*tokens"),
    # Mistral: "Prompt contains 240000 tokens, too large for model with 128000 maximum context
    # length" (also "... tokens and 0 images too large ...")
    _rx(
        rf"prompt contains\s*{_IN}\s*tokens[^.]{{0,40}}too large for model with\s*{_LIM}",
        r"\s*maximum context length",
    ),
    # Together: "The input (516368 tokens) is longer than the model's context length (262144
    # tokens)."
    _rx(
        rf"input \(\s*{_IN}\s*tokens\s*\) is longer than the model's context length",
        rf"\s*\(\s*{_LIM}\s*tokens\s*\)",
    ),
    # vLLM: "The prompt (total length 25938) is too long to fit into the model (context length
    # 4096)."
    _rx(
        rf"prompt \(total length\s*{_IN}\s*\) is too long to fit into the model",
        rf"\s*\(context length\s*{_LIM}\s*\)",
    ),
    # Moonshot (Kimi): "Your request exceeded model token limit: 2097152 (requested: 2306631)"
    _rx(rf"exceeded model token limit:\s*{_LIM}\s*\(requested:\s*{_IN}\s*\)"),
    # OpenAI GPT-5 (its 272k input cap inside the 400k window): "Input tokens exceed the
    # configured limit of 272000 tokens. Your messages resulted in 289650 tokens."
    _rx(rf"exceed the configured limit of\s*{_LIM}\s*tokens"),
)

# Requested output above the model's output cap (not an overflow). Groups: output, limit.
_OUTPUT_LIMIT_SHAPES = (
    # Anthropic: "max_tokens: 32000 > 4096, which is the maximum allowed number of output tokens"
    _rx(
        rf"max_tokens:\s*{_OUT}\s*>\s*{_LIM},?\s*",
        r"which is the maximum allowed number of output tokens",
    ),
    # OpenAI: "max_tokens is too large: 8192. This model supports at most 4096 completion tokens"
    _rx(
        rf"max_tokens is too large:\s*{_OUT}\.\s*",
        rf"This model supports at most\s*{_LIM}\s*completion tokens",
    ),
    # Cohere: "max tokens must be less than or equal to 4096, the maximum output for this model -
    # received 8192"
    _rx(
        rf"max tokens must be less than or equal to\s*{_LIM}\s*,\s*",
        rf"the maximum output for this model\s*-\s*received\s*{_OUT}",
    ),
)

# Overflow wording without numbers: llama.cpp "exceeds the available context size", OpenAI
# Responses "exceeds the context window", gateways' "Input too long", Bedrock Converse "Input
# Tokens Exceeded" and "Input is too long for requested model", Perplexity "The total length of
# all messages is too long".
_OVERFLOW_PHRASE = _rx(
    r"exceeds? (?:the )?(?:available )?context (?:size|window|length|limit)",
    r"|context[ _](?:length|window)[ _]exceeded|prompt is too long|input (?:is )?too long",
    r"|input tokens exceeded|total length of all messages is too long",
)
# Reasoning a server must have back: DeepSeek "The `reasoning_content` in the thinking mode must be
# passed back to the API" and "Missing `reasoning_content` field in the assistant message",
# Moonshot "thinking is enabled but reasoning_content is missing in assistant tool call message",
# Gemini "Function call is missing a thought_signature", OpenRouter "Gemini models require
# OpenRouter reasoning details to be preserved in each request".
_REASONING_MISSING = _rx(
    r"(?:reasoning_content|reasoning|thinking)`? in the thinking mode must be passed back",
    r"|missing `?(?:reasoning_content|reasoning|thought_signature)`?",
    r"|reasoning_content`? is missing|is missing a `?thought_signature",
    r"|reasoning details to be preserved",
)
# Reasoning a server will not take: DeepSeek's reasoner "Please remove the reasoning_content from
# your message", a strict server's "Extra inputs are not permitted, field: 'messages[2].reasoning'"
# (vLLM and pydantic servers: `extra_forbidden` with the field in `loc`), OpenAI's JSON-schema
# "Additional properties are not allowed ('reasoning_content' was unexpected)", "unknown field",
# "is not supported" naming a reasoning field.
_REASONING_FIELD = r"\b(?:reasoning_content|reasoning_details|reasoning|extra_content)\b(?!_)"
_REASONING_REFUSED = _rx(
    r"remove the (?:reasoning_content|reasoning)",
    r"|(?:extra inputs are not permitted|extra_forbidden|additional properties are not allowed",
    r"|unknown field|unrecognized|unexpected)",
    rf"[^\n]{{0,240}}?{_REASONING_FIELD}",
    rf"|{_REASONING_FIELD}`?'?\s*(?:is|are)? ?",
    r"(?:not supported|unsupported|not permitted|not allowed)",
)
# OpenAI "Rate limit reached ... tokens per min (TPM)", OpenRouter "rate-limited upstream".
_RATE_TEXT = _rx(r"rate[ _-]?limit|too many requests|(?:tokens|requests) per min")
# Anthropic "invalid x-api-key", OpenAI "Incorrect API key provided", Gemini "API key not valid".
_AUTH_TEXT = _rx(r"invalid (?:x-)?api[ _-]?key|incorrect api key|api key not valid")
_WHITESPACE = re.compile(r"\s+")  # terminal-wrapped reprs and pretty-printed JSON
# SDK dumps: Anthropic "529 {...}", "400 Bad Request {...}", openai-python "Error code: 400 - {...}"
_STATUS_PREFIX = _rx(r"^\s*(?:Error code:\s*)?(?P<status>[1-5]\d\d)\b")

# Lower-cased error ``type`` / ``code`` / ``status`` values (Anthropic, OpenAI, llama.cpp, Gemini).
_MARKER_KEYS = ("type", "code", "status")
_OVERFLOW_CODES = frozenset(
    {"context_length_exceeded", "exceed_context_size_error", "too_many_prompt_tokens"}
)
_RATE_CODES = frozenset({"rate_limit_error", "rate_limit_exceeded", "resource_exhausted"})
_AUTH_CODES = frozenset({"authentication_error", "permission_error", "invalid_api_key"})
_AUTH_CODES |= {"unauthenticated", "permission_denied"}  # Gemini / Google RPC status names


class ErrorKind(str, enum.Enum):
    OVERFLOW = "overflow"  # the prompt (or prompt + requested output) does not fit the window
    OUTPUT_LIMIT = "output_limit"  # max_tokens above the model's output cap
    RATE_LIMIT = "rate_limit"  # 429s, incl. OpenAI TPM "Request too large", OpenRouter upstream
    AUTH = "auth"  # 401/403, authentication_error, permission_error, invalid_api_key
    REASONING_MISSING = "reasoning_missing"  # the server must have the model's reasoning back
    REASONING_REFUSED = "reasoning_refused"  # the server takes no reasoning in the input
    OTHER = "other"  # everything else, incl. 529 overloaded and 5xx


_WORDING = (
    (ErrorKind.RATE_LIMIT, _RATE_TEXT),
    (ErrorKind.AUTH, _AUTH_TEXT),
    (ErrorKind.OVERFLOW, _OVERFLOW_PHRASE),
)


@attrs.frozen
class ParsedError:
    """A classified provider error. For OUTPUT_LIMIT, limit_tokens is the model's output cap;
    for an overflow that names only how far it went over (Ollama, Cohere), `excess_tokens`."""

    kind: ErrorKind
    message: str
    input_tokens: int | None = None
    limit_tokens: int | None = None
    output_tokens: int | None = None
    excess_tokens: int | None = None

    def report(self) -> ErrorReport | OverflowReport:
        """The classification as the protocol reports it (an overflow with its numbers)."""
        if self.kind is not ErrorKind.OVERFLOW:
            return ErrorReport(self.kind.value, self.message)
        return OverflowReport(
            self.kind.value,
            self.input_tokens,
            self.limit_tokens,
            self.output_tokens,
            self.excess_tokens,
            self.message,
        )

    def to_json(self) -> dict[str, object]:
        """`report()` as JSON."""
        return dict(unstructure(self.report()))


def classify_error(status: int | None, body_text: str) -> ParsedError:
    """Classify an error response; ``status`` may be None (decided from the body alone)."""
    layers = _layers_from_text(body_text, 0)
    messages = [m.strip() for m in (layer.get("message") for layer in layers) if isinstance(m, str)]
    messages = [m for m in messages if m]
    message = messages[-1] if messages else body_text.strip()[:_MAX_MESSAGE]
    # Wording is looked for in the first `_MAX_SCAN` characters: an error states itself early.
    text = _WHITESPACE.sub(" ", " ".join([*messages, body_text])[:_MAX_SCAN])
    markers = {
        v.lower() for layer in layers for k in _MARKER_KEYS if isinstance(v := layer.get(k), str)
    }
    if status is None:
        status = _prefix_status(body_text) or _body_status(layers)

    overflow = _match_numbers(_OVERFLOW_SHAPES, text)
    if overflow is not None or markers & _OVERFLOW_CODES:
        found = overflow or {}
        limit = found.get("limit", _first_int(layers, "n_ctx"))
        excess = found.get("excess")
        known_input = found.get("input", _first_int(layers, "n_prompt_tokens"))
        if known_input is None and limit is not None and excess is not None:
            known_input = limit + excess
        return ParsedError(
            ErrorKind.OVERFLOW,
            message,
            input_tokens=known_input,
            limit_tokens=limit,
            output_tokens=found.get("output"),
            excess_tokens=excess,
        )
    output_limit = _match_numbers(_OUTPUT_LIMIT_SHAPES, text)
    if output_limit is not None:
        return ParsedError(
            ErrorKind.OUTPUT_LIMIT,
            message,
            limit_tokens=output_limit.get("limit"),
            output_tokens=output_limit.get("output"),
        )
    return ParsedError(_classify_plain(status, markers, text), message)


def _classify_plain(status: int | None, markers: set[str], text: str) -> ErrorKind:
    """Status and error type/code outrank wording; a request refused for its reasoning next;
    overflow wording without numbers comes last."""
    if status == 429 or markers & _RATE_CODES:
        return ErrorKind.RATE_LIMIT
    if status in (401, 403) or markers & _AUTH_CODES:
        return ErrorKind.AUTH
    if status in (None, 400, 422) and _REASONING_MISSING.search(text):
        return ErrorKind.REASONING_MISSING
    if status in (None, 400, 422) and _REASONING_REFUSED.search(text):
        return ErrorKind.REASONING_REFUSED
    for kind, wording in _WORDING:
        if wording.search(text):
            return kind
    return ErrorKind.OTHER


def _match_numbers(shapes: tuple[re.Pattern[str], ...], text: str) -> dict[str, int] | None:
    """Numbers named by every matching shape (first wins per group); None if nothing matched."""
    found: dict[str, int] = {}
    matched = False
    for shape in shapes:
        match = shape.search(text)
        if match is None:
            continue
        matched = True
        for name, raw in match.groupdict().items():
            digits = (raw or "").replace(",", "")
            if 0 < len(digits) <= 18:  # int() refuses huge digit strings; no real count is that big
                found.setdefault(name, int(digits))
    return found if matched else None


def _first_int(layers: list[_Layer], key: str) -> int | None:
    """First integer ``key`` across layers (llama.cpp's ``n_prompt_tokens`` / ``n_ctx``)."""
    for layer in layers:
        value = layer.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _prefix_status(text: str) -> int | None:
    match = _STATUS_PREFIX.match(text)
    return int(match["status"]) if match else None


def _body_status(layers: list[_Layer]) -> int | None:
    """First HTTP-like numeric ``code`` (OpenRouter / Gemini put the status there)."""
    for layer in layers:
        code = layer.get("code")
        if isinstance(code, str) and len(code) == 3 and code.isdigit():
            code = int(code)
        if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
            return code
    return None


def _layers_from_text(text: str, depth: int) -> list[_Layer]:
    """Error layers (outermost first) of the first decodable payload in ``text``."""
    for candidate in _candidates(text):
        layers = _layers(_decode(candidate), depth)
        if layers:
            return layers
    return []


def _candidates(text: str) -> list[str]:
    """Payload texts to try: SSE ``data:`` lines, else from the first ``{`` / ``[`` onwards."""
    lines = [line.strip() for line in text.splitlines()]
    if any(line.startswith(("event:", "data:")) for line in lines):
        data = [line[5:].strip() for line in lines if line.startswith("data:")]
        return sorted(data, key=lambda d: '"error"' not in d)[:_MAX_CANDIDATES]
    starts = sorted(i for i in (text.find("{"), text.find("[")) if i >= 0)
    return [text[i:] for i in starts]


def _decode(fragment: str) -> object:
    """JSON (trailing junk tolerated), else a Python repr, else one with wrapped lines rejoined."""
    fragment = fragment.strip()
    try:
        return _JSON.raw_decode(fragment)[0]
    except (ValueError, RecursionError):
        pass
    if len(fragment) > _MAX_REPR or not fragment.startswith(_REPR_START):
        return None
    rejoined = fragment.replace("\r", "").replace("\n", "")
    for source in (fragment, rejoined) if rejoined != fragment else (fragment,):
        try:
            with warnings.catch_warnings():  # odd escapes in a body are not our warning to show
                warnings.simplefilter("ignore")
                return ast.literal_eval(source)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return None


def _layers(obj: object, depth: int) -> list[_Layer]:
    """Flatten ``{"error": {..., "metadata": {"raw": <upstream body>}}}`` into a layer list."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(obj, list):
        obj = next((item for item in obj if isinstance(item, dict)), None)
    if isinstance(obj, str):
        return [{"message": obj}] if obj.strip() else []
    if not isinstance(obj, dict):
        return []
    layers: list[_Layer] = [obj]
    inner = obj.get("error")
    if isinstance(inner, (dict, list, str)):
        layers += _layers(inner, depth + 1)
    metadata = obj.get("metadata")
    raw = metadata.get("raw") if isinstance(metadata, dict) else None
    if isinstance(raw, str):
        layers += _layers_from_text(raw, depth + 1) or _layers(raw, depth + 1)
    elif isinstance(raw, (dict, list)):
        layers += _layers(raw, depth + 1)
    return layers
