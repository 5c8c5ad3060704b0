"""The command line's grammar: every command, flag, default and help text, and nothing else."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluators.cli.roles import add_role_arguments
from evaluators.core.registry import MODES
from evaluators.core.types import PROMPT_STYLES, REQUEST_MODES


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole grammar; with `command` (the word the user typed), `run`'s setting flags only when it is `run`:
    they come from RunSettings, whose declaration loads pydantic (~0.1 s no other command needs)."""
    parser = argparse.ArgumentParser(prog=program_name(), description="Score how well LLMs call tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="list the benchmarks, their subsets and metrics")
    env = commands.add_parser("env", help="list the environment variables toolboard reads, with their values now")
    env.add_argument("--markdown", action="store_true", help="print them as the README's table")
    _add_score(commands)
    _add_run(commands, with_settings=command in (None, "run"))
    _add_replay(commands)
    _add_worker(commands)
    runs = commands.add_parser("runs", help="list stored runs")
    runs.add_argument("--json", action="store_true")
    _add_export(commands)
    demo = commands.add_parser("demo", help="score a benchmark's built-in example (no download needed)")
    demo.add_argument("benchmark", nargs="?", help="default: the first benchmark with a built-in example")
    demo.add_argument("--mode", choices=MODES, default="official")
    demo.add_argument("--json", action="store_true")
    return parser


def program_name() -> str:
    """How the user called us, for usage lines: the installed `toolboard` command, else `python -m evaluators`."""
    return "toolboard" if Path(sys.argv[0]).stem == "toolboard" else "python -m evaluators"


def _add_score(commands: argparse._SubParsersAction) -> None:
    score = commands.add_parser("score", help="score a predictions file")
    score.add_argument("benchmark")
    score.add_argument("predictions", type=Path, help="JSON Lines file, JSON array, folder or zip of result files")
    _add_data_options(score)
    score.add_argument("--mode", choices=MODES, default="official", help="official (default) or strict")
    score.add_argument("--json", action="store_true", help="print the report as one JSON object")
    score.add_argument("--samples", type=Path, help="also write every sample's verdict here (JSON Lines)")
    add_role_arguments(score, with_options=False)


# How a run setting (evaluators/service/run_settings.RunSettings) is written on the command line, where it is not
# `--<name with dashes>`; every setting is a flag of `run` (tests/test_run_settings_doors.py holds them equal).
SETTING_FLAGS = {"subsets": "--subset", "data_folder": "--data-dir", "use_cache": "--no-cache"}
# Settings added by their own helpers: the positional benchmark, --role and --option (evaluators/cli/roles.py).
SETTINGS_ADDED_APART = ("benchmark", "roles", "options")
SETTING_CHOICES = {"request_mode": REQUEST_MODES, "prompt_style": PROMPT_STYLES}
# The command line reads its user's own environment: the usual key variable unless another is named.
CLI_DEFAULTS = {"api_key_env": "OPENAI_API_KEY"}


def setting_flag(name: str) -> str:
    return SETTING_FLAGS.get(name, "--" + name.replace("_", "-"))


def setting_dest(name: str) -> str:
    """The attribute argparse stores a setting's flag under."""
    return setting_flag(name).removeprefix("--").replace("-", "_")


def _add_run(commands: argparse._SubParsersAction, with_settings: bool = True) -> None:
    run = commands.add_parser("run", help="run a benchmark against an OpenAI-compatible endpoint")
    if with_settings:
        _add_run_settings(run)
    run.add_argument("--resume", metavar="RUN_ID", help="finish an interrupted run")
    run.add_argument("--rerun-errors", metavar="RUN_ID", help="re-send the samples that ended in request errors (and any an interrupted run never sent)")
    run.add_argument("--mode", choices=MODES, default="official", help="scoring mode shown (both are stored)")
    run.add_argument("--json", action="store_true", help="print the report as one JSON object")
    run.add_argument("--queue", action="store_true",
                     help="send the run to the queue's workers (TOOLBOARD_BROKER_URL) instead of running it here; "
                          "shows its progress and prints the report when it ends")
    run.add_argument("--detach", action="store_true", help="with --queue: print the run id and return at once")


def _add_run_settings(run: argparse.ArgumentParser) -> None:
    """A flag for every setting RunSettings declares (and the benchmark, --role and --option)."""
    from evaluators.service.run_request import AUTO_PROMPT_STYLE, DATA_SOURCES
    from evaluators.service.run_settings import SETTING_NAMES, help_of

    # auto, as the form and the API offer it (leaving the flag out is auto too)
    setting_choices = {**SETTING_CHOICES, "data_source": DATA_SOURCES,
                       "prompt_style": (AUTO_PROMPT_STYLE, *SETTING_CHOICES["prompt_style"])}
    run.add_argument("benchmark", nargs="?", help=f"{help_of('benchmark')}; not needed with --resume/--rerun-errors")
    # Numbers and choices are read as typed: the run request's builder checks them, in the words the form uses.
    for name in SETTING_NAMES:
        if name in SETTINGS_ADDED_APART:
            continue
        help_text = help_of(name)
        if name in CLI_DEFAULTS and CLI_DEFAULTS[name] not in help_text:
            help_text += f" (default {CLI_DEFAULTS[name]})"
        if name == "use_cache":
            run.add_argument(setting_flag(name), action="store_true",
                             help="send every request even if a cached response exists (default: reuse it)")
        elif name == "subsets":
            run.add_argument(setting_flag(name), nargs="+", help=help_text)
        elif name == "data_folder":
            run.add_argument(setting_flag(name), type=Path, help=f"{help_text}; implies --data-source 'local folder' "
                             "(else TOOLBOARD_DATA_DIR, else download)")
        else:
            choices = setting_choices.get(name)
            run.add_argument(setting_flag(name), default=CLI_DEFAULTS.get(name), help=help_text,
                             metavar="{" + ",".join(choices) + "}" if choices else None)
    add_role_arguments(run, with_options=True)


def _add_worker(commands: argparse._SubParsersAction) -> None:
    worker = commands.add_parser("worker", help="execute queued runs (a Celery worker; needs TOOLBOARD_BROKER_URL)")
    worker.add_argument("--concurrency", type=int, default=2,
                        help="runs executed at once by this worker, one process each (default 2)")
    worker.add_argument("--hostname", help="the worker's name in the jobs panel and in Celery (default: worker-<pid>@host, so several "
                             "workers on one machine keep apart)")
    worker.add_argument("--loglevel", default="INFO", help="Celery's log level (default INFO)")


def _add_replay(commands: argparse._SubParsersAction) -> None:
    replay = commands.add_parser("replay", help="run agent messages through an agent item's environment (no model)")
    replay.add_argument("benchmark", help="a benchmark with agent environments (see `list`)")
    replay.add_argument("--data-dir", type=Path, help="local copy of the benchmark data (else TOOLBOARD_DATA_DIR, else download)")
    replay.add_argument("--language", help="one of the benchmark's languages (default: its first)")
    replay.add_argument("--calls", type=Path, required=True,
                        help='JSON Lines: {"id": ITEM_ID, "calls": ["[turn_on_wifi()]", ...]}; prints {"id", "state"} per line')


def _add_export(commands: argparse._SubParsersAction) -> None:
    export = commands.add_parser(
        "export", help="write a run's predictions (JSON Lines), report (JSON) or Inspect log, or the results as a dataset",
        description="Write one run's predictions, report or Inspect log (RUN_ID), or the results as a Hugging Face dataset "
                    "folder (--dataset), optionally pushed to the Hub (--push).")
    export.add_argument("run_id", nargs="?", metavar="RUN_ID",
                        help="the run to export (needed for --predictions/--report; with --dataset, one of the runs)")
    export.add_argument("--predictions", type=Path, help="file for the run's predictions")
    export.add_argument("--report", type=Path, help="file for the run's report")
    export.add_argument("--mode", choices=MODES, default="official", help="scoring mode of --report (default official)")
    export.add_argument("--inspect-log", type=Path, metavar="FILE",
                        help="write the run as an Inspect AI eval log (FILE.eval, or FILE.json), which `inspect view` "
                             "opens; needs the extra: pip install -r requirements-inspect.txt")
    export.add_argument("--dataset", type=Path, metavar="DIR",
                        help="write the results dataset here: contents/, details/, runs/ (Parquet) and README.md, "
                             "loadable with datasets.load_dataset(DIR, \"contents\"); files of an earlier export "
                             "there are replaced")
    export.add_argument("--run", dest="runs", action="append", default=[], metavar="ID",
                        help="with --dataset: export this finished run (repeatable; default: every finished run)")
    export.add_argument("--push", metavar="ORG/NAME",
                        help="with --dataset: then push the folder to this Hugging Face dataset repo in one commit "
                             "(token from HF_TOKEN; stale Parquet files of an earlier push are deleted)")
    export.add_argument("--eval-results", type=Path, metavar="DIR",
                        help="write RUN_ID's headline figures as DIR/.eval_results/<benchmark>.yaml for a Hugging Face "
                             "model repo (only a run that ranks on the board; refused with the reason otherwise)")
    export.add_argument("--open-pr", metavar="ORG/MODEL",
                        help="open a pull request on this Hugging Face model repo adding RUN_ID's .eval_results file "
                             "(token from HF_TOKEN)")
    export.add_argument("--public", action="store_true",
                        help="with --push: create the repo public (default: private); an existing repo keeps its "
                             "visibility")


def _add_data_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--data-dir", type=Path, help="local copy of the benchmark data (else TOOLBOARD_DATA_DIR, else download)")
    command.add_argument("--language", help="one of the benchmark's languages, if it has any (default: its first)")
    command.add_argument("--subset", nargs="+", help="subset or group names (default: all)")
