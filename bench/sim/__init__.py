"""The summarization simulator (`python -m bench.sim`): Copilot's agent loop, or VS Code's Agent
Host, against the fake upstream, with tokengauge and other counters in Copilot's place; the
stand-ins themselves are the test harness's (`tests.harness.copilot`)."""
