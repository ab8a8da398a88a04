"""The three wire dialects behind one interface: URL, headers, request body and stream parser.

`openai` covers every Chat Completions server (OpenAI, Azure, OpenRouter, Vercel AI Gateway,
DeepSeek, Groq, Ollama, LM Studio, vLLM, llama.cpp); `responses` is OpenAI's Responses API;
`anthropic` is the native Messages API. A captured stream of any parses offline as the chat loop
would parse it live (`parse_stream_file`, behind `tokengauge parse-stream`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import attrs

from tokengauge.messages import InvalidInput, Message, Tool
from tokengauge.models.catalog import ModelSpec
from tokengauge.settings import DialectName, ProviderSettings
from tokengauge.upstream.dialects.anthropic.request import anthropic_headers, build_anthropic_body
from tokengauge.upstream.dialects.anthropic.stream import AnthropicStreamParser
from tokengauge.upstream.dialects.body import merged_headers
from tokengauge.upstream.dialects.events import StreamError, StreamEvent, StreamParser
from tokengauge.upstream.dialects.openai.reasoning_rules import rule_for
from tokengauge.upstream.dialects.openai.request import (
    build_openai_body,
    max_tokens_field_for,
    openai_headers,
)
from tokengauge.upstream.dialects.openai.stream import OpenAIStreamParser
from tokengauge.upstream.dialects.responses.request import build_responses_body
from tokengauge.upstream.dialects.responses.stream import ResponsesStreamParser
from tokengauge.upstream.http import join_url
from tokengauge.upstream.options import ChatOptions
from tokengauge.upstream.presets import auth_of, caches_where_marked
from tokengauge.upstream.sse import iter_file_events

BodyBuilder = Callable[[ModelSpec, Sequence[Message], Sequence[Tool], ChatOptions, int], Any]
_TERMINAL: Final[dict[str, str]] = {
    "openai": "data: [DONE]",
    "anthropic": "message_stop",
    "responses": "response.completed",
}


@attrs.frozen
class Dialect:
    """How to talk to one kind of API."""

    name: str
    url: Callable[[str], str]
    body: BodyBuilder
    parser: Callable[[], StreamParser]


def openai_url(base_url: str) -> str:
    """Chat Completions endpoint under an OpenAI-style base URL (which ends in `/v1` or so)."""
    return join_url(base_url, "chat/completions")


def responses_url(base_url: str) -> str:
    """Responses endpoint under an OpenAI-style base URL (which ends in `/v1` or so)."""
    return join_url(base_url, "responses")


def anthropic_url(base_url: str) -> str:
    """Messages endpoint; accepts `https://api.anthropic.com` and `https://api.anthropic.com/v1`."""
    path = urlsplit(base_url).path.rstrip("/")
    return join_url(base_url, "messages" if path.endswith("/v1") else "v1/messages")


def _openai_body(
    model: ModelSpec,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    options: ChatOptions,
    max_tokens: int,
) -> Any:
    field = max_tokens_field_for(model.family, model.provider.base_url)
    return build_openai_body(
        model.id,
        messages,
        tools,
        options,
        max_tokens,
        max_tokens_field=field,
        rule=rule_for(model),
        family=model.family,
        cache_marks=caches_where_marked(model.provider, model.id),
    )


def _responses_body(
    model: ModelSpec,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    options: ChatOptions,
    max_tokens: int,
) -> Any:
    return build_responses_body(model.id, messages, tools, options, max_tokens)


def _anthropic_body(
    model: ModelSpec,
    messages: Sequence[Message],
    tools: Sequence[Tool],
    options: ChatOptions,
    max_tokens: int,
) -> Any:
    return build_anthropic_body(model.id, messages, tools, options, max_tokens)


def check_api_key(provider: ProviderSettings, api_key: str) -> None:
    """`InvalidInput` if the key cannot travel in an HTTP header (which takes printable ASCII)."""
    for position, character in enumerate(api_key):
        if not " " <= character <= "~":
            raise InvalidInput(
                f"The API key for {provider.id} has a character an HTTP header cannot carry "
                f"(position {position + 1}). Please run 'Token Gauge: Set API Key' to enter it "
                "again."
            )


def provider_headers(provider: ProviderSettings, api_key: str | None) -> dict[str, str]:
    """HTTP headers for a provider: its extra headers plus the key where its API wants it
    (its preset says where); `InvalidInput` for a key no header can carry."""
    if api_key:
        check_api_key(provider, api_key)
    auth = auth_of(provider)
    if provider.dialect == "anthropic":
        base = anthropic_headers("", provider.headers)
    else:
        base = openai_headers(None, provider.headers)
    if not api_key:
        return base
    if auth == "bearer":
        return merged_headers(base, {"Authorization": f"Bearer {api_key}"})
    return merged_headers(base, {auth: api_key})


def dialect_for(model: ModelSpec) -> Dialect:
    """The dialect the model's provider speaks."""
    if model.provider.dialect == "anthropic":
        return Dialect("anthropic", anthropic_url, _anthropic_body, AnthropicStreamParser)
    if model.provider.dialect == "responses":
        return Dialect("responses", responses_url, _responses_body, ResponsesStreamParser)
    return Dialect("openai", openai_url, _openai_body, OpenAIStreamParser)


def make_parser(dialect: DialectName) -> StreamParser:
    """A fresh parser for one response in `dialect`."""
    if dialect == "openai":
        return OpenAIStreamParser()
    if dialect == "anthropic":
        return AnthropicStreamParser()
    if dialect == "responses":
        return ResponsesStreamParser()
    raise ValueError(
        f"unknown stream dialect {dialect!r} (expected 'openai', 'anthropic' or 'responses')"
    )


def parse_stream_file(dialect: DialectName, data: bytes) -> list[StreamEvent]:
    """Every stream event of a captured stream, ending with an error if it was cut off (a
    capture that stops before its terminal event without having reported an error)."""
    parser = make_parser(dialect)
    events: list[StreamEvent] = []
    for sse in iter_file_events(data):
        events += parser.feed(sse.event, sse.data)
    events += parser.finish()
    if not parser.ended and not any(isinstance(event, StreamError) for event in events):
        terminal = _TERMINAL[dialect]
        events.append(StreamError(f"the stream ended before {terminal}: it is incomplete"))
    return events
