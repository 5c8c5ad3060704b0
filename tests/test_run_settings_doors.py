"""Every setting RunSettings declares is offered by every front door, by the same name, with the declared help
and default: the command line's `run` flags, the Evaluate form's fields (the rarely changed ones under Advanced)
and the `start_run` API's parameters. A door that lacks a setting fails here. (The same bad value refused in the
same words by each door: tests/test_front_doors.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import gradio as gr
import pytest

from evaluators.cli.parser import SETTINGS_ADDED_APART, build_parser, setting_dest, setting_flag
from evaluators.cli.run_config import run_request as cli_run_request
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks
from evaluators.engine.store import Store
from evaluators.service.run_request import PUBLIC_MAX_CONCURRENCY, PUBLIC_MAX_LIMIT, RunPolicy, build_run_request
from evaluators.service.run_settings import (
    NUMBER_SETTINGS,
    SETTING_NAMES,
    RunSettings,
    default_of,
    help_of,
    is_advanced,
    number_range,
    read_run_settings,
    title_of,
)
from tests.engine_fixtures import write_dataset
from ui.app import build_app
from ui.context import AppContext
from ui.run_form import ADVANCED_FIELDS, FIELDS, advanced_default, advanced_label, raw_run

# The settings the form gathers apart from its plain fields (its roles and options boxes).
FORM_APART = {"roles", "options"}


@pytest.fixture(scope="module")
def built_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gr.Blocks]:
    root = tmp_path_factory.mktemp("doors")
    context = AppContext(store=Store(root / "toolboard.db"), public=False)
    try:
        yield build_app(context)
    finally:
        context.close()


@pytest.fixture(scope="module")
def api_parameters(built_app: gr.Blocks) -> dict[str, dict]:
    info = built_app.get_api_info()
    return {parameter["parameter_name"]: parameter for parameter in info["named_endpoints"]["/start_run"]["parameters"]}


def test_the_command_line_has_a_flag_for_every_setting_with_its_declared_help(capsys: pytest.CaptureFixture[str]):
    parser = build_parser()
    for name in SETTING_NAMES:
        if name in SETTINGS_ADDED_APART:
            continue
        flag = setting_flag(name)
        given = [flag] if name == "use_cache" else [flag, "1"]
        args = parser.parse_args(["run", "acebench", *given])
        assert getattr(args, setting_dest(name)) not in (None, False), f"`run` has no flag for the setting {name!r}"
    args = parser.parse_args(["run", "acebench", "--role", "user=http://h/v1,m", "--option", "modality=text"])
    assert (args.benchmark, args.role, args.option) == ("acebench", ["user=http://h/v1,m"], ["modality=text"])
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    for name in SETTING_NAMES:
        if name not in SETTINGS_ADDED_APART and name != "use_cache":
            assert f"{setting_flag(name)} " in usage and " ".join(help_of(name).split()) in usage, name


def test_the_form_has_a_field_for_every_setting_and_folds_the_advanced_ones():
    assert set(SETTING_NAMES) <= set(FIELDS) | FORM_APART
    assert ADVANCED_FIELDS == tuple(name for name in SETTING_NAMES if is_advanced(name))
    assert set(ADVANCED_FIELDS) >= {"top_p", "max_tokens", "timeout", "max_attempts", "extra_body", "use_cache"}
    assert FIELDS[-len(ADVANCED_FIELDS):] == ADVANCED_FIELDS  # laid out last, in the fold
    for name in ADVANCED_FIELDS:
        assert advanced_label(name).startswith(f"{name}: ") and help_of(name) in advanced_label(name)


def test_the_form_labels_each_unfolded_setting_with_its_declared_title(built_app: gr.Blocks):
    """The plain fields' labels come from the declaration too (RunSettings' `title`), so a door's words for a
    setting are written once; the Advanced ones show their name and help."""
    labels = {component.get("props", {}).get("label") for component in built_app.config["components"]}
    plain = [name for name in SETTING_NAMES if name in FIELDS and name not in ADVANCED_FIELDS]
    assert plain and all(RunSettings.model_fields[name].title for name in plain)
    assert not [name for name in plain if title_of(name) not in labels]
    assert not [name for name in ADVANCED_FIELDS if advanced_label(name) not in labels]


def test_the_api_has_a_parameter_for_every_setting(api_parameters: dict[str, dict]):
    assert set(SETTING_NAMES) <= set(api_parameters), sorted(set(SETTING_NAMES) - set(api_parameters))
    assert "api_key" in api_parameters


def test_the_api_page_lists_every_setting_with_its_declared_help_and_range(built_app: gr.Blocks):
    """Gradio's API page shows an endpoint's description, not its parameters' docs: start_run's description
    lists each setting, by its API name, with the help the command line's flag shows and a number's range."""
    description = built_app.get_api_info()["named_endpoints"]["/start_run"]["description"]
    lines = {line.split(": ", 1)[0]: line for line in description.splitlines() if line.startswith("- ")}
    for name in SETTING_NAMES:
        assert f"- {name}" in lines and help_of(name) in lines[f"- {name}"], name
    assert lines["- concurrency"].endswith("; a whole number at least 1 and at most 256")
    assert lines["- max_tokens"].endswith("; a whole number at least 1 and at most 1000000")
    assert lines["- top_p"].endswith("; a number more than 0 and at most 1")
    assert lines["- request_mode"].count("default") == 1 and "the benchmark's first" in lines["- request_mode"]
    assert description.startswith("Start an evaluation in the background")
    assert "This deployment is public" not in description


def test_a_public_deployments_api_page_says_its_tighter_caps():
    from ui.api import start_run_description

    described = start_run_description(test_a_public_deployments_api_page_says_its_tighter_caps, public=True)
    assert described.endswith(f"This deployment is public: concurrency at most {PUBLIC_MAX_CONCURRENCY}, a limit "
                              f"given, of at most {PUBLIC_MAX_LIMIT}, the key given in api_key only (no api_key_env), "
                              "and no data folder.")


def test_each_api_default_builds_the_run_that_leaving_the_setting_out_builds(api_parameters: dict[str, dict],
                                                                            tmp_path: Path):
    """An API call that leaves a setting out gets what the command line gets without its flag (the benchmark
    apart: a run names one, and the API starts at the first, as the form does). A data folder given alone is read,
    as `--data-dir` alone is."""
    given = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "benchmark": "acebench",
             "data_folder": str(write_dataset(tmp_path / "data", 3))}
    left_out = build_run_request(raw_run(given), RunPolicy()).config
    for name in SETTING_NAMES:
        parameter = api_parameters[name]
        if name == "benchmark" or name in given:
            continue
        assert parameter["parameter_has_default"], name
        sent = build_run_request(raw_run({**given, name: parameter["parameter_default"]}), RunPolicy()).config
        assert sent == left_out, f"the API's default for {name} ({parameter['parameter_default']!r}) changes the run"


def test_the_api_at_its_defaults_builds_the_command_lines_run_but_for_the_key_variable(api_parameters: dict[str, dict],
                                                                                       tmp_path: Path):
    """The command line's defaults are the API's, one apart and said in its help: the command line reads its user's
    own OPENAI_API_KEY, the API no variable of the server's unless one is named."""
    data = str(write_dataset(tmp_path / "data", 3))
    args = build_parser().parse_args(["run", "acebench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                                      "--data-dir", data])
    from_cli = cli_run_request(args).config
    at_defaults = {name: parameter["parameter_default"] for name, parameter in api_parameters.items()
                   if name in SETTING_NAMES and name not in ("base_url", "model", "benchmark", "data_folder")}
    from_api = build_run_request(raw_run({**at_defaults, "base_url": "http://127.0.0.1:9/v1", "model": "m",
                                          "benchmark": "acebench", "data_folder": data}), RunPolicy()).config
    assert (from_cli.model.api_key_env, from_api.model.api_key_env) == ("OPENAI_API_KEY", "")
    assert from_api == replace(from_cli, model=replace(from_cli.model, api_key_env=""))
    assert "OPENAI_API_KEY" in help_of("api_key_env") and "the API reads none" in help_of("api_key_env")


def test_the_apis_default_request_mode_is_each_benchmarks_own(api_parameters: dict[str, dict]):
    """A tools-only benchmark (τ²-bench) started through the API without a request mode was refused: the API sent
    "prompt" for it."""
    for benchmark in all_benchmarks():
        raw = raw_run({"base_url": "http://127.0.0.1:9/v1", "model": "m", "benchmark": benchmark.name,
                       "request_mode": api_parameters["request_mode"]["parameter_default"]})
        try:
            build_run_request(raw, RunPolicy())
        except ToolboardError as refused:
            assert "request mode" not in str(refused), (benchmark.name, str(refused))


def test_the_forms_concurrency_starts_at_the_declared_default_within_the_declared_range(built_app: gr.Blocks):
    slider = next(component for component in built_app.get_config_file()["components"]
                  if component.get("props", {}).get("label") == "Concurrency")["props"]
    declared = number_range("concurrency")
    assert (slider["value"], slider["minimum"], slider["maximum"]) == (default_of("concurrency"), declared.low,
                                                                      declared.high)


def test_the_form_sends_every_setting_it_has_a_field_for():
    """A setting given a form field but not forwarded would show on the page and never reach the run."""
    form = {"base_url": "http://h/v1", "model": "m", **{name: f"value of {name}" for name in FIELDS
                                                       if name not in ("base_url", "model", "endpoint_kind")}}
    assert set(raw_run(form)) >= set(SETTING_NAMES) - {"api_key"}


def test_the_form_at_its_shown_defaults_sends_the_declared_defaults(tmp_path: Path):
    """What the Advanced fold shows at first is what the run gets: the declared defaults, never a 0 for unset."""
    data = write_dataset(tmp_path / "data", 3)
    shown = {name: advanced_default(name) for name in ADVANCED_FIELDS}
    form = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "benchmark": "acebench", "language": "en",
            "data_source": "local folder", "data_folder": str(data), "concurrency": 8, **shown}
    config = build_run_request(raw_run(form), RunPolicy()).config
    assert (config.model.top_p, config.model.max_tokens, config.model.timeout) == (None, None, default_of("timeout"))
    assert (config.max_attempts, config.use_cache, config.model.extra_body) == (default_of("max_attempts"), True, {})
    assert shown["timeout"] == "120" and shown["max_attempts"] == "6" and shown["top_p"] == ""


def test_every_number_setting_declares_its_range_and_the_message_says_it():
    for name in NUMBER_SETTINGS:
        expected = number_range(name)
        with pytest.raises(ToolboardError) as refused:
            read_run_settings({name: -1})
        assert str(refused.value) == f"{expected.expected()}; got {-1 if expected.whole else -1.0!r}"


@pytest.mark.parametrize(("raw", "message"), [
    ({"concurrency": True}, "concurrency must be a whole number at least 1 and at most 256; got True"),
    ({"temperature": float("nan")}, "temperature must be a number at least 0 and at most 2 (empty for the "
                                    "benchmark's own); got nan"),
    ({"top_p": "0"}, "top_p must be a number more than 0 and at most 1 (empty for the benchmark's own); got 0.0"),
    ({"max_tokens": 2.5}, "max_tokens must be a whole number at least 1 and at most 1000000 (empty for the "
                          "benchmark's own); got 2.5"),
    ({"timeout": "soon"}, "the request timeout (seconds) must be a number more than 0 and at most 3600; got 'soon'"),
    ({"max_attempts": 101}, "max attempts must be a whole number at least 1 and at most 100; got 101"),
    ({"extra_body": "[1, 2]"}, 'the extra request fields must be a JSON object, e.g. {"top_k": 40}'),
    ({"extra_body": "{not json"}, 'the extra request fields must be a JSON object, e.g. {"top_k": 40}'),
    ({"use_cache": "maybe"}, "use_cache must be true or false"),
    ({"subsets": 5}, "subsets must be a list of names"),
    ({"roles": {"user": "http://h/v1"}}, 'role \'user\' must be {"base_url", "model", "key_env"}'),
    ({"options": ["a"]}, "options must be {option name: value}"),
    ({"speed": "fast"}, "unknown run setting 'speed'; the settings are: api_key, benchmark, base_url"),
])
def test_a_wrong_value_is_refused_naming_the_setting_and_what_it_expects(raw: dict, message: str):
    with pytest.raises(ToolboardError) as refused:
        read_run_settings(raw)
    assert str(refused.value).startswith(message)


def test_text_and_numbers_read_alike_and_unset_takes_the_default():
    typed = read_run_settings({"limit": "5.0", "temperature": "0", "timeout": 30, "max_attempts": "", "top_p": " ",
                               "extra_body": '{"top_k": 40}', "use_cache": None, "subsets": "normal"})
    assert (typed.limit, typed.temperature, typed.timeout, typed.max_attempts, typed.top_p) == (5, 0.0, 30.0, 6, None)
    assert typed.extra_body == {"top_k": 40} and typed.use_cache is True and typed.subsets == ("normal",)
    assert RunSettings().model_dump() == read_run_settings({}).model_dump()
