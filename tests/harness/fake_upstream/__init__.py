"""A fake LLM API: a real HTTP server (aiohttp on 127.0.0.1) that speaks the APIs tokengauge calls.

Replays the wire fixtures, lists models in each provider's shape, runs a deterministic "model"
with a true token count and a context window, and injects faults; it records every request and
notices client disconnects. As a local server (Ollama, LM Studio, vLLM) it also loads models with
a context of their own and may cut an overflowing prompt silently (``loading.py``,
``local_servers.py``, ``ollama_chat.py``). In process: ``server.py`` (``running_upstream``); as a
process of its own: ``process.py`` (``SubprocessUpstream``) or ``python -m
tests.harness.fake_upstream.server``, driven over HTTP (``control.py``).
"""
