"""Tests for tokengauge.calibration.classify against real captured provider error bodies."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import WIRE
from tokengauge.calibration.classify import ErrorKind, ParsedError, classify_error

OVERFLOW, OUTPUT_LIMIT, RATE_LIMIT, AUTH, OTHER = (
    ErrorKind.OVERFLOW,
    ErrorKind.OUTPUT_LIMIT,
    ErrorKind.RATE_LIMIT,
    ErrorKind.AUTH,
    ErrorKind.OTHER,
)
REASONING_MISSING, REASONING_REFUSED = ErrorKind.REASONING_MISSING, ErrorKind.REASONING_REFUSED

OPENAI_RATE_LIMIT_REACHED = (
    "Rate limit reached for gpt-4.1 in organization org-66tr5xhH5yhaqZAy6PAIy1Xi on tokens per "
    "min (TPM): Limit 30000, Used 18928, Requested 11159. Please try again in 174ms. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)
OPENAI_REQUEST_TOO_LARGE = (
    "Request too large for gpt-4o in organization org-VDAWofJASuLH0vVz8o9tiQZr on tokens per min "
    "(TPM): Limit 30000, Requested 30601. The input or output tokens must be reduced in order to "
    "run successfully. Visit https://platform.openai.com/account/rate-limits to learn more."
)
OPENROUTER_UPSTREAM_429 = (
    "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream. Please retry shortly, "
    "or add your own key to accumulate your rate limits: https://openrouter.ai/settings/integrations"
)
OPENROUTER_CONTEXT = (
    "This endpoint's maximum context length is 131072 tokens. However, you requested about 141607 "
    "tokens (10535 of text input, 131072 in the output). Please reduce the length of either one, "
    'or use the "middle-out" transform to compress your prompt automatically.'
)

# One row per error body in the wire fixtures: (file, real HTTP status or None, expected).
FIXTURES = [
    pytest.param(
        "error-anthropic-401-invalid-api-key.json",
        401,
        ParsedError(AUTH, "invalid x-api-key"),
        id="anthropic-401-invalid-api-key",
    ),
    pytest.param(
        "error-anthropic-429-rate-limit.json",
        429,
        ParsedError(
            RATE_LIMIT,
            "This request would exceed your account's rate limit. Please try again later.",
        ),
        id="anthropic-429-rate-limit",
    ),
    pytest.param(
        "error-anthropic-429-rate-limited-short.json",
        429,
        ParsedError(RATE_LIMIT, "Rate limited"),
        id="anthropic-429-rate-limited-short",
    ),
    pytest.param(
        "error-anthropic-529-overloaded.json",
        529,
        ParsedError(OTHER, "Overloaded"),
        id="anthropic-529-overloaded",
    ),
    pytest.param(
        "error-anthropic-input-plus-max-tokens-exceed-context.json",
        400,
        ParsedError(
            OVERFLOW,
            "input length and `max_tokens` exceed context limit: 143653 + 64000 > 200000, "
            "decrease input length or `max_tokens` and try again",
            input_tokens=143653,
            limit_tokens=200000,
            output_tokens=64000,
        ),
        id="anthropic-input-plus-max-tokens-exceed-context",
    ),
    pytest.param(
        "error-anthropic-max-tokens-over-model-output-limit.json",
        400,
        ParsedError(
            OUTPUT_LIMIT,
            "max_tokens: 32000 > 4096, which is the maximum allowed number of output tokens "
            "for claude-3-opus-20240229",
            limit_tokens=4096,
            output_tokens=32000,
        ),
        id="anthropic-max-tokens-over-model-output-limit",
    ),
    pytest.param(
        "error-anthropic-overloaded-stream-event.sse",
        None,
        ParsedError(OTHER, "Overloaded"),
        id="anthropic-overloaded-stream-event",
    ),
    pytest.param(
        "error-anthropic-prompt-too-long-no-request-id.json",
        400,
        ParsedError(
            OVERFLOW,
            "prompt is too long: 210883 tokens > 199999 maximum",
            input_tokens=210883,
            limit_tokens=199999,
        ),
        id="anthropic-prompt-too-long-no-request-id",
    ),
    pytest.param(
        "error-anthropic-prompt-too-long.json",
        400,
        ParsedError(
            OVERFLOW,
            "prompt is too long: 208310 tokens > 200000 maximum",
            input_tokens=208310,
            limit_tokens=200000,
        ),
        id="anthropic-prompt-too-long",
    ),
    pytest.param(
        "error-gemini-input-token-count-exceeded-no-count.json",
        400,
        ParsedError(
            OVERFLOW,
            "The input token count exceeds the maximum number of tokens allowed (1048576).",
            limit_tokens=1048576,
        ),
        id="gemini-input-token-count-exceeded-no-count",
    ),
    pytest.param(
        "error-gemini-input-token-count-exceeded.json",
        400,
        ParsedError(
            OVERFLOW,
            "The input token count (3475108) exceeds the maximum number of tokens allowed "
            "(1048576).",
            input_tokens=3475108,
            limit_tokens=1048576,
        ),
        id="gemini-input-token-count-exceeded",
    ),
    pytest.param(
        "error-deepseek-reasoning-not-passed-back.json",
        400,
        ParsedError(
            REASONING_MISSING,
            "The `reasoning_content` in the thinking mode must be passed back to the API.",
        ),
        id="deepseek-reasoning-not-passed-back",
    ),
    pytest.param(
        "error-deepseek-missing-reasoning-content.json",
        400,
        ParsedError(
            REASONING_MISSING,
            "Missing `reasoning_content` field in the assistant message at message index 2. F"
            "or more information, please refer to https://api-docs.deepseek.com/guides/thinki"
            "ng_mode#tool-calls",
        ),
        id="deepseek-missing-reasoning-content",
    ),
    pytest.param(
        "error-deepseek-reasoner-reasoning-content-in-input.json",
        400,
        ParsedError(
            REASONING_REFUSED,
            "The reasoning_content is an intermediate result for display purposes only and wi"
            "ll not be included in the context for inference. Please remove the reasoning_con"
            "tent from your message to reduce network traffic.",
        ),
        id="deepseek-reasoner-refuses-reasoning",
    ),
    pytest.param(
        "error-moonshot-reasoning-content-missing.json",
        400,
        ParsedError(
            REASONING_MISSING,
            "thinking is enabled but reasoning_content is missing in assistant tool call mess"
            "age at index 4",
        ),
        id="moonshot-reasoning-content-missing",
    ),
    pytest.param(
        "error-gemini-openai-missing-thought-signature.json",
        400,
        ParsedError(
            REASONING_MISSING,
            "Function call is missing a thought_signature in functionCall parts. This is requ"
            "ired for tools to work correctly, and missing thought_signature may lead to degr"
            "aded model performance. Additional data, function call `default_api:shell` , pos"
            "ition 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signature"
            "s for more details.",
        ),
        id="gemini-missing-thought-signature",
    ),
    pytest.param(
        "error-openrouter-gemini-reasoning-details-missing.json",
        400,
        ParsedError(
            REASONING_MISSING,
            "Unable to submit request because function call `default_api:list_dir` in the 2. "
            "content block is missing a `thought_signature`. Learn more: https://docs.cloud.g"
            "oogle.com/vertex-ai/generative-ai/docs/thought-signatures",
        ),
        id="openrouter-reasoning-details-missing",
    ),
    pytest.param(
        "error-vllm-extra-forbidden.json",
        400,
        ParsedError(
            OTHER,
            "[{'type': 'extra_forbidden', 'loc': ('body', 'bad_words'), 'msg': 'Extra inputs "
            "are not permitted', 'input': ['<|end_search_result|>\\n\\n<|im_end|>']}]",
        ),
        id="vllm-extra-forbidden-not-reasoning",
    ),
    pytest.param(
        "error-llamacpp-exceed-context-size.json",
        400,
        ParsedError(
            OVERFLOW,
            "the request exceeds the available context size. try increasing the context size "
            "or enable context shift",
            input_tokens=14429,
            limit_tokens=8192,
        ),
        id="llamacpp-exceed-context-size",
    ),
    pytest.param(
        "error-openai-429-rate-limit-reached.message.txt",
        429,
        ParsedError(RATE_LIMIT, OPENAI_RATE_LIMIT_REACHED),
        id="openai-429-rate-limit-reached",
    ),
    pytest.param(
        "error-openai-429-request-too-large-tpm.pyrepr.txt",
        429,
        ParsedError(RATE_LIMIT, OPENAI_REQUEST_TOO_LARGE),
        id="openai-429-request-too-large-tpm",
    ),
    pytest.param(
        "error-openai-context-length-exceeded-with-completion.json",
        400,
        ParsedError(
            OVERFLOW,
            "This model's maximum context length is 4097 tokens. However, you requested 4120 "
            "tokens (3120 in the messages, 1000 in the completion). Please reduce the length of "
            "the messages or completion.",
            input_tokens=3120,
            limit_tokens=4097,
            output_tokens=1000,
        ),
        id="openai-context-length-exceeded-with-completion",
    ),
    pytest.param(
        "error-openai-context-length-exceeded.json",
        400,
        ParsedError(
            OVERFLOW,
            "This model's maximum context length is 4097 tokens. However, your messages "
            "resulted in 4294 tokens. Please reduce the length of the messages.",
            input_tokens=4294,
            limit_tokens=4097,
        ),
        id="openai-context-length-exceeded",
    ),
    pytest.param(
        "error-openai-responses-context-length-exceeded-stream-event.json",
        None,
        ParsedError(
            OVERFLOW,
            "Your input exceeds the context window of this model. Please adjust your input and "
            "try again.",
        ),
        id="openai-responses-context-length-exceeded-stream-event",
    ),
    pytest.param(
        "error-openrouter-429-upstream-ratelimit.json",
        429,
        ParsedError(RATE_LIMIT, OPENROUTER_UPSTREAM_429),
        id="openrouter-429-upstream-ratelimit",
    ),
    pytest.param(
        "error-openrouter-context-length.pyrepr.txt",
        400,
        ParsedError(
            OVERFLOW,
            OPENROUTER_CONTEXT,
            input_tokens=10535,
            limit_tokens=131072,
            output_tokens=131072,
        ),
        id="openrouter-context-length",
    ),
]


def _fixture_names() -> set[str]:
    return {str(param.values[0]) for param in FIXTURES}


def _read(name: str) -> str:
    return (WIRE / name).read_text(encoding="utf-8")


def test_every_error_body_fixture_has_a_row() -> None:
    bodies = {
        p.name
        for p in WIRE.glob("error-*")
        if not p.name.endswith((".headers.json", "-headers.json"))
    }
    assert bodies == _fixture_names()


@pytest.mark.parametrize(("name", "status", "expected"), FIXTURES)
def test_fixture(name: str, status: int | None, expected: ParsedError) -> None:
    assert classify_error(status, _read(name)) == expected


@pytest.mark.parametrize(("name", "status", "expected"), FIXTURES)
def test_fixture_without_status(name: str, status: int | None, expected: ParsedError) -> None:
    assert classify_error(None, _read(name)) == expected


ANTHROPIC_PRETTY_A_PLUS_B = """400 Bad Request {
  "type": "error",
  "error": {
    "type": "invalid_request_error",
    "message": "input length and `max_tokens` exceed context limit: 184915 + 20000 > 204648, \
decrease input length or `max_tokens` and try again"
  }
}"""
OPENROUTER_WRAPPING_ANTHROPIC = json.dumps(
    {
        "error": {
            "code": 400,
            "message": "Provider returned error",
            "metadata": {
                "provider_name": "Anthropic",
                "raw": json.dumps(
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": "prompt is too long: 208310 tokens > 200000 maximum",
                        },
                    }
                ),
            },
        }
    }
)
VLLM_MAX_TOKENS_TOO_LARGE = (
    "'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context "
    "length is 64001 tokens and your request has 24235 input tokens (64000 > 64001 - 24235). None"
)

INLINE = [
    pytest.param(
        400,
        "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens "
        "(65000 in the messages, 5000 in the completion). Please reduce the length of the "
        "messages or completion.",
        (OVERFLOW, 65000, 65536, 5000),
        id="deepseek-messages-and-completion",
    ),
    pytest.param(
        400,
        "This model's maximum context length is 8192 tokens, however you requested 9000 tokens "
        "(8000 in your prompt; 1000 for the completion). Please reduce your prompt; or "
        "completion length.",
        (OVERFLOW, 8000, 8192, 1000),
        id="azure-prompt-and-completion",
    ),
    pytest.param(
        400,
        '{"type":"error","error":{"type":"invalid_request_error","message":"input length and '
        '`max_tokens` exceed context limit: 143,653 + 64,000 > 200,000"}}',
        (OVERFLOW, 143653, 200000, 64000),
        id="anthropic-thousands-separators",
    ),
    pytest.param(
        None, ANTHROPIC_PRETTY_A_PLUS_B, (OVERFLOW, 184915, 204648, 20000), id="400-bad-request"
    ),
    pytest.param(None, OPENROUTER_WRAPPING_ANTHROPIC, (OVERFLOW, 208310, 200000, None), id="raw"),
    pytest.param(
        None,
        '[{"error": {"code": 400, "message": "The input token count (1,200,000) exceeds the '
        'maximum number of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}]',
        (OVERFLOW, 1200000, 1048576, None),
        id="gemini-stream-array",
    ),
    pytest.param(400, VLLM_MAX_TOKENS_TOO_LARGE, (OVERFLOW, 24235, 64001, 64000), id="vllm"),
    pytest.param(
        None,
        '{"error": {"code": "context_length_exceeded"}}',
        (OVERFLOW, None, None, None),
        id="code-only-overflow",
    ),
    pytest.param(
        None,
        "Error code: 400 - {'error': {'message': 'max_tokens is too large: 8192. This model "
        "supports at most 4096 completion tokens, whereas you provided 8192.', 'type': "
        "'invalid_request_error', 'param': 'max_tokens', 'code': None}}",
        (OUTPUT_LIMIT, None, 4096, 8192),
        id="openai-python-max-tokens-too-large",
    ),
    pytest.param(
        None,
        '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        (OTHER, None, None, None),
        id="529-prefix",
    ),
    pytest.param(
        None, '429 {"error": {"message": "Slow down"}}', (RATE_LIMIT, None, None, None), id="429"
    ),
    pytest.param(
        None,
        '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).",'
        '"status":"RESOURCE_EXHAUSTED"}}',
        (RATE_LIMIT, None, None, None),
        id="gemini-resource-exhausted",
    ),
    pytest.param(
        None,
        '{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", '
        '"status": "INVALID_ARGUMENT"}}',
        (AUTH, None, None, None),
        id="gemini-bad-key",
    ),
    pytest.param(403, '{"error": {"message": "Forbidden"}}', (AUTH, None, None, None), id="403"),
    pytest.param(
        None,
        'event: error\r\ndata: {"type":"error","error":{"type":"rate_limit_error",'
        '"message":"Rate limited"}}   \r\n\r\n',
        (RATE_LIMIT, None, None, None),
        id="sse-crlf",
    ),
    pytest.param(500, "Internal Server Error", (OTHER, None, None, None), id="plain-500"),
    pytest.param(None, "", (OTHER, None, None, None), id="empty"),
    pytest.param(
        400,
        '{"error":{"message":"too many tokens: total number of tokens in the prompt cannot exceed '
        '4081 - received 4292. Try using a shorter prompt, or enabling prompt truncating.",'
        '"type":"invalid_request_error"}}',
        (OVERFLOW, 4292, 4081, None),
        id="cohere-prompt-cannot-exceed",
    ),
    pytest.param(
        400,
        '{"message":"too many tokens: max tokens must be less than or equal to 4096, the maximum '
        'output for this model - received 8192."}',
        (OUTPUT_LIMIT, None, 4096, 8192),
        id="cohere-output-cap",
    ),
    pytest.param(
        400,
        '{"object":"error","message":"Prompt contains 240000 tokens, too large for model with '
        '128000 maximum context length","type":"invalid_request_error","code":3051}',
        (OVERFLOW, 240000, 128000, None),
        id="mistral",
    ),
    pytest.param(
        400,
        '{"error":{"message":"Prompt contains 300000 tokens and 0 images too large for model with '
        '262144 maximum context length","type":"invalid_request_message_error"}}',
        (OVERFLOW, 300000, 262144, None),
        id="mistral-with-images",
    ),
    pytest.param(
        400,
        '{"error":{"message":"The input (516368 tokens) is longer than the model\'s context length '
        '(262144 tokens).","type":"invalid_request_error","code":"context_length_exceeded"}}',
        (OVERFLOW, 516368, 262144, None),
        id="together",
    ),
    pytest.param(
        400,
        '{"object":"error","message":"The prompt (total length 25938) is too long to fit into the '
        "model (context length 4096). Make sure that `max_model_len` is no smaller than the "
        'number of text tokens plus multimodal tokens.","type":"BadRequestError","code":400}',
        (OVERFLOW, 25938, 4096, None),
        id="vllm-prompt-too-long",
    ),
    pytest.param(
        400,
        '{"error":{"message":"Your request exceeded model token limit: 262144 (requested: '
        '300000)","type":"invalid_request_error"}}',
        (OVERFLOW, 300000, 262144, None),
        id="moonshot",
    ),
    # GPT-5's input cap, as a user pasted it (cline/cline issue #5474).
    pytest.param(
        400,
        '{"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your '
        'messages resulted in 289650 tokens. Please reduce the length of the messages.",'
        '"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}',
        (OVERFLOW, 289650, 272000, None),
        id="openai-gpt-5-input-cap",
    ),
]

# Overflows that give no numbers, or only how far the request went over (issue 11, item 9).
EXCESS = [
    pytest.param(
        400,
        '{"error":{"message":"prompt too long; exceeded max context length by 4021 tokens",'
        '"type":"api_error","param":null,"code":null}}',
        (None, None, 4021),
        id="ollama-openai-endpoint",
    ),
    pytest.param(
        400,
        '{"StatusCode":400,"Status":"400 Bad Request","error":"prompt too long; exceeded max '
        'context length by 4 tokens"}',
        (None, None, 4),
        id="ollama-native",
    ),
    pytest.param(
        400,
        '{"id":"2c4a","message":"too many tokens: size limit exceeded by 168512 tokens. Try using '
        'shorter or fewer inputs. The limit for this model is 132000 tokens."}',
        (300512, 132000, 168512),
        id="cohere-excess-and-limit",
    ),
    pytest.param(
        400,
        '{"message":"too many tokens: size limit exceeded by 11326 tokens. Try using shorter or '
        "fewer inputs, or setting prompt_truncation='AUTO'.\"}",
        (None, None, 11326),
        id="cohere-excess-only",
    ),
    pytest.param(
        400,
        '{"error":{"message":"The total length of all messages is too long.",'
        '"type":"too_many_prompt_tokens","code":400}}',
        (None, None, None),
        id="perplexity",
    ),
    pytest.param(
        400,
        '{"error":{"message":"User input tokens exceeds 127072 tokens",'
        '"type":"too_many_prompt_tokens","code":400}}',
        (None, 127072, None),
        id="perplexity-with-limit",
    ),
    pytest.param(
        400, '{"message":"Input Tokens Exceeded"}', (None, None, None), id="bedrock-converse"
    ),
    pytest.param(
        400,
        '{"message":"The model returned the following errors: Input is too long for requested '
        'model."}',
        (None, None, None),
        id="bedrock-input-too-long",
    ),
]


@pytest.mark.parametrize(("status", "body", "expected"), EXCESS)
def test_overflows_without_full_numbers(
    status: int, body: str, expected: tuple[int | None, int | None, int | None]
) -> None:
    parsed = classify_error(status, body)
    assert parsed.kind is OVERFLOW
    assert (parsed.input_tokens, parsed.limit_tokens, parsed.excess_tokens) == expected


def test_bedrock_throttling_is_not_an_overflow() -> None:
    body = '{"message":"ThrottlingException: Too many tokens, please wait before trying again."}'
    assert classify_error(429, body).kind is RATE_LIMIT


def test_long_almost_python_lines_are_not_parsed_at_length() -> None:
    """20 SSE lines of 200 KB that nearly parse as Python cost ~1.6 s in `ast.literal_eval`."""
    line = "data: {'error': [" + "'abc', " * 28_000 + "\n"
    start = time.perf_counter()
    assert classify_error(400, line * 20).kind is OTHER
    assert time.perf_counter() - start < 0.3


@pytest.mark.parametrize(("status", "body", "expected"), INLINE)
def test_inline(
    status: int | None,
    body: str,
    expected: tuple[ErrorKind, int | None, int | None, int | None],
) -> None:
    parsed = classify_error(status, body)
    assert (parsed.kind, parsed.input_tokens, parsed.limit_tokens, parsed.output_tokens) == expected


def test_message_is_innermost_error_message() -> None:
    parsed = classify_error(None, OPENROUTER_WRAPPING_ANTHROPIC)
    assert parsed.message == "prompt is too long: 208310 tokens > 200000 maximum"


def test_plain_text_message_is_trimmed_to_500_chars() -> None:
    parsed = classify_error(502, "  " + "x" * 600 + "  ")
    assert parsed == ParsedError(OTHER, "x" * 500)


def test_absurdly_long_numbers_are_ignored_not_raised() -> None:
    body = "prompt is too long: " + "9" * 5000 + " tokens > 200000 maximum"
    parsed = classify_error(400, body)
    assert (parsed.kind, parsed.input_tokens, parsed.limit_tokens) == (OVERFLOW, None, 200000)


def test_to_json_overflow() -> None:
    parsed = ParsedError(OVERFLOW, "too long", input_tokens=10, limit_tokens=8, output_tokens=None)
    assert parsed.to_json() == {
        "kind": "overflow",
        "inputTokens": 10,
        "limitTokens": 8,
        "outputTokens": None,
        "excessTokens": None,
        "message": "too long",
    }


@pytest.mark.parametrize("kind", [RATE_LIMIT, AUTH, OUTPUT_LIMIT, OTHER])
def test_to_json_non_overflow(kind: ErrorKind) -> None:
    parsed = ParsedError(kind, "nope", limit_tokens=4096, output_tokens=32000)
    assert parsed.to_json() == {"kind": kind.value, "message": "nope"}


def _assert_well_formed(parsed: ParsedError) -> None:
    assert isinstance(parsed.kind, ErrorKind)
    assert isinstance(parsed.message, str)
    json.dumps(parsed.to_json())


statuses = st.one_of(st.none(), st.integers(), st.sampled_from([400, 401, 403, 429, 500, 529]))


@settings(deadline=None)
@given(status=statuses, body=st.text())
def test_arbitrary_text_never_raises(status: int | None, body: str) -> None:
    _assert_well_formed(classify_error(status, body))


error_keys = st.sampled_from(
    ["error", "message", "type", "code", "status", "metadata", "raw", "n_ctx", "n_prompt_tokens"]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(error_keys | st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(status=statuses, value=json_values, prefix=st.sampled_from(["", "529 ", "data: "]))
def test_arbitrary_structured_bodies_never_raise(
    status: int | None, value: object, prefix: str
) -> None:
    _assert_well_formed(classify_error(status, prefix + json.dumps(value)))
    _assert_well_formed(classify_error(status, prefix + repr(value)))


@settings(deadline=None)
@given(
    name=st.sampled_from(sorted(_fixture_names())),
    cut=st.integers(min_value=0, max_value=2000),
    junk=st.text(max_size=20),
)
def test_mangled_fixtures_never_raise(name: str, cut: int, junk: str) -> None:
    text = _read(name)
    _assert_well_formed(classify_error(None, text[:cut] + junk + text[cut:]))
    _assert_well_formed(classify_error(None, text[:cut]))


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        # Strict servers name the field of the message they refuse (Kimi through opencode-go;
        # vLLM and TRT-LLM's pydantic validation, gsd-2#4647; Groq's wording).
        pytest.param(
            "Error from provider: Extra inputs are not permitted, field: 'messages[8].reasoning'",
            REASONING_REFUSED,
            id="extra-inputs-reasoning",
        ),
        pytest.param(
            "[{'type': 'extra_forbidden', 'loc': ('body', 'messages', 2, 'assistant', "
            "'reasoning_content'), 'msg': 'Extra inputs are not permitted'}]",
            REASONING_REFUSED,
            id="extra-forbidden-reasoning-content",
        ),
        pytest.param(
            "Additional properties are not allowed ('reasoning_content' was unexpected) - "
            "'messages.1'",
            REASONING_REFUSED,
            id="openai-json-schema",
        ),
        pytest.param(
            "'messages.1' : property 'reasoning_details' is unsupported",
            REASONING_REFUSED,
            id="property-unsupported",
        ),
        # Look-alikes that are not about the model's reasoning sent back.
        pytest.param(
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
            OTHER,
            id="reasoning-effort-is-another-field",
        ),
        pytest.param(
            "Extra inputs are not permitted, field: 'messages[2].cot_id'", OTHER, id="other-field"
        ),
        pytest.param("Invalid value: the reasoning model is busy", OTHER, id="the-word-alone"),
    ],
)
def test_reasoning_refused_or_wanted_by_its_field(body: str, kind: ErrorKind) -> None:
    assert classify_error(400, body).kind is kind
