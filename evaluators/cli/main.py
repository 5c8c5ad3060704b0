"""`python -m evaluators`: parse the command line, hand it to its command, turn errors into exit codes."""

from __future__ import annotations

import argparse
import gc
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

from evaluators.cli.offline_commands import demo_command, env_command, list_command, replay_command, score_command
from evaluators.cli.parser import build_parser
from evaluators.core import phase_log
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import message_of
from evaluators.engine.store import StoreDamagedError, default_db_path, is_damage

# Exit codes besides 0 (and `run`'s 3 for an unfinished run): a refused command, and Ctrl-C.
EXIT_REFUSED = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # as a shell reports a command ended by SIGPIPE


def _run(args: argparse.Namespace) -> int:
    # Imported on use: the engine's runner and progress bar cost `list` and `score` time.
    from evaluators.cli.run_command import run_command

    return run_command(args)


def _runs(args: argparse.Namespace) -> int:
    from evaluators.cli.stored_runs import runs_command

    return runs_command(args)


def _export(args: argparse.Namespace) -> int:
    from evaluators.cli.stored_runs import export_command

    return export_command(args)


def _worker(args: argparse.Namespace) -> int:
    from evaluators.cli.worker_command import worker_command

    return worker_command(args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "list": list_command, "env": env_command, "score": score_command, "demo": demo_command, "run": _run, "replay": replay_command,
    "runs": _runs, "export": _export, "worker": _worker,
}


def main(argv: Sequence[str] | None = None) -> int:
    phase_log.mark("imports done")
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(next((word for word in given if not word.startswith("-")), None)).parse_args(given)
    if args.command != "run":
        gc.enable()  # see evaluators/__main__.py; `run` turns it on once its run is created
    try:
        return COMMANDS[args.command](args)
    except ToolboardError as exc:
        from evaluators.cli.data_hint import with_data_hint  # only a failure needs it (a failed download's hint)

        print(f"error: {message_of(with_data_hint(exc, args))}", file=sys.stderr)
        return EXIT_REFUSED
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        print(f"error: {StoreDamagedError(default_db_path(), str(exc))}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`toolboard list | head`): nothing more can be written; say nothing more either
        # (the interpreter's last flush of stdout would fail again).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
