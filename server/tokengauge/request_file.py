"""Requests in OpenAI's Chat Completions shape read into wire messages and tools (ARCHITECTURE §3).

The CLI accepts either that shape (`messages` with string or part-list content, `tool_calls`,
`role: "tool"`, `tools: [{type: "function", function: {...}}]`) or ARCHITECTURE §3's own.
"""

from __future__ import annotations

import json
from typing import Any

from tokengauge.messages import (
    PART_TAGS,
    DataPart,
    InvalidInput,
    Message,
    Part,
    TextPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
    structure,
)

_WIRE_PART_TYPES = frozenset(PART_TAGS.values())
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}


def _is_design_message(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant"):
        return False
    content = message.get("content")
    return isinstance(content, list) and all(
        isinstance(part, dict)
        and part.get("type") in _WIRE_PART_TYPES
        and not (part.get("type") == "text" and "text" in part)
        for part in content
    )


def _data_url_part(url: str) -> Part:
    header, _, data = url.partition(",")
    if header.startswith("data:") and header.endswith(";base64"):
        return DataPart(mime_type=header[5:-7], data=data)
    return UnknownPart(json={"type": "image_url", "image_url": {"url": url}})


def _content_parts(content: Any) -> list[Part]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextPart(content)]
    if not isinstance(content, list):
        raise InvalidInput(f"message content must be a string or a list, not {content!r:.80}")
    parts: list[Part] = []
    for item in content:
        if isinstance(item, str):
            parts.append(TextPart(item))
        elif isinstance(item, dict) and item.get("type") == "text":
            parts.append(TextPart(str(item.get("text", ""))))
        elif isinstance(item, dict) and item.get("type") == "image_url":
            image = item.get("image_url")
            url = image.get("url", "") if isinstance(image, dict) else str(image)
            parts.append(_data_url_part(url))
        else:
            parts.append(UnknownPart(json=item))
    return parts


def _arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw if raw is not None else {}
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return raw


def _tool_calls(calls: Any, index: int) -> list[Part]:
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise InvalidInput(f"messages[{index}].tool_calls must be a list")
    parts: list[Part] = []
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            raise InvalidInput(
                f"messages[{index}].tool_calls[{number}] must be an object with a `function` object"
            )
        parts.append(
            ToolCallPart(
                call_id=str(call.get("id", "")),
                name=str(function.get("name", "")),
                input=_arguments(function.get("arguments")),
            )
        )
    return parts


def openai_message(message: Any, index: int) -> Message:
    """One Chat Completions message as a wire message (ARCHITECTURE §3)."""
    if not isinstance(message, dict):
        raise InvalidInput(f"messages[{index}] must be an object")
    role = message.get("role")
    if role == "tool":
        result = ToolResultPart(
            call_id=str(message.get("tool_call_id", "")),
            content=_content_parts(message.get("content")),
        )
        return Message(role="user", content=[result])
    if role not in _ROLES:
        raise InvalidInput(f"messages[{index}].role {role!r} is not system/user/assistant/tool")
    parts = _content_parts(message.get("content")) + _tool_calls(message.get("tool_calls"), index)
    return Message(role=_ROLES[role], content=parts, name=message.get("name"))  # type: ignore[arg-type]


def openai_tool(tool: Any, index: int) -> Tool:
    """One tool in either shape."""
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        function = tool["function"]
        return Tool(
            name=str(function.get("name", "")),
            description=str(function.get("description") or ""),
            input_schema=function.get("parameters"),
        )
    return structure(tool, Tool, f"tools[{index}]")


def read_request(data: Any) -> tuple[list[Message], list[Tool]]:
    """Messages and tools of a request in either the OpenAI or the ARCHITECTURE §3 shape."""
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise InvalidInput("a request must be an object with a `messages` list")
    messages = [
        structure(m, Message, f"messages[{i}]") if _is_design_message(m) else openai_message(m, i)
        for i, m in enumerate(data["messages"])
    ]
    tools = [openai_tool(tool, i) for i, tool in enumerate(data.get("tools") or [])]
    return messages, tools
