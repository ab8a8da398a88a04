"""The test harness that tests/ and bench/ share: the language server run over stdio and the clients
that talk to it (`lsp`), and a fake LLM API on 127.0.0.1 that speaks the real wire formats
(`fake_upstream`)."""
