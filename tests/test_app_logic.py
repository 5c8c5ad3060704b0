"""The library under the app, without a server: leaderboard tables, uploads, jobs, public mode, the
store's migration from schema 1."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.engine.store import MIGRATIONS, SCHEMA_VERSION, Store
from evaluators.service.board import BoardQuery, board_rows, layout_for, query_board
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import upload, write_predictions
from tests.engine_fixtures import write_dataset
from ui.context import AppContext
from ui.run_form import run_request, start_job


def test_combined_view_averages_a_models_en_and_zh_runs(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    zh_data = tmp_path / "zh"
    (zh_data / "data_zh").mkdir(parents=True)
    for item in (EXAMPLE_DIR / "data_en").rglob("*.json"):
        target = zh_data / "data_zh" / item.relative_to(EXAMPLE_DIR / "data_en")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(item.read_text(encoding="utf-8"), encoding="utf-8")
    upload(store, "Twin")
    upload(store, "Twin", data=zh_data, language="zh")
    frame = board_rows("acebench", store)
    combined = frame[(frame["view"] == "combined") & (frame["model"] == "Twin")]
    assert len(combined) == 1 and combined.iloc[0]["overall"] == pytest.approx(0.617)
    assert combined.iloc[0]["details"] == "mean of en and zh"


def test_strict_mode_has_no_published_rows_and_lower_is_better_sorts_ascending(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    upload(store, "Strict one")
    strict = board_rows("acebench", store, mode="strict")
    assert set(strict["source"]) == {"uploaded"}
    layout = layout_for("toolbench_static")
    shown = query_board(board_rows("toolbench_static", None), layout, BoardQuery(view="in_domain", sort_by="hallu_rate"))
    values = list(shown["hallu_rate"].dropna())
    assert values == sorted(values) and len(values) > 3


def test_query_filters_by_source_search_and_columns(tmp_path: Path):
    store = Store(tmp_path / "t.db")
    upload(store, "Needle model")
    layout = layout_for("acebench")
    frame = board_rows("acebench", store)
    only_uploaded = query_board(frame, layout, BoardQuery(view="en", sources=("uploaded",)))
    assert list(only_uploaded["model"]) == ["Needle model"]
    searched = query_board(frame, layout, BoardQuery(view="en", search="NEEDLE", columns=("overall",), details=True))
    assert list(searched["model"]) == ["Needle model"]
    assert "overall" in searched.columns and "atom" not in searched.columns and "normal_atom_bool" in searched.columns


def test_an_upload_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = Store(tmp_path / "t.db")
    submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)

    def failing_save(*args, **kwargs):
        raise sqlite3.OperationalError("disk full")

    monkeypatch.setattr(store, "save_scores", failing_save)
    with pytest.raises(sqlite3.OperationalError):
        store_submission(store, submission, "Half stored")
    assert store.list_runs() == []
    with pytest.raises(ToolboardError, match="name"):
        store_submission(store, submission, "  ")


def test_an_upload_with_no_id_of_the_benchmark_is_refused(tmp_path: Path):
    stray = write_predictions(tmp_path / "stray.jsonl", [{"id": "something_else", "output": "x"}])
    with pytest.raises(ToolboardError, match="no id"):
        check_submission(stray, "acebench", language="en", data_dir=EXAMPLE_DIR)


def test_public_mode_refuses_loopback_endpoints_local_folders_and_server_keys(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")
    context = AppContext(store=Store(tmp_path / "t.db"), public=True)
    try:
        form = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", "benchmark": "acebench", "language": "en",
                "data_source": "built-in example", "limit": 5}
        with pytest.raises(ToolboardError, match="not allowed"):
            run_request(context, form)
        public = {**form, "base_url": "http://93.184.215.14/v1", "api_key_env": ""}
        assert run_request(context, public).config.model.api_key_env == ""
        with pytest.raises(ToolboardError, match="cannot read a key from the server's environment"):
            run_request(context, {**public, "api_key_env": "OPENAI_API_KEY"})
        with pytest.raises(ToolboardError, match="public deployment"):
            run_request(context, {**public, "data_source": "local folder", "data_folder": str(tmp_path)})
        with pytest.raises(ToolboardError, match="not allowed"):
            run_request(context, {**public, "user_base_url": "http://10.0.0.5/v1", "user_model": "u"})
        with pytest.raises(ToolboardError, match="not allowed"):
            run_request(context, {**public, "roles": {"user": {"base_url": "http://10.0.0.5/v1", "model": "u"}}})
        with pytest.raises(ToolboardError, match="at most"):
            run_request(context, {**public, "limit": None})
        with pytest.raises(ToolboardError, match="concurrency"):
            run_request(context, {**public, "concurrency": 100})
    finally:
        context.close()


def test_only_variables_named_as_keys_can_be_used_and_a_space_is_public_by_default(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    from evaluators.core.public_hosts import is_public_mode
    from evaluators.engine.endpoint_guard import key_from_environment

    monkeypatch.delenv("TOOLBOARD_PUBLIC", raising=False)
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        form = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", "benchmark": "acebench", "language": "en",
                "data_source": "built-in example"}
        with pytest.raises(ToolboardError, match="must end in _KEY"):
            run_request(context, {**form, "api_key_env": "HF_TOKEN"})
        assert run_request(context, form).config.model.api_key_env == ""  # no variable unless one is named
        assert run_request(context, {**form, "api_key_env": "OPENAI_API_KEY"}).config.model.api_key_env == "OPENAI_API_KEY"
        with pytest.raises(ToolboardError, match="request mode"):
            run_request(context, {**form, "request_mode": "bogus"})
    finally:
        context.close()
    monkeypatch.setenv("SPACE_ID", "org/space")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-own")
    assert is_public_mode() and key_from_environment("OPENAI_API_KEY") is None
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "0")
    assert not is_public_mode() and key_from_environment("OPENAI_API_KEY") == "sk-server-own"


def test_the_form_takes_the_chosen_benchmarks_declared_roles_and_options_and_their_old_names(tmp_path: Path):
    from evaluators.engine.settings import Endpoint

    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        form = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", "benchmark": "stepeval_audio"}
        judge = {"base_url": "http://127.0.0.1:9/v1", "model": "j", "key_env": "OPENAI_API_KEY"}
        config = run_request(context, {**form, "roles": {"judge": judge}, "options": {"modality": "audio"}}).config
        assert config.roles == {"judge": Endpoint("http://127.0.0.1:9/v1", "j", "OPENAI_API_KEY")}
        assert config.options == {"modality": "audio"}
        old = run_request(context, {**form, "judge_base_url": judge["base_url"], "judge_model": "j",
                                   "judge_key_env": "OPENAI_API_KEY", "modality": "audio"}).config
        assert (old.roles, old.options) == (config.roles, config.options)
        assert run_request(context, {**form, "options": {"modality": "text"}}).config.options == {}  # the default
        with pytest.raises(ToolboardError, match="Parameter judge needs both a base URL and a model"):
            run_request(context, {**form, "roles": {"judge": {"base_url": judge["base_url"]}}})
        with pytest.raises(ToolboardError, match="option modality of stepeval_audio takes text, audio"):
            run_request(context, {**form, "options": {"modality": "video"}})
        # A role, option or prompt style the chosen benchmark does not declare is refused, as on the command line
        # (the page sends only the chosen benchmark's boxes: EvaluateForm.read).
        with pytest.raises(ToolboardError, match="toolbench_static has no role 'judge'"):
            run_request(context, {**form, "benchmark": "toolbench_static", "roles": {"judge": judge}})
        with pytest.raises(ToolboardError, match="toolbench_static has no option 'modality'"):
            run_request(context, {**form, "benchmark": "toolbench_static", "options": {"modality": "audio"}})
        with pytest.raises(ToolboardError, match="toolbench_static has no prompt styles to choose from"):
            run_request(context, {**form, "benchmark": "toolbench_static", "prompt_style": "official"})
        with pytest.raises(ToolboardError, match="stepeval_audio has no role 'critic'; its roles: judge"):
            run_request(context, {**form, "roles": {"critic": judge}})
        with pytest.raises(ToolboardError, match="stepeval_audio has no option 'speed'"):
            run_request(context, {**form, "options": {"speed": "fast"}})
    finally:
        context.close()


def test_the_built_in_example_and_the_demo_come_from_the_benchmarks_that_ship_one(tmp_path: Path):
    from evaluators.core.registry import all_benchmarks, get_benchmark
    from ui.run_form import demo_preset

    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        form = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", "data_source": "built-in example"}
        with pytest.raises(ToolboardError, match="ToolBench-Static has no built-in example"):
            run_request(context, {**form, "benchmark": "toolbench_static"})
        with pytest.raises(ToolboardError, match="is in en: choose language en"):
            run_request(context, {**form, "benchmark": "acebench", "language": "zh"})
        config = run_request(context, {**form, "benchmark": "acebench"}).config
        assert config.data_dir == str(get_benchmark("acebench").example.folder)
    finally:
        context.close()
    preset = demo_preset()
    first = next(b for b in all_benchmarks() if b.example is not None)
    assert (preset["benchmark"], preset["language"], preset["subsets"]) == (first.name, first.example.language,
                                                                         list(first.example.demo_subsets))
    assert preset["data_source"] == "built-in example" and preset["limit"] == 20


def test_the_app_names_no_benchmark_and_shows_every_registered_one():
    from evaluators.core.registry import all_benchmarks
    from ui.about_tab import about_text
    from ui.app import header

    source = "\n".join(path.read_text(encoding="utf-8") for path in (Path(__file__).parents[1] / "ui").glob("*.py"))
    about = about_text()
    for benchmark in all_benchmarks():
        assert benchmark.name not in source.lower() and benchmark.title.lower() not in source.lower()
        assert f"**{benchmark.title}** (`{benchmark.name}`" in about and benchmark.title in header()
        for role in benchmark.roles:
            assert f"Role `{role.name}`, **{role.label}**" in about and role.fallback in about
        for option in benchmark.options:
            assert f"Option `{option.name}`" in about


def test_a_run_left_running_by_a_dead_process_shows_as_interrupted(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    store = Store(tmp_path / "t.db")
    context = AppContext(store=store)
    try:
        config = run_request(context, {"base_url": "http://127.0.0.1:9/v1", "model": "m", "benchmark": "acebench",
                                      "language": "en", "subsets": ["normal_atom_bool"], "data_source": "local folder",
                                      "data_folder": str(data)}).config
        run_id = store.create_run("acebench", "en", "m", config.model.base_url, config.to_json(), "f", 3)
        store.set_status(run_id, "running")
        assert context.jobs.status_of(run_id, store.get_run(run_id).status) == "interrupted"
        with pytest.raises(ToolboardError, match="not running"):
            context.jobs.cancel(run_id)
    finally:
        context.close()


def test_a_schema_1_database_is_migrated_in_place(tmp_path: Path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript(MIGRATIONS[0])
        db.execute("PRAGMA user_version=1")
        db.execute("INSERT INTO runs (id, benchmark, model, base_url, config, fingerprint, status, created_at, total)"
                   " VALUES ('old', 'acebench', 'm', 'u', ?, 'f', 'finished', 0, 1)", (json.dumps({}),))
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    run = store.get_run("old")
    assert run.source == "endpoint" and run.notes is None


def test_every_benchmark_accepts_uploads_and_has_a_leaderboard_layout():
    from evaluators.core.registry import all_benchmarks

    for benchmark in all_benchmarks():
        assert benchmark.match_predictions is not None, benchmark.name
        layout = layout_for(benchmark.name)
        frame = board_rows(benchmark.name, None)
        assert set(layout.columns) <= set(frame.columns)
        if len(frame):
            assert set(frame["view"]) <= set(layout.views), benchmark.name


def test_a_zip_that_would_unpack_too_far_is_refused_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import zipfile

    from evaluators.core import predictions as reader
    from evaluators.core.errors import PredictionsError

    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("data_normal_atom_bool_result.json", " " * 5_000_000)
    monkeypatch.setattr(reader, "MAX_UNPACKED_BYTES", 1_000_000)
    with pytest.raises(PredictionsError, match="unpacks to"):
        reader.read_rows(bomb)
    assert bomb.stat().st_size < 100_000  # small on disk, large unpacked


def test_redirects_from_an_endpoint_are_not_followed(tmp_path: Path):
    import asyncio

    from aiohttp import web

    from evaluators.core.types import ChatRequest
    from evaluators.engine.client import ChatClient, RequestFailed, RetryPolicy
    from evaluators.engine.settings import ModelSettings
    from tests.loopback_app import LoopbackApp

    class Redirector(LoopbackApp):
        hits: list[str] = []

        def routes(self, app: web.Application) -> None:
            async def bounce(request: web.Request) -> web.Response:
                self.hits.append(request.path)
                raise web.HTTPTemporaryRedirect("/internal/metadata")

            app.router.add_route("*", "/{tail:.*}", bounce)

    async def ask(base_url: str) -> None:
        client = ChatClient(ModelSettings(base_url=base_url, model="m", api_key_env=""), retry=RetryPolicy(max_attempts=1))
        try:
            await client.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}]))
        finally:
            await client.close()

    with Redirector() as server:
        with pytest.raises(RequestFailed, match="HTTP 307"):
            asyncio.run(ask(f"http://127.0.0.1:{server.port}/v1"))
    assert server.hits == ["/v1/chat/completions"]  # the redirect target was never requested


def test_a_cancel_right_after_the_start_is_kept_and_a_finished_run_is_not_resumed(tmp_path: Path):
    from tests.scripted_server import ScriptedServer

    data = write_dataset(tmp_path / "data", 20)
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        with ScriptedServer(latency=0.2) as server:
            form = {"base_url": server.base_url, "model": "m", "benchmark": "acebench", "language": "en",
                    "subsets": ["normal_atom_bool"], "data_source": "local folder", "data_folder": str(data),
                    "concurrency": 1}
            run_id = context.jobs.start(run_request(context, form))
            context.jobs.cancel(run_id)
            assert context.jobs.wait(run_id, timeout=30) == "cancelled"
            assert context.store.run_totals(run_id)["done"] < 20
            server.latency = 0.0  # slow answers were for cancelling mid-way; the resume can be quick
            context.jobs.resume(run_id)
            assert context.jobs.wait(run_id, timeout=60) == "finished"
        with pytest.raises(ToolboardError, match="nothing to resume"):
            context.jobs.resume(run_id)
        assert context.store.get_run(run_id).status == "finished"
    finally:
        context.close()


def test_model_names_are_shown_as_text_in_the_jobs_panel(tmp_path: Path):
    from ui.jobs_panel import job_detail

    store = Store(tmp_path / "t.db")
    run_id = upload(store, "![x](https://attacker.example/p.png) <img src=x>")
    context = AppContext(store=store)
    try:
        text, _ = job_detail(context, run_id)
    finally:
        context.close()
    import re

    # Every Markdown or HTML character of the name is escaped, so it renders as the text it is.
    assert not re.search(r"(?<!\\)[!<\[(]", text.split(" on ")[0])
    assert "\\!\\[x\\]" in text and "\\<img" in text


def test_every_problem_of_a_file_is_listed_in_one_pass_up_to_the_cap_by_the_files_own_name(tmp_path: Path):
    from evaluators.core.predictions import MAX_LISTED_ERRORS

    folder = tmp_path / "gradio" / "0123abcd"
    folder.mkdir(parents=True)
    bad = write_predictions(folder / "preds.jsonl", [{"id": "normal_atom_bool_0", "output": "[]"}]
                            + ["{broken"] * (MAX_LISTED_ERRORS + 2) + [{"id": "normal_atom_enum_0"}])
    checked = check_submission(bad, "acebench", language="en", data_dir=EXAMPLE_DIR)
    validation = checked.validation()
    assert not checked.ok and validation["problems"] == MAX_LISTED_ERRORS + 3
    assert len(validation["first_errors"]) == MAX_LISTED_ERRORS
    assert validation["first_errors"][0].startswith("preds.jsonl, line 2: invalid JSON")
    assert "line 3" in validation["first_errors"][1]
    # the missing field of the last line is counted with the unreadable lines before it, not hidden by them
    assert checked.summary.errors[-1].startswith(f"preds.jsonl, line {MAX_LISTED_ERRORS + 4}: needs 'output'")
    assert str(folder) not in str(validation)


def test_a_failed_add_keeps_the_checked_submission_and_messages_show_no_upload_folder(tmp_path: Path):
    from gradio.utils import get_upload_folder

    from ui.format import markdown_text
    from ui.submit_tab import add_pending, not_scored, without_upload_paths

    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en", data_dir=EXAMPLE_DIR)
        message, kept = add_pending(context, submission, "  ", "")
        assert "name" in message and kept is submission
        message, kept = add_pending(context, kept, "Named model", "")
        assert message.startswith("Added as run") and kept is None
        message, kept = add_pending(context, None, "Named model", "")
        assert "Added" not in message and kept is None
    finally:
        context.close()
    temp = f"{get_upload_folder()}/9f8e7d6c/my_preds.jsonl"
    assert without_upload_paths(f"{temp}, line 2: bad") == "my_preds.jsonl, line 2: bad"
    assert without_upload_paths(markdown_text(f"{temp}, line 2")) == markdown_text("my_preds.jsonl, line 2")
    listed = not_scored("3 problem(s)", ["a.jsonl, line 1: x", "a.jsonl, line 2: y"], 3)
    assert "line 1" in listed and "line 2" in listed and "and 1 more" in listed


def test_the_data_choice_offers_what_exists_and_says_what_will_be_read(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    from evaluators.core.registry import all_benchmarks
    from ui.context import BUILT_IN_EXAMPLE
    from ui.run_form import DATA_DIR_CHOICE, LIMIT_LABEL, data_line, data_source_choices, data_source_value

    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    server_data = tmp_path / "srv" / "benchmark_data"
    plain = AppContext(store=Store(tmp_path / "a.db"))
    public = AppContext(store=Store(tmp_path / "b.db"), public=True, default_data_dir=str(server_data))
    private = AppContext(store=Store(tmp_path / "c.db"), default_data_dir=str(server_data))
    try:
        for benchmark in all_benchmarks():
            values = [value for _, value in data_source_choices(plain, benchmark.name)]
            assert (BUILT_IN_EXAMPLE in values) == (benchmark.example is not None)
            assert values[0] == "download" and "local folder" in values
            if benchmark.example is None:
                assert data_source_value(plain, benchmark.name, BUILT_IN_EXAMPLE) == "download"
        assert data_source_choices(plain, "acebench")[0] == ("download", "download")
        assert "downloaded" in data_line(plain, "download", "", "acebench", "en")
        assert data_source_choices(public, "acebench")[0] == (DATA_DIR_CHOICE, "download")
        assert "local folder" not in [value for _, value in data_source_choices(public, "acebench")]
        shown = data_line(public, "download", "", "acebench", "en")
        assert "TOOLBOARD_DATA_DIR" in shown and str(tmp_path) not in shown and "<data folder>" in shown
        assert str(server_data) in data_line(private, "download", "", "acebench", "en")
        assert "built-in example" in data_line(plain, BUILT_IN_EXAMPLE, "", "acebench", "en")
        assert "⚠️" in data_line(plain, BUILT_IN_EXAMPLE, "", "stepeval_audio")
        assert "/my/data" in data_line(plain, "local folder", "/my/data", "acebench", "en")
        assert "not available" in data_line(public, "local folder", "/my/data", "acebench", "en")
        monkeypatch.setenv("TOOLBOARD_DATA_DIR", str(server_data))
        assert "TOOLBOARD_DATA_DIR" in data_line(plain, "download", "", "acebench", "en")
    finally:
        for context in (plain, public, private):
            context.close()
    assert "conversations" in LIMIT_LABEL and "items" in LIMIT_LABEL


def test_a_cancelled_run_has_no_time_left_and_api_messages_are_plain_text(tmp_path: Path):
    from evaluators.core.errors import ToolboardError
    from evaluators.service.runs import act_on_run
    from ui.context import as_markdown, plain_error
    from ui.format import user_error
    from ui.jobs_panel import time_left

    progress = {"done": 3, "total": 20, "eta_s": 39.0}
    assert time_left("running", progress) == 39.0
    assert all(time_left(status, progress) is None for status in ("cancelling", "cancelled", "finished", "failed"))
    error = ToolboardError("restart-model at https://api.example.com/v1 failed")
    assert plain_error(error) == "⚠️ restart-model at https://api.example.com/v1 failed"
    assert as_markdown(plain_error(error)) == user_error(error)
    assert as_markdown("a_b\n- c.d") == "a\\_b\n- c\\.d"
    store = Store(tmp_path / "t.db")
    run_id = upload(store, "restart-model")
    context = AppContext(store=store)
    try:
        message = act_on_run(context, "share", run_id, None, None)
        assert message.startswith(f"The outputs of {run_id} are") and "\\" not in message
    finally:
        context.close()


@pytest.mark.slow
def test_the_jobs_panel_refreshes_every_second_only_while_a_run_goes_on(tmp_path: Path):
    """Each refresh costs the visitor's browser a Gradio event: a page with nothing going on refreshes every
    IDLE_TICK_S, one following a run every LIVE_TICK_S; starting, cancelling, resuming or re-running follows at once."""
    from tests.app_fixtures import form, wait_for_status
    from tests.engine_fixtures import correct_reply
    from tests.scripted_server import ScriptedServer
    from ui.app import build_app
    from ui.evaluate_tab import IDLE_TICK_S, LIVE_TICK_S

    data = write_dataset(tmp_path / "data", 6)
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        handlers = {fn.fn.__name__: fn.fn for fn in build_app(context).fns.values() if fn.fn is not None}
        tick = handlers["tick"]

        def interval(chosen: str = "") -> float:
            return tick(chosen, "", None, None)[-1].value

        assert interval() == IDLE_TICK_S
        with ScriptedServer(reply=correct_reply, latency=0.5) as server:
            run_id = start_job(context, form(server.base_url, "m", data, concurrency=1), "", None)["run_id"]
            assert run_id and interval() == interval(run_id) == LIVE_TICK_S
            assert wait_for_status(context, run_id, ("finished",)) == "finished"
        assert interval() == interval(run_id) == IDLE_TICK_S
        for name, arguments in {"cancel_clicked": (run_id, None, None), "resume_clicked": (run_id, "", None, None),
                                "rerun_clicked": (run_id, "", None, None)}.items():
            assert handlers[name](*arguments)[-1].value == LIVE_TICK_S, name
        assert handlers["share_clicked"](run_id, None, None)[-1] == {"__type__": "update"}
    finally:
        context.close()
