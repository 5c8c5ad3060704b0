"""Issue 15, public deployments: who may see and act on a run, and how many runs are admitted.

The real app (public mode) is called through gradio_client: each Client is one visitor (its session),
or names itself with owner_token. Runs go to the scripted OpenAI-compatible server over real HTTP and
are stored in a real SQLite store. Time limits use a clock the test moves by hand."""

from __future__ import annotations

import json
import re
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from evaluators.engine.jobs import RUNNING_ELSEWHERE
from evaluators.engine.redact import PathRedactor
from evaluators.engine.store import Store
from evaluators.service.app_services import PUBLIC_MAX_ACTIVE_JOBS, PUBLIC_MAX_RUN_SECONDS
from evaluators.service.ownership import SECRET_FILE
from evaluators.service.quota import Admission
from tests.app_fixtures import RunningApp, correct_reply, table_rows, wait_for_status
from tests.browser_fixtures import CHROMIUM, TIMEOUT_MS, headless_chromium, open_tab, start_example_run
from tests.engine_fixtures import write_dataset
from tests.scripted_server import ScriptedServer
from ui.app import build_app, launch_patiently
from ui.context import AppContext, context_from_env
from ui.evaluate_tab import start_job
from ui.format import user_error
from ui.jobs_panel import jobs_table

SAMPLES = 30
# How a run the visitor may not see is refused: as an id with no run (ownership.run_not_found).
UNSEEN = "here that you can see"


class ManualClock:
    """A clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextmanager
def public_app(root: Path, latency: float = 0.0, launch: bool = True, **options: Any) -> Iterator[RunningApp]:
    """The app as a public Space runs it: the data folder is the operator's TOOLBOARD_DATA_DIR (here the
    synthetic dataset), and endpoints on 127.0.0.1 are allowed only because TOOLBOARD_PUBLIC is unset."""
    data = write_dataset(root / "data", SAMPLES)
    db_path = root / "home" / "toolboard.db"
    context = AppContext(store=Store(db_path), public=True, default_data_dir=str(data), max_upload_bytes=200_000,
                         **options)
    with ScriptedServer(reply=correct_reply, latency=latency) as server:
        demo = build_app(context) if launch else None
        if demo is not None:
            launch_patiently(demo, server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
        try:
            yield RunningApp(demo.local_url if demo else "", context, server, data, db_path)
        finally:
            if demo is not None:
                demo.close()
            context.close()


def public_form(server_url: str, model: str, **overrides: Any) -> dict[str, Any]:
    """/start_run arguments for a public deployment: the default data, a limit, modest concurrency."""
    values = {"base_url": server_url, "model": model, "benchmark": "acebench", "language": "en",
              "subsets": ["normal_atom_bool"], "data_source": "download", "limit": SAMPLES, "concurrency": 2}
    values.update(overrides)
    return values


def plain(message: str) -> str:
    """A Markdown message as it reads (without the escapes that keep it from formatting)."""
    return re.sub(r"\\(.)", r"\1", message)


def job_ids(client: Client, **kwargs: Any) -> set[str]:
    return {row["run_id"] for row in table_rows(client.predict(**kwargs, api_name="/jobs"))}


def cancel_all(context: AppContext, run_ids: list[str]) -> None:
    for run_id in run_ids:
        if context.jobs.is_active(run_id):
            context.jobs.cancel(run_id)
    for run_id in run_ids:
        context.jobs.wait(run_id, timeout=60)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with public_app(tmp_path_factory.mktemp("public")) as running:
        yield running


@pytest.mark.slow
def test_a_visitor_cannot_see_or_act_on_another_visitors_run_until_it_is_shared(app: RunningApp):
    alice, bob = Client(app.url, verbose=False), Client(app.url, verbose=False)
    app.server.latency = 0.2
    try:
        started = alice.predict(**public_form(app.server.base_url, "alice-model", concurrency=1), api_name="/start_run")
        run_id = started["run_id"]
        assert run_id, started["message"]
        # Bob sees nothing of Alice's running job and cannot stop it.
        assert run_id in job_ids(alice) and run_id not in job_ids(bob)
        detail, report = bob.predict(run_id, api_name="/job_detail")
        assert UNSEEN in detail and report is None
        message, table = bob.predict(run_id, api_name="/cancel_run")
        assert UNSEEN in message and "Cancelling" not in message
        assert run_id not in {row[0] for row in table["data"]}
        assert app.context.jobs.is_active(run_id)
        # Alice can; then Bob cannot resume it, Alice can.
        message, _ = alice.predict(run_id, api_name="/cancel_run")
        assert "Cancelling" in message
        assert wait_for_status(app.context, run_id, ("cancelled",)) == "cancelled"
        message, _ = bob.predict(run_id, "", api_name="/resume_run")
        assert UNSEEN in message and not app.context.jobs.is_active(run_id)
        message, _ = bob.predict(run_id, "", api_name="/rerun_errors")
        assert UNSEEN in message
        message, _ = alice.predict(run_id, "", api_name="/resume_run")
        assert "Resumed" in message
    finally:
        app.server.latency = 0.0
    assert wait_for_status(app.context, run_id, ("finished",)) == "finished"

    # Finished: its scores are on the board for everyone, named by a reference (its id is Alice's until she shares
    # it); its raw outputs are Alice's alone.
    board = table_rows(bob.predict("acebench", "en", "alice-model", ["evaluated"], ["overall"], True, "official",
                                   "overall", api_name="/leaderboard"))
    assert [row["run_id"] for row in board] == [app.context.visitors.run_ref(run_id)]
    refused = bob.predict(run_id=run_id, api_name="/samples")
    assert refused["data"] == [] and UNSEEN in refused["count"]
    evidence = bob.predict(run_id, "normal_atom_bool_0", "official", api_name="/sample")
    assert UNSEEN in evidence and "Raw output" not in evidence
    assert UNSEEN in bob.predict(run_id, run_id, api_name="/compare")["note"]
    assert run_id not in {pair[1] for pair in bob.predict(api_name="/explore_runs")}
    assert alice.predict(run_id=run_id, api_name="/samples")["count"] == f"{SAMPLES} samples"
    assert run_id in {pair[1] for pair in alice.predict(api_name="/explore_runs")}

    # Only Alice can share it; then Bob sees its outputs, still not its job.
    message, _ = bob.predict(run_id, api_name="/share_run")
    assert UNSEEN in message and not app.context.store.get_run(run_id).shared
    message, _ = alice.predict(run_id, api_name="/share_run")
    assert "now shown to every visitor" in message
    board = table_rows(bob.predict("acebench", "en", "alice-model", ["evaluated"], ["overall"], True, "official",
                                   "overall", api_name="/leaderboard"))
    assert [row["run_id"] for row in board] == [run_id]
    assert bob.predict(run_id=run_id, api_name="/samples")["count"] == f"{SAMPLES} samples"
    assert "Raw output" in bob.predict(run_id, "normal_atom_bool_0", "official", api_name="/sample")
    assert run_id in {pair[1] for pair in bob.predict(api_name="/explore_runs")}
    assert run_id not in job_ids(bob)
    message, _ = bob.predict(run_id, "", api_name="/rerun_errors")
    assert "started by another visitor" in message

    # The store holds a salted hash of the owner, never the session that made it.
    owner = app.context.store.get_run(run_id).owner
    assert owner and re.fullmatch(r"[0-9a-f]{64}", owner)
    assert alice.session_hash not in app.db_path.read_bytes().decode("utf-8", "replace")
    secret = app.db_path.parent / SECRET_FILE
    assert secret.stat().st_mode & 0o777 == 0o600


@pytest.mark.slow
def test_the_operators_runs_are_seen_by_all_and_acted_on_by_no_visitor(app: RunningApp):
    visitor = Client(app.url, verbose=False)
    store = app.context.store
    run_id = store.create_run("acebench", "en", "operator-model", app.server.base_url, {"model": {"base_url":
                              app.server.base_url}}, "f", 3)
    store.set_status(run_id, "cancelled")
    # Unfinished, it is not shown to visitors (ownership.may_see_job): refused as an id with no run is.
    message, _ = visitor.predict(run_id, "", api_name="/resume_run")
    assert UNSEEN in message and not app.context.jobs.is_active(run_id)
    assert UNSEEN in visitor.predict(run_id, api_name="/cancel_run")[0]
    assert run_id not in job_ids(visitor)
    store.set_status(run_id, "finished")
    detail, _ = visitor.predict(run_id, api_name="/job_detail")
    assert "operator\\-model" in detail and "finished" in detail
    message, _ = visitor.predict(run_id, "", api_name="/resume_run")
    assert "belongs to the operator" in message and not app.context.jobs.is_active(run_id)
    assert "belongs to the operator" in visitor.predict(run_id, api_name="/cancel_run")[0]


@pytest.mark.slow
def test_an_owner_token_names_the_same_visitor_from_any_session(app: RunningApp):
    token = "a-secret-token-of-my-own-0123456789"
    first, second, stranger = (Client(app.url, verbose=False) for _ in range(3))
    started = first.predict(**public_form(app.server.base_url, "token-model", limit=3), owner_token=token,
                            api_name="/start_run")
    run_id = started["run_id"]
    assert run_id, started["message"]
    assert run_id in job_ids(second, owner_token=token)
    assert run_id not in job_ids(first) and run_id not in job_ids(stranger)
    assert wait_for_status(app.context, run_id, ("finished",)) == "finished"
    assert second.predict(run_id=run_id, owner_token=token, api_name="/samples")["count"] == "3 samples"
    refused = stranger.predict(**public_form(app.server.base_url, "m", limit=3), owner_token="short",
                               api_name="/start_run")
    assert refused["run_id"] == "" and "owner_token must be a secret of 16" in plain(refused["message"])
    assert token not in app.db_path.read_bytes().decode("utf-8", "replace")


@pytest.mark.slow
def test_one_run_per_visitor_at_a_time(app: RunningApp):
    visitor, other = Client(app.url, verbose=False), Client(app.url, verbose=False)
    app.server.latency = 1.0  # 30 samples one at a time: the runs go on for the whole test
    started: list[str] = []
    try:
        first = visitor.predict(**public_form(app.server.base_url, "cap-model", concurrency=1), api_name="/start_run")
        started.append(first["run_id"])
        assert first["run_id"], first["message"]
        second = visitor.predict(**public_form(app.server.base_url, "cap-model", concurrency=1), api_name="/start_run")
        assert second["run_id"] == "" and "you have 1 run(s) going on already" in plain(second["message"])
        third = other.predict(**public_form(app.server.base_url, "cap-model", concurrency=1), api_name="/start_run")
        started.append(third["run_id"])
        assert third["run_id"], third["message"]
        # A resume takes a slot too: the visitor's cancelled run waits while another of theirs runs.
        visitor.predict(first["run_id"], api_name="/cancel_run")
        wait_for_status(app.context, first["run_id"], ("cancelled",))
        fourth = visitor.predict(**public_form(app.server.base_url, "cap-model", concurrency=1), api_name="/start_run")
        started.append(fourth["run_id"])
        assert fourth["run_id"], fourth["message"]
        message, _ = visitor.predict(first["run_id"], "", api_name="/resume_run")
        assert "you have 1 run(s) going on already" in plain(message)
    finally:
        app.server.latency = 0.0
        cancel_all(app.context, [run_id for run_id in started if run_id])


@pytest.mark.slow
def test_ten_concurrent_starts_admit_exactly_the_cap(tmp_path: Path):
    with public_app(tmp_path, latency=0.5, launch=False) as running:
        context = running.context
        barrier = threading.Barrier(10)
        outcomes: list[dict[str, str]] = []

        def start(index: int) -> None:
            form = public_form(running.server.base_url, f"racer-{index}", concurrency=1)
            barrier.wait()
            outcomes.append(start_job(context, form, None, owner=f"visitor-{index}"))

        threads = [threading.Thread(target=start, args=(index,)) for index in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        admitted = [outcome["run_id"] for outcome in outcomes if outcome["run_id"]]
        try:
            assert len(outcomes) == 10
            assert len(admitted) == PUBLIC_MAX_ACTIVE_JOBS, [outcome["message"] for outcome in outcomes]
            refused = [outcome["message"] for outcome in outcomes if not outcome["run_id"]]
            assert all(f"{PUBLIC_MAX_ACTIVE_JOBS} runs are going on already" in plain(message) for message in refused)
            assert len(context.store.list_runs()) == PUBLIC_MAX_ACTIVE_JOBS  # a refused start stores nothing
        finally:
            cancel_all(context, admitted)


def test_a_run_over_its_time_limit_is_cancelled_and_not_resumed(tmp_path: Path):
    clock = ManualClock()
    with public_app(tmp_path, latency=0.5, launch=False, clock=clock) as running:
        context = running.context
        outcome = start_job(context, public_form(running.server.base_url, "slow-model", concurrency=1), None,
                            owner="visitor-a")
        run_id = outcome["run_id"]
        assert run_id, outcome["message"]
        clock.advance(PUBLIC_MAX_RUN_SECONDS - 1)
        assert context.jobs.check_time_limits() == []
        clock.advance(1)
        assert context.jobs.check_time_limits() == [run_id]
        assert context.jobs.wait(run_id, timeout=60) == "cancelled"
        minutes = f"at most {PUBLIC_MAX_RUN_SECONDS / 60:g} minutes"
        assert minutes in context.store.get_run(run_id).message
        row = jobs_table(context, "visitor-a").set_index("run_id").loc[run_id]
        assert row["status"] == "cancelled" and minutes in row["message"]
        with pytest.raises(Exception, match="has used all its time"):
            context.jobs.resume(run_id, owner="visitor-a")


@pytest.mark.slow
def test_a_run_another_process_executes_shows_as_running_elsewhere_and_is_not_resumed(app: RunningApp):
    visitor = Client(app.url, verbose=False)
    started = visitor.predict(**public_form(app.server.base_url, "shared-model", limit=3), api_name="/start_run")
    run_id = started["run_id"]
    assert wait_for_status(app.context, run_id, ("finished",)) == "finished"
    store = app.context.store
    # As the CLI leaves a run it executes: stored as running, its lease held by that process.
    store.set_status(run_id, "running")
    assert store.claim_lease(run_id, "other-process", 60)
    try:
        jobs = {row["run_id"]: row for row in table_rows(visitor.predict(api_name="/jobs"))}
        assert jobs[run_id]["status"] == RUNNING_ELSEWHERE
        message, _ = visitor.predict(run_id, "", api_name="/resume_run")
        assert "another process" in message and not app.context.jobs.is_active(run_id)
        message, _ = visitor.predict(run_id, api_name="/cancel_run")
        assert "another process" in message and "stop it there" in message
        detail, _ = visitor.predict(run_id, api_name="/job_detail")
        assert RUNNING_ELSEWHERE in detail
    finally:
        store.release_lease(run_id, "other-process")
    # The process is gone: the run was interrupted, and resuming it is this app's to do.
    assert app.context.jobs.status_of(run_id, store.get_run(run_id).status) == "interrupted"


def page_config(app: RunningApp) -> str:
    with urllib.request.urlopen(app.url + "config") as response:
        return response.read().decode("utf-8")


@pytest.mark.slow
def test_the_page_config_and_messages_hold_no_server_path(app: RunningApp):
    config = page_config(app)
    folders = [component["props"].get("value") for component in json.loads(config)["components"]
               if component.get("props", {}).get("label") == "Local data folder"]
    assert folders[0] == ""  # the Evaluate tab's (built before the Submit tab's)
    assert str(app.db_path.parent) not in config
    visitor = Client(app.url, verbose=False)
    unknown = visitor.predict(run_id="no-such-run", api_name="/samples")["count"]
    assert "no run" in unknown and str(app.db_path.parent) not in unknown
    message, _ = visitor.predict("no-such-run", "", api_name="/resume_run")
    assert "no run" in message and "/" not in message.replace("\\", "")


@pytest.mark.slow  # starts the module's public app (seconds) for one look at its page config
def test_no_component_of_the_page_holds_the_server_data_folder(app: RunningApp):
    assert str(app.data) not in page_config(app)


def test_a_run_started_before_the_pages_token_arrived_stays_the_visitors_after_a_reload(tmp_path: Path):
    """A page whose load has not yet stored its token (a busy page, a quick visitor) sends none: its run is its
    session's, and the token the page is then given is that session's token, so the same browser, reloaded (a new
    session, the stored token), still owns the run. Another session is someone else."""
    from types import SimpleNamespace

    from evaluators.service.ownership import Visitors
    from ui.app import keep_or_make_token

    public = Visitors(public=True, folder=tmp_path)
    started_by = public.owner(None, "session-one")  # Start pressed before the page's token arrived
    context = SimpleNamespace(public=True, visitors=public)
    stored = keep_or_make_token(context, None, SimpleNamespace(session_hash="session-one"))  # type: ignore[arg-type]
    assert public.owner(stored, "session-two") == started_by  # after a reload: the stored token, a new session
    assert keep_or_make_token(context, stored, SimpleNamespace(session_hash="session-two")) == stored  # type: ignore[arg-type]
    assert public.owner(None, "session-three") != started_by
    assert keep_or_make_token(context, None, SimpleNamespace(session_hash="session-three")) != stored  # type: ignore[arg-type]
    private = SimpleNamespace(public=False, visitors=Visitors(public=False, folder=tmp_path))
    made = keep_or_make_token(private, None, SimpleNamespace(session_hash="session-one"))  # type: ignore[arg-type]
    assert made != stored and len(made) >= 16  # a private deployment has no secret: a random token


def test_server_paths_in_errors_get_short_names():
    redact = PathRedactor({"/srv/toolboard": "<toolboard home>", "/srv/data": "<data folder>"})
    error = FileNotFoundError("[Errno 2] No such file: '/srv/data/acebench/data_en/x.json' (see /opt/app/y.py)")
    shown = plain(user_error(error, redact))
    assert "srv" not in shown and "opt" not in shown
    assert "'<data folder>/acebench/data_en/x.json'" in shown and "(see …/y.py)" in shown
    assert redact("see https://api.example.com/v1/chat at http://10.0.0.1:8000/v1") == \
        "see https://api.example.com/v1/chat at http://10.0.0.1:8000/v1"
    assert redact("no run 'x' in /srv/toolboard/toolboard.db") == "no run 'x' in <toolboard home>/toolboard.db"


def test_a_private_deployment_keeps_every_run_everyones(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    context = AppContext(store=Store(tmp_path / "home" / "toolboard.db"), admission=Admission())
    try:
        with ScriptedServer(reply=correct_reply) as server:
            form = {**public_form(server.base_url, "m", limit=3), "data_source": "local folder", "data_folder": str(data)}
            run_id = start_job(context, form, None, owner=context.visitors.owner("anyone-at-all-0123", None))["run_id"]
            assert context.jobs.wait(run_id, timeout=60) == "finished"
        assert context.store.get_run(run_id).owner is None
        assert run_id in set(jobs_table(context, None)["run_id"])
        assert not (tmp_path / "home" / SECRET_FILE).exists()  # no owners, no secret
    finally:
        context.close()


@pytest.mark.slow
def test_a_damaged_store_is_set_aside_and_the_page_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for name in ("TOOLBOARD_PUBLIC", "SPACE_ID", "TOOLBOARD_HUB_REPO", "TOOLBOARD_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TOOLBOARD_HOME", str(tmp_path))
    (tmp_path / "toolboard.db").write_bytes(b"this is not a database " * 200)
    context = context_from_env()
    try:
        assert context.notice and "damaged" in context.notice
        assert list(tmp_path.glob("toolboard.db.damaged-*"))
        demo = build_app(context)
        launch_patiently(demo, server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
        try:
            with urllib.request.urlopen(demo.local_url + "config") as response:
                assert "The results store was damaged" in plain(response.read().decode("utf-8"))
        finally:
            demo.close()
    finally:
        context.close()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_browser_keeps_its_runs_across_reloads_and_another_browser_does_not_see_them(tmp_path: Path):
    with public_app(tmp_path) as running, headless_chromium() as browser:
        page = browser.new_context().new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(running.url, wait_until="load")
        run_id = start_example_run(page, running.server.base_url)
        wait_for_status(running.context, run_id, ("finished",))
        page.reload(wait_until="load")
        open_tab(page, "Evaluate")
        page.locator(f"text={run_id} >> visible=true").first.wait_for()  # the same visitor after a reload

        other = browser.new_context().new_page()  # its own storage: another visitor
        other.set_default_timeout(TIMEOUT_MS)
        other.goto(running.url, wait_until="load")
        open_tab(other, "Evaluate")
        other.get_by_text("Runs keep going when you close the tab").wait_for()
        other.wait_for_timeout(2500)  # a few ticks of the jobs timer
        assert run_id not in other.get_by_label("Jobs").inner_text()
