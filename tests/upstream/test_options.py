"""`parse_model_options`: the tool mode and the model options a chat carries, as
`ChatOptions`, and what it refuses.
"""

from __future__ import annotations

from typing import Any

import pytest

from tokengauge.messages import InvalidInput
from tokengauge.upstream.options import ChatOptions, parse_model_options, with_defaults


@pytest.mark.parametrize(
    ("tool_mode", "model_options", "expected"),
    [
        pytest.param(None, None, ChatOptions(), id="defaults"),
        pytest.param("required", {}, ChatOptions(tool_mode="required"), id="tool-mode-string"),
        pytest.param(2, {}, ChatOptions(tool_mode="required"), id="tool-mode-enum-required"),
        pytest.param(1, {}, ChatOptions(tool_mode="auto"), id="tool-mode-enum-auto"),
        pytest.param(None, {"temperature": 0}, ChatOptions(temperature=0.0), id="temperature"),
        pytest.param(None, {"topP": 0.9}, ChatOptions(top_p=0.9), id="topP"),
        pytest.param(None, {"top_p": 0.9}, ChatOptions(top_p=0.9), id="top_p"),
        pytest.param(None, {"maxTokens": 500}, ChatOptions(max_tokens=500), id="maxTokens"),
        pytest.param(None, {"max_output_tokens": 500}, ChatOptions(max_tokens=500), id="max-out"),
        pytest.param(
            None, {"max_completion_tokens": 500}, ChatOptions(max_tokens=500), id="max-completion"
        ),
        pytest.param(None, {"max_tokens": 500.0}, ChatOptions(max_tokens=500), id="integral-float"),
        pytest.param(
            None, {"reasoningEffort": "low"}, ChatOptions(reasoning_effort="low"), id="effort"
        ),
        pytest.param(
            None, {"thinkingBudget": 2048}, ChatOptions(thinking_budget=2048), id="thinkingBudget"
        ),
        pytest.param(
            None, {"budget_tokens": 2048}, ChatOptions(thinking_budget=2048), id="budget_tokens"
        ),
        pytest.param(
            None, {"toolDocs": "minimal"}, ChatOptions(tool_docs="minimal"), id="toolDocs"
        ),
        pytest.param(None, {"stop": "END"}, ChatOptions(stop=["END"]), id="stop-string"),
        pytest.param(None, {"stop_sequences": ["a"]}, ChatOptions(stop=["a"]), id="stop-list"),
        pytest.param(None, {"top_p": 0.5, "topP": 0.5}, ChatOptions(top_p=0.5), id="aliases-agree"),
        pytest.param(None, {"temperature": None}, ChatOptions(), id="null-is-absent"),
        pytest.param(
            None,
            {"top_k": 40, "provider": {"only": ["xai"]}},
            ChatOptions(extra={"top_k": 40, "provider": {"only": ["xai"]}}),
            id="unknown-keys-pass-through",
        ),
        pytest.param(
            None,
            {"_capturingTokenCorrelationId": "f00", "_otelTraceContext": None},
            ChatOptions(),
            id="copilot-private-keys-dropped",
        ),
    ],
)
def test_parse_model_options(tool_mode: Any, model_options: Any, expected: ChatOptions) -> None:
    assert parse_model_options(tool_mode, model_options) == expected


@pytest.mark.parametrize(
    ("tool_mode", "model_options", "message"),
    [
        pytest.param(3, {}, "toolMode", id="tool-mode-enum-unknown"),
        pytest.param("sometimes", {}, "toolMode", id="tool-mode-string-unknown"),
        pytest.param(True, {}, "toolMode", id="tool-mode-bool"),
        pytest.param(None, [1], "modelOptions: expected an object", id="options-not-object"),
        pytest.param(None, {"temperature": "hot"}, r"modelOptions\.temperature", id="temp-str"),
        pytest.param(None, {"temperature": True}, r"modelOptions\.temperature", id="temp-bool"),
        pytest.param(None, {"temperature": 5}, r"temperature: 5 is outside", id="temp-range"),
        pytest.param(None, {"topP": 1.5}, r"modelOptions\.topP", id="top-p-range"),
        pytest.param(None, {"max_tokens": 0}, r"max_tokens: must be at least 1", id="max-zero"),
        pytest.param(None, {"maxTokens": 1.5}, r"modelOptions\.maxTokens", id="max-fraction"),
        pytest.param(None, {"maxTokens": "100"}, r"modelOptions\.maxTokens", id="max-string"),
        pytest.param(None, {"reasoning_effort": "ultra"}, "reasoning_effort", id="effort-unknown"),
        pytest.param(None, {"thinkingBudget": -1}, "thinkingBudget", id="budget-negative"),
        pytest.param(None, {"stop": [1]}, r"modelOptions\.stop", id="stop-not-strings"),
        pytest.param(None, {"toolDocs": "some"}, r"toolDocs: expected one of full", id="docs"),
        pytest.param(None, {"stream": False}, r"modelOptions\.stream", id="reserved-stream"),
        pytest.param(None, {"messages": []}, r"modelOptions\.messages", id="reserved-messages"),
        pytest.param(None, {"top_p": 0.5, "topP": 0.9}, "top_p, topP disagree", id="conflict"),
    ],
)
def test_parse_model_options_rejects(tool_mode: Any, model_options: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_model_options(tool_mode, model_options)


def test_a_models_settings_fill_what_the_request_leaves_unset() -> None:
    defaults = parse_model_options(None, {"thinkingBudget": 4096, "temperature": 0.5, "top_k": 5})
    requested = parse_model_options("required", {"budget_tokens": 0, "top_k": 9, "seed": 1})
    merged = with_defaults(requested, defaults)
    assert merged.tool_mode == "required"  # the request's, always
    assert merged.thinking_budget == 0  # set by the request (0: off), not the model's 4096
    assert merged.temperature == 0.5  # left unset by the request
    assert merged.extra == {"top_k": 9, "seed": 1}
    assert with_defaults(ChatOptions(), ChatOptions()) == ChatOptions()
