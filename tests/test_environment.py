"""The environment is declared once (evaluators/core/environment.declare: the project's variables there, a
benchmark's in its package): every TOOLBOARD_* variable the code names is declared, every declared one is read, the
README's table is the declarations', and `env` shows what each is set to now without the credentials a URL may
hold."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evaluators.cli.offline_commands import current_values
from evaluators.core.environment import (
    DECLARED,
    OTHER_VARIABLES,
    all_variables,
    declare,
    declared_number,
    environment_table,
    read_flag,
    read_number,
    read_other,
    read_setting,
    read_settings,
)
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks

PROJECT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"TOOLBOARD_[A-Z][A-Z0-9_]*[A-Z0-9]")


def _code() -> dict[Path, str]:
    files = [*sorted((PROJECT / "evaluators").rglob("*.py")), *sorted((PROJECT / "ui").rglob("*.py")), PROJECT / "app.py"]
    return {path: path.read_text(encoding="utf-8") for path in files if "example" not in path.parts}


def _names() -> set[str]:
    return {variable.name for variable in all_variables()}


@pytest.fixture(autouse=True)
def every_package_declared() -> None:
    all_benchmarks()  # each benchmark package declares its own variables as it is imported


def test_every_variable_the_code_names_is_declared():
    named = {name: path for path, text in _code().items() for name in NAME.findall(text)}
    undeclared = {name: str(path.relative_to(PROJECT)) for name, path in named.items() if name not in _names()}
    assert not undeclared, f"declare these in evaluators/core/environment.py: {undeclared}"


def test_every_declared_variable_is_read_somewhere():
    code = "\n".join(text for path, text in _code().items() if path.name != "environment.py")
    # Read by its field (read_setting("home"), read_number("max_upload_mb", …), read_flag("public", …)), or through the constant that holds its declaration or its name
    # (ARCHIVE_URL = declare(…); RUNS_PER_DAY_SETTING = "TOOLBOARD_…"), used beyond that line.
    holders = {field: constant for constant, field in re.findall(r'^(\w+) = declare\("(\w+)"', code, re.M)}
    holders |= {value.removeprefix("TOOLBOARD_").lower(): constant
                for constant, value in re.findall(r'^(\w+) = "(TOOLBOARD_\w+)"', code, re.M)}
    read = set(re.findall(r'read_(?:setting|number|flag)\("(\w+)"', code))
    uses = Counter(re.findall(r"\w+", code))  # one pass over the code, not one per variable
    unread = [v.name for v in all_variables() if v.field not in read
              and not (v.field in holders and uses[holders[v.field]] > 1)]
    assert not unread, f"declared but never read: {unread}"


def test_the_readme_holds_the_declarations_table():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert environment_table() in readme, "README.md's table of variables: paste `python -m evaluators env --markdown`"


def test_every_other_readme_table_naming_a_variable_gives_its_declared_default():
    """The queue section has a table of its own (what each means there): its defaults are the declarations'."""
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    table = environment_table()
    declared = {variable.name: variable.default for variable in all_variables()}
    rows = [line for line in readme.splitlines() if line.startswith("| `TOOLBOARD_") and line not in table]
    assert rows, "the queue section's table of variables is gone: drop this test"
    for row in rows:
        name, default = (cell.strip().strip("`") for cell in row.strip("|").split("|")[:2])
        assert declared[name] in default, f"README.md says {name} defaults to {default!r}; declared: {declared[name]!r}"


def test_empty_is_unset_and_values_are_read_anew():
    settings = read_settings({"TOOLBOARD_HOME": "  /srv/board ", "TOOLBOARD_PUBLIC": "", "OTHER": "x"})
    assert settings["home"] == "/srv/board" and settings["public"] is None and settings["data_dir"] is None
    assert read_settings({})["home"] is None
    assert read_settings({"TOOLBOARD_BFCL_WHEEL": "/w.whl"})["bfcl_wheel"] == "/w.whl"  # a benchmark's own
    assert read_setting("home", {"TOOLBOARD_HOME": " /srv "}) == "/srv" and read_setting("home", {}) is None
    with pytest.raises(KeyError):
        read_setting("no_such_setting")


def test_env_shows_values_without_credentials_and_what_unset_means(tmp_path: Path):
    shown = dict(current_values({"TOOLBOARD_BROKER_URL": "redis://:s3cret@redis-host:6379/0"}))
    assert shown["TOOLBOARD_BROKER_URL"] == "redis://redis-host:6379/0"
    assert shown["TOOLBOARD_QUEUE_NAME"] == "(unset: toolboard)"
    env = {**os.environ, "TOOLBOARD_BROKER_URL": "redis://user:pw@h:1/0", "TOOLBOARD_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "evaluators", "env"], cwd=PROJECT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pw" not in done.stdout and "redis://h:1/0" in done.stdout and str(tmp_path) in done.stdout
    assert set(re.findall(r"^(TOOLBOARD_\w+)", done.stdout, re.M)) == _names()


def test_a_variable_is_declared_once():
    with pytest.raises(ValueError, match="TOOLBOARD_HOME is declared twice"):
        declare("home", "x", "y")
    assert list(DECLARED)[0] == "home"


@pytest.mark.slow
def test_the_table_is_the_same_whichever_benchmark_a_process_imports_first():
    """A pytest worker (or a command) may import BFCL's package before ACEBench's: the table must not follow."""
    tables = []
    for first in ("evaluators.benchmarks.bfcl.wheel", "evaluators.benchmarks.acebench.data"):
        code = (f"import {first}\nfrom evaluators.core.registry import all_benchmarks\nall_benchmarks()\n"
                "from evaluators.core.environment import environment_table\nprint(environment_table())")
        done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        tables.append(done.stdout)
    assert tables[0] == tables[1]


@pytest.mark.parametrize(("field", "given", "message"), [
    ("global_concurrency", "lots", "TOOLBOARD_GLOBAL_CONCURRENCY must be a whole number above 0 (unset: 256), not 'lots'"),
    ("global_concurrency", "2.5", "TOOLBOARD_GLOBAL_CONCURRENCY must be a whole number above 0 (unset: 256), not '2.5'"),
    ("max_upload_mb", "0", "TOOLBOARD_MAX_UPLOAD_MB must be a number of MB above 0 (unset: 50), not '0'"),
    ("max_upload_mb", "inf", "TOOLBOARD_MAX_UPLOAD_MB must be a number of MB above 0 (unset: 50), not 'inf'"),
    ("queue_visibility_s", "-5", "TOOLBOARD_QUEUE_VISIBILITY_S must be a number of seconds above 0 (unset: 300), "
                                 "not '-5'"),
])
def test_a_bad_number_setting_is_refused_naming_the_variable_what_it_takes_and_its_default(
        field: str, given: str, message: str):
    whole = field == "global_concurrency"
    unit = {"max_upload_mb": "MB", "queue_visibility_s": "seconds"}.get(field, "")
    with pytest.raises(ToolboardError) as refused:
        read_number(field, whole=whole, unit=unit, environ={DECLARED[field].name: given})
    assert str(refused.value) == message


def test_a_number_settings_default_is_declared_once_and_the_code_takes_it_from_there():
    from evaluators.engine import queue_app
    from evaluators.service import app_services, submissions

    assert read_number("max_upload_mb", environ={}) == declared_number("max_upload_mb") == 50
    assert read_number("queue_time_limit_s", environ={"TOOLBOARD_QUEUE_TIME_LIMIT_S": " 90 "}) == 90
    assert submissions.DEFAULT_MAX_UPLOAD_BYTES == 50 * 1024 * 1024
    assert app_services.MIN_FREE_DISK_MB == declared_number("min_free_disk_mb")
    assert (queue_app.DEFAULT_VISIBILITY_S, queue_app.DEFAULT_TIME_LIMIT_S, queue_app.DEFAULT_SECRET_TTL_S) == (
        declared_number("queue_visibility_s"), declared_number("queue_time_limit_s"),
        declared_number("queue_secret_ttl_s"))
    # The public defaults the table states in words are the code's.
    table = {variable.field: variable.default for variable in all_variables()}
    assert table["max_runs_per_day"].startswith(f"{app_services.PUBLIC_MAX_RUNS_PER_DAY} per visitor")
    assert table["max_uploads_per_day"].startswith(f"{app_services.PUBLIC_MAX_UPLOADS_PER_DAY} per visitor")
    assert table["max_store_mb"].startswith(f"{app_services.PUBLIC_MAX_STORE_MB} on a public deployment")
    assert table["max_stored_mb_per_day"].startswith(f"{app_services.PUBLIC_MAX_STORED_MB_PER_DAY} on a public")


@pytest.mark.parametrize(("variable", "value", "refusal"), [
    ("TOOLBOARD_GLOBAL_CONCURRENCY", "lots", "TOOLBOARD_GLOBAL_CONCURRENCY must be a whole number above 0"),
    ("TOOLBOARD_SEND_PACING", "sometimes", "TOOLBOARD_SEND_PACING must be on or off"),
])
def test_a_bad_process_setting_refuses_a_run_before_anything_is_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     variable: str, value: str, refusal: str):
    from evaluators.engine.runner import start_run
    from evaluators.engine.settings import RunRequest
    from evaluators.engine.store import Store
    from tests.engine_fixtures import correct_reply, scripted_run_config, write_dataset
    from tests.scripted_server import ScriptedServer

    monkeypatch.setenv(variable, value)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        with pytest.raises(ToolboardError, match=refusal):
            start_run(RunRequest(scripted_run_config(server, write_dataset(tmp_path / "data", 3))), store)
        assert server.requests == 0
    assert store.list_runs() == []


@pytest.mark.parametrize("field", ["public", "allow_unlisted_models", "send_pacing", "hub_reported"])
def test_an_on_off_setting_reads_the_usual_words_and_refuses_any_other(field: str):
    name = DECLARED[field].name
    for word in ("1", "true", "Yes", "ON"):
        assert read_flag(field, unset=False, environ={name: word}) is True
    for word in ("0", "false", "No", "OFF"):
        assert read_flag(field, unset=True, environ={name: word}) is False
    assert read_flag(field, unset=True, environ={}) is True and read_flag(field, unset=False, environ={name: " "}) is False
    with pytest.raises(ToolboardError) as refused:
        read_flag(field, unset=False, environ={name: "enabled"})
    assert str(refused.value) == (f"{name} must be on or off (1/true/yes/on or 0/false/no/off; unset: "
                                  f"{DECLARED[field].default}), not 'enabled'")


def test_a_mistyped_public_mode_is_refused_on_a_space_not_read_as_off(monkeypatch: pytest.MonkeyPatch):
    """A typo must not open a Space to the server's keys and private hosts."""
    from evaluators.core.public_hosts import is_public_mode
    from evaluators.service.deployment import unlisted_model_rule

    monkeypatch.setenv("SPACE_ID", "org/space")
    monkeypatch.delenv("TOOLBOARD_PUBLIC", raising=False)
    assert is_public_mode()
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "enabled")
    with pytest.raises(ToolboardError, match="TOOLBOARD_PUBLIC must be on or off"):
        is_public_mode()
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "off")
    assert not is_public_mode()
    assert unlisted_model_rule(False, {"TOOLBOARD_ALLOW_UNLISTED_MODELS": "true"}).allowed


def test_the_log_level_is_read_in_any_case_and_a_wrong_one_is_refused(monkeypatch: pytest.MonkeyPatch):
    from ui.app import log_level

    monkeypatch.setenv("TOOLBOARD_LOG_LEVEL", "debug")
    assert log_level() == "DEBUG"
    monkeypatch.delenv("TOOLBOARD_LOG_LEVEL")
    assert log_level() == DECLARED["log_level"].default == "INFO"
    monkeypatch.setenv("TOOLBOARD_LOG_LEVEL", "warn")  # every name logging knows, WARN and NOTSET too
    assert log_level() == "WARN"
    monkeypatch.setenv("TOOLBOARD_LOG_LEVEL", "Loud")
    with pytest.raises(ToolboardError) as refused:
        log_level()
    assert str(refused.value) == ("TOOLBOARD_LOG_LEVEL must be a log level such as DEBUG, INFO, WARNING or ERROR "
                                  "(any case; unset: INFO), not 'Loud'")


@pytest.mark.slow
def test_the_app_refuses_a_bad_setting_in_one_line_and_exits_2(tmp_path: Path):
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path), "TOOLBOARD_PUBLIC": "enabled"}
    done = subprocess.run([sys.executable, "app.py"], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: TOOLBOARD_PUBLIC must be on or off (1/true/yes/on or 0/false/no/off; unset: on where SPACE_ID is set "
        "(a Hugging Face Space), else off), not 'enabled'"]


def test_other_tools_variables_are_read_through_their_list_which_the_readme_gives():
    """A variable that is not toolboard's own (HF_ENDPOINT, SPACE_ID, …) is read with read_other, from the one list
    the README repeats: no module reads one of them, or another, straight from os.environ by name."""
    straight = re.compile(r'(?:os\.environ\.get\(|os\.getenv\()\s*"([A-Z][A-Z0-9_]*)"'
                          r'|os\.environ\["([A-Z][A-Z0-9_]*)"\](?!\s*=[^=])')  # a value set for a child is no read
    found = {(path.name, "".join(names)) for path, text in _code().items() for names in straight.findall(text)}
    assert not found, f"read straight from os.environ: {sorted(found)}"
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    for name, what in OTHER_VARIABLES.items():
        assert f"- `{name}`: {what}" in readme, name
    with pytest.raises(KeyError):
        read_other("SOME_OTHER_VARIABLE")


def test_one_package_index_serves_both_pinned_wheels(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from evaluators.benchmarks.bfcl.wheel import index_url
    from evaluators.benchmarks.tau2.source import download_wheel
    from evaluators.core.downloads import DownloadFailed, package_json_url

    monkeypatch.setenv("TOOLBOARD_PYPI_URL", "http://127.0.0.1:9/mirror/pypi/")
    assert index_url() == "http://127.0.0.1:9/mirror/pypi/bfcl-eval/json"
    assert package_json_url("inspect-evals") == "http://127.0.0.1:9/mirror/pypi/inspect-evals/json"
    with pytest.raises(DownloadFailed) as failed:  # τ²-bench's wheel is asked of the mirror (nothing listens there)
        download_wheel(tmp_path)
    assert failed.value.host == "127.0.0.1:9"
    monkeypatch.delenv("TOOLBOARD_PYPI_URL")
    assert index_url() == "https://pypi.org/pypi/bfcl-eval/json"


def test_a_mistyped_switch_refuses_a_run_before_anything_is_sent_and_stops_the_app_at_start(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """A switch read only by each run's client (send pacing) is checked where the app starts (and where a run starts,
    above), so a typo is said once, to the operator, not as every visitor's run failing."""
    from evaluators.core.environment import check_switches
    from evaluators.service.app_services import services_from_env

    monkeypatch.setenv("TOOLBOARD_SEND_PACING", "sometimes")
    with pytest.raises(ToolboardError, match="TOOLBOARD_SEND_PACING must be on or off"):
        check_switches()
    with pytest.raises(ToolboardError, match="TOOLBOARD_SEND_PACING must be on or off"):
        services_from_env()
    monkeypatch.setenv("TOOLBOARD_SEND_PACING", "off")
    check_switches()
