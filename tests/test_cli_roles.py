"""`--role NAME=URL,MODEL[,KEY_ENV]`, `--option NAME=VALUE` and the older flags they replace, parsed by
the real parser and checked against each benchmark's declarations."""

from __future__ import annotations

import pytest

from evaluators.cli.parser import build_parser
from evaluators.cli.roles import chosen_options, chosen_roles
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine.settings import Endpoint

TESTED = Endpoint("https://api.example.org/v1", "tested-model", "EXAMPLE_API_KEY")


def _roles(benchmark: str, *flags: str, tested: Endpoint | None = TESTED) -> dict[str, Endpoint]:
    args = build_parser().parse_args(["run", benchmark, *flags])
    return chosen_roles(args, get_benchmark(benchmark), tested)


def _options(benchmark: str, *flags: str) -> dict[str, str]:
    return chosen_options(build_parser().parse_args(["run", benchmark, *flags]), get_benchmark(benchmark))


def test_a_role_key_goes_only_where_its_variable_is_named_or_to_the_same_host():
    named = _roles("stepeval_audio", "--role", "judge=https://judge.example.net/v1,jm,JUDGE_KEY")
    assert named == {"judge": Endpoint("https://judge.example.net/v1", "jm", "JUDGE_KEY")}
    # another host and no variable named: no key at all (never the tested model's)
    assert _roles("stepeval_audio", "--role", "judge=https://judge.example.net/v1,jm")["judge"].api_key_env == ""
    # the tested model's own host: its variable
    same = _roles("stepeval_audio", "--role", "judge=https://api.example.org/v1,jm")["judge"]
    assert same.api_key_env == "EXAMPLE_API_KEY"
    # scoring a file has no tested model: no key unless named
    assert _roles("stepeval_audio", "--role", "judge=https://api.example.org/v1,jm", tested=None)["judge"].api_key_env == ""


def test_the_old_flags_read_as_they_did():
    judge = _roles("stepeval_audio", "--judge-base-url", "https://judge.example.net/v1", "--judge-model", "jm")["judge"]
    assert judge.api_key_env == "OPENAI_API_KEY"  # the old --judge-api-key-env default, not the tested model's key
    user = _roles("acebench", "--user-model", "user-llm")["user"]
    assert user == Endpoint(TESTED.base_url, "user-llm", TESTED.api_key_env)  # each part defaulted to the tested model's
    assert _roles("acebench", "--user-model", TESTED.model) == {}  # the tested model itself plays it anyway
    assert _options("acebench", "--modality", "text") == {}  # the old default meant "nothing chosen" everywhere
    assert _options("stepeval_audio", "--modality", "audio") == {"modality": "audio"}
    assert _options("stepeval_audio", "--option", "modality=text") == {}


@pytest.mark.parametrize(("flag", "problem"), [
    ("judge=https://h/v1", "expected NAME=URL,MODEL[,KEY_ENV]"),
    ("judge=https://h/v1;a=1,2,jm,X", "expected NAME=URL,MODEL[,KEY_ENV]"),
    # What a role names is checked by the run request's builder, in the words the form uses.
    ("judge=https://h/v1,m,not a name", "'not a name' is not an API key variable: its name must end in _KEY"),
    ("judge=h/v1,m", "Parameter judge: the base URL has no scheme; expected an http:// or https:// URL"),
    ("referee=https://h/v1,m", "stepeval_audio has no role 'referee'; its roles: judge"),
])
def test_a_malformed_or_unknown_role_is_refused_with_the_reason(flag: str, problem: str):
    with pytest.raises(ToolboardError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        _roles("stepeval_audio", "--role", flag)


def test_options_are_checked_against_the_declarations():
    with pytest.raises(ToolboardError, match=r"option modality of stepeval_audio takes text, audio \(got 'video'\)"):
        _options("stepeval_audio", "--option", "modality=video")
    with pytest.raises(ToolboardError, match="acebench has no option 'modality'"):
        _options("acebench", "--option", "modality=audio")
    with pytest.raises(ToolboardError, match="expected NAME=VALUE"):
        _options("stepeval_audio", "--option", "modality")
