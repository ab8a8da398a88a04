"""upstream.dialects.openai.reasoning_replay and reasoning_rules: an assistant message's reasoning
written back where its server reads it, and an effort spelled as each server spells it."""

from __future__ import annotations

from typing import Any

import pytest

from tokengauge.messages import Message, TextPart, ThinkingPart, ToolCallPart
from tokengauge.models.catalog import ModelSpec, resolve_model
from tokengauge.settings import ModelSettings, ProviderSettings
from tokengauge.upstream.dialects.openai.reasoning_rules import (
    UNKNOWN_SERVER,
    effort_choices,
    effort_fields,
    rule_for,
)
from tokengauge.upstream.dialects.openai.request import build_openai_body, openai_messages
from tokengauge.upstream.options import ChatOptions
from tokengauge.upstream.presets import resolve

CALL = ToolCallPart("call_1", "read_file", {"path": "a.py"})
DETAILS = [{"type": "reasoning.text", "text": "Plan.", "signature": "c2ln", "index": 0}]
SIGNED = {"google": {"thought_signature": "Cs0="}}


def model(model_id: str, preset: str | None = None) -> ModelSpec:
    """The model as a provider of `preset` (None: an OpenAI-compatible API of no preset) offers
    it."""
    entry = ProviderSettings(id="p", preset=preset, base_url="" if preset else "http://h/v1")
    return resolve_model(ModelSettings(id=model_id, provider="p"), resolve(entry))


def assistant(*parts: Any) -> Message:
    return Message("assistant", list(parts))


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        pytest.param(
            ThinkingPart("Plan.", field="reasoning_content"),
            {"reasoning_content": "Plan."},
            id="deepseek-kimi-glm",
        ),
        pytest.param(
            ThinkingPart("Plan.", field="reasoning"), {"reasoning": "Plan."}, id="vllm-ollama"
        ),
        pytest.param(
            ThinkingPart("Plan.", field="reasoning", details=DETAILS),
            {"reasoning": "Plan.", "reasoning_details": DETAILS},
            id="openrouter",
        ),
        pytest.param(
            ThinkingPart("", details=[{"type": "reasoning.encrypted", "data": "gAAA"}]),
            {"reasoning_details": [{"type": "reasoning.encrypted", "data": "gAAA"}]},
            id="encrypted-details-alone",
        ),
        pytest.param(
            ThinkingPart("", field="reasoning_content"),
            {"reasoning_content": ""},
            id="empty-where-the-field-is-required",
        ),
        pytest.param(ThinkingPart("Plan."), {"reasoning_content": "Plan."}, id="plain-default"),
        pytest.param(ThinkingPart(""), {}, id="plain-empty-nothing"),
    ],
)
def test_reasoning_goes_back_in_the_field_it_came(part: ThinkingPart, expected: dict[str, Any]):
    [message] = openai_messages([assistant(part, TextPart("Done."), CALL)], UNKNOWN_SERVER)
    reasoning = {k: v for k, v in message.items() if k not in ("role", "content", "tool_calls")}
    assert reasoning == expected
    assert message["content"] == "Done."


def test_gemini_signatures_go_back_on_their_calls_and_the_message():
    part = ThinkingPart("", calls={"call_1": SIGNED}, extra={"google": {"thought": True}})
    [message] = openai_messages([assistant(part, CALL)], UNKNOWN_SERVER)
    assert message["extra_content"] == {"google": {"thought": True}}
    assert message["tool_calls"][0]["extra_content"] == SIGNED
    assert "reasoning_content" not in message


def test_think_tags_open_the_content_again():
    [message] = openai_messages(
        [assistant(ThinkingPart("Hm.", field="think"), TextPart("\n\nYes."))], UNKNOWN_SERVER
    )
    assert message == {"role": "assistant", "content": "<think>Hm.</think>\n\nYes."}


def test_the_block_text_wins_over_pieces_kept_beside_it():
    pieces = [ThinkingPart("Pl"), ThinkingPart("an."), ThinkingPart("Plan.", field="reasoning")]
    [message] = openai_messages([assistant(*pieces, CALL)], UNKNOWN_SERVER)
    assert message["reasoning"] == "Plan."
    [joined] = openai_messages([assistant(*pieces[:2], CALL)], UNKNOWN_SERVER)
    assert joined["reasoning_content"] == "Plan."


@pytest.mark.parametrize(
    ("model_id", "preset", "effort", "fields"),
    [
        pytest.param(
            "deepseek-v4-pro",
            "deepseek",
            "max",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "max"},
            id="deepseek-max",
        ),
        pytest.param(
            "deepseek-v4-flash",
            "deepseek",
            "medium",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
            id="deepseek-medium-is-high",
        ),
        pytest.param(
            "deepseek-v4-pro", "deepseek", "none", {"thinking": {"type": "disabled"}}, id="ds-off"
        ),
        pytest.param("deepseek-reasoner", "deepseek", "high", {}, id="old-reasoner-takes-none"),
        pytest.param(
            "openai/gpt-5", "openrouter", "low", {"reasoning": {"effort": "low"}}, id="openrouter"
        ),
        pytest.param(
            "glm-5.3",
            "zai",
            "none",
            {},
            id="glm-5.3-cannot-be-turned-off",
        ),
        pytest.param(
            "glm-5.3",
            "zai",
            "medium",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
            id="glm-5.3-low-high-max",
        ),
        pytest.param("glm-4.7", "zai", "none", {"thinking": {"type": "disabled"}}, id="glm-off"),
        pytest.param("glm-4.7", "zai", "high", {"thinking": {"type": "enabled"}}, id="glm-on"),
        pytest.param(
            "kimi-k2.5", "moonshot", "none", {"thinking": {"type": "disabled"}}, id="kimi-off"
        ),
        pytest.param("kimi-k2-thinking", "moonshot", "none", {}, id="kimi-always-thinks"),
        pytest.param("MiniMax-M2.7", "minimax", None, {"reasoning_split": True}, id="minimax"),
        pytest.param(
            "gemini-3-pro-preview", "gemini", "max", {"reasoning_effort": "high"}, id="gemini"
        ),
        pytest.param("gpt-5", "openai", "minimal", {"reasoning_effort": "minimal"}, id="openai"),
        pytest.param("acme", None, "low", {"reasoning_effort": "low"}, id="unknown-as-openai"),
    ],
)
def test_an_effort_is_spelled_as_the_server_spells_it(
    model_id: str, preset: str | None, effort: str | None, fields: dict[str, Any]
):
    spec = model(model_id, preset)
    assert effort_fields(rule_for(spec), spec.family, effort) == fields
    body = build_openai_body(
        spec.id,
        [Message("user", [TextPart("hi")])],
        [],
        ChatOptions(reasoning_effort=effort),  # type: ignore[arg-type]
        100,
        rule=rule_for(spec),
        family=spec.family,
    )
    assert {k: body[k] for k in fields} == fields
    assert ("reasoning_effort" in body) == ("reasoning_effort" in fields)


@pytest.mark.parametrize(
    ("model_id", "preset", "kind", "scope"),
    [
        pytest.param("deepseek-v4-pro", "deepseek", "deepseek", "tools", id="deepseek"),
        pytest.param("deepseek-reasoner", "deepseek", "deepseek-r1", "none", id="reasoner"),
        pytest.param("acme-v9", "deepseek", "deepseek", "tools", id="deepseek-preset"),
        pytest.param("kimi-k2.6", None, "kimi", "tools", id="kimi-by-table"),
        pytest.param("deepseek/deepseek-v4-pro", "openrouter", "openrouter", "tools", id="gateway"),
        pytest.param("qwen3:8b", "ollama", "local", "loop", id="ollama"),
        pytest.param("gemini-3-flash-preview", "gemini", "gemini", "loop", id="gemini"),
        pytest.param("gpt-4o", "openai", "openai", "none", id="openai-reads-none"),
        pytest.param("acme", None, None, "loop", id="unknown"),
    ],
)
def test_a_server_rule_comes_from_gateway_table_then_preset(
    model_id: str, preset: str | None, kind: str | None, scope: str
):
    rule = rule_for(model(model_id, preset))
    assert (rule.kind, rule.scope) == (kind, scope)


@pytest.mark.parametrize(
    ("model_id", "preset", "choices"),
    [
        pytest.param("deepseek-v4-pro", "deepseek", (("none", "low", "high", "max"), "high")),
        pytest.param("deepseek-chat", "deepseek", None),
        pytest.param("glm-5.3", "zai", (("low", "high", "max"), "high")),
        pytest.param("glm-5.2", "zai", (("none", "low", "high", "max"), "max")),
        pytest.param("kimi-k2-thinking", "moonshot", None),
        pytest.param("gemini-3-pro-preview", "gemini", (("low", "high"), "high")),
        pytest.param("MiniMax-M2.7", "minimax", None),
    ],
)
def test_the_efforts_each_server_takes(
    model_id: str, preset: str, choices: tuple[tuple[str, ...], str] | None
):
    spec = model(model_id, preset)
    assert effort_choices(rule_for(spec), spec.family) == choices
