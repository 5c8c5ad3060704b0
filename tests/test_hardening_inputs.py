"""Issue 27, items 6 and 7: settings checked once for every front door (the CLI, the form, the API give the
same refusal), echoed values cut, an endpoint that does not speak HTTP refused plainly, a stopped run saying
why, and an unknown scoring mode refused instead of "0 samples"."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gradio_client import Client

from evaluators.core.errors import ToolboardError
from evaluators.engine.jobs import STOPPED_UNSEEN
from evaluators.engine.runner import execute, start_run
from evaluators.engine.settings import RunRequest
from evaluators.engine.store import Store
from tests.app_fixtures import RunningApp, form, running_app
from tests.engine_fixtures import FAST_RETRY, correct_reply, scripted_run_config, write_dataset
from tests.raw_servers import answer_in_ssh, raw_tcp_server
from tests.scripted_server import ScriptedServer
from ui.run_form import run_request

PROJECT = Path(__file__).resolve().parents[1]
LONG_NAME = "m" * 100_000


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with running_app(tmp_path_factory.mktemp("inputs")) as running:
        yield running


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_PUBLIC": "0"}
    return subprocess.run([sys.executable, "-m", "evaluators", *args], cwd=PROJECT, env=env, capture_output=True,
                          text=True, timeout=120)


# (what is wrong, the CLI's flags, the form's fields, the words of the refusal every front door gives)
BAD_SETTINGS = [
    ("concurrency 0", ["--concurrency", "0"], {"concurrency": 0},
     "concurrency must be a whole number at least 1 and at most 256; got 0"),
    ("a negative temperature", ["--temperature", "-5"], {"temperature": -5},
     "temperature must be a number at least 0 and at most 2 (empty for the benchmark's own); got -5.0"),
    ("a 100,000-character model name", ["--model", LONG_NAME], {"model": LONG_NAME},
     "the model name is 100,000 characters long; at most 200 are accepted"),
    ("a limit of 0", ["--limit", "0"], {"limit": 0},
     "the limit per subset must be a whole number at least 1 (empty for every sample); got 0"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "flags", "fields", "refusal"), BAD_SETTINGS, ids=[case[0] for case in BAD_SETTINGS])
def test_the_cli_the_form_and_the_api_refuse_bad_settings_alike(app: RunningApp, tmp_path: Path, case: str,
                                                                flags: list[str], fields: dict, refusal: str):
    arguments = ["run", "acebench", "--base-url", app.server.base_url, "--model", "m", "--data-dir", str(app.data),
                 "--language", "en", "--subset", "normal_atom_bool", *flags]
    done = cli(tmp_path / "home", *arguments)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert refusal in done.stderr
    assert len(done.stderr) < 1000  # the long name is not repeated

    fields = {**form(app.server.base_url, "m", app.data), **fields}
    with pytest.raises(ToolboardError) as refused:
        run_request(app.context, fields)
    assert refusal in str(refused.value)

    before = len(app.context.store.list_runs())
    started = Client(app.url, verbose=False).predict(**fields, api_name="/start_run")
    assert started["run_id"] == "" and refusal in started["message"]
    assert len(app.context.store.list_runs()) == before


@pytest.mark.slow
def test_an_echoed_id_is_cut(app: RunningApp):
    client = Client(app.url, verbose=False)
    message, _ = client.predict("r" * 100_000, "", api_name="/resume_run")
    assert "(100,002 characters)" in message and len(message) < 500


@pytest.mark.slow
def test_an_unknown_scoring_mode_is_refused_not_an_empty_table(app: RunningApp):
    client = Client(app.url, verbose=False)
    started = client.predict(**form(app.server.base_url, "mode-model", app.data), api_name="/start_run")
    assert started["run_id"], started["message"]
    app.context.jobs.wait(started["run_id"], timeout=60)
    listed = client.predict(run_id=started["run_id"], mode="lenient", api_name="/samples")
    assert listed["data"] == [] and "unknown scoring mode 'lenient': expected one of official, strict" in listed["count"]
    assert client.predict(run_id=started["run_id"], mode="strict", api_name="/samples")["data"]


@pytest.fixture
def not_http() -> Iterator[str]:
    """A port where something else (an SSH server, say) answers."""
    with raw_tcp_server(answer_in_ssh) as port:
        yield f"http://127.0.0.1:{port}/v1"


@pytest.mark.slow
def test_an_endpoint_that_does_not_speak_http_is_refused_plainly(not_http: str, tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    done = cli(tmp_path / "home", "run", "acebench", "--base-url", not_http, "--model", "m", "--data-dir", str(data),
               "--language", "en", "--subset", "normal_atom_bool")
    assert done.returncode != 0 and "Traceback" not in done.stderr and "aiohttp" not in done.stderr
    assert "does not answer in HTTP" in done.stderr and "nothing was started" in done.stderr


def test_a_run_stopped_mid_way_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_TEST_KEY", "sk-test")
    data = write_dataset(tmp_path / "data", 20)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply, latency=0.01) as server:
        run_id, samples = start_run(RunRequest(scripted_run_config(server, data, concurrency=1)), store)

        def interrupt(progress) -> None:
            if progress.done_count == 5:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            asyncio.run(execute(store, run_id, samples, retry=FAST_RETRY, on_progress=interrupt))
    run = store.get_run(run_id)
    assert run.status == "interrupted"
    assert run.message.startswith("stopped because its process was interrupted or shut down") and "resume to finish" in run.message


@pytest.mark.slow
def test_a_run_whose_process_died_unheard_is_listed_as_interrupted(tmp_path: Path):
    home = tmp_path / "home"
    store = Store(home / "toolboard.db")
    run_id = store.create_run("acebench", "en", "m", "http://127.0.0.1:1/v1", {"benchmark": "acebench"}, "fp", 3)
    store.set_status(run_id, "running", "")  # its process was killed (or the disk filled) before it could say more
    store.close()
    listed = cli(home, "runs")
    assert listed.returncode == 0
    assert "interrupted" in listed.stdout and STOPPED_UNSEEN in listed.stdout and f"--resume {run_id}" in listed.stdout
    rows = json.loads(cli(home, "runs", "--json").stdout)
    assert rows[0]["status"] == "interrupted" and rows[0]["message"] == STOPPED_UNSEEN
