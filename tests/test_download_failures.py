"""A download that cannot be made is told in plain words: what was being downloaded, the host, and why in a few
words (refused, not resolved, timed out, HTTP 404 …), never urllib's `<urlopen error …>` repr; and each front door
names the other data sources the run could read instead: the app's Start message, a failed run's stored message and
the jobs panel (in the words of its Data choice), the command line (in its flags). Every server here is on
127.0.0.1: a port that refuses connections (bound, then closed) or a server answering HTTP 404."""

from __future__ import annotations

import errno
import http.server
import os
import pickle
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench import data as acebench_data
from evaluators.core.archive import download
from evaluators.core.downloads import DownloadFailed, download_failed, find_download_failure
from evaluators.core.errors import DataError, ToolboardError
from evaluators.core.paths import datasets_dir, toolboard_home
from evaluators.engine.runner import start_run
from evaluators.engine.store import Store, default_db_path
from evaluators.service.app_services import AppServices
from evaluators.service.data_sources import download_failure_message
from evaluators.service.run_request import app_policy, build_run_request
from evaluators.service.runs import job_state
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.conftest import PROJECT
from tests.raw_servers import raw_tcp_server
from tests.scripted_server import ScriptedServer
from ui.run_form import start_job

RAW_REPR = ("<urlopen error", "Errno", "URLError", "Traceback")
ALTERNATIVES = "pick another Data source: a local folder holding the data, or the built-in example"


def refused_port() -> int:
    """A loopback port nothing listens on: bound, then closed."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def http_404_server() -> Iterator[str]:
    """A loopback server answering every request, whatever it asks, with an empty HTTP 404."""
    def answer(connection: socket.socket) -> None:
        with connection:
            asked = b""
            while b"\r\n\r\n" not in asked:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                asked += chunk
            connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")

    with raw_tcp_server(answer) as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def served_folder(folder: Path) -> Iterator[str]:
    """`folder`'s files over HTTP on 127.0.0.1."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def acebench_archive(target: Path) -> Path:
    """The built-in example's English items in a zip shaped like the official repository archive."""
    top = f"ACEBench-{acebench_data.OFFICIAL_COMMIT}"
    with zipfile.ZipFile(target, "w") as bundle:
        for path in sorted((EXAMPLE_DIR / "data_en").rglob("*.json")):
            bundle.write(path, f"{top}/data_all/{path.relative_to(EXAMPLE_DIR)}")
    return target


def assert_plain(message: str) -> None:
    assert not any(part in message for part in RAW_REPR), message


@pytest.fixture
def no_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)


# ---- the core: what failed and why, in a few words -------------------------------------------------

def test_a_refused_connection_is_told_as_refused_by_its_host(tmp_path: Path):
    port = refused_port()
    target = tmp_path / "acebench.zip"
    with pytest.raises(DownloadFailed) as failed:
        download(f"http://127.0.0.1:{port}/pinned/acebench.zip", target, "ACEBench data", what="the ACEBench data")
    message = str(failed.value)
    assert message == f"could not download the ACEBench data (127.0.0.1:{port} refused the connection)"
    assert_plain(message)
    assert (failed.value.what, failed.value.host) == ("the ACEBench data", f"127.0.0.1:{port}")
    assert not target.exists() and not target.with_name("acebench.zip.part").exists()


def test_an_http_404_is_told_with_its_status_and_host_not_the_whole_url(tmp_path: Path):
    with http_404_server() as base, pytest.raises(DownloadFailed) as failed:
        download(f"{base}/private/path/acebench.zip?token=abc", tmp_path / "a.zip", "ACEBench data")
    message = str(failed.value)
    host = base.removeprefix("http://")
    assert message == f"could not download ACEBench data ({host} answered HTTP 404 Not Found)"
    assert_plain(message)
    assert "/private/path" not in message and "token" not in message


@pytest.mark.parametrize(("error", "reason"), [
    (urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name or service not known")),
     "data.example.org could not be resolved: no network or DNS"),
    (urllib.error.URLError(TimeoutError("timed out")), "data.example.org:8443 did not answer within 60 s"),
    (TimeoutError("The read operation timed out"), "data.example.org:8443 did not answer within 60 s"),
    (urllib.error.URLError(ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")),
     "data.example.org:8443 closed the connection mid-answer"),
    (urllib.error.URLError(OSError(errno.ENETUNREACH, "Network is unreachable")),
     "data.example.org:8443 could not be reached: no route to it (no network?)"),
    (urllib.error.URLError(ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")),
     "TLS error with data.example.org:8443"),
])
def test_every_kind_of_failure_is_a_few_words_naming_the_host(error: BaseException, reason: str):
    """No network is needed: the errors are those urllib raises, built as it builds them."""
    failed = download_failed(error, "the data", "https://user:secret@data.example.org:8443/files/data.zip", timeout=60)
    assert failed.reason.startswith(reason), failed.reason
    assert "secret" not in str(failed) and "/files/" not in str(failed)
    assert_plain(str(failed))


def test_a_failed_download_survives_pickling_as_a_queue_result_carries_it():
    failed = DownloadFailed("the BFCL data", "pypi.org", "pypi.org refused the connection", "set X", avoidable=False)
    again = pickle.loads(pickle.dumps(failed))
    assert str(again) == str(failed) and again.avoidable is False and isinstance(again, DataError)
    try:
        try:
            raise failed
        except DownloadFailed as inner:
            raise DataError("the loader's own words") from inner
    except DataError as outer:
        assert find_download_failure(outer) is failed
    assert find_download_failure(DataError("no such folder")) is None


def test_a_hub_that_answers_404_is_a_failed_download_not_a_missing_file(monkeypatch: pytest.MonkeyPatch,
                                                                        no_data_dir: None):
    """huggingface_hub raises a "local entry not found" error (a subclass of "entry not found") when it could not
    ask the Hub: ToolBench-Static took it for a subset missing from the dataset."""
    from evaluators.benchmarks.stepeval_audio import data as stepeval_data
    from evaluators.benchmarks.toolbench_static import data as toolbench_data

    with http_404_server() as base:
        monkeypatch.setenv("HF_ENDPOINT", base)
        host = base.removeprefix("http://")
        with pytest.raises(DownloadFailed) as toolbench:
            toolbench_data.load(None, subsets=["in_domain"])
        with pytest.raises(DownloadFailed) as stepeval:
            stepeval_data.load(None, subsets=["get_weather"])
    assert str(toolbench.value).startswith("could not download ToolBench-Static's in_domain.jsonl from the hub dataset "
                                           f"Sandyyy/ToolBench-Static ({host} answered HTTP 404 Not Found)")
    assert f"({host} answered HTTP 404 Not Found)" in str(stepeval.value)
    for failed in (toolbench.value, stepeval.value):
        assert_plain(str(failed))


# ---- the app: the Start button, a failed run, the jobs panel ------------------------------------------

def _raw_run(server: ScriptedServer, benchmark: str = "acebench", **overrides) -> dict:
    raw = {"benchmark": benchmark, "base_url": server.base_url, "model": "scripted", "data_source": "download",
           "limit": 2, "concurrency": 2}
    if benchmark == "acebench":
        raw.update(language="en", subsets=["normal_atom_bool"])
    return {**raw, **overrides}


def test_the_start_message_names_the_other_data_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        no_data_dir: None):
    port = refused_port()
    monkeypatch.setenv(acebench_data.ARCHIVE_URL_ENV, f"http://127.0.0.1:{port}/acebench.zip")
    expected = f"could not download the ACEBench data (127.0.0.1:{port} refused the connection) — {ALTERNATIVES}"
    with ScriptedServer() as server:
        services = AppServices(store=Store(tmp_path / "private.db"))
        try:
            with pytest.raises(ToolboardError) as refused:
                services.start_run(build_run_request(_raw_run(server), app_policy(False)))
            assert str(refused.value).startswith(expected)
            # The form's (and the start_run API's) handler: the Start button's message
            started = start_job(services, {**_raw_run(server), "endpoint_kind": "your endpoint"}, None)
            assert started == {"run_id": "", "message": f"⚠️ {refused.value}"}
            assert services.store.list_runs() == []
        finally:
            services.close()
        public = AppServices(store=Store(tmp_path / "public.db"), public=True)
        try:
            started = start_job(public, {**_raw_run(server), "endpoint_kind": "your endpoint"}, None)
        finally:
            public.close()
    message = started["message"]
    assert started["run_id"] == "" and f"127.0.0.1:{port} refused the connection" in message
    assert "pick another Data source: the built-in example" in message and "local folder" not in message
    assert_plain(message)


def test_without_another_source_the_message_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    no_data_dir: None):
    """A public deployment (no local folder) of a benchmark without a built-in example has nothing else to offer;
    BFCL's prompt texts come from its wheel whatever the data source, so no other source is offered for it."""
    with http_404_server() as base, ScriptedServer() as server:
        monkeypatch.setenv("HF_ENDPOINT", base)
        monkeypatch.setenv("TOOLBOARD_PYPI_URL", f"{base}/pypi")
        monkeypatch.delenv("TOOLBOARD_BFCL_WHEEL", raising=False)
        public = AppServices(store=Store(tmp_path / "public.db"), public=True)
        private = AppServices(store=Store(tmp_path / "private.db"))
        try:
            toolbench = start_job(public, _raw_run(server, "toolbench_static"), None)["message"]
            bfcl_public = start_job(public, _raw_run(server, "bfcl"), None)["message"]
            bfcl_private = start_job(private, _raw_run(server, "bfcl"), None)["message"]
        finally:
            public.close()
            private.close()
    host = base.removeprefix("http://")
    assert toolbench.endswith(f"({host} answered HTTP 404 Not Found) — this deployment offers no other Data source "
                              "for ToolBench-Static: try again later"), toolbench
    assert bfcl_public.endswith(f"({host} answered HTTP 404 Not Found) — try again later"), bfcl_public
    assert "Data source" not in bfcl_private and "set TOOLBOARD_BFCL_WHEEL to its path" in bfcl_private
    for message in (toolbench, bfcl_public, bfcl_private):
        assert message.startswith("⚠️ could not download ") and "Data source: a local folder" not in message
        assert_plain(message)


def test_an_upload_checked_against_the_download_is_told_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  no_data_dir: None):
    from evaluators.service.uploads import check_upload

    port = refused_port()
    monkeypatch.setenv(acebench_data.ARCHIVE_URL_ENV, f"http://127.0.0.1:{port}/acebench.zip")
    predictions = shutil.copy(EXAMPLE_DIR / "predictions.jsonl", tmp_path / "predictions.jsonl")
    services = AppServices(store=Store(tmp_path / "t.db"), public=True)
    try:
        with pytest.raises(ToolboardError) as refused:
            check_upload(services, Path(predictions), "acebench", "en", "download", "")
    finally:
        services.close()
    assert str(refused.value) == (f"could not download the ACEBench data (127.0.0.1:{port} refused the connection) — "
                                  "pick another Data source: the built-in example (a few items, in English, no download)")


def _wait_for_end(services: AppServices, run_id: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = services.jobs.status_of(run_id, services.store.get_run(run_id).status)
        if status in ("failed", "finished", "cancelled", "interrupted"):
            return status
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end")


@pytest.mark.slow
def test_a_run_whose_download_fails_after_it_was_created_stores_the_same_message(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                                  no_data_dir: None):
    """A run created from the downloaded data, resumed once the cache is gone and the download cannot be made:
    its stored message, the jobs panel's and the command line's `run --resume` tell it as the Start button does."""
    served = tmp_path / "served"
    served.mkdir()
    acebench_archive(served / "acebench.zip")
    store = Store(default_db_path())  # the command line's store, read again by `run --resume` below
    services = AppServices(store=store)
    with ScriptedServer() as server:
        try:
            with served_folder(served) as base:
                monkeypatch.setenv(acebench_data.ARCHIVE_URL_ENV, f"{base}/acebench.zip")
                run_id, samples = start_run(build_run_request(_raw_run(server), app_policy(False)), store)
            assert len(samples) == 1
            shutil.rmtree(datasets_dir())  # the downloaded data is gone (and its kept parsed copy with it)
            shutil.rmtree(toolboard_home() / "parsed-data", ignore_errors=True)
            port = refused_port()
            monkeypatch.setenv(acebench_data.ARCHIVE_URL_ENV, f"http://127.0.0.1:{port}/acebench.zip")
            services.jobs.resume(run_id)
            assert _wait_for_end(services, run_id) == "failed"
            expected = f"could not download the ACEBench data (127.0.0.1:{port} refused the connection) — {ALTERNATIVES}"
            stored = store.get_run(run_id).message or ""
            assert stored.startswith(expected) and job_state(services, run_id).message == stored
            assert_plain(stored)
        finally:
            services.close()
        env = {**os.environ, acebench_data.ARCHIVE_URL_ENV: f"http://127.0.0.1:{port}/acebench.zip"}
        resumed = subprocess.run([sys.executable, "-m", "evaluators", "run", "--resume", run_id], cwd=PROJECT, env=env,
                                 capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stderr.startswith(f"error: could not download the ACEBench data (127.0.0.1:{port} refused the "
                                     "connection) — start a new run that reads a local copy of the data with --data-dir DIR")
    assert_plain(resumed.stderr)


def test_a_queue_worker_that_cannot_download_fails_the_run_with_the_same_message(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                                 no_data_dir: None):
    """The app reads the data (served) and queues the run; the worker, with a cache of its own, cannot download
    it: the failure comes back through the queue's result and is told as the Start button would tell it."""
    from evaluators.engine.queue_app import QueueSettings
    from tests.queue_fixtures import TEST_VISIBILITY_S, redis_server, start_worker

    served = tmp_path / "served"
    served.mkdir()
    acebench_archive(served / "acebench.zip")
    port = refused_port()
    with redis_server(tmp_path / "redis") as redis, ScriptedServer() as server, served_folder(served) as base:
        monkeypatch.setenv(acebench_data.ARCHIVE_URL_ENV, f"{base}/acebench.zip")
        services = AppServices(store=Store(tmp_path / "app" / "toolboard.db"),
                               queue=QueueSettings(redis.url, visibility_s=TEST_VISIBILITY_S))
        worker = start_worker(redis.url, tmp_path, "w1", **{
            acebench_data.ARCHIVE_URL_ENV: f"http://127.0.0.1:{port}/acebench.zip"})
        try:
            run_id = services.start_run(build_run_request(_raw_run(server), app_policy(False)))
            assert _wait_for_end(services, run_id, timeout=120) == "failed"
            stored = services.store.get_run(run_id).message or ""
        finally:
            worker.stop()
            services.close()
    assert stored.startswith(f"could not download the ACEBench data (127.0.0.1:{port} refused the connection) — "
                             f"{ALTERNATIVES}"), stored
    assert_plain(stored)


@pytest.mark.slow
def test_the_command_line_names_its_own_flags(tmp_path: Path, no_data_dir: None):
    port = refused_port()
    env = {**os.environ, "TOOLBOARD_HOME": str(tmp_path / "home"),
           acebench_data.ARCHIVE_URL_ENV: f"http://127.0.0.1:{port}/acebench.zip"}
    env.pop("TOOLBOARD_DATA_DIR", None)
    with ScriptedServer() as server:
        done = subprocess.run([sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url,
                               "--model", "scripted", "--limit", "2", "--subset", "normal_atom_bool"], cwd=PROJECT,
                              env=env, capture_output=True, text=True, timeout=120)
        assert server.requests == 0  # refused before the run was created: nothing was sent
    example = os.path.relpath(EXAMPLE_DIR, PROJECT)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"error: could not download the ACEBench data (127.0.0.1:{port} refused the connection) — "
                           "read a local copy of the data with --data-dir DIR (or TOOLBOARD_DATA_DIR=DIR), or the "
                           f"built-in example (a few items, in English) with --data-dir {example} --language en\n")
    assert "Data source" not in done.stderr
    with ScriptedServer() as server:  # and the example it names is read as named
        read = subprocess.run([sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url,
                               "--model", "scripted", "--limit", "1", "--subset", "normal_atom_bool", "--data-dir",
                               example, "--language", "en", "--json"], cwd=PROJECT, env=env, capture_output=True,
                              text=True, timeout=120)
    assert read.returncode == 0, read.stderr


def test_the_service_leaves_other_errors_alone():
    assert download_failure_message(DataError("data folder not found", "/x"), "acebench", None, False) is None
