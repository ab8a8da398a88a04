"""Chat Completions servers of reasoning models, as strict as their documentation
(`tests/data/wire/SOURCES.md`, section 7, cites each page and error body).

``ModelBehavior.reasoning`` names one. How it streams the model's reasoning, and what it refuses:

- ``deepseek`` (V4, thinking on unless ``thinking: {type: disabled}``): ``reasoning_content``
  deltas; an assistant message with ``tool_calls`` and no ``reasoning_content`` is a 400 (the
  Thinking Mode guide: it "must be passed back to the API in all subsequent requests").
- ``deepseek-r1`` (the old reasoner): ``reasoning_content`` deltas; any ``reasoning_content`` in
  the input is a 400 (its Reasoning Model guide).
- ``kimi``: ``reasoning_content``; a tool-call message without it is a 400 naming its index.
- ``glm``: ``reasoning_content``; nothing refused (Z.ai documents no error, only worse answers).
- ``minimax``: with ``reasoning_split``, ``reasoning_content`` and ``reasoning_details`` as the
  capture streams them; without, ``<think>`` tags opening the content; nothing refused.
- ``openrouter``: ``reasoning`` and ``reasoning_details`` (``reasoning.text``, the last piece
  signed, as OpenRouter streams Claude); a tool-call message whose details this upstream issued
  must bring them back exactly, else the 400 OpenRouter gives for Gemini 3.
- ``gemini`` (the OpenAI-compatible API): no reasoning text; the first call of each step carries
  ``extra_content.google.thought_signature``; in the current turn a call without its signature
  (or the documented dummy) is Gemini's 400, a JSON array.
- ``strict`` (a validating server: vLLM's and other pydantic servers' ``extra_forbidden``):
  ``reasoning_content`` deltas, and any assistant field but role, content, name and tool_calls
  is a 400 naming it.

Signatures are bound here to what they sign, so a client that alters them is refused as the real
servers would refuse it; what this upstream issued is kept per call id (``Issued``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from tests.harness.fake_upstream.model import ReplyPlan, pieces_of
from tests.harness.fake_upstream.thinking import signature_of
from tests.harness.fake_upstream.wire import load

STRICT: Final = "strict"
GEMINI_DUMMIES: Final = ("skip_thought_signature_validator", "context_engineering_is_the_way_to_go")
_ALLOWED: Final = frozenset({"role", "content", "name", "tool_calls"})
_OPENROUTER_FORMAT: Final = "google-gemini-v1"

Issued = dict[str, Any]
"""What this upstream sent with each tool call, by call id: OpenRouter's details, Gemini's
signature."""
Refusal = tuple[int, Any]


def thinking_on(server: str, body: Mapping[str, Any]) -> bool:
    """Whether the server reasons for this body (DeepSeek's and Kimi's switch)."""
    thinking = body.get("thinking")
    return not (isinstance(thinking, Mapping) and thinking.get("type") == "disabled")


def refusal(server: str, body: Mapping[str, Any], issued: Issued) -> Refusal | None:
    """The status and error body the server answers this request with, if it refuses it."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    assistants = [(i, m) for i, m in enumerate(messages) if m.get("role") == "assistant"]
    if server == "deepseek-r1":
        if any("reasoning_content" in m for _, m in assistants):
            return 400, _fixture("error-deepseek-reasoner-reasoning-content-in-input.json")
    elif server == STRICT:
        for index, message in assistants:
            extra = sorted(set(message) - _ALLOWED)
            if extra:
                return 400, _extra_forbidden(index, extra[0], message[extra[0]])
    elif server in ("deepseek", "kimi") and thinking_on(server, body):
        for index, message in assistants:
            if message.get("tool_calls") and not isinstance(message.get("reasoning_content"), str):
                if server == "deepseek":
                    return 400, _fixture("error-deepseek-reasoning-not-passed-back.json")
                return 400, _kimi_missing(index)
    elif server == "openrouter":
        for _, message in assistants:
            ids = [str(c.get("id")) for c in _calls(message)]
            wanted = [issued[i] for i in ids if i in issued]
            if wanted and message.get("reasoning_details") != wanted[0]:
                return 400, _fixture("error-openrouter-gemini-reasoning-details-missing.json")
    elif server == "gemini":
        return _gemini_refusal(messages, issued)
    return None


def _gemini_refusal(messages: Sequence[Mapping[str, Any]], issued: Issued) -> Refusal | None:
    turn = max((i for i, m in enumerate(messages) if _user_text(m)), default=-1)
    for index, message in enumerate(messages):
        calls = _calls(message)
        if index < turn or message.get("role") != "assistant" or not calls:
            continue
        first = calls[0]
        google = (first.get("extra_content") or {}).get("google") or {}
        signature = google.get("thought_signature") if isinstance(google, Mapping) else None
        expected = issued.get(str(first.get("id")))
        if signature is None or signature not in (expected, *GEMINI_DUMMIES):
            name = (first.get("function") or {}).get("name", "")
            return 400, _gemini_missing(name, index)
    return None


def _user_text(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user"


def _calls(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls = message.get("tool_calls")
    return [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []


def _fixture(name: str) -> Any:
    return json.loads(load(name).data)


def _kimi_missing(index: int) -> Any:
    body = _fixture("error-moonshot-reasoning-content-missing.json")
    message = body["error"]["message"]
    body["error"]["message"] = message.rsplit(" ", 1)[0] + f" {index}"
    return body


def _gemini_missing(name: str, position: int) -> Any:
    body = _fixture("error-gemini-openai-missing-thought-signature.json")
    error = body[0]["error"]
    head, _, tail = error["message"].partition("Additional data, ")
    _, _, rest = tail.partition(". Please")
    error["message"] = (
        f"{head}Additional data, function call `default_api:{name}` , position {position}. "
        f"Please{rest}"
    )
    return body


def _extra_forbidden(index: int, field: str, value: Any) -> Any:
    """vLLM's validation error for a field its request model forbids (the envelope of
    ``error-vllm-extra-forbidden.json``; the ``loc`` of an assistant message's field as pydantic
    names it)."""
    body = _fixture("error-vllm-extra-forbidden.json")
    shown = value if isinstance(value, str) else json.dumps(value)
    detail = {
        "type": "extra_forbidden",
        "loc": ("body", "messages", index, "assistant", field),
        "msg": "Extra inputs are not permitted",
        "input": shown[:40],
    }
    body["message"] = repr([detail])
    return body


def signature_for_call(call_id: str) -> str:
    """The thought signature this upstream gives a Gemini call (opaque at Gemini)."""
    return "Cs" + hashlib.sha256(f"gemini:{call_id}".encode()).hexdigest()[:48] + "=="


def reasoning_deltas(server: str | None, plan: ReplyPlan, body: Mapping[str, Any]) -> list[Any]:
    """The deltas that stream the plan's reasoning, before its content."""
    thinking = plan.thinking
    if not thinking or server == "gemini" or (server and not thinking_on(server, body)):
        return []
    if server == "openrouter":
        details = [
            {
                "content": "",
                "reasoning": piece,
                "reasoning_details": [_detail(text=piece)],
            }
            for piece in pieces_of(thinking)
        ]
        signed = {"reasoning": None, "reasoning_details": [_detail(signature_of(thinking))]}
        return [*details, signed]
    if server == "minimax" and body.get("reasoning_split") is True:
        item: dict[str, Any] = {"type": "reasoning.text", "id": "reasoning-text-1"}
        item |= {"format": "MiniMax-response-v1", "index": 0}
        return [
            {"reasoning_content": piece, "reasoning_details": [{**item, "text": piece}]}
            for piece in pieces_of(thinking)
        ]
    if server == "minimax":
        tagged = f"<think>\n{thinking}\n</think>\n\n"
        return [{"content": piece} for piece in pieces_of(tagged)]
    return [{"content": None, "reasoning_content": piece} for piece in pieces_of(thinking)]


def issue(issued: Issued, server: str, plan: ReplyPlan, call: str, body: Mapping[str, Any]) -> None:
    """Keep what a client must send back with the answer's call: OpenRouter's details (its
    pieces merged), Gemini's signature."""
    if server == "openrouter" and plan.thinking:
        merged = _detail(text=plan.thinking)
        merged["signature"] = signature_of(plan.thinking)
        issued[call] = [merged]
    elif server == "gemini":
        issued[call] = signature_for_call(call)


def _detail(signature: str | None = None, text: str = "") -> dict[str, Any]:
    detail: dict[str, Any] = {"type": "reasoning.text", "text": text}
    if signature is not None:
        detail["signature"] = signature
    return {**detail, "format": _OPENROUTER_FORMAT, "index": 0}
