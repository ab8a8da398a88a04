"""ARCHITECTURE §3 messages and tools as an OpenAI Responses API (`/v1/responses`) streaming body.

Conversion rules:
- system messages become `system` input messages, in place;
- user text and images become `input_text` / `input_image` content of a `user` message; each tool
  result becomes a `function_call_output` item (its text; images from it follow in a user message);
- assistant text becomes an `assistant` message of `output_text`, each tool call a `function_call`
  item (arguments as JSON text), in the order they were said;
- a thinking part with encrypted content (a reasoning item this dialect streamed) goes back as
  that `reasoning` item (its id, an empty summary, the encrypted content unchanged), in its place
  before the calls it led to; other thinking parts (what was shown) and VS Code's ephemeral data
  parts are never sent;
- the body asks for nothing to be stored (`store: false`), for the reasoning summary and the
  encrypted reasoning when an effort is set, and caps the output with `max_output_tokens`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    object_schema,
    openai_sampling,
    part_text,
)
from tokengauge.upstream.options import ChatOptions

JsonObject = dict[str, Any]


def build_responses_body(
    model_id: str,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    options: ChatOptions,
    max_tokens: int,
) -> JsonObject:
    """The streaming Responses body. No credential ever goes into it."""
    body: JsonObject = {
        "model": model_id,
        "input": responses_input(messages),
        "stream": True,
        "store": False,
        "max_output_tokens": max_tokens,
    }
    if tools:
        body["tools"] = [responses_tool(tool) for tool in tools]
        body["tool_choice"] = options.tool_mode
    if options.reasoning_effort is not None:
        body["reasoning"] = {"effort": options.reasoning_effort, "summary": "auto"}
        body["include"] = ["reasoning.encrypted_content"]
    body.update(openai_sampling(options))
    return body


def responses_tool(tool: Tool) -> JsonObject:
    """A tool as a Responses `function` tool (flat, not nested under `function`)."""
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": object_schema(tool.input_schema),
        "strict": False,
    }


def responses_input(messages: Sequence[Message]) -> list[JsonObject]:
    """The input items (see the module docstring for the rules)."""
    items: list[JsonObject] = []
    for message in messages:
        parts = [p for p in message.content if not is_ephemeral(p) and not _shown_only(p)]
        if message.role == "assistant":
            items += _assistant(parts)
        else:
            items += _user_or_system(message.role, parts)
    return items


def _shown_only(part: Part) -> bool:
    """A thinking part that is not a reasoning item to send back."""
    return isinstance(part, ThinkingPart) and not (part.encrypted and part.id)


def _image(part: DataPart) -> JsonObject:
    return {"type": "input_image", "image_url": f"data:{part.mime_type};base64,{part.data}"}


def _is_image(part: Part) -> bool:
    return isinstance(part, DataPart) and part.mime_type in IMAGE_MIME_TYPES


def _user_or_system(role: str, parts: Sequence[Part]) -> list[JsonObject]:
    outputs: list[JsonObject] = []
    content: list[JsonObject] = []
    for part in parts:
        if isinstance(part, ToolResultPart):
            text = "".join(part_text(p) for p in part.content if not _is_image(p))
            outputs.append(
                {"type": "function_call_output", "call_id": part.call_id, "output": text}
            )
            content += [_image(p) for p in part.content if isinstance(p, DataPart) and _is_image(p)]
        elif isinstance(part, DataPart) and _is_image(part) and role == "user":
            content.append(_image(part))
        else:
            text = part_text(part)
            if text:
                content.append({"type": "input_text", "text": text})
    if not content:
        return outputs
    return [*outputs, {"role": "system" if role == "system" else "user", "content": content}]


def _assistant(parts: Sequence[Part]) -> list[JsonObject]:
    items: list[JsonObject] = []
    text: list[str] = []

    def said() -> None:
        if "".join(text).strip():
            items.append(
                {"role": "assistant", "content": [{"type": "output_text", "text": "".join(text)}]}
            )
        text.clear()

    for part in parts:
        if isinstance(part, ThinkingPart):
            said()
            items.append(
                {
                    "type": "reasoning",
                    "id": part.id,
                    "summary": [],
                    "encrypted_content": part.encrypted,
                }
            )
        elif isinstance(part, ToolCallPart):
            said()
            arguments = to_json_text({} if part.input is None else part.input)
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.call_id,
                    "name": part.name,
                    "arguments": arguments,
                }
            )
        else:
            text.append(part_text(part))
    said()
    return items
