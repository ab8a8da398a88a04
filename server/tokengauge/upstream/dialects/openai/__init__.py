"""OpenAI Chat Completions and the servers that speak it."""
