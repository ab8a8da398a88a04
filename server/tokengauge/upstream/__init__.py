"""Talking to the user's LLM API: request bodies, stream parsing, HTTP, retries, discovery."""
