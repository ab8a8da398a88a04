"""Wire messages and tools as an OpenAI Chat Completions streaming request body and headers.

Conversion rules, for every OpenAI-compatible server:
- system messages stay `role: system` in place, their text joined;
- user text becomes a content string; with images it becomes a list of `text`/`image_url` parts;
- each tool result becomes one `role: tool` message. Tool messages take only text, so images from
  a result travel in a user message placed after the tool messages, and the result's text says so.
  Tool messages must directly follow the assistant's `tool_calls`, so in every run of user/tool
  messages the tool messages move to the front;
- assistant text and tool calls become `content` (null when empty) and `tool_calls`;
- an assistant message's thinking parts go back in the field the server streamed them in, as they
  came (`reasoning_replay`); which messages keep them is decided before (`chat.reasoning`), and a
  reasoning effort is spelled as the server spells it (`reasoning_rules`);
- unknown parts are sent as their JSON text; other data as decoded text when text-like, else a note;
  VS Code's ephemeral data parts (`cache_control`, `stateful_marker`, `usage`) are never sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeGuard
from urllib.parse import urlsplit

from tokengauge.messages import (
    DataPart,
    Message,
    Part,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    is_ephemeral,
    to_json_text,
)
from tokengauge.upstream.dialects.body import (
    IMAGE_MIME_TYPES,
    merged_headers,
    object_schema,
    openai_sampling,
    part_text,
)
from tokengauge.upstream.dialects.openai.cache_marks import mark_cache
from tokengauge.upstream.dialects.openai.reasoning_replay import replay
from tokengauge.upstream.dialects.openai.reasoning_rules import (
    UNKNOWN_SERVER,
    ReasoningRule,
    effort_fields,
)
from tokengauge.upstream.options import ChatOptions

MaxTokensField = Literal["max_tokens", "max_completion_tokens"]

_OPENAI_HOST: Final = "api.openai.com"
_AZURE_HOST_SUFFIXES: Final = (".openai.azure.com", ".cognitiveservices.azure.com")
# Families that reject `max_tokens` (reasoning models) or are only served on API versions that
# take `max_completion_tokens`.
_COMPLETION_TOKENS_FAMILIES: Final = re.compile(r"^(o\d|gpt-5|gpt-4\.1)")
_NAME: Final = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_TOOL_IMAGE_NOTE: Final = "[image: attached in the next user message]"

JsonObject = dict[str, Any]


def max_tokens_field_for(model_family: str, base_url: str) -> MaxTokensField:
    """Which field carries the output cap.

    OpenAI itself deprecated `max_tokens` and accepts `max_completion_tokens` for every model, and
    its reasoning models accept nothing else, so api.openai.com always gets it. Azure gets it for
    the o-series, GPT-5 and GPT-4.1 (older deployments on older API versions know only
    `max_tokens`). Every other server (Ollama, vLLM, llama.cpp, DeepSeek, Groq, OpenRouter, ...)
    gets `max_tokens`, which they all accept.
    """
    host = (urlsplit(base_url).hostname or "").lower()
    family = model_family.lower().rsplit("/", 1)[-1]
    if host == _OPENAI_HOST:
        return "max_completion_tokens"
    if host.endswith(_AZURE_HOST_SUFFIXES) and _COMPLETION_TOKENS_FAMILIES.match(family):
        return "max_completion_tokens"
    return "max_tokens"


def openai_headers(api_key: str | None, extra: Mapping[str, str]) -> dict[str, str]:
    """Request headers: JSON, the provider's configured headers, and a bearer token only when
    there is a key (local servers have none)."""
    auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return merged_headers({"Content-Type": "application/json"}, extra, auth)


def build_openai_body(
    model_id: str,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    options: ChatOptions,
    max_tokens: int | None,
    *,
    max_tokens_field: MaxTokensField = "max_tokens",
    rule: ReasoningRule = UNKNOWN_SERVER,
    family: str = "",
    cache_marks: bool = False,
) -> JsonObject:
    """The streaming Chat Completions body; usage is always requested (`include_usage`).

    `max_tokens` is the clamped output cap (None leaves it to the server), written under
    `max_tokens_field` (see `max_tokens_field_for`); `rule` is what the server wants of the
    model's reasoning (of the `family`); `cache_marks` marks where the API should cache
    (`cache_marks.mark_cache`). No credential ever goes into the body.
    """
    converted = openai_messages(messages, rule)
    if cache_marks:
        mark_cache(converted)
    body: JsonObject = {
        "model": model_id,
        "messages": converted,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if max_tokens is not None:
        body[max_tokens_field] = max_tokens
    if tools:
        body["tools"] = [openai_tool(tool) for tool in tools]
        if options.tool_mode != "auto":
            body["tool_choice"] = options.tool_mode
    if options.stop:
        body["stop"] = options.stop
    body.update(effort_fields(rule, family, options.reasoning_effort))
    # `thinking_budget` has no Chat Completions field; servers that take one get it via `extra`.
    body.update(openai_sampling(options))
    return body


def openai_tool(tool: Tool) -> JsonObject:
    """A tool as a `function` tool; a missing schema becomes an empty object schema."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": object_schema(tool.input_schema),
        },
    }


def openai_messages(
    messages: Sequence[Message], rule: ReasoningRule = UNKNOWN_SERVER
) -> list[JsonObject]:
    """The messages in Chat Completions shape (see the module docstring for the rules)."""
    converted: list[JsonObject] = []
    for message in messages:
        parts = [part for part in message.content if not is_ephemeral(part)]
        if not parts:
            continue
        if message.role == "assistant":
            converted.extend(_assistant(message, parts, rule))
        elif message.role == "system":
            text = "".join(part_text(part) for part in parts)
            converted.append(_named({"role": "system", "content": text}, message))
        else:
            converted.extend(_user(message, parts))
    return _tool_messages_first(converted)


def _named(converted: JsonObject, message: Message) -> JsonObject:
    # OpenAI rejects names outside this pattern; Copilot sends "" for tool-result messages.
    if message.name and _NAME.match(message.name):
        converted["name"] = message.name
    return converted


def _image(part: DataPart) -> JsonObject:
    url = f"data:{part.mime_type};base64,{part.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def _is_image(part: Part) -> TypeGuard[DataPart]:
    return isinstance(part, DataPart) and part.mime_type in IMAGE_MIME_TYPES


def _user(message: Message, parts: list[Part]) -> list[JsonObject]:
    tool_messages: list[JsonObject] = []
    content: list[JsonObject] = []
    for part in parts:
        if isinstance(part, ToolResultPart):
            texts: list[str] = []
            images: list[JsonObject] = []
            for inner in part.content:
                if _is_image(inner):
                    images.append(_image(inner))
                    texts.append(_TOOL_IMAGE_NOTE)
                else:
                    texts.append(part_text(inner))
            tool_messages.append(
                {"role": "tool", "tool_call_id": part.call_id, "content": "".join(texts)}
            )
            if images:
                note = f"Images from the result of tool call {part.call_id}:"
                content += [{"type": "text", "text": note}, *images]
        elif _is_image(part):
            content.append(_image(part))
        elif not isinstance(part, ThinkingPart):
            content.append({"type": "text", "text": part_text(part)})
    if not content:
        return tool_messages
    if all(item["type"] == "text" for item in content):
        user: JsonObject = {"role": "user", "content": "".join(i["text"] for i in content)}
    else:
        user = {"role": "user", "content": content}
    return [*tool_messages, _named(user, message)]


def _assistant(message: Message, parts: list[Part], rule: ReasoningRule) -> list[JsonObject]:
    texts: list[str] = []
    calls: list[JsonObject] = []
    thinking: list[ThinkingPart] = []
    for part in parts:
        if isinstance(part, ToolCallPart):
            arguments = to_json_text({} if part.input is None else part.input)
            function = {"name": part.name, "arguments": arguments}
            calls.append({"id": part.call_id, "type": "function", "function": function})
        elif isinstance(part, ThinkingPart):
            thinking.append(part)
        else:
            texts.append(part_text(part))
    reasoning = replay(thinking, rule)
    text = reasoning.content("".join(texts))
    if not text and not calls:  # reasoning alone is no message a server takes
        return []
    converted: JsonObject = {"role": "assistant", "content": text or None, **reasoning.fields}
    for call in calls:
        if call["id"] in reasoning.calls:
            call["extra_content"] = reasoning.calls[call["id"]]
    if calls:
        converted["tool_calls"] = calls
    return [_named(converted, message)]


def _tool_messages_first(messages: list[JsonObject]) -> list[JsonObject]:
    """In each run of user/tool messages, tool messages first (order otherwise kept).

    Copilot sends one user message per tool result, and images from a result travel in a user
    message of their own: without this, a user message could separate the assistant's
    `tool_calls` from a later tool message, which the API rejects.
    """
    ordered: list[JsonObject] = []
    run: list[JsonObject] = []
    for message in [*messages, {"role": "end"}]:
        if message["role"] in ("user", "tool"):
            run.append(message)
            continue
        ordered += [m for m in run if m["role"] == "tool"] + [m for m in run if m["role"] == "user"]
        run = []
        if message["role"] != "end":
            ordered.append(message)
    return ordered
