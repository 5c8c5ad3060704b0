"""`--role NAME=URL,MODEL[,KEY_ENV]` and `--option NAME=VALUE`: the other models a benchmark needs
and the options it takes, each checked against what the benchmark declares. The flags from before
roles were declared (--judge-*, --user-*, --modality) are read as aliases of these."""

from __future__ import annotations

import argparse
import re
from urllib.parse import urlsplit

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark
from evaluators.engine.settings import Endpoint

ROLE_FORM = "NAME=URL,MODEL[,KEY_ENV]"
# Old flag prefix -> the role it stood for (--judge-base-url, --judge-model, --judge-api-key-env, …) and
# the key variable it read when none was named (None: the tested model's), as before roles were declared.
ALIAS_ROLES: dict[str, tuple[str, str | None]] = {"judge": ("judge", "OPENAI_API_KEY"), "user": ("user", None)}
# Old option flag -> the value that meant "nothing chosen" (accepted for every benchmark, as before).
ALIAS_OPTIONS = {"modality": "text"}
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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


def _parse_role(text: str, tested: Endpoint | None) -> tuple[str, Endpoint]:
    name, _, value = text.partition("=")
    parts = [part.strip() for part in value.split(",")] if value else []
    if not name.strip() or len(parts) not in (2, 3) or not all(parts):
        raise ToolboardError(f"--role {text!r}: expected {ROLE_FORM}")
    if not parts[0].startswith(("http://", "https://")):
        raise ToolboardError(f"--role {text!r}: the URL must start with http:// or https:// (expected {ROLE_FORM})")
    if len(parts) == 3 and not VARIABLE_NAME.fullmatch(parts[2]):
        raise ToolboardError(f"--role {text!r}: {parts[2]!r} is not an environment variable name (expected {ROLE_FORM}; "
                             "the URL holds no comma)")
    key_env = parts[2] if len(parts) == 3 else _same_host_key(parts[0], tested)
    return name.strip(), Endpoint(base_url=parts[0], model=parts[1], api_key_env=key_env)


def _same_host_key(url: str, tested: Endpoint | None) -> str:
    """The tested model's key variable for a role served from the same scheme, host and port; else no
    key: a key is never sent to another host unless its variable is named."""
    if tested is None:
        return ""
    mine, theirs = urlsplit(url), urlsplit(tested.base_url)
    same = (mine.scheme, mine.hostname, mine.port) == (theirs.scheme, theirs.hostname, theirs.port)
    return tested.api_key_env if same else ""


def _alias_roles(args: argparse.Namespace, tested: Endpoint | None) -> list[tuple[str, Endpoint]]:
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
        found.append((role, Endpoint(url, model, key_env or fallback)))
    return found


def chosen_roles(args: argparse.Namespace, benchmark: Benchmark, tested: Endpoint | None = None,
                 scoring_files: bool = False) -> dict[str, Endpoint]:
    """The roles given on the command line, by name, each one the benchmark declares. A role given the
    tested model itself is left out when the tested model plays it anyway."""
    given = [_parse_role(text, tested) for text in args.role] + _alias_roles(args, tested)
    roles: dict[str, Endpoint] = {}
    for name, endpoint in given:
        role = benchmark.role(name)
        if scoring_files and not role.used_when_scoring_files:
            raise ToolboardError(f"the {name} role of {benchmark.name} takes part in runs only, not in scoring a file")
        if name in roles:
            raise ToolboardError(f"the {name} role is given twice")
        if role.played_by_tested_model and endpoint == tested:
            continue
        roles[name] = endpoint
    return roles


def chosen_options(args: argparse.Namespace, benchmark: Benchmark) -> dict[str, str]:
    """`--option NAME=VALUE` (and the old --modality), by name, checked against the declarations."""
    options: dict[str, str] = {}
    given = [text.partition("=") for text in args.option]
    declared = {option.name for option in benchmark.options}
    given += [(name, "=", getattr(args, name)) for name, nothing in ALIAS_OPTIONS.items()
              if getattr(args, name, None) and (name in declared or getattr(args, name) != nothing)]
    for name, sign, value in given:
        if not sign or not name.strip() or not value.strip():
            raise ToolboardError(f"--option {name}{sign}{value}: expected NAME=VALUE")
        options[name.strip()] = value.strip()
    return benchmark.chosen_options(options)
