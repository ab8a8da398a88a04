"""Run the test upstream as a separate process and drive it through ``/_control``."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from tests.harness.fake_upstream.config import Scripted, UpstreamConfig, to_json

REPO = Path(__file__).resolve().parents[3]


def upstream_command(config: UpstreamConfig | None = None, port: int = 0) -> list[str]:
    """The command line that starts a standalone upstream (run it with ``cwd=REPO``)."""
    config_json = json.dumps(to_json(config or UpstreamConfig()))
    args = [
        "-m",
        "tests.harness.fake_upstream.server",
        "--port",
        str(port),
        "--config",
        config_json,
    ]
    return [sys.executable, *args, "--watch-stdin"]


class SubprocessUpstream:
    """``with SubprocessUpstream(config) as up: up.base_url, up.script(...), up.requests()``."""

    def __init__(self, config: UpstreamConfig | None = None, start_timeout: float = 15.0) -> None:
        self.config = config or UpstreamConfig()
        self.start_timeout = start_timeout
        self.base_url = ""
        self.process: subprocess.Popen[bytes] | None = None
        self._client: httpx.Client | None = None

    def __enter__(self) -> SubprocessUpstream:
        self.process = subprocess.Popen(
            upstream_command(self.config),
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        line: list[bytes] = []
        assert self.process.stdout is not None
        reader = threading.Thread(target=lambda: line.append(self.process.stdout.readline()))  # type: ignore[union-attr]
        reader.start()
        reader.join(self.start_timeout)
        if not line or not line[0].startswith(b"http://127.0.0.1:"):
            self.__exit__(None, None, None)
            raise RuntimeError(f"upstream did not start: {line!r}")
        self.base_url = line[0].decode().strip()
        self._client = httpx.Client(base_url=self.base_url, timeout=30)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._client is not None:
            self._client.close()
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.process is not None:
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()

    @property
    def pid(self) -> int:
        """The upstream's process id."""
        if self.process is None:
            raise RuntimeError("not started")
        return self.process.pid

    def control(self, method: str, path: str, body: Any = None, **params: Any) -> Any:
        """One ``/_control/<path>`` call; returns the JSON answer (raises on HTTP errors)."""
        assert self._client is not None, "not started"
        response = self._client.request(method, f"/_control/{path}", json=body, params=params)
        response.raise_for_status()
        return response.json()

    def script(self, *items: Scripted, replace: bool = False) -> None:
        responses = [to_json(item) for item in items]
        self.control("POST", "script", {"responses": responses, "replace": replace})

    def configure(self, changes: dict[str, Any]) -> dict[str, Any]:
        config: dict[str, Any] = self.control("POST", "config", changes)
        return config

    def requests(self, **params: Any) -> list[dict[str, Any]]:
        """Recorded requests as JSON (params: route, since, wait_count, timeout)."""
        found: list[dict[str, Any]] = self.control("GET", "requests", **params)["requests"]
        return found

    def request(
        self, request_id: int, wait: str | None = None, timeout: float = 5
    ) -> dict[str, Any]:
        """One record, optionally after waiting for ``finished`` / ``disconnected``."""
        params: dict[str, Any] = {"timeout": timeout}
        if wait:
            params["wait"] = wait
        record: dict[str, Any] = self.control("GET", f"requests/{request_id}", **params)
        return record

    def stats(self) -> dict[str, Any]:
        """Request counts (``truncated``: silently truncated) and the loaded models."""
        stats: dict[str, Any] = self.control("GET", "stats")
        return stats

    def reset(self, config: bool = False) -> None:
        self.control("POST", "reset", {"config": config})
