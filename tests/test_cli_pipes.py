"""A reader that goes away (`toolboard list | head -1`) ends the command quietly: no traceback, the exit code a
shell gives a command ended by a closed pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_a_closed_pipe_ends_list_without_a_traceback():
    code = "import sys; from evaluators.cli import main; sys.exit(main(['list']))"
    process = subprocess.Popen([sys.executable, "-c", code], cwd=PROJECT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == b""
