"""chat.output: the usage JSON Copilot reads."""

from __future__ import annotations

from tokengauge.chat import openai_usage
from tokengauge.messages import Usage


def test_openai_usage_shape():
    usage = Usage(
        total_input_tokens=1050,
        output_tokens=20,
        input_tokens=100,
        cache_read_tokens=900,
        cache_write_tokens=50,
        reasoning_tokens=7,
    )
    assert openai_usage(usage, prompt_tokens=880) == {  # the input in Copilot's units
        "prompt_tokens": 880,
        "completion_tokens": 20,
        "total_tokens": 900,
        "prompt_tokens_details": {"cached_tokens": 900},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }
