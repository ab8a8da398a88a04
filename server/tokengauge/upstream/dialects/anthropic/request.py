"""ARCHITECTURE §3 messages and tools as an Anthropic Messages streaming request body and headers.

Conversion rules:
- system messages, wherever they are, become the top-level `system` list of text blocks;
- consecutive messages of one role are merged (the API wants user/assistant alternation), and in a
  user message `tool_result` blocks come first, as the API requires; when the conversation does not
  start with a user message, a user message "(continued)" is put first;
- text → `text` blocks (empty or blank text is dropped: the API rejects it), images → base64
  `image` blocks, PDFs → `document` blocks, other data → decoded text or a note, unknown parts →
  their JSON as text; tool calls → `tool_use`, tool results → `tool_result` (text and images);
- an assistant's signed thinking parts go back as the `thinking` blocks they were streamed as (text
  and signature unchanged), redacted ones as `redacted_thinking`, first in their message, as the
  API requires; unsigned thinking parts (what was shown while streaming) are dropped. A request
  that needs the last turn's thinking (a tool-use loop, or a final assistant message) but has none
  to send goes without `thinking`: the API refuses `thinking` when that assistant message does not
  start with a thinking block;
- a `cache_control` data part marks the block before it (a client's prompt-cache breakpoints) with
  `cache_control: {type: ephemeral}`, as GCMP and Copilot's own Anthropic client do; inside a tool
  result it marks the `tool_result` block. The body's own marks are placed by `breakpoints`, and
  a client's fill what those leave of the API's four.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from tokengauge.messages import (
    DataPart,
    Message,
    Part,
    Role,
    ThinkingPart,
    Tool,
    ToolCallPart,
    ToolResultPart,
    is_ephemeral,
)
from tokengauge.upstream.dialects.anthropic.breakpoints import MAX_BREAKPOINTS, place_breakpoints
from tokengauge.upstream.dialects.body import (
    IMAGE_MIME_TYPES,
    data_text,
    merged_headers,
    object_schema,
    omitted_note,
    part_text,
)
from tokengauge.upstream.options import RESERVED_KEYS, ChatOptions

ANTHROPIC_VERSION: Final = "2023-06-01"
CONTINUED: Final = "(continued)"
MIN_THINKING_BUDGET: Final = 1024  # the API's minimum `budget_tokens`
MIN_ANSWER_TOKENS: Final = 1024  # what thinking must leave of `max_tokens` for the answer
_CACHE_CONTROL: Final = "cache_control"
_THINKING_BLOCKS: Final = ("thinking", "redacted_thinking")
_ID_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")

JsonObject = dict[str, Any]


def anthropic_headers(api_key: str, extra: Mapping[str, str]) -> dict[str, str]:
    """Request headers: JSON, the API version, the provider's configured headers (such as
    `anthropic-beta`), and `x-api-key` when a key is given."""
    base = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
    return merged_headers(base, extra, {"x-api-key": api_key} if api_key else {})


def build_anthropic_body(
    model_id: str,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    options: ChatOptions,
    max_tokens: int,
) -> JsonObject:
    """The streaming Messages body. `max_tokens` is the clamped output cap and is never raised:
    thinking is fitted inside it or left out. A tool mode of "none" sends no `tool_choice`: a
    changed one drops the cached messages (tests/data/wire/SOURCES.md §8), and it is asked only
    where the cache is the point (`chat.cached_summary`). Cache breakpoints: `breakpoints`. No
    credential ever goes into the body."""
    system, turns = anthropic_messages(messages)
    listed = [anthropic_tool(tool) for tool in tools]
    place_breakpoints(listed, system, turns)
    body: JsonObject = {"model": model_id, "max_tokens": max_tokens, "messages": turns}
    if system:
        body["system"] = system
    forced_tool = bool(tools) and options.tool_mode == "required"
    if listed:
        body["tools"] = listed
    if forced_tool:
        body["tool_choice"] = {"type": "any"}
    budget = thinking_budget(options.thinking_budget, max_tokens, turns, forced_tool=forced_tool)
    if budget is not None:
        # With thinking on, the API takes no temperature and no top_p below 0.95: omit both.
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif options.temperature is not None:
        # Anthropic's range is 0..1 (OpenAI's is 0..2); recent models reject temperature and
        # top_p together, so temperature wins.
        body["temperature"] = min(options.temperature, 1.0)
    elif options.top_p is not None:
        body["top_p"] = options.top_p
    if options.stop:
        body["stop_sequences"] = options.stop
    body["stream"] = True
    body.update({k: v for k, v in options.extra.items() if k not in RESERVED_KEYS})
    return body


def thinking_budget(
    requested: int | None, max_tokens: int, turns: Sequence[JsonObject], *, forced_tool: bool
) -> int | None:
    """The `budget_tokens` to send, or None to leave thinking off.

    Off when not asked for, when a tool call is forced (thinking allows only `tool_choice` auto),
    when the last assistant turn would have to start with a thinking block it does not have, or when
    `max_tokens` cannot hold the minimum budget plus `MIN_ANSWER_TOKENS`. Otherwise the request
    is raised to the API's minimum and lowered to leave room for the answer.
    """
    if not requested or forced_tool or _needs_thinking_replay(turns):
        return None
    budget = min(max(requested, MIN_THINKING_BUDGET), max_tokens - MIN_ANSWER_TOKENS)
    return budget if budget >= MIN_THINKING_BUDGET else None


def _needs_thinking_replay(turns: Sequence[JsonObject]) -> bool:
    """Whether the last assistant turn must start with thinking (it continues) and does not."""
    assistants = [turn for turn in turns if turn["role"] == "assistant"]
    if not assistants:
        return False
    last = assistants[-1]
    continues = turns[-1] is last or any(block["type"] == "tool_use" for block in last["content"])
    return continues and last["content"][0]["type"] not in _THINKING_BLOCKS


def anthropic_tool(tool: Tool) -> JsonObject:
    """A tool definition; a missing schema becomes an empty object schema."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": object_schema(tool.input_schema),
    }


def anthropic_messages(messages: Sequence[Message]) -> tuple[list[JsonObject], list[JsonObject]]:
    """The `system` blocks and the alternating turns (see the module docstring for the rules)."""
    system: list[JsonObject] = []
    turns: list[JsonObject] = []
    marked: list[JsonObject] = []
    previous: JsonObject | None = None
    for message in messages:
        blocks: list[JsonObject] = []
        for part in message.content:
            if isinstance(part, DataPart) and part.mime_type == _CACHE_CONTROL:
                target = blocks[-1] if blocks else previous
                if target is not None and not any(block is target for block in marked):
                    target["cache_control"] = {"type": "ephemeral"}
                    marked.append(target)
                continue
            block = _block(part, message.role)
            if block is None:
                continue
            blocks.append(block)
            if isinstance(part, ToolResultPart) and any(
                isinstance(inner, DataPart) and inner.mime_type == _CACHE_CONTROL
                for inner in part.content
            ):
                block["cache_control"] = {"type": "ephemeral"}
                marked.append(block)
        if not blocks:
            continue
        previous = blocks[-1]
        if message.role == "system":
            system += blocks
        elif turns and turns[-1]["role"] == message.role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": message.role, "content": blocks})
    for block in marked[:-MAX_BREAKPOINTS]:
        del block["cache_control"]
    for turn in turns:
        first = "tool_result" if turn["role"] == "user" else _THINKING_BLOCKS
        content = turn["content"]
        leading = [block for block in content if block["type"] in first]
        turn["content"] = leading + [block for block in content if block["type"] not in first]
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [_text(CONTINUED)]})
    return system, turns


def _text(text: str) -> JsonObject:
    return {"type": "text", "text": text}


def _block(part: Part, role: Role) -> JsonObject | None:
    """One content block, or None for what is not sent."""
    if role == "system":
        text = part_text(part)
    elif isinstance(part, ThinkingPart):
        return _thinking(part) if role == "assistant" else None
    elif isinstance(part, ToolCallPart) and role == "assistant":
        return {
            "type": "tool_use",
            "id": safe_id(part.call_id),
            "name": part.name,
            "input": _input(part.input),
        }
    elif isinstance(part, ToolResultPart) and role == "user":
        result: JsonObject = {"type": "tool_result", "tool_use_id": safe_id(part.call_id)}
        inner = [b for b in (_media_or_text(p) for p in part.content) if b is not None]
        if inner:
            result["content"] = inner
        return result
    elif role == "user" and isinstance(part, DataPart):
        return _media_or_text(part)
    else:
        text = part_text(part)
    return _text(text) if text.strip() else None


def _thinking(part: ThinkingPart) -> JsonObject | None:
    """A signed or redacted thinking part as the block it was streamed as; None otherwise."""
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature:
        return {"type": "thinking", "thinking": part.value, "signature": part.signature}
    return None


def _media_or_text(part: Part) -> JsonObject | None:
    if isinstance(part, DataPart) and not is_ephemeral(part):
        source = {"type": "base64", "media_type": part.mime_type, "data": part.data}
        if part.mime_type in IMAGE_MIME_TYPES:
            return {"type": "image", "source": source}
        if part.mime_type == "application/pdf":
            return {"type": "document", "source": source}
        text = data_text(part)
        return _text(omitted_note(part) if text is None else text)
    text = part_text(part)
    return _text(text) if text.strip() else None


def _input(value: Any) -> dict[str, Any]:
    # `tool_use.input` must be an object; a call parsed from broken JSON may hold anything else.
    if isinstance(value, dict):
        return value
    return {} if value is None else {"value": value}


def safe_id(value: str) -> str:
    """A tool-use id in the characters the API accepts (`[A-Za-z0-9_-]`); ids from other providers
    may hold others. Calls and results map alike, so pairs still match."""
    return _ID_UNSAFE.sub("_", value) or "_"
