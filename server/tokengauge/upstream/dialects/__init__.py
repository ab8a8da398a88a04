"""The wire dialects, one folder per API: what a request body holds and how its stream is read.

- `openai/`: Chat Completions, spoken by OpenAI and every OpenAI-compatible server (Azure,
  OpenRouter, DeepSeek, Gemini's compatibility API, Groq, Ollama, LM Studio, vLLM, llama.cpp, …);
- `responses/`: OpenAI's Responses API;
- `anthropic/`: Anthropic's Messages API.

`dialect.py` puts them behind one interface, `events.py` is what every stream parser yields and
`body.py` what every request builder shares.
"""
