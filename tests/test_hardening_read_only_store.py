"""Issue 27, item 6: a read-only TOOLBOARD_HOME. Read-only commands (runs, export) and the app work on it;
what would write fails with one clear paragraph and no traceback.

The tests run as root here, which writes through permission bits, so the home is made read-only the way a
read-only volume is: a read-only bind mount, inside a mount namespace of the child process's own
(`unshare -rm`; nothing outside that process sees it). Where unshare is not allowed they are skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from evaluators.core.types import Report
from evaluators.engine.store import Store, StoreReadOnlyError
from tests.engine_fixtures import correct_reply, write_dataset
from tests.queue_fixtures import free_port
from tests.scripted_server import ScriptedServer

PROJECT = Path(__file__).resolve().parents[1]


def _unshare_works() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -rm is not allowed here: {probe.stderr.strip()}"


UNSHARE_PROBLEM = _unshare_works()
pytestmark = pytest.mark.skipif(UNSHARE_PROBLEM is not None, reason=f"needs a private read-only mount: {UNSHARE_PROBLEM}")


def read_only(home: Path, *command: str, **env: str) -> subprocess.Popen:
    """`command` with `home` mounted read-only for it alone."""
    script = 'mount -o bind,ro "$1" "$1" && shift && exec "$@"'
    env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_PUBLIC": "0", **env}
    return subprocess.Popen(["unshare", "-rm", "sh", "-c", script, "sh", str(home), *command], cwd=PROJECT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen, timeout: float = 120) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with one finished run in its store."""
    folder = tmp_path / "home"
    store = Store(folder / "toolboard.db")
    run_id = store.create_run("acebench", "en", "stored-model", "http://127.0.0.1:1/v1", {"benchmark": "acebench"},
                              "fp-1", 3)
    store.save_scores(run_id, "official", [], Report(benchmark="acebench", mode="official", subsets={}, summary={},
                                                      errors={}, language="en"))
    store.set_status(run_id, "finished", "")
    store.close()
    (folder / "run_id").write_text(run_id)
    return folder


@pytest.mark.slow
def test_runs_and_export_work_on_a_read_only_store(home: Path, tmp_path: Path):
    run_id = (home / "run_id").read_text()
    status, out, err = finished(read_only(home, sys.executable, "-m", "evaluators", "runs"))
    assert status == 0, err
    assert run_id in out and "stored-model" in out
    report = tmp_path / "report.json"
    status, _, err = finished(read_only(home, sys.executable, "-m", "evaluators", "export", run_id,
                                        "--report", str(report)))
    assert status == 0, err
    assert json.loads(report.read_text())


@pytest.mark.slow
def test_a_run_on_a_read_only_store_fails_with_one_clear_paragraph(home: Path, tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    with ScriptedServer(reply=correct_reply) as server:
        status, _, err = finished(read_only(home, sys.executable, "-m", "evaluators", "run", "acebench", "--base-url",
                                            server.base_url, "--model", "m", "--data-dir", str(data), "--language", "en",
                                            "--subset", "normal_atom_bool"))
    assert status != 0
    assert "Traceback" not in err and "OSError" not in err and "sqlite3" not in err
    assert "nothing more was stored" in err and "can only be read" in err and "TOOLBOARD_HOME" in err


@pytest.mark.slow
def test_the_app_starts_on_a_read_only_store_and_refuses_runs_plainly(home: Path, tmp_path: Path):
    from gradio_client import Client

    port = free_port()
    data = write_dataset(tmp_path / "data", 3)
    app = read_only(home, sys.executable, "app.py", GRADIO_SERVER_PORT=str(port))
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        while True:
            assert app.poll() is None, app.communicate()[1][-2000:]
            try:
                with urllib.request.urlopen(url, timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:  # a time-out for the wait, not a speed check
                    raise AssertionError("the app did not answer within 120 s") from None
                time.sleep(0.5)
        client = Client(url, verbose=False)
        with ScriptedServer(reply=correct_reply) as server:
            started = client.predict(base_url=server.base_url, model="m", benchmark="acebench", language="en",
                                     subsets=["normal_atom_bool"], data_source="local folder", data_folder=str(data),
                                     limit=3, concurrency=1, api_name="/start_run")
        assert started["run_id"] == ""
        assert "nothing more was stored" in started["message"] and "can only be read" in started["message"]
        board = client.predict(api_name="/jobs")
        assert board is not None
    finally:
        app.terminate()
        app.communicate(timeout=30)


@pytest.mark.slow
def test_a_store_that_cannot_be_made_says_so(tmp_path: Path):
    status, _, err = finished(read_only(tmp_path, sys.executable, "-m", "evaluators", "runs"))
    assert status != 0 and "Traceback" not in err
    assert "there is no store there yet" in err


def test_the_error_names_the_store_and_the_way_out(tmp_path: Path):
    message = str(StoreReadOnlyError(tmp_path / "toolboard.db", "read-only file system"))
    assert str(tmp_path) in message and "TOOLBOARD_HOME" in message and "\n" not in message
