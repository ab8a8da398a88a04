"""Where a chat request goes and how it is spoken there: the model, its provider's dialect and
URL, the person's key and the options asked for; and a failure there in words a person can act
on, without the key (`upstream.explain`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from tokengauge.messages import InvalidInput, Message, Tool
from tokengauge.models.catalog import ModelSpec
from tokengauge.models.served import Kind
from tokengauge.protocol import ChatParams
from tokengauge.upstream.dialects.dialect import Dialect, dialect_for, provider_headers
from tokengauge.upstream.errors import UpstreamError
from tokengauge.upstream.explain import brief, explain, midstream
from tokengauge.upstream.options import ChatOptions, parse_model_options, with_defaults
from tokengauge.upstream.redact import provider_secrets, redact
from tokengauge.upstream.served import served_kind


def chat_options(model: ModelSpec, params: ChatParams) -> ChatOptions:
    """The options a request asks for, over the model's own (`tokenGauge.models`); `InvalidInput`
    naming where a bad one was written."""
    try:
        defaults = parse_model_options(params.tool_mode, model.options)
    except InvalidInput as exc:
        message = str(exc).replace("modelOptions", f"options of {model.id} (tokenGauge.models)")
        raise InvalidInput(message) from None
    return with_defaults(parse_model_options(params.tool_mode, params.model_options), defaults)


@attrs.define
class Route:
    """The way to the model for one request (a local server's `num_ctx` joins its options once
    the server is asked)."""

    model: ModelSpec
    options: ChatOptions
    api_key: str | None
    dialect: Dialect
    url: str
    local: Kind | None
    """Which local server serves the model, if one does."""

    @classmethod
    def to(cls, model: ModelSpec, options: ChatOptions, api_key: str | None) -> Route:
        """The route to `model` with the person's `options` and key."""
        dialect = dialect_for(model)
        url = dialect.url(model.provider.base_url)
        return cls(model, options, api_key, dialect, url, served_kind(model.provider))

    def headers(self) -> dict[str, str]:
        """The provider's headers with the key where its API wants it."""
        return provider_headers(self.model.provider, self.api_key)

    def body(self, messages: Sequence[Message], tools: Sequence[Tool], max_tokens: int) -> Any:
        """The request's JSON body in the provider's dialect."""
        return self.dialect.body(self.model, messages, tools, self.options, max_tokens)

    def redact(self, text: str) -> str:
        """`text` without the API key or another of the provider's credentials in it."""
        return redact(text, *provider_secrets(self.model.provider, self.api_key))

    def explain(
        self, failure: UpstreamError, said: str | None = None, todo: str | None = None
    ) -> str:
        """What went wrong and what to do (`todo`, where the caller knows), without the key."""
        provider, model = self.model.provider, self.model.id
        return explain(
            provider, self.url, failure, model=model, said=said, key=self.api_key, todo=todo
        )

    def brief(self, failure: UpstreamError) -> str:
        """The failure in a few words."""
        return brief(self.model.provider, self.url, failure)

    def midstream(self, message: str) -> str:
        """An error the API reported inside a stream that had begun well, without the key."""
        return midstream(self.model.provider, self.url, message, self.api_key)


def larger_window(model: ModelSpec) -> str:
    """How a person gets a larger window for the model."""
    kind = served_kind(model.provider)
    if kind == "ollama":
        return (
            "have Ollama load the model with more context (the model's numCtx setting, or "
            "OLLAMA_CONTEXT_LENGTH)"
        )
    if kind is not None:
        return "load the model with a larger context length in its server"
    return "pick a model with a larger window"
