"""One run request behind every front door: the same bad input through the command line (a real
subprocess), the app's `start_run` API (gradio_client against the real app) and the form's own handler
gets the same refusal, word for word; and a run started from the browser form at its defaults is the
official experiment, so it ranks beside the published rows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from evaluators.core.registry import get_benchmark
from evaluators.publish.board_table import apart_reason
from tests.app_fixtures import RunningApp, form, running_app, table_rows, wait_for_status
from tests.browser_fixtures import browser_page, open_tab
from tests.official_fixtures import write_official_files
from tests.scripted_server import ScriptedServer
from ui.run_form import LIMIT_LABEL, TEMPERATURE_LABEL, start_job

PROJECT = Path(__file__).parents[1]
LONG_NAME = "m" * 300
ALLOWED_KEYS = "OPENAI_API_KEY,TOOLBOARD_TEST_KEY"
PUBLIC_HOST = "http://93.184.215.14/v1"  # a public address, written as one: nothing is resolved or sent


# (what is wrong, the CLI's flags, the form's and the API's fields, the refusal every front door gives)
PRIVATE_CASES: list[tuple[str, list[str], dict[str, Any], str]] = [
    ("a base URL with another scheme", ["--base-url", "ftp://h.example/v1"], {"base_url": "ftp://h.example/v1"},
     "the base URL has scheme 'ftp'; expected an http:// or https:// URL such as https://api.example.com/v1"),
    ("a base URL with a password", ["--base-url", "http://u:p@h.example/v1"], {"base_url": "http://u:p@h.example/v1"},
     "the base URL holds a user name or password (user:pass@host): give the key in the API key field instead; "
     "expected a URL such as https://api.example.com/v1"),
    ("an unknown role", ["--role", "critic=http://127.0.0.1:9/v1,c"],
     {"roles": {"critic": {"base_url": "http://127.0.0.1:9/v1", "model": "c"}}},
     "acebench has no role 'critic'; its roles: user"),
    ("a role's bad URL", ["--role", "user=ftp://h.example/v1,u"],
     {"roles": {"user": {"base_url": "ftp://h.example/v1", "model": "u"}}},
     "Simulated user: the base URL has scheme 'ftp'; expected an http:// or https:// URL such as "
     "https://api.example.com/v1"),
    ("an unknown option", ["--option", "speed=fast"], {"options": {"speed": "fast"}},
     "acebench has no option 'speed'; its options: none"),
    ("an unknown subset", ["--subset", "nope"], {"subsets": ["nope"]}, "unknown subset 'nope' for acebench; known: "),
    ("an unknown language", ["--language", "xx"], {"language": "xx"}, "unknown language 'xx' for acebench; known: en, zh"),
    ("concurrency over the cap", ["--concurrency", "300"], {"concurrency": 300},
     "concurrency must be a whole number at least 1 and at most 256; got 300"),
    ("a limit that is no whole number", ["--limit", "2.5"], {"limit": 2.5},
     "the limit per subset must be a whole number at least 1 (empty for every sample); got 2.5"),
    ("a limit of 0", ["--limit", "0"], {"limit": 0},
     "the limit per subset must be a whole number at least 1 (empty for every sample); got 0"),
    ("a temperature that is no number", ["--temperature", "hot"], {"temperature": "hot"},
     "temperature must be a number at least 0 and at most 2 (empty for the benchmark's own); got 'hot'"),
    ("a temperature out of range", ["--temperature", "5"], {"temperature": 5},
     "temperature must be a number at least 0 and at most 2 (empty for the benchmark's own); got 5.0"),
    ("a top_p of 0", ["--top-p", "0"], {"top_p": 0},
     "top_p must be a number more than 0 and at most 1 (empty for the benchmark's own); got 0.0"),
    ("max_tokens that is no whole number", ["--max-tokens", "1.5"], {"max_tokens": 1.5},
     "max_tokens must be a whole number at least 1 and at most 1000000 (empty for the benchmark's own); got 1.5"),
    ("a timeout of 0", ["--timeout", "0"], {"timeout": 0},
     "the request timeout (seconds) must be a number more than 0 and at most 3600; got 0.0"),
    ("too many attempts", ["--max-attempts", "500"], {"max_attempts": 500},
     "max attempts must be a whole number at least 1 and at most 100; got 500"),
    ("extra request fields that are no JSON object", ["--extra-body", "[1]"], {"extra_body": "[1]"},
     'the extra request fields must be a JSON object, e.g. {"top_k": 40}'),
    ("a model name too long", ["--model", LONG_NAME], {"model": LONG_NAME},
     "the model name is 300 characters long; at most 200 are accepted"),
    ("a variable that holds no API key", ["--api-key-env", "HOME"], {"api_key_env": "HOME"},
     "'HOME' is not an API key variable: its name must end in _KEY (e.g. OPENAI_API_KEY)"),
    ("a key variable the operator does not allow", ["--api-key-env", "AWS_SECRET_ACCESS_KEY"],
     {"api_key_env": "AWS_SECRET_ACCESS_KEY"},
     "'AWS_SECRET_ACCESS_KEY' is not one of the key variables this server allows (OPENAI_API_KEY, TOOLBOARD_TEST_KEY); "
     "its operator can allow more in TOOLBOARD_KEY_VARS"),
    ("an unknown request mode", ["--request-mode", "bogus"], {"request_mode": "bogus"},
     "the request mode must be one of prompt, tools; got 'bogus'"),
    ("an unknown prompt style", ["--prompt-style", "fancy"], {"prompt_style": "fancy"},
     "prompts for acebench must be one of auto, official, toolboard; got 'fancy'"),
    ("an unknown local model", ["--model", "local:giant", "--base-url", ""], {"model": "local:giant", "base_url": ""},
     "unknown local model 'giant'; known: local:smollm2"),
]
# On a public deployment (TOOLBOARD_PUBLIC=1 for the command line): its own caps and hosts.
PUBLIC_CASES: list[tuple[str, list[str], dict[str, Any], str]] = [
    ("a non-public host", ["--base-url", "http://10.0.0.5/v1"], {"base_url": "http://10.0.0.5/v1"},
     "host '10.0.0.5' is not allowed on a public deployment: it resolves to 10.0.0.5, a private address"),
    ("a role on a non-public host", ["--role", "user=http://10.0.0.5/v1,u"],
     {"roles": {"user": {"base_url": "http://10.0.0.5/v1", "model": "u"}}},
     "Simulated user: host '10.0.0.5' is not allowed on a public deployment: it resolves to 10.0.0.5, a private address"),
    ("concurrency over the public cap", ["--concurrency", "20"], {"concurrency": 20},
     "concurrency must be a whole number at least 1 and at most 16 (this deployment's cap); got 20"),
    ("no limit", ["--limit", ""], {"limit": None},
     "the limit per subset must be given on this deployment (at most 100 samples per subset)"),
    ("a limit over the public cap", ["--limit", "500"], {"limit": 500},
     "the limit per subset must be a whole number at least 1 and at most 100 (this deployment's cap); got 500"),
    ("a key from the server's environment", ["--api-key-env", "OPENAI_API_KEY"], {"api_key_env": "OPENAI_API_KEY"},
     "a run on a public deployment cannot read a key from the server's environment ('OPENAI_API_KEY' named): give "
     "the key in the API key field instead"),
    ("a local data folder", ["--data-dir", "/tmp"], {"data_source": "local folder", "data_folder": "/tmp"},
     "local data folders are not available on a public deployment"),
]


def _cli_flags(fields: dict[str, Any], public: bool) -> list[str]:
    """The command line that asks for what `form(...)` (with `fields`) asks of the app."""
    flags = ["run", fields["benchmark"], "--base-url", fields["base_url"], "--model", fields["model"],
             "--language", fields["language"], "--subset", *fields["subsets"], "--limit", str(fields["limit"]),
             "--concurrency", str(fields["concurrency"])]
    if public:  # the defaults a public deployment asks for: no server key, its own data
        return [*flags, "--api-key-env", ""]
    return [*flags, "--data-dir", fields["data_folder"], "--api-key-env", "TOOLBOARD_TEST_KEY"]


def _cli_refusal(home: Path, flags: list[str], public: bool) -> str:
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_PUBLIC": "1" if public else "0",
           "TOOLBOARD_KEY_VARS": ALLOWED_KEYS}
    done = subprocess.run([sys.executable, "-m", "evaluators", *flags], cwd=PROJECT, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, done.stderr
    return lines[0].removeprefix("error: ")


@pytest.fixture(scope="module")
def private_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TOOLBOARD_KEY_VARS", ALLOWED_KEYS)
        with running_app(tmp_path_factory.mktemp("private")) as running:
            yield running


@pytest.fixture(scope="module")
def public_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TOOLBOARD_KEY_VARS", ALLOWED_KEYS)
        with running_app(tmp_path_factory.mktemp("public"), public=True) as running:
            yield running


def _fields(app: RunningApp, public: bool, overrides: dict[str, Any]) -> dict[str, Any]:
    if public:
        base = {**form(PUBLIC_HOST, "m", app.data), "data_source": "download", "data_folder": "", "api_key_env": ""}
    else:
        base = {**form(app.server.base_url, "m", app.data), "api_key_env": "TOOLBOARD_TEST_KEY"}
    return {**base, **overrides}


def _refusals_alike(app: RunningApp, tmp_path: Path, cases: list[tuple[str, list[str], dict[str, Any], str]],
                    public: bool) -> None:
    """Each case through the three doors: the same words, those expected; no run created."""
    before = len(app.context.store.list_runs())
    fields = [_fields(app, public, overrides) for _, _, overrides, _ in cases]
    with ThreadPoolExecutor(max_workers=4) as pool:  # the command lines, side by side
        cli = list(pool.map(lambda pair: _cli_refusal(tmp_path / "home", _cli_flags(pair[0], public) + pair[1], public),
                            [(given, flags) for given, (_, flags, _, _) in zip(fields, cases)]))
    client = Client(app.url, verbose=False)
    for (case, _, _, expected), given, from_cli in zip(cases, fields, cli):
        from_api = client.predict(**given, api_name="/start_run")
        from_form = start_job(app.context, given, "", None)
        assert from_api["run_id"] == from_form["run_id"] == "", case
        assert from_api["message"] == from_form["message"] == f"⚠️ {from_cli}", case
        assert from_cli.startswith(expected), (case, from_cli)
    assert len(app.context.store.list_runs()) == before


@pytest.mark.slow
def test_bad_settings_are_refused_alike_by_the_cli_the_api_and_the_form(private_app: RunningApp, tmp_path: Path):
    _refusals_alike(private_app, tmp_path, PRIVATE_CASES, public=False)


@pytest.mark.slow
def test_a_public_deployments_policy_is_held_alike_by_every_door(public_app: RunningApp, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")  # the process's network guard, as on a public Space
    _refusals_alike(public_app, tmp_path, PUBLIC_CASES, public=True)


@pytest.mark.slow
def test_the_settings_that_pass_mean_the_same_run_through_every_door(private_app: RunningApp):
    """What the form and the API accept they read alike (a number as text or as a number; an empty box
    unset), and a role on the tested model's host takes its key variable, as on the command line."""
    from evaluators.cli.parser import build_parser
    from evaluators.cli.run_config import run_request as cli_request
    from ui.run_form import run_request as form_request

    fields = _fields(private_app, False, {"temperature": "0.5", "limit": "3", "concurrency": 2.0,
                                          "roles": {"user": {"base_url": private_app.server.base_url, "model": "u"}}})
    from_form = form_request(private_app.context, fields).config
    flags = _cli_flags(_fields(private_app, False, {"limit": 3, "concurrency": 2}), False)
    args = build_parser().parse_args([*flags, "--temperature", "0.5", "--role", f"user={private_app.server.base_url},u"])
    from_cli = cli_request(args).config
    assert from_form == from_cli
    assert (from_form.model.temperature, from_form.limit, from_form.concurrency) == (0.5, 3, 2)
    assert from_form.roles["user"].api_key_env == "TOOLBOARD_TEST_KEY"  # same host: the tested model's variable
    blank = form_request(private_app.context, {**fields, "temperature": "", "roles": {}}).config
    assert blank.model.temperature is None  # an empty box is unset, never 0


# ---- the browser form's defaults are the official experiment -----------------------------------------

def _official_data(data: Path) -> None:
    """The synthetic data as a whole benchmark: every subset's file (the others empty) and the official
    prompt files beside them (stand-ins with made-up texts: no real data needed), so "auto" resolves to the
    official requests."""
    language_dir = data / "data_en"
    for subset in get_benchmark("acebench").subsets:
        for path in (language_dir / f"data_{subset}.json", language_dir / "possible_answer" / f"data_{subset}.json"):
            if not path.exists():
                path.write_text("", encoding="utf-8")
    write_official_files(data)


def test_a_run_started_from_the_browser_form_at_its_defaults_is_ranked(tmp_path: Path):
    with running_app(tmp_path, samples=4, data_is_default=True) as app:
        _official_data(app.data)
        with browser_page() as (page, problems):
            page.goto(app.url)
            open_tab(page, "Evaluate")
            temperature = page.get_by_label(TEMPERATURE_LABEL)
            assert temperature.input_value() == ""  # shown blank: sent as unset
            page.get_by_label("Endpoint base URL").fill(app.server.base_url)
            page.get_by_label("Model", exact=True).fill("browser-default")
            page.get_by_role("button", name="Start evaluation").click()
            page.get_by_text(re.compile("Started run")).wait_for()
            run_id = re.search(r"Started run (\S+)\.", page.get_by_text(re.compile("Started run")).inner_text()).group(1)
            assert not problems, problems
        assert wait_for_status(app.context, run_id, ("finished", "failed")) == "finished"
        run = app.context.store.get_run(run_id)
        model = run.config["model"]
        assert (model["temperature"], model["top_p"], model["max_tokens"]) == (None, None, None)
        assert (model["prompt_style"], model["request_mode"], run.config["limit"]) == ("official", "prompt", None)
        assert apart_reason(run, get_benchmark("acebench"), app.context.store.run_totals(run_id)) == ""
        ranked = Client(app.url, verbose=False).predict(benchmark="acebench", search="browser-default",
                                                        api_name="/leaderboard_ranked")
        assert [row["run_id"] for row in table_rows(ranked) if row.get("run_id")] == [run_id]


# ---- a model the endpoint does not list -----------------------------------------------------------

def _unlisted_refusal(base_url: str) -> str:
    return (f"⚠️ the endpoint cannot serve the run, nothing was started: {base_url} does not list the model "
            "'gpt-nonexistent'; it lists: fake. Give the model name exactly as listed")


@pytest.mark.slow
def test_a_model_the_endpoint_does_not_list_is_refused_by_every_door(private_app: RunningApp, tmp_path: Path):
    """The endpoint lists only `fake` and answers any name (as llama.cpp does): `gpt-nonexistent` is refused
    before a run exists, the same words through the command line, the API and the form; nothing is sent."""
    before = len(private_app.context.store.list_runs())
    with ScriptedServer(models=["fake"]) as listing:
        fields = {**_fields(private_app, False, {}), "base_url": listing.base_url, "model": "gpt-nonexistent",
                  "api_key_env": ""}
        flags = [*_cli_flags(fields, False)[:-2], "--api-key-env", ""]
        from_cli = "⚠️ " + _cli_refusal(tmp_path / "home", flags, False)
        from_api = Client(private_app.url, verbose=False).predict(**fields, api_name="/start_run")
        from_form = start_job(private_app.context, fields, "", None)
        assert from_api["run_id"] == from_form["run_id"] == ""
        assert from_api["message"] == from_form["message"] == from_cli
        assert from_cli.startswith(_unlisted_refusal(listing.base_url)), from_cli
        assert listing.requests == 0
    assert len(private_app.context.store.list_runs()) == before


def test_the_browser_form_refuses_a_model_the_endpoint_does_not_list(tmp_path: Path):
    with running_app(tmp_path) as app, ScriptedServer(models=["fake"]) as listing, browser_page() as (page, problems):
        page.goto(app.url)
        open_tab(page, "Evaluate")
        page.get_by_label("Endpoint base URL").fill(listing.base_url)
        page.get_by_label("Model", exact=True).fill("gpt-nonexistent")
        page.get_by_label("built-in example").first.check()
        page.get_by_role("button", name="Start evaluation").click()
        outcome = page.get_by_text(re.compile("^Started run|^⚠️ the endpoint")).first
        outcome.wait_for()
        shown = outcome.inner_text()
        assert shown.startswith(_unlisted_refusal(listing.base_url)), shown
        assert app.context.store.list_runs() == [] and listing.requests == 0
        assert not problems, problems


# ---- before Start, the form says whether the run would be ranked ------------------------------------

def test_the_form_says_before_start_whether_the_run_would_be_ranked(tmp_path: Path):
    """The line above Start reads the settings by the board's own rule, live: the defaults rank; a
    temperature of 0 is the run's own sampling; a limit makes it partial; back to the defaults, it ranks."""
    with running_app(tmp_path) as app, browser_page() as (page, problems):
        page.goto(app.url)
        open_tab(page, "Evaluate")
        line = page.locator("#rank-forecast")
        line.get_by_text(re.compile("^Ranked beside the published rows: the official experiment")).wait_for()
        temperature = page.get_by_label(TEMPERATURE_LABEL)
        temperature.fill("0")
        line.get_by_text(re.compile(r"^Not ranked .*own sampling \(temperature 0\.0\)\.$")).wait_for()
        temperature.fill("")
        line.get_by_text(re.compile("^Ranked beside")).wait_for()
        page.get_by_label(LIMIT_LABEL).fill("5")
        line.get_by_text(re.compile(r"^Not ranked .*partial: 5 per subset\.$")).wait_for()
        page.get_by_role("radio", name="tools").check()
        line.get_by_text(re.compile(r"^Not ranked .*native tools; .*partial: 5 per subset\.$")).wait_for()
        assert app.context.store.list_runs() == []  # nothing was started or looked up
        assert not problems, problems
