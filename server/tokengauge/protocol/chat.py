"""The payloads of a chat request (`tokenGauge/chat`) and of the parts its response streams
(`tokenGauge/chatPart`), tagged by `type` as message parts are."""

from __future__ import annotations

from typing import Any, Final, Literal, Union

import attrs
from cattrs.strategies import configure_tagged_union

from tokengauge.messages import (
    OMIT_WHEN_NONE,
    PART_TAGS,
    Message,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    converter,
)
from tokengauge.protocol.providers import Credentials

Client = Literal["chat", "agentHost"]
"""Which of Copilot's runtimes sent a request (ARCHITECTURE §1): its chat panel's agent, or the
Agents window's runtime through VS Code's Agent Host bridge."""
AGENT_HOST: Final = "agentHost"


@attrs.frozen
class ChatParams:
    """`tokenGauge/chat`: one request to stream."""

    request_id: str
    model_id: str
    messages: list[Message]
    tools: list[Tool] = attrs.field(factory=list)
    tool_mode: Any = None
    model_options: dict[str, Any] | None = None
    credentials: Credentials | None = None
    client: Client = "chat"


@attrs.frozen
class TrimReport:
    """What the send path's recovery ladder did to a request to make it fit."""

    tool_results: int
    messages: int
    """Earlier messages left out."""
    tokens: int
    """Input tokens removed, every rung together."""
    tool_docs: str | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The tools' reduced form sent, if the ladder reduced them."""
    output_floor: int | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
    """The smaller room kept for the answer, if the ladder lowered it."""
    removed: dict[str, int] = attrs.field(factory=dict)
    """Tokens each rung removed (`calibration.ladder.RUNGS`)."""


@attrs.frozen
class UsagePart:
    """A response's last `tokenGauge/chatPart`: the usage the API reported (our estimate where it
    reported none: `estimated`), the same in OpenAI's form (`data`, what Copilot reads), and what
    was trimmed, if anything."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    total_input_tokens: int
    estimated: bool
    data: dict[str, Any]
    trimmed: TrimReport | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)


@attrs.frozen
class StatefulMarkerPart:
    """State the next request of the conversation brings back: the extension reports it as a
    `stateful_marker` data part (`modelId\\value`), the one kind both of Copilot's runtimes keep
    in their history."""

    value: str


STREAM_TAGS: dict[type, str] = {
    **PART_TAGS,
    StatefulMarkerPart: "statefulMarker",
    UsagePart: "usage",
}
"""Each streamed part's `type` on the wire."""
ChatPart = Union[TextPart, ThinkingPart, ToolCallPart, StatefulMarkerPart, UsagePart]  # noqa: UP007
configure_tagged_union(ChatPart, converter, tag_name="type", tag_generator=STREAM_TAGS.__getitem__)


@attrs.frozen
class ChatPartParams:
    """`tokenGauge/chatPart`: one piece of a streamed response, as soon as it is known."""

    request_id: str
    part: ChatPart


@attrs.frozen
class ChatResult:
    """`tokenGauge/chat`'s answer once the response is complete."""

    usage: dict[str, Any]
    """OpenAI's usage form (the extension reads nothing of it: the parts carry the response)."""
    finish_reason: str
    trimmed: TrimReport | None = attrs.field(default=None, metadata=OMIT_WHEN_NONE)
