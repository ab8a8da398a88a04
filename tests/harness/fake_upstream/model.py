"""The deterministic test "model": true prompt counts, context-window errors, the reply plan.

The true count deliberately differs from what a client estimates with tiktoken (hidden overheads
and a scale factor), and every refusal uses the real error body of the chosen provider with the
true numbers, so a client's calibration and error learning can be tested end to end.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import tiktoken

from tests.harness.fake_upstream.config import ModelBehavior, Reply
from tests.harness.fake_upstream.wire import load
from tokengauge.counting.encodings import EncodingRegistry

_REGISTRY = EncodingRegistry()
_WORD = re.compile(r"\s*\S+|\s+")
_SCRIPT = re.compile(r"<tg-tool-calls>(.*?)</tg-tool-calls>", re.DOTALL)


@lru_cache(maxsize=4)
def encoding(name: str) -> tiktoken.Encoding:
    """A real tiktoken encoding (bundled, offline)."""
    return _REGISTRY.get(name)


def tokens(text: str, encoding_name: str = "cl100k_base") -> int:
    """Exact token count of ``text`` (special-token text counted as plain text)."""
    return len(encoding(encoding_name).encode(text, disallowed_special=()))


@dataclass(frozen=True)
class PromptCount:
    """The model's true prompt size and its parts (``per_message``: each message's tokens by the
    encoder, before its scale and overhead; ``scales``: each message's scale)."""

    total: int
    messages: int
    tools: int
    per_message: list[int] = field(default_factory=list)
    overhead: int = 0
    scales: list[float] = field(default_factory=list)
    encoded_tools: int = 0  # the tools' JSON by the encoder, before tool_scale and overheads

    def message_tokens(self) -> list[int]:
        """Each message's true cost, its overhead included (rounded: they add up to ±1 each)."""
        pairs = zip(self.scales, self.per_message, strict=True)
        return [round(s * n) + self.overhead for s, n in pairs]

    def encoded(self) -> int:
        """The encoder's count of all of it (messages' text, tools' JSON), unscaled."""
        return sum(self.per_message) + self.encoded_tools

    def text_ratio(self) -> float | None:
        """True tokens of the messages' text ÷ the encoder's count of it (None without text)."""
        raw = sum(self.per_message)
        return (self.messages - self.overhead * len(self.per_message)) / raw if raw else None


def count_prompt(body: Mapping[str, Any], dialect: str, behavior: ModelBehavior) -> PromptCount:
    """True prompt tokens of a request body (``dialect`` "openai" or "anthropic")."""
    texts = _message_texts(body, dialect)
    per_message = [sum(_piece_tokens(p, behavior) for p in pieces) for pieces in texts]
    scales = [message_scale(pieces, behavior) for pieces in texts]
    by_scale: dict[float, int] = {}
    for scale, n in zip(scales, per_message, strict=True):
        by_scale[scale] = by_scale.get(scale, 0) + n
    overheads = behavior.per_message_overhead * len(per_message)
    scaled = sum(scale * n for scale, n in by_scale.items())
    messages = math.ceil(round(scaled, 6)) + overheads
    schemas = [_tool_schema(t) for t in body.get("tools") or [] if isinstance(t, Mapping)]
    schema_tokens = sum(tokens(json.dumps(schema), behavior.encoding) for schema in schemas)
    tools = math.ceil(round(behavior.tool_scale * schema_tokens, 6))
    tools += behavior.per_tool_overhead * len(schemas)
    total = messages + tools + behavior.fixed_overhead
    return PromptCount(
        total, messages, tools, per_message, behavior.per_message_overhead, scales, schema_tokens
    )


def message_scale(pieces: Iterable[str | int], behavior: ModelBehavior) -> float:
    """The scale of one message: the first of ``scale_rules`` its text matches, else ``scale``."""
    if not behavior.scale_rules:
        return behavior.scale
    text = "".join(p for p in pieces if isinstance(p, str))
    rule = next((r for r in behavior.scale_rules if _pattern(r.pattern).search(text)), None)
    return behavior.scale if rule is None else rule.scale


@lru_cache(maxsize=64)
def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.MULTILINE)


def requested_max_tokens(body: Mapping[str, Any]) -> int | None:
    """``max_completion_tokens`` or ``max_tokens`` from the request, if any."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def limit_error(
    prompt: int, max_tokens: int | None, behavior: ModelBehavior, dialect: str, model: str, rid: str
) -> dict[str, Any] | None:
    """The provider's real 400 body if the request does not fit, else None."""
    style = behavior.error_style or dialect
    cap = behavior.max_output_tokens
    if cap is not None and max_tokens is not None and max_tokens > cap:
        if style == "anthropic":
            return _anthropic(
                f"max_tokens: {max_tokens} > {cap}, which is the maximum allowed number of output "
                f"tokens for {model}",
                rid,
            )
        return _openai(
            f"max_tokens is too large: {max_tokens}. This model supports at most {cap} completion "
            f"tokens, whereas you provided {max_tokens}.",
            "max_tokens",
            "invalid_value",
        )
    window = behavior.context_window
    if window is None or behavior.overflow == "truncate":
        return None
    out = max_tokens if behavior.check_max_tokens and max_tokens is not None else 0
    if prompt <= window and (prompt + out <= window or style in ("llamacpp", "gemini")):
        return None
    return _overflow_body(style, prompt, out, window, rid)


def _overflow_body(style: str, prompt: int, out: int, window: int, rid: str) -> dict[str, Any]:
    """Overflow bodies copied from the wire fixtures, with the true numbers filled in."""
    if style == "anthropic":
        if prompt > window:
            return _anthropic(f"prompt is too long: {prompt} tokens > {window} maximum", rid)
        return _anthropic(
            f"input length and `max_tokens` exceed context limit: {prompt} + {out} > {window}, "
            "decrease input length or `max_tokens` and try again",
            rid,
        )
    if style == "openrouter":
        message = (
            f"This endpoint's maximum context length is {window} tokens. However, you requested "
            f"about {prompt + out} tokens ({prompt} of text input, {out} in the output). Please "
            'reduce the length of either one, or use the "middle-out" transform to compress your '
            "prompt automatically."
        )
        return {"error": {"message": message, "code": 400, "metadata": {"provider_name": "Test"}}}
    if style == "vllm":
        return _vllm_overflow(out, window)
    if style == "llamacpp":
        body: dict[str, Any] = json.loads(load("error-llamacpp-exceed-context-size.json").data)
        body["error"].update(n_prompt_tokens=prompt, n_ctx=window)
        return body
    if style == "gemini":
        body = dict(json.loads(load("error-gemini-input-token-count-exceeded.json").data))
        body["error"]["message"] = (
            f"The input token count ({prompt}) exceeds the maximum number of tokens allowed "
            f"({window})."
        )
        return body
    head = f"This model's maximum context length is {window} tokens. However, "
    if prompt > window and out == 0:
        tail = (
            f"your messages resulted in {prompt} tokens. Please reduce the length of the messages."
        )
    else:
        tail = (
            f"you requested {prompt + out} tokens ({prompt} in the messages, {out} in the "
            "completion). Please reduce the length of the messages or completion."
        )
    return _openai(head + tail, "messages", "context_length_exceeded")


def _vllm_overflow(out: int, window: int) -> dict[str, Any]:
    """vLLM's 400 (its renderer's length check, as current servers send it; HAND from their
    bodies in the field). vLLM tokenizes only one token past the room the output leaves, so the
    message names that lower bound ("at least"), never the true prompt size."""
    seen = max(window - out, 0) + 1
    message = (
        f"This model's maximum context length is {window} tokens. However, you requested {out} "
        f"output tokens and your prompt contains at least {seen} input tokens, for a total of at "
        f"least {seen + out} tokens. Please reduce the length of the input prompt or the number "
        f"of requested output tokens. (parameter=input_tokens, value={seen})"
    )
    error = {"message": message, "type": "BadRequestError", "param": "input_tokens", "code": 400}
    return {"error": error}


def _anthropic(message: str, rid: str) -> dict[str, Any]:
    error = {"type": "invalid_request_error", "message": message}
    return {"type": "error", "error": error, "request_id": rid}


def _openai(message: str, param: str, code: str) -> dict[str, Any]:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return {"error": error}


def unauthorized_body(dialect: str, presented: str) -> dict[str, Any]:
    """401 body: Anthropic's real fixture; OpenAI's well-known shape (HAND, key redacted)."""
    if dialect == "anthropic":
        return dict(json.loads(load("error-anthropic-401-invalid-api-key.json").data))
    if not presented:
        message = (
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY). You "
            "can obtain an API key from https://platform.openai.com/account/api-keys."
        )
        return {"error": {**_openai(message, "", "")["error"], "param": None, "code": None}}
    shown = f"{presented[:3]}{'*' * max(len(presented) - 7, 0)}{presented[-4:]}"
    message = (
        f"Incorrect API key provided: {shown}. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )
    return {"error": {**_openai(message, "", "invalid_api_key")["error"], "param": None}}


def no_such_model_body(dialect: str, model: str, rid: str) -> dict[str, Any]:
    """The 404 for a model the API does not serve (HAND, the well-known shapes)."""
    if dialect == "anthropic":
        error = {"type": "not_found_error", "message": f"model: {model}"}
        return {"type": "error", "error": error, "request_id": rid}
    message = f"The model `{model}` does not exist or you do not have access to it."
    return {"error": {**_openai(message, "", "model_not_found")["error"], "param": None}}


def openrouter_unauthorized_body(presented: str) -> dict[str, Any]:
    """OpenRouter's 401 (HAND, from its documented error shape): no key, or one it does not
    know."""
    message = "User not found." if presented else "No auth credentials found"
    return {"error": {"message": message, "code": 401}}


def invalid_url_body(method: str, path: str) -> dict[str, Any]:
    """OpenAI's 404 for a path it does not serve (HAND), e.g. a base URL without its /v1."""
    return {
        "error": {
            **_openai(f"Invalid URL ({method} {path})", "", "")["error"],
            "param": None,
            "code": None,
        }
    }


@dataclass(frozen=True)
class ReplyPlan:
    """What the model will stream, resolved against the request."""

    text: str
    thinking: str
    tool_name: str | None
    tool_arguments: str
    output_tokens: int
    reasoning_tokens: int
    finish_reason: str | None


def plan_reply(
    body: Mapping[str, Any], dialect: str, reply: Reply, encoding_name: str
) -> ReplyPlan:
    """Resolve a :class:`Reply` for this request (tool call only if the request offers tools)."""
    schemas = {
        schema.get("name"): schema
        for schema in (_tool_schema(t) for t in body.get("tools") or [] if isinstance(t, Mapping))
    }
    offered = list(schemas)
    tool_name = (reply.tool_name or (offered[0] if offered else None)) if reply.tool_call else None
    tool_arguments = reply.tool_arguments
    scripted = scripted_call(body, dialect) if reply.scripted_calls else None
    if scripted is not None and scripted[0] in offered:
        tool_name, tool_arguments = scripted
        if reply.documented_only:
            tool_arguments = documented(tool_arguments, schemas[tool_name])
    if not offered:
        tool_name = None
    if reply.text is not None:
        text = reply.text * max(reply.repeat, 1)
    elif tool_name:
        text = ""
    else:
        text = ("ok: " + last_user_text(body, dialect)[:40]) * max(reply.repeat, 1)
    arguments = json.dumps(tool_arguments, separators=(",", ":")) if tool_name else ""
    thinking = reply.thinking or ""
    reasoning = tokens(thinking, encoding_name)
    output = reasoning + tokens(text, encoding_name)
    if tool_name:
        output += tokens(tool_name, encoding_name) + tokens(arguments, encoding_name) + 3
    return ReplyPlan(
        text, thinking, tool_name, arguments, max(output, 1), reasoning, reply.finish_reason
    )


def scripted_call(body: Mapping[str, Any], dialect: str) -> tuple[str, dict[str, Any]] | None:
    """The next tool call the turn's user message scripts, or None when all were made.

    The turn's user message is the last user message that is not only tool results; its
    ``<tg-tool-calls>`` list is answered one call per request, counting the assistant tool calls
    made since. A later user message of another kind (a summarization instruction) ends the script.
    """
    messages = _messages(body, dialect)
    turn = _user_turn(messages, dialect)
    if turn is None:
        return None
    text = "".join(p for p in _pieces(messages[turn], dialect) if isinstance(p, str))
    found = _SCRIPT.search(text)
    if found is None:
        return None
    calls = json.loads(found.group(1))
    made = sum(1 for m in messages[turn + 1 :] if _has_tool_call(m))
    if made >= len(calls):
        return None
    call = calls[made]
    return str(call["name"]), dict(call.get("arguments") or {})


def documented(arguments: Mapping[str, Any], tool: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a model told only what `tool` (as the request offers it) says would pass:
    the required ones, and the optional ones whose parameter has a description."""
    schema = tool.get("parameters") or tool.get("input_schema") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return {
        name: value
        for name, value in arguments.items()
        if name in required or "description" in (properties.get(name) or {})
    }


def _user_turn(messages: Sequence[Mapping[str, Any]], dialect: str) -> int | None:
    """The index of the turn's user message (the last one not only tool results), if any."""
    return next(
        (i for i in range(len(messages) - 1, -1, -1) if _is_user_turn(messages[i], dialect)), None
    )


def _is_user_turn(message: Mapping[str, Any], dialect: str) -> bool:
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if dialect != "anthropic" or not isinstance(content, Sequence) or isinstance(content, str):
        return True
    kinds = {p.get("type") for p in content if isinstance(p, Mapping)}
    return kinds != {"tool_result"}


def _has_tool_call(message: Mapping[str, Any]) -> bool:
    if message.get("role") != "assistant":
        return False
    content = message.get("content")
    blocks = content if isinstance(content, Sequence) and not isinstance(content, str) else []
    return bool(message.get("tool_calls")) or any(
        isinstance(b, Mapping) and b.get("type") == "tool_use" for b in blocks
    )


def last_user_text(body: Mapping[str, Any], dialect: str) -> str:
    """Text of the last user (or tool-result) message."""
    for message in reversed(_messages(body, dialect)):
        if message.get("role") in ("user", "tool"):
            return "".join(p for p in _pieces(message, dialect) if isinstance(p, str))
    return ""


def pieces_of(text: str) -> list[str]:
    """Split text into word-sized deltas (whitespace kept), never empty."""
    return _WORD.findall(text) or [text]


def fragments(text: str, size: int = 5) -> list[str]:
    """Split JSON arguments into fixed-size fragments, as providers stream them."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _tool_schema(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    function = tool.get("function")
    return function if isinstance(function, Mapping) else tool


def _messages(body: Mapping[str, Any], dialect: str) -> list[Mapping[str, Any]]:
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    system = body.get("system") if dialect == "anthropic" else None
    if system:
        messages.insert(0, {"role": "system", "content": system})
    return messages


def _message_texts(body: Mapping[str, Any], dialect: str) -> list[list[str | int]]:
    """Each message's pieces; as the APIs count, thinking of turns before the last user turn is
    not counted (stripped), the current turn's is."""
    messages = _messages(body, dialect)
    turn = _user_turn(messages, dialect) or 0
    return [list(_pieces(m, dialect, thinking=i > turn)) for i, m in enumerate(messages)]


def _piece_tokens(piece: str | int, behavior: ModelBehavior) -> int:
    return behavior.image_tokens if isinstance(piece, int) else tokens(piece, behavior.encoding)


def _pieces(
    message: Mapping[str, Any], dialect: str, *, thinking: bool = True
) -> Iterable[str | int]:
    """Texts to count (ints are fixed costs: images) of one message (`thinking`: its thinking
    blocks with them)."""
    if isinstance(message.get("name"), str):
        yield message["name"]
    yield from _reasoning(message)
    yield from _content(message.get("content"), thinking=thinking)
    for call in message.get("tool_calls") or []:
        function = (call.get("function") or {}) if isinstance(call, Mapping) else {}
        yield str(function.get("name", ""))
        args = function.get("arguments", "")
        yield args if isinstance(args, str) else json.dumps(args)


def _reasoning(message: Mapping[str, Any]) -> Iterable[str]:
    """A Chat Completions message's reasoning, wherever it was sent back: the servers that take
    it read it (once: OpenRouter's text and details are one reasoning)."""
    for key in ("reasoning_content", "reasoning"):
        if isinstance(message.get(key), str):
            yield message[key]
            return
    details = message.get("reasoning_details")
    for item in details if isinstance(details, list) else []:
        if isinstance(item, Mapping):
            yield from (str(item[k]) for k in ("text", "summary", "data") if item.get(k))


def _content(content: object, *, thinking: bool = True) -> Iterable[str | int]:
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, Sequence):
        return
    for part in content:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text":
            yield str(part.get("text", ""))
        elif kind in ("thinking", "redacted_thinking"):
            if thinking:
                yield str(part["thinking"]) if kind == "thinking" else json.dumps(part)
        elif kind in ("image", "image_url"):
            yield 0  # an image: costs ModelBehavior.image_tokens
        elif kind == "tool_use":
            yield str(part.get("name", ""))
            yield json.dumps(part.get("input", {}))
        elif kind == "tool_result":
            yield from _content(part.get("content"))
        else:
            yield json.dumps(part)
