"""A reader that goes away (`toolboard list | head -1`) ends the command quietly: no traceback, the exit code a
shell gives a command ended by a closed pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_a_closed_pipe_ends_list_without_a_traceback():
    read_end, write_end = os.pipe()
    os.close(read_end)  # gone before the command writes a byte: its first write fails, on any machine
    try:
        code = "import sys; from evaluators.cli import main; sys.exit(main(['list']))"
        done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, stdout=write_end, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert done.stderr == b""
