"""The scripted OpenAI-compatible server (tests/scripted_server.py) in its own process, as the benchmark scripts
use it: started with a latency and a reply script, asked over its stdin (`stats`, `reset`, `dump PATH`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class ServerProcess:
    def __init__(self, latency: float, script: list[str] | None = None):
        self.command = [sys.executable, "-m", "tests.scripted_server", "--latency", str(latency), *(script or [])]
        self.process = subprocess.Popen(self.command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url.startswith("http"):
            raise SystemExit(f"the scripted server did not start: {self.base_url!r}")

    def ask(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.terminate()
        self.process.wait()
