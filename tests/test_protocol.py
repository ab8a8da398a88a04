"""protocol: the payloads as they go over the wire (camelCase, tags, fields left out while None)."""

from __future__ import annotations

from tokengauge.messages import (
    Message,
    TextPart,
    ThinkingPart,
    Tool,
    ToolCallPart,
    Usage,
    structure,
    unstructure,
)
from tokengauge.protocol import (
    STREAM_TAGS,
    ChatPartParams,
    ChatResult,
    CountTokensParams,
    DiscoverModelsResult,
    ProviderDiscovery,
    RecordUsageParams,
    StatefulMarkerPart,
    TrimReport,
    UsagePart,
)


def test_count_tokens_params_mix_strings_and_messages() -> None:
    params = structure(
        {
            "modelId": "gpt-4o",
            "inputs": [
                "plain text",
                {"role": "user", "content": [{"type": "text", "value": "hi"}]},
                "",
            ],
        },
        CountTokensParams,
    )
    assert params.model_id == "gpt-4o"
    assert params.inputs == ["plain text", Message(role="user", content=[TextPart("hi")]), ""]
    written = unstructure(params)
    assert written["modelId"] == "gpt-4o"
    assert written["inputs"][0] == "plain text"
    assert written["inputs"][1]["content"] == [{"type": "text", "value": "hi"}]


def test_record_usage_params_camel_case() -> None:
    params = structure(
        {
            "modelId": "m",
            "messages": [{"role": "system", "content": [{"type": "text", "value": "Be brief."}]}],
            "usage": {"totalInputTokens": 12},
            "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "object"}}],
        },
        RecordUsageParams,
    )
    assert params == RecordUsageParams(
        model_id="m",
        messages=[Message(role="system", content=[TextPart("Be brief.")])],
        usage=Usage(12),
        tools=[Tool("t", "d", {"type": "object"})],
    )
    assert set(unstructure(params)) == {"modelId", "messages", "usage", "tools"}


def usage_part(trimmed: TrimReport | None = None) -> UsagePart:
    return UsagePart(10, 4, 6, 2, 1, 18, False, {"prompt_tokens": 18}, trimmed)


def test_chat_parts_carry_their_type():
    parts = [
        TextPart("hi"),
        ToolCallPart("c1", "read", {"path": "a"}),
        usage_part(),
    ]
    written = [unstructure(ChatPartParams("r1", part))["part"] for part in parts]
    assert written[0] == {"type": "text", "value": "hi"}
    assert written[1] == {
        "type": "toolCall",
        "callId": "c1",
        "name": "read",
        "input": {"path": "a"},
    }
    assert written[2] == {
        "type": "usage",
        "inputTokens": 10,
        "outputTokens": 4,
        "cacheReadTokens": 6,
        "cacheWriteTokens": 2,
        "reasoningTokens": 1,
        "totalInputTokens": 18,
        "estimated": False,
        "data": {"prompt_tokens": 18},
    }
    assert unstructure(ChatPartParams("r1", parts[0]))["requestId"] == "r1"


def test_every_streamed_part_is_written_with_its_tag():
    """The tags the extension's generated types name (`STREAM_TAGS`) are the ones written."""
    parts = [
        TextPart("hi"),
        ThinkingPart("hmm"),
        ToolCallPart("c1", "read"),
        StatefulMarkerPart("m"),
        usage_part(),
    ]
    written = [unstructure(ChatPartParams("r1", part))["part"]["type"] for part in parts]
    assert written == [STREAM_TAGS[type(part)] for part in parts]
    assert written == ["text", "thinking", "toolCall", "statefulMarker", "usage"]


def test_what_was_trimmed_is_said_only_when_something_was():
    removed = {"toolResults": 3000, "history": 6100}
    trimmed = TrimReport(tool_results=2, messages=1, tokens=9100, removed=removed)
    assert "trimmed" not in unstructure(ChatResult({}, "stop"))
    assert unstructure(ChatResult({}, "stop", trimmed))["trimmed"] == {
        "toolResults": 2,
        "messages": 1,
        "tokens": 9100,
        "removed": removed,
    }
    lowered = TrimReport(0, 0, 0, tool_docs="minimal", output_floor=1024, removed={"output": 3072})
    assert unstructure(lowered) == {
        "toolResults": 0,
        "messages": 0,
        "tokens": 0,
        "toolDocs": "minimal",
        "outputFloor": 1024,
        "removed": {"output": 3072},
    }
    assert "trimmed" not in unstructure(usage_part())
    assert unstructure(usage_part(trimmed))["trimmed"]["tokens"] == 9100


def test_a_failed_discovery_says_why_with_nulls_kept():
    result = DiscoverModelsResult(
        [
            ProviderDiscovery("up", 3, None),
            ProviderDiscovery("down", None, "HTTP 500"),
            ProviderDiscovery("locked", None, "key rejected", key_rejected=True),
        ]
    )
    assert unstructure(result) == {
        "providers": [
            {"providerId": "up", "models": 3, "error": None, "keyRejected": False},
            {"providerId": "down", "models": None, "error": "HTTP 500", "keyRejected": False},
            {"providerId": "locked", "models": None, "error": "key rejected", "keyRejected": True},
        ]
    }
