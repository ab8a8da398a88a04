"""What every real stream capture in `tests/data/wire` says, and how the stream tests
read one.

Expected values were read off the captures by hand: the concatenated text and thinking, each tool
call, every usage number and the finish reason. `parse` runs a capture through the parser of its
dialect; `assert_honest` is what every parser's output must be, whatever it was fed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import WIRE
from tokengauge.messages import Usage
from tokengauge.upstream.dialects.dialect import make_parser
from tokengauge.upstream.dialects.events import (
    Finish,
    StreamError,
    StreamEvent,
    StreamParser,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCall,
)
from tokengauge.upstream.dialects.openai.stream import RESPONSES_API
from tokengauge.upstream.sse import iter_file_events

# What the captures say, read off them by hand (long strings split only for line length).
OPENAI_TEXT = "The result of \\( 1231 \\times 2331 \\) is \\( 2,869,461 \\)."
PELICAN_TEXT = (
    '1. **Pouch** - references their iconic bill pouch\n2. **Pelé** - playful take on "pelican"'
)
DEEPSEEK_TEXT = "Hello there! 😊 How can I help you today?"
OVERLOADED_BODY = (
    '{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}'
    "        }"
)

DEEPSEEK_THINKING = (
    'Hmm, the user just said "Hello". It\'s a simple greeting but I wonder '
    "if there's more to it.  \n\nThe message is very brief, so I don't have "
    "much context to work with. Maybe they're just testing if I'm responsive, "
    "or perhaps they're new to chatting with AI.  \n\nI should keep my reply "
    "warm and inviting to encourage further conversation. A smiley face would "
    "help make it friendly. Since they didn't specify a need, I'll leave it "
    "open-ended by asking how I can help them today.  \n\nThe tone should "
    'be cheerful but professional - not too stiff, not too casual. "Hello '
    'there!" feels right for a start. Adding "What can I do for you today?" '
    "turns it into an invitation rather than just mirroring their greeting. "
    " \n\nI'll avoid assumptions about their gender, location, or intent since "
    "there's zero information. If they're just being polite, they might not "
    "reply further - and that's okay too."
)
GROK_TEXT = (
    "I'm Grok, an AI built by xAI. I'm designed to be helpful, maximally truthful, "
    "and a bit witty—think a mix of the Hitchhiker's Guide to the Galaxy and "
    "JARVIS from Iron Man. My goal is to help you understand the universe "
    "(and maybe crack a few jokes along the way). What's on your mind?"
)
# The reasoning captures' texts, their `reasoning_content` and `content` fields joined.
DEEPSEEK_TOOL_THINKING = (
    "The user is asking for the weather in San Francisco. I need to use the weather t"
    "ool to get this information. Let me invoke the weather tool with the location pa"
    'rameter set to "San Francisco".'
)
SGLANG_THINKING = (
    "The user wants weather in Paris and Tokyo. The instructions say to call the tool"
    " once per city, and these are independent calls, so I should make them in the sa"
    "me block."
)
O3_TEXT = (
    "I’m ChatGPT, a large-language-model assistant created by OpenAI. I generate text"
    " responses and can help answer questions, explain concepts, brainstorm ideas, dr"
    "aft or edit writing, and more. While I strive to be accurate and helpful, I don’"
    "t have personal feelings or consciousness, and my knowledge is limited to the in"
    "formation I was trained on (most of it up to late 2023). If there’s something sp"
    "ecific you’d like help with, just let me know!"
)
MINIMAX_SPLIT_TEXT = (
    "**Proof.**\n\nOdd numbers: $2a + 1$ and $2b + 1$ for integers $a, b$.\n\nAdd:\n\n$$(2a"
    " + 1) + (2b + 1) = 2a + 2b + 2 = 2(a + b + 1)$$\n\nResult divisible by 2. Even. ∎"
)
MINIMAX_SPLIT_THINKING = (
    "The user wants a proof that the sum of two odd numbers is even. This is a straig"
    "htforward number theory proof. I should present it concisely in caveman style."
)
MINIMAX_TAGS_THINKING = (
    "\nThe user wants a proof that the sum of two odd numbers is even. I'll keep this "
    "straightforward and concise.\n"
)
MINIMAX_TAGS_TEXT = (
    "\n\n**Proof.** An integer is odd iff it equals 2k + 1 for some integer k. An integ"
    "er is even iff it equals 2m for some integer m.\n\nLet a and b be odd. Then a = 2h"
    " + 1 and b = 2k + 1 for some integers h, k.\n\nAdd them:\n\n```\na + b = (2h + 1) + ("
    "2k + 1)\n      = 2h + 2k + 2\n      = 2(h + k + 1)\n```\n\nSince h + k + 1 is an inte"
    "ger, a + b equals 2 times an integer — by definition, it is even.\n\n∎"
)
GLM_THINKING = (
    "\n1.  **Analyze the User's Request:** The user is asking a very simple, fundament"
    'al arithmetic question: "What is 2 + 2?".\n\n2.  **Identify the Core Concept:** Th'
    "e core concept is addition, specifically adding the integer 2 to another integer"
    " 2.\n\n3.  **Retrieve Knowledge:**\n    *   What is 2? It's the number that comes a"
    "fter 1.\n    *   What is addition? It's the process of combining two or more numb"
    "ers to find their total or sum.\n    *   What is 2 + 2? The most basic representa"
    'tion is "two plus two." I can think of two groups of two objects.\n        *   Gr'
    "oup 1: [object, object]\n        *   Group 2: [object, object]\n        *   Combin"
    "ed: [object, object, object, object]\n    *   Counting the combined objects: 1, 2"
    ", 3, 4.\n    *   The result is 4.\n\n4.  **Formulate the Answer:**\n    *   The dire"
    'ct and most accurate answer is "4".\n    *   I can add a tiny bit of context or j'
    "ust keep it simple. For a question this basic, simplicity is best. Over-explaini"
    "ng would be unnecessary and potentially confusing or condescending.\n    *   A co"
    "ncise and clear answer is preferred.\n\n5.  **Check for Nuances or Trickery:**\n   "
    ' *   Is this a trick question? "2 + 2 = 4" is a universal truth in standard arit'
    "hmetic.\n    *   Are there other contexts (e.g., different number bases)?\n       "
    " *   In base 10 (our standard system): 2 + 2 = 4.\n        *   In base 3, for exa"
    'mple, "4" would be represented as "11". But the question is written in standard '
    "notation, so the expected answer is in base 10. Unless the user specifies a diff"
    "erent base, the default is always base 10.\n        *   In other non-standard sys"
    'tems (like a certain Orwellian dystopia), the answer might be "5" ("2 + 2 = 5").'
    " This is a literary reference, not a mathematical fact. It's crucial to give the"
    " mathematically correct answer.\n    *   Is the user testing my ability to answer"
    " simple questions? Very likely. It's a common sanity check.\n    *   Could the us"
    "er be non-native English speaker? The question is in English, so an English answ"
    "er is correct.\n\n6.  **Final Decision:** The most helpful and correct response is"
    " the simple, direct answer. No extra fluff is needed.\n\n7.  **Draft the final res"
    'ponse:** "4".'
)
LONG_THINKING = (
    "This is a straightforward question about pedestrian safety. I should "
    "provide clear, helpful advice about how to safely cross a street. This "
    "is basic safety information that could help prevent accidents."
)
LONG_TEXT = (
    "Here are the basic steps for safely crossing the street:\n\n**At intersections "
    'with traffic lights:**\n- Wait for the pedestrian "Walk" signal\n- Look '
    "both ways before stepping into the street\n- Make eye contact with drivers "
    "when possible\n- Stay alert for turning vehicles\n\n**At intersections "
    "without signals:**\n- Use crosswalks when available\n- Stop at the curb "
    "and look left, right, then left again\n- Wait for a clear gap in traffic\n- "
    "Walk briskly but don't run\n- Keep looking for traffic as you cross\n\n**General "
    "safety tips:**\n- Put away phones and remove headphones\n- Wear bright "
    "or reflective clothing in low light\n- Never assume drivers see you\n- "
    "Avoid crossing between parked cars\n- Walk facing traffic when there's "
    "no sidewalk\n\n**In busy urban areas:**\n- Follow pedestrian signals "
    "strictly\n- Be extra cautious of cyclists in bike lanes\n- Watch for "
    "buses and large vehicles with blind spots\n\nThe key is to be visible, "
    "alert, and predictable in your movements. Always prioritize safety over "
    "speed when crossing streets."
)
PELICAN_THINKING = (
    "The user wants two names for a pet pelican, and they want me to be brief. "
    "I'll suggest two names that would suit a pelican well.\n\nSome good options:\n- "
    "Pelé (play on pelican)\n- Pouch (referencing their bill pouch)\n- Captain "
    "Beak\n- Squirt\n- Scoop\n- Wing\n\nLet me give two brief, catchy names:"
)
VERSION_THINKING = (
    "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the "
    "version\n3. Make a short joke about it\n\nLet me first call the fixed_version "
    "tool to see what version it returns."
)
PELICAN_SIGNATURE = (
    "EuYDCmMIDBgCKkC05Zda4P+Cdk/LQKE+Aol4ZY3EY4wLDrf8XcApz2PiqrxiRjS7uY1kGtZ63vVlaVmtuIp"
    "dsHbkdfGHb9AsBYw+MhljbGF1ZGUtaGFpa3UtNC01LTIwMjUxMDAxOAASDAXGiw23anViCe75HBoMATySwg"
    "VJ0A405/0FIjDbVX0lAn7rEq/ejcuOZWDihLSbS9KGihD2QsWmXzp2Ly5ZD5vtKOcKvhEDQ0PCeVkqsALmn"
    "x7FhoJ7TQQyomwwFY+zA/Sft9n7u3lNE/RzbZMF4jmvo9i1vtNLETK18iSdCAhSy+NJLFRK/vcw6sVaDNrE"
    "MGgIadv5iZ0Jmx+iHyR8sXbasYDMbN07/ype7JGpKxHCdQOrNA7plS39Yy5l7hqJz4ueYoCpMxc+IkNY+TC"
    "yMpKwGxYqKSUdElyLr0Ko3vXtdLJBTJQuMtU+cz+UPHkpTbGRPntg/hBvNztCjlqqeM6PKoE8rsDJMx0+q1"
    "eOrFPC9SYgCZqSGHlSHoOexnfkrN2aTlZjcBcFblXq76bKF1YHINp3uL+jByhp91XFSkhF+b43BC9PDtRUY"
    "Kw3wT+IZlEI6V3GppKBDSa8L0Sgm8m1Bb2PYvi3oIv+LDpUImrMckjemNZmBeGcEZQ4FjZiGAE="
)
VERSION_SIGNATURE = (
    "EoQDCm0IDhgCKkCDzGs2kL2PgnDCZU/nM2wG2P1VIXCRHVnhDDzBQxNF1fl4QBXEKLxRItNJ2MwFdW9eeZP"
    "hsxSQIxD54cv3zs29MhljbGF1ZGUtaGFpa3UtNC01LTIwMjUxMDAxOABCCHRoaW5raW5nEgy/OWlwTmmqUj"
    "C6L70aDJ4P0R5NfuIe9U5zAiIwCxPduXS2UxCNxJCee3i91qK3cAyAgxCjL2wkQ5UD56iX1hXGOyuNaiH5k"
    "+dF5OCQKsQBxiAo+NjC61hV8nRYtaiP+C4inOcuMKuTG9Z1rysxTXkKBTl3oMiOlnEPHHPpKpg4sYF2G5Vo"
    "Tg8JTon20hdZw4GfTEVupnU1qAmnMqyAgke9SoV7HBW/PyA/FxL/q33xJ2gKFiD+BsgI9Z0koMmFKCvm2Mo"
    "YE6u+ONEwKdFQXL1FKRW6t/bYbJGrLJLwxilsL82h9j4xjggjMn8Npvpn+zsrDPW/8PuLd4Pu+/EsjoneYw"
    "yxQQtUVgzhVGhhANWRjSBwUxgB"
)
LONG_SIGNATURE = (
    "EvMCCkYICxgCKkCHP2cSuEdcJK/0rFwqES/ecn+VurRpNTwI4XNyM0vnNfGsc9OmE8YYHauwBZ/uaRpmlEn"
    "2I4/kszHlcpptO82JEgyRMSbPkJYaegxYF3AaDHZbSm9EzZ6CM+YtliIw3iNVP/ilYrfoneo8S2+ad/5xSC"
    "62nKbk6joLtKmqXgXwYFJRpjIUjM2V7EGReOPRKtoBKfNHVmdNf7SeMhHalX/ObSeJ1G/NjDyGQAsDjyHGd"
    "7uY1r5gAIn3Cpdv5r+gHYJmWT+w2uiKZsBDRoSf4O3Km0l752EhPD4InEhqpCKyqhbUZ3dt5+JVKQHk2iyT"
    "BhQMB/XBYgZTstIpRqQRXU5ypcrydgnqj3mD1G9C7YC0ZTCNvFluAx0OL8q+cQwufgfqKquLEf2+XMYzhx9"
    "jYkVFEpnf/s1nx6gNBATKfF3Dmrs2r4tWu2QJB+FjlRuDp/8dxUxgJbmyhGxb7XsYeb1vgb7wwzDvP/Uhjf"
    "QYAQ=="
)


@dataclass(frozen=True)
class Expected:
    """What a person reading a capture expects; `shape` is the event kinds, runs collapsed."""

    shape: tuple[str, ...]
    text: str = ""
    thinking: str = ""
    signatures: tuple[str, ...] = ()
    reasoning: tuple[str | None, ...] = ()
    """The field each Chat Completions reasoning block says its reasoning came in."""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    finish: str | None = None
    errors: tuple[str, ...] = ()
    ended: bool = True


# The Responses API is another API (`response.*` events): the Chat Completions parser says so
# with one error instead of returning an empty answer that would look like a success.
RESPONSES = Expected(shape=("error",), errors=(RESPONSES_API,), ended=False)

OPENAI_ANSWER = Expected(
    shape=("text", "usage", "finish"),
    text=OPENAI_TEXT,
    usage=Usage(total_input_tokens=87, output_tokens=26, input_tokens=87),
    finish="stop",
)

CASES = [
    pytest.param("openai-chat-stream-usage-text.sse", "openai", OPENAI_ANSWER, id="openai-text"),
    # The same bytes, as a LiteLLM proxy passes them on (its cost is in a header, not the body).
    pytest.param("litellm-chat-stream-cost-header.sse", "openai", OPENAI_ANSWER, id="litellm-text"),
    pytest.param(
        "openai-chat-stream-usage-toolcall.sse",
        "openai",
        Expected(
            shape=("tool", "usage", "finish"),
            tool_calls=(
                ToolCall("call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", {"a": 1231, "b": 2331}),
            ),
            usage=Usage(total_input_tokens=54, output_tokens=20, input_tokens=54),
            finish="tool_calls",
        ),
        id="openai-toolcall",
    ),
    pytest.param(
        "openrouter-chat-stream-toolcall.sse",
        "openai",
        Expected(
            # No finish_reason ever arrives; none is invented. [DONE] flushes the call.
            shape=("tool", "usage"),
            tool_calls=(ToolCall("0", "llm_version", {}),),
            usage=Usage(
                total_input_tokens=57, output_tokens=17, input_tokens=57, cost_usd=0.00007159
            ),
        ),
        id="openrouter-toolcall-no-finish-reason",
    ),
    pytest.param(
        "openrouter-chat-stream-cached-reasoning-usage.sse",
        "openai",
        Expected(
            # Grok's reasoning is encrypted (reasoning_details only): no thinking text; its
            # details go back as they came.
            shape=("text", "reasoning", "usage", "finish"),
            reasoning=(None,),
            text=GROK_TEXT,
            usage=Usage(
                total_input_tokens=687,
                output_tokens=187,
                input_tokens=687,
                cache_read_tokens=679,
                reasoning_tokens=118,
                cost_usd=0.00333825,  # usage.cost, not BYOK
            ),
            finish="stop",
        ),
        id="openrouter-cached-reasoning",
    ),
    pytest.param(
        "xai-chat-stream-reasoning-cost.sse",
        "openai",
        Expected(
            # The capture keeps only the first few chunks of the reasoning.
            shape=("thinking", "text", "reasoning", "usage", "finish"),
            text="Hello",
            thinking="First, the user said",
            reasoning=("reasoning_content",),
            usage=Usage(
                total_input_tokens=12,
                output_tokens=1,
                input_tokens=12,
                cache_read_tokens=11,
                reasoning_tokens=290,
                cost_usd=0.000146625,  # cost_in_usd_ticks 1466250, 1e-10 USD each
            ),
            finish="stop",
        ),
        id="xai-reasoning-cost",
    ),
    pytest.param(
        "xai-responses-stream-completed-cost.sse",
        "responses",
        Expected(
            # Only the last event was kept: usage and the end of the answer, no text.
            shape=("usage", "finish"),
            usage=Usage(
                total_input_tokens=5467,
                output_tokens=593,
                input_tokens=5467,
                cache_read_tokens=1152,
                reasoning_tokens=575,
                cost_usd=0.017764,  # cost_in_usd_ticks 177640000
            ),
            finish="stop",
        ),
        id="xai-responses-completed",
    ),
    pytest.param(
        "openrouter-chat-stream-midstream-error.sse",
        "openai",
        Expected(
            # finish_reason "length" came before the error: it is dropped, the error stands.
            shape=("thinking", "error", "reasoning", "usage"),
            thinking="We need to respond to a greeting. The user",
            reasoning=("reasoning",),
            usage=Usage(
                total_input_tokens=43,
                output_tokens=10,
                input_tokens=43,
                reasoning_tokens=11,
                cost_usd=0.0,  # OpenRouter charged nothing for it
            ),
            errors=("Token limit reached",),
        ),
        id="openrouter-midstream-error",
    ),
    pytest.param(
        "deepseek-chat-stream-reasoning-usage.sse",
        "openai",
        Expected(
            shape=("thinking", "text", "reasoning", "usage", "finish"),
            text=DEEPSEEK_TEXT,
            thinking=DEEPSEEK_THINKING,
            reasoning=("reasoning_content",),
            usage=Usage(
                total_input_tokens=6, output_tokens=212, input_tokens=6, reasoning_tokens=198
            ),
            finish="stop",
        ),
        id="deepseek-reasoning",
    ),
    pytest.param(
        "deepseek-reasoner-stream-reasoning-toolcall.sse",
        "openai",
        Expected(
            # Thinking, then the call: the reasoning a later request must send back with it.
            shape=("thinking", "reasoning", "tool", "usage", "finish"),
            thinking=DEEPSEEK_TOOL_THINKING,
            tool_calls=(
                ToolCall(
                    "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", {"location": "San Francisco"}
                ),
            ),
            usage=Usage(
                total_input_tokens=339,
                output_tokens=83,
                input_tokens=339,
                cache_read_tokens=320,
                reasoning_tokens=39,
            ),
            finish="tool_calls",
            reasoning=("reasoning_content",),
        ),
        id="deepseek-reasoning-toolcall",
    ),
    pytest.param(
        "sglang-deepseek-v4-stream-reasoning-parallel-toolcalls.sse",
        "openai",
        Expected(
            # DeepSeek V4 Flash on SGLang: reasoning, a sentence, two calls; no usage asked for.
            shape=("thinking", "text", "reasoning", "tool", "finish"),
            text="I'll get the weather for both cities.\n\n",
            thinking=SGLANG_THINKING,
            tool_calls=(
                ToolCall("call_361011ce08d84cc6971c6d8a", "get_weather", {"city": "Paris"}),
                ToolCall("call_3aaf5236eecc4614aba70f6b", "get_weather", {"city": "Tokyo"}),
            ),
            finish="tool_calls",
            reasoning=("reasoning_content",),
        ),
        id="deepseek-v4-sglang-parallel-toolcalls",
    ),
    pytest.param(
        "openrouter-chat-stream-claude-reasoning-signature.sse",
        "openai",
        Expected(
            # Claude through OpenRouter: `reasoning` and `reasoning_details` carry the same text
            # (shown once); the details, signed, go back.
            shape=("thinking", "text", "reasoning", "usage", "finish"),
            text="2 + 2 = 4",
            thinking="This is a simple arithmetic question. 2+2 equals 4.",
            usage=Usage(
                total_input_tokens=43,
                output_tokens=36,
                input_tokens=43,
                reasoning_tokens=13,
                cost_usd=0.000669,
            ),
            finish="stop",
            reasoning=("reasoning",),
        ),
        id="openrouter-claude-reasoning-signature",
    ),
    pytest.param(
        "openrouter-chat-stream-o3-reasoning-encrypted.sse",
        "openai",
        Expected(
            # o3's reasoning is encrypted: nothing to show, its details to send back.
            shape=("text", "reasoning", "usage", "finish"),
            text=O3_TEXT,
            usage=Usage(total_input_tokens=9, output_tokens=104, input_tokens=9, cost_usd=0.00085),
            finish="stop",
            reasoning=(None,),
        ),
        id="openrouter-o3-reasoning-encrypted",
    ),
    pytest.param(
        "minimax-chat-stream-reasoning-split.sse",
        "openai",
        Expected(
            # `reasoning_split`: the reasoning beside the content, in both fields; the capture
            # kept no [DONE].
            shape=("thinking", "text", "reasoning", "usage", "finish"),
            text=MINIMAX_SPLIT_TEXT,
            thinking=MINIMAX_SPLIT_THINKING,
            usage=Usage(
                total_input_tokens=769,
                output_tokens=116,
                input_tokens=769,
                cache_read_tokens=443,
                reasoning_tokens=37,
            ),
            finish="stop",
            reasoning=("reasoning_content",),
            ended=False,
        ),
        id="minimax-reasoning-split",
    ),
    pytest.param(
        "minimax-chat-stream-think-tags.sse",
        "openai",
        Expected(
            # Without `reasoning_split` the reasoning opens the content in <think> tags.
            shape=("thinking", "text", "reasoning", "usage", "finish"),
            text=MINIMAX_TAGS_TEXT,
            thinking=MINIMAX_TAGS_THINKING,
            usage=Usage(
                total_input_tokens=767,
                output_tokens=172,
                input_tokens=767,
                cache_read_tokens=443,
                reasoning_tokens=25,
            ),
            finish="stop",
            reasoning=("think",),
            ended=False,
        ),
        id="minimax-think-tags",
    ),
    pytest.param(
        "zai-chat-stream-glm47-reasoning.sse",
        "openai",
        Expected(
            shape=("thinking", "text", "reasoning", "usage", "finish"),
            text="4",
            thinking=GLM_THINKING,
            usage=Usage(
                total_input_tokens=13, output_tokens=564, input_tokens=13, reasoning_tokens=561
            ),
            finish="stop",
            reasoning=("reasoning_content",),
        ),
        id="glm-reasoning",
    ),
    pytest.param("openai-responses-stream-basic.sse", "openai", RESPONSES, id="responses-basic"),
    pytest.param(
        "openai-responses-stream-tooluse.sse", "openai", RESPONSES, id="responses-tooluse"
    ),
    pytest.param(
        "openai-responses-stream-reasoning-usage.sse", "openai", RESPONSES, id="responses-reasoning"
    ),
    pytest.param(
        "openai-responses-stream-cached-tokens.sse", "openai", RESPONSES, id="responses-cached"
    ),
    pytest.param(
        "anthropic-stream-text.sse",
        "anthropic",
        Expected(
            shape=("text", "usage", "finish"),
            text="Hello",
            usage=Usage(total_input_tokens=10, output_tokens=4, input_tokens=10),
            finish="end_turn",
        ),
        id="anthropic-text",
    ),
    pytest.param(
        "anthropic-stream-thinking.sse",
        "anthropic",
        Expected(
            shape=("thinking", "signature", "text", "usage", "finish"),
            text=PELICAN_TEXT,
            thinking=PELICAN_THINKING,
            signatures=(PELICAN_SIGNATURE,),
            usage=Usage(total_input_tokens=46, output_tokens=133, input_tokens=46),
            finish="end_turn",
        ),
        id="anthropic-thinking",
    ),
    pytest.param(
        "anthropic-stream-thinking-long.sse",
        "anthropic",
        Expected(
            shape=("thinking", "signature", "text", "usage", "finish"),
            text=LONG_TEXT,
            thinking=LONG_THINKING,
            signatures=(LONG_SIGNATURE,),
            usage=Usage(total_input_tokens=43, output_tokens=282, input_tokens=43),
            finish="end_turn",
        ),
        id="anthropic-thinking-long",
    ),
    pytest.param(
        "anthropic-stream-thinking-tooluse.sse",
        "anthropic",
        Expected(
            shape=("thinking", "signature", "tool", "usage", "finish"),
            thinking=VERSION_THINKING,
            signatures=(VERSION_SIGNATURE,),
            tool_calls=(ToolCall("toolu_01825dXWLSoJwCst1qTsiWdb", "fixed_version", {}),),
            usage=Usage(
                total_input_tokens=598, output_tokens=92, input_tokens=598, reasoning_tokens=53
            ),
            finish="tool_use",
        ),
        id="anthropic-thinking-tooluse",
    ),
    pytest.param(
        "anthropic-stream-tooluse-empty-input.sse",
        "anthropic",
        Expected(
            shape=("tool", "usage", "finish"),
            tool_calls=(ToolCall("toolu_01CzN6riCPqw4pVSuTd9Dwn7", "pelican_name_generator", {}),),
            usage=Usage(total_input_tokens=543, output_tokens=40, input_tokens=543),
            finish="tool_use",
        ),
        id="anthropic-tooluse-empty-input",
    ),
    pytest.param(
        "anthropic-stream-tooluse-parallel.sse",
        "anthropic",
        Expected(
            shape=("tool", "usage", "finish"),
            tool_calls=(
                ToolCall("toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator", {}),
                ToolCall("toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator", {}),
            ),
            usage=Usage(total_input_tokens=542, output_tokens=62, input_tokens=542),
            finish="tool_use",
        ),
        id="anthropic-tooluse-parallel",
    ),
    pytest.param(
        "anthropic-stream-cache-read.sse",
        "anthropic",
        Expected(
            # Server-side compaction: message_delta's top level (181 input, 0 cached) describes
            # the compacted context; the first iteration read our prompt: 100 + 55096 cached.
            shape=("text", "usage", "finish"),
            text="Hello! 👋",
            usage=Usage(
                total_input_tokens=55196, output_tokens=8, input_tokens=100, cache_read_tokens=55096
            ),
            finish="end_turn",
        ),
        id="anthropic-cache-read-compaction",
    ),
    pytest.param(
        "error-anthropic-overloaded-stream-event.sse",
        "anthropic",
        Expected(shape=("error",), errors=("Overloaded",), ended=False),
        id="anthropic-overloaded-error",
    ),
]

EXACT = [
    pytest.param(
        "anthropic-stream-text.sse",
        "anthropic",
        [
            TextDelta("Hello"),
            Usage(total_input_tokens=10, output_tokens=4, input_tokens=10),
            Finish("end_turn"),
        ],
        id="anthropic-text",
    ),
    pytest.param(
        "anthropic-stream-cache-read.sse",
        "anthropic",
        [
            TextDelta("Hello!"),
            TextDelta(" "),
            TextDelta("👋"),
            Usage(
                total_input_tokens=55196, output_tokens=8, input_tokens=100, cache_read_tokens=55096
            ),
            Finish("end_turn"),
        ],
        id="anthropic-cache-read",
    ),
    pytest.param(
        "error-anthropic-overloaded-stream-event.sse",
        "anthropic",
        [StreamError("Overloaded", body=OVERLOADED_BODY)],
        id="anthropic-overloaded",
    ),
    pytest.param(
        "openai-chat-stream-usage-toolcall.sse",
        "openai",
        [
            ToolCall("call_1EYWDzueHEp8OsB8jJSEp7WB", "multiply", {"a": 1231, "b": 2331}),
            Usage(total_input_tokens=54, output_tokens=20, input_tokens=54),
            Finish("tool_calls"),
        ],
        id="openai-toolcall",
    ),
    pytest.param(
        "openrouter-chat-stream-toolcall.sse",
        "openai",
        [
            ToolCall("0", "llm_version", {}),
            Usage(total_input_tokens=57, output_tokens=17, input_tokens=57, cost_usd=0.00007159),
        ],
        id="openrouter-toolcall",
    ),
]

KINDS: dict[type, str] = {
    TextDelta: "text",
    ThinkingDelta: "thinking",
    ToolCall: "tool",
    Usage: "usage",
    StreamError: "error",
    Finish: "finish",
}


def kind(event: StreamEvent) -> str:
    """An event's kind, as `Expected.shape` names it."""
    if isinstance(event, ThinkingBlock):
        return "reasoning" if carries_reasoning(event) else "signature"
    return KINDS[type(event)]


def carries_reasoning(block: ThinkingBlock) -> bool:
    """Whether a block is a Chat Completions message's reasoning (what goes back as it came)."""
    return any(v is not None for v in (block.field, block.details, block.calls, block.extra))


def shape(events: Sequence[StreamEvent]) -> tuple[str, ...]:
    """The kinds of `events` in order, runs of one kind collapsed."""
    kinds: list[str] = []
    for event in events:
        if not kinds or kinds[-1] != kind(event):
            kinds.append(kind(event))
    return tuple(kinds)


def read(name: str) -> bytes:
    """A capture's bytes."""
    return (WIRE / name).read_bytes()


def feed_all(parser: StreamParser, items: Sequence[Any], *, finish: bool = True) -> list[Any]:
    """Feed `(event, data)` pairs (a bare string is a `message` event's data)."""
    events: list[Any] = []
    for item in items:
        event, data = item if isinstance(item, tuple) else ("message", item)
        events += parser.feed(event, data)
    if finish:
        events += parser.finish()
    return events


def parse(dialect: Any, data: bytes) -> tuple[list[StreamEvent], bool]:
    """A whole capture through a fresh parser of `dialect`: its events, and whether it ended."""
    parser = make_parser(dialect)
    events = feed_all(parser, [(sse.event, sse.data) for sse in iter_file_events(data)])
    return events, parser.ended


def assert_honest(events: Sequence[StreamEvent]) -> None:
    """One usage at most, one finish at most and last, and no finish at all after an error."""
    assert sum(isinstance(e, Usage) for e in events) <= 1
    finishes = [i for i, e in enumerate(events) if isinstance(e, Finish)]
    assert len(finishes) <= 1
    if finishes:
        assert finishes[0] == len(events) - 1
        assert not any(isinstance(e, StreamError) for e in events)
