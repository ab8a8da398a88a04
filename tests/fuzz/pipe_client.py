"""A bare LSP client over pipes for the fuzz suites: raw bytes in, every response kept by id.

pytest-lsp's client serializes and checks what it sends; the fuzz suites must send anything at
all, and thousands of requests a minute to one long-lived server, so they write bytes themselves
and a thread reads the server's output.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.harness.lsp import SERVER_COMMAND, frame, read_frame


class PipeServer:
    """`python -m tokengauge` on pipes; `responses` by id (id null ones in `orphans`)."""

    def __init__(self, options: dict[str, Any], stderr: Path) -> None:
        self._stderr = stderr.open("wb")
        self.process = subprocess.Popen(
            SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr
        )
        self.responses: dict[Any, dict[str, Any]] = {}
        self.orphans: list[dict[str, Any]] = []
        self.sent_requests = 0
        self._arrived = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next_id = 0
        self.request(
            "initialize", {"processId": None, "capabilities": {}, "initializationOptions": options}
        )
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def _read(self) -> None:
        assert self.process.stdout is not None
        while (message := read_frame(self.process.stdout)) is not None:
            with self._arrived:
                if "method" in message:
                    continue  # notifications and server requests
                if message.get("id") is None:
                    self.orphans.append(message)
                else:
                    self.responses[message["id"]] = message
                self._arrived.notify_all()

    def send(self, data: bytes) -> None:
        """Write raw bytes to the server's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def start(self, method: str, params: Any) -> int:
        """Send a request; its id."""
        request_id = self.next_id()
        self.send(frame({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        self.sent_requests += 1
        return request_id

    def wait(self, request_id: Any, timeout: float = 30.0) -> dict[str, Any]:
        """The response to `request_id`; AssertionError if it does not come."""
        end = time.monotonic() + timeout
        with self._arrived:
            while request_id not in self.responses:
                left = end - time.monotonic()
                assert self.alive, f"the server died (exit {self.process.returncode})"
                assert left > 0, f"no answer to request {request_id!r} in {timeout} s"
                self._arrived.wait(min(left, 0.5))
            return self.responses.pop(request_id)

    def request(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        return self.wait(self.start(method, params), timeout)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def rss(self) -> int:
        """Resident set size of the server, in bytes."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) * 1024

    def close(self) -> int:
        """Shut down cleanly if it can; the exit code."""
        if self.alive:
            try:
                self.request("shutdown", None, timeout=10)
                self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
                assert self.process.stdin is not None
                self.process.stdin.close()
                self.process.wait(10)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait(10)
        self._reader.join(5)
        self._stderr.close()
        return self.process.returncode
