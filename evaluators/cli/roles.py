"""`--role NAME=URL,MODEL[,KEY_ENV]` and `--option NAME=VALUE` (and `--trials K`, its short form for one option):
the other models a benchmark needs and the options it takes, read into a run request's raw input (evaluators.service.run_request checks them
against the benchmark's declarations, with the form's rules and words). The flags from before roles were
declared (--judge-*, --user-*, --modality) are read as aliases of these."""

from __future__ import annotations

import argparse

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark
from evaluators.engine.settings import Endpoint

ROLE_FORM = "NAME=URL,MODEL[,KEY_ENV]"
# Old flag prefix -> the role it stood for (--judge-base-url, --judge-model, --judge-api-key-env, …) and
# the key variable it read when none was named (None: the tested model's), as before roles were declared.
ALIAS_ROLES: dict[str, tuple[str, str | None]] = {"judge": ("judge", "OPENAI_API_KEY"), "user": ("user", None)}
# Old option flag -> the value that meant "nothing chosen" (accepted for every benchmark, as before).
ALIAS_OPTIONS: dict[str, str | None] = {"modality": "text"}
# Flags read as `--option NAME=VALUE` for options several benchmarks may declare (refused, as any undeclared
# option, by a benchmark that does not), with their help.
OPTION_FLAGS = {"trials": "how many times each task is played, for benchmarks that report pass^k (see `list`); "
                          "--trials K is --option trials=K"}


def add_role_arguments(command: argparse.ArgumentParser, *, with_options: bool) -> None:
    command.add_argument("--role", action="append", default=[], metavar=ROLE_FORM,
                         help="another model the benchmark needs (see `list`), e.g. --role judge=http://host/v1,"
                              "judge-model,JUDGE_API_KEY (the URL holds no comma); KEY_ENV is the variable holding "
                              "its key (default: the tested model's --api-key-env when the role is served from the "
                              "same host, else no key)")
    for prefix in ALIAS_ROLES:
        for part in ("base-url", "model", "api-key-env"):
            command.add_argument(f"--{prefix}-{part}", help=argparse.SUPPRESS)
    if with_options:
        command.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                             help="a benchmark option (see `list`), e.g. --option modality=audio")
        for name in ALIAS_OPTIONS:
            command.add_argument(f"--{name}", help=argparse.SUPPRESS)
        for name, what in OPTION_FLAGS.items():
            command.add_argument(f"--{name}", metavar="K", help=what)


def _parse_role(text: str) -> tuple[str, dict[str, str]]:
    """`NAME=URL,MODEL[,KEY_ENV]` -> (name, raw role); what it names is checked by the run request's builder."""
    name, _, value = text.partition("=")
    parts = [part.strip() for part in value.split(",")] if value else []
    if not name.strip() or len(parts) not in (2, 3) or not all(parts):
        raise ToolboardError(f"--role {text!r}: expected {ROLE_FORM} (the URL holds no comma)")
    return name.strip(), {"base_url": parts[0], "model": parts[1], "key_env": parts[2] if len(parts) == 3 else ""}


def _alias_roles(args: argparse.Namespace, tested: Endpoint | None) -> list[tuple[str, dict[str, str]]]:
    """Roles given with the old flags, read as they were: URL and model default to the tested model's
    (required without one), the key variable to what that flag defaulted to (ALIAS_ROLES)."""
    found = []
    for prefix, (role, default_key_env) in ALIAS_ROLES.items():
        url, model, key_env = (getattr(args, f"{prefix}_{part}", None) for part in ("base_url", "model", "api_key_env"))
        if not (url or model or key_env):
            continue
        url, model = url or (tested.base_url if tested else None), model or (tested.model if tested else None)
        if not (url and model):
            raise ToolboardError(f"--{prefix}-base-url and --{prefix}-model go together "
                                 f"(or use --role {role}=URL,MODEL[,KEY_ENV])")
        fallback = default_key_env or (tested.api_key_env if tested else "OPENAI_API_KEY")
        found.append((role, {"base_url": url, "model": model, "key_env": key_env or fallback}))
    return found


def raw_roles(args: argparse.Namespace, tested: Endpoint | None) -> dict[str, dict[str, str]]:
    """The roles given on the command line, by name, as the run request's builder reads them."""
    roles: dict[str, dict[str, str]] = {}
    for name, parts in [_parse_role(text) for text in args.role] + _alias_roles(args, tested):
        if name in roles:
            raise ToolboardError(f"the {name} role is given twice")
        roles[name] = parts
    return roles


def chosen_roles(args: argparse.Namespace, benchmark: Benchmark, tested: Endpoint | None = None,
                 scoring_files: bool = False) -> dict[str, Endpoint]:
    """The roles given on the command line, checked as a run's are (`score` uses it: no run request)."""
    from evaluators.service.run_request import build_roles, command_line_policy  # the run builder: its commands only

    return build_roles(benchmark, raw_roles(args, tested), command_line_policy(), tested, scoring_files)


def raw_options(args: argparse.Namespace, benchmark: Benchmark) -> dict[str, str]:
    """`--option NAME=VALUE` (and the old --modality), by name, as the run request's builder reads them."""
    options: dict[str, str] = {}
    given = [text.partition("=") for text in args.option]
    declared = {option.name for option in benchmark.options}
    given += [(name, "=", getattr(args, name)) for name, nothing in ALIAS_OPTIONS.items()
              if getattr(args, name, None) and (name in declared or getattr(args, name) != nothing)]
    given += [(name, "=", getattr(args, name)) for name in OPTION_FLAGS if getattr(args, name, None) is not None]
    for name, sign, value in given:
        if not sign or not name.strip() or not value.strip():
            raise ToolboardError(f"--option {name}{sign}{value}: expected NAME=VALUE")
        options[name.strip()] = value.strip()
    return options


def chosen_options(args: argparse.Namespace, benchmark: Benchmark) -> dict[str, str]:
    """The options given, checked against the declarations (defaults left out)."""
    return benchmark.chosen_options(raw_options(args, benchmark))
