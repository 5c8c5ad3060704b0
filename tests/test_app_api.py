"""Every tab's API through gradio_client, against the real app, a real store and a scripted endpoint."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import (
    SECRET_KEY,
    RunningApp,
    form,
    items_copy,
    running_app,
    table_rows,
    wait_for_status,
    write_predictions,
)

LEADERBOARD_ALL = ["published", "evaluated", "uploaded"]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    with running_app(tmp_path_factory.mktemp("app")) as running:
        yield running


@pytest.fixture(scope="module")
def client(app: RunningApp) -> Client:
    return Client(app.url, verbose=False)


def added_run_id(message) -> str:
    text = message[0] if isinstance(message, (list, tuple)) else message
    return re.search(r"Added as run (\S+):", text).group(1)


def leaderboard(client: Client, benchmark="acebench", view="en", search="", sources=None, columns=None, mode="official",
                sort_by="overall", details=False):
    value = client.predict(benchmark, view, search, sources or LEADERBOARD_ALL, columns or ["normal", "overall"], details, mode,
                           sort_by, api_name="/leaderboard")
    return table_rows(value)


@pytest.mark.slow
def test_leaderboard_shows_published_rows_and_filters_server_side(client: Client):
    rows = leaderboard(client)
    gpt = [r for r in rows if r["model"] == "GPT-4o"]
    assert gpt and gpt[0]["source"] == "published" and gpt[0]["overall"] == pytest.approx(81.1)
    overall = [r["overall"] for r in rows]
    assert overall == sorted(overall, reverse=True)
    filtered = leaderboard(client, search="qwen")
    assert filtered and all("qwen" in r["model"].lower() for r in filtered) and len(filtered) < len(rows)
    assert set(leaderboard(client, columns=["agent"], sort_by="agent")[0]) >= {"model", "source", "agent"}
    assert "overall" not in leaderboard(client, columns=["agent"], sort_by="agent")[0]


@pytest.mark.slow
def test_leaderboard_strict_mode_hides_published_rows_and_other_benchmarks_have_views(client: Client):
    assert all(r["source"] != "published" for r in leaderboard(client, mode="strict"))
    rows = leaderboard(client, benchmark="toolbench_static", view="out_of_domain", columns=["act_em", "hallu_rate"],
                       sort_by="hallu_rate")
    assert rows and {"act_em", "hallu_rate"} <= set(rows[0])
    hallu = [r["hallu_rate"] for r in rows if r["hallu_rate"] is not None]
    assert hallu == sorted(hallu)  # lower is better, so ascending


@pytest.mark.slow
def test_download_of_the_current_view(client: Client):
    path = client.predict("acebench", "zh", "gpt", LEADERBOARD_ALL, ["overall"], False, "official", "overall",
                          api_name="/download_csv")
    text = Path(path).read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("model,source,apart_reason,overall")
    assert all("gpt" in line.lower() for line in text.splitlines()[1:])
    records = json.loads(Path(client.predict("acebench", "zh", "gpt", LEADERBOARD_ALL, ["overall"], False, "official",
                                             "overall", api_name="/download_json")).read_text(encoding="utf-8"))
    # downloads in %, as the table and the /leaderboard API show them
    assert records and all(0 <= r["overall"] <= 100 for r in records) and any(r["overall"] > 1 for r in records)


def test_chart_endpoint_returns_a_plotly_figure(client: Client):
    figure = client.predict("acebench", "en", "", LEADERBOARD_ALL, ["atom", "single", "multi"], "official", "subset bars", 3,
                            api_name="/chart")
    plot = json.loads(figure["plot"])
    assert len(plot["data"]) == 3 and plot["layout"]["yaxis"]["title"]["text"] == "score (%)"


@pytest.mark.slow
def test_evaluate_runs_in_the_background_reports_and_joins_the_leaderboard(app: RunningApp, client: Client,
                                                                            caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    started = client.predict(**form(app.server.base_url, "scripted-model", app.data, api_key=SECRET_KEY),
                             api_name="/start_run")
    run_id = started["run_id"]
    assert run_id and "Started" in started["message"]
    assert wait_for_status(app.context, run_id, ("finished",)) == "finished"
    jobs = table_rows(client.predict(api_name="/jobs"))
    job = next(j for j in jobs if j["run_id"] == run_id)
    assert job["done"] == job["total"] == 6 and job["errors"] == 0
    detail, report = client.predict(run_id, api_name="/job_detail")
    assert "finished" in detail and report["subsets"]["normal_atom_bool"]["metrics"]["accuracy"] == 1.0
    rows = leaderboard(client, search="scripted-model", columns=["atom"], sort_by="atom", details=True)
    assert rows and rows[0]["source"] == "evaluated" and rows[0]["run_id"] == run_id
    # Only one category ran: its accuracy is shown, the group columns stay empty rather than guessed.
    assert rows[0]["normal_atom_bool"] == 100.0 and rows[0]["atom"] is None
    # The key reached the endpoint, and nothing else.
    assert any(h.get("authorization") == f"Bearer {SECRET_KEY}" for h in app.server.headers_seen)
    assert SECRET_KEY.encode() not in app.db_path.read_bytes()
    assert all(SECRET_KEY not in str(v) for v in (jobs, detail, report))
    assert SECRET_KEY not in caplog.text


@pytest.mark.slow
def test_evaluate_refuses_bad_forms_without_creating_runs(app: RunningApp, client: Client):
    before = len(app.context.store.list_runs())
    def start(**overrides):
        return client.predict(**{**form(app.server.base_url, "m", app.data), **overrides}, api_name="/start_run")

    refused = start(base_url="")
    assert refused["run_id"] == "" and "base URL" in refused["message"]
    assert "http" in start(base_url="ftp://example.com")["message"]
    assert "unknown subset" in start(subsets=["no_such_subset"])["message"]
    assert start(data_folder=str(app.data / "missing"))["message"].startswith("⚠️")
    assert "limit" in start(limit=0)["message"]
    assert "concurrency" in start(concurrency=1000)["message"]
    # Roles and options by their declared names (the user role of this benchmark, an option it does not declare).
    assert "Simulated user needs both" in start(roles={"user": {"base_url": app.server.base_url}})["message"]
    assert "acebench has no option 'speed'" in start(options={"speed": "fast"})["message"]
    assert len(app.context.store.list_runs()) == before


@pytest.mark.slow
def test_cancel_resume_and_rerun_errors_from_the_jobs_panel(app: RunningApp, client: Client):
    app.server.latency = 0.2
    try:
        run_id = client.predict(**form(app.server.base_url, "slow-model", app.data, limit=30, concurrency=1),
                                api_name="/start_run")["run_id"]
        message, _ = client.predict(run_id, api_name="/cancel_run")
        assert "Cancelling" in message
        assert wait_for_status(app.context, run_id, ("cancelled",)) == "cancelled"
        done_at_cancel = app.context.store.run_totals(run_id)["done"]
        assert done_at_cancel < 30
        message, _ = client.predict(run_id, "", api_name="/resume_run")
        assert "Resumed" in message
    finally:
        app.server.latency = 0.0
    assert wait_for_status(app.context, run_id, ("finished",)) == "finished"
    assert app.context.store.run_totals(run_id)["done"] == 30
    message, _ = client.predict(run_id, "", api_name="/rerun_errors")
    assert "no request errors" in message
    message, _ = client.predict("no-such-run", "", api_name="/resume_run")
    assert "no run" in message


@pytest.mark.slow
def test_submit_checks_scores_and_adds_an_upload(app: RunningApp, client: Client):
    predictions = EXAMPLE_DIR / "predictions.jsonl"
    # the example's items from a folder of one's own (scored on the built-in example, a row never joins the board)
    validation, report, message = client.predict(handle_file(str(predictions)), "acebench", "en", "local folder",
                                                 str(items_copy(app.context.store)), api_name="/check_upload")
    assert validation["ok"] and validation["matched"] == validation["lines_read"] and validation["missing"] == 0
    assert report["summary"]["overall"] == 0.617 and "strict_summary" in report
    before = len(app.context.store.list_runs())
    added = client.predict("Example model", "from the built-in example", api_name="/add_upload")
    assert added_run_id(added)
    again = client.predict("Example model", "clicked twice", api_name="/add_upload")
    assert "Added" not in str(again)  # the checked file is used once
    assert len(app.context.store.list_runs()) == before + 1
    rows = leaderboard(client, search="example model")
    assert rows and rows[0]["source"] == "uploaded" and rows[0]["overall"] == pytest.approx(61.7)


@pytest.mark.slow
def test_a_bad_upload_is_explained_and_never_stored(app: RunningApp, client: Client, tmp_path: Path):
    bad = write_predictions(tmp_path / "bad.jsonl", [
        {"id": "normal_atom_bool_0", "output": "[x()]"},
        {"id": "normal_atom_bool_0", "output": "[y()]"},
        {"id": "no_such_id", "output": "[]"},
        "{broken json",
    ])
    before = len(app.context.store.list_runs())
    validation, report, message = client.predict(handle_file(str(bad)), "acebench", "en", "built-in example", "",
                                                 api_name="/check_upload")
    assert validation is None or not validation["ok"]
    assert report is None and ("line 4" in message or any("line" in e for e in (validation or {}).get("first_errors", [])))
    assert "Added" not in str(client.predict("Bad model", "", api_name="/add_upload"))
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps({"id": "x", "output": "y" * 300_000}) + "\n")
    _, _, message = client.predict(handle_file(str(big)), "acebench", "en", "built-in example", "", api_name="/check_upload")
    assert "limited to" in message
    assert len(app.context.store.list_runs()) == before


@pytest.mark.slow
def test_explore_lists_samples_shows_escaped_evidence_and_compares_runs(app: RunningApp, client: Client, tmp_path: Path):
    hostile = write_predictions(tmp_path / "hostile.jsonl", [
        {"id": "normal_atom_bool_0", "output": "<script>alert('x')</script>[Clock.setAlarm(time='00:00')]"},
        {"id": "normal_atom_bool_1", "output": "[Clock.setAlarm(time='01:01')]"},
        {"id": "normal_atom_bool_2", "output": "[Clock.setAlarm(time='99:99')]"},
    ])
    validation, _, _ = client.predict(handle_file(str(hostile)), "acebench", "en", "local folder", str(app.data),
                                      api_name="/check_upload")
    assert validation["ok"], validation
    run_id = added_run_id(client.predict("Hostile model", "", api_name="/add_upload"))
    assert validation["missing"] == 27  # the rest of the subset: scored as failures, and said so
    listed = client.predict(run_id=run_id, api_name="/samples")
    assert listed["count"] == "30 samples"
    wrong = {r["sample_id"] for r in table_rows(client.predict(run_id=run_id, verdict="wrong", api_name="/samples"))}
    assert "normal_atom_bool_2" in wrong and not {"normal_atom_bool_0", "normal_atom_bool_1"} & wrong
    detail = client.predict(run_id, "normal_atom_bool_0", "official", api_name="/sample")
    assert "<script>" not in detail and "&lt;script&gt;" in detail
    assert "Gold answer" in detail and "Prompt messages" in detail and "rule" in detail
    second = write_predictions(tmp_path / "second.jsonl", [
        {"id": "normal_atom_bool_0", "output": "[Clock.setAlarm(time='00:00')]"},
        {"id": "normal_atom_bool_1", "output": "[]"},
        {"id": "normal_atom_bool_2", "output": "[Clock.setAlarm(time='02:02')]"},
    ])
    client.predict(handle_file(str(second)), "acebench", "en", "local folder", str(app.data), api_name="/check_upload")
    second_id = added_run_id(client.predict("Second model", "", api_name="/add_upload"))
    flipped = client.predict(run_a=run_id, run_b=second_id, api_name="/compare")
    changes = {r["sample_id"]: r["change"] for r in table_rows(flipped)}
    assert changes == {"normal_atom_bool_1": "broken", "normal_atom_bool_2": "fixed"}, flipped["note"]


@pytest.mark.slow
def test_a_failed_add_keeps_the_checked_file_and_bad_lines_are_all_listed(app: RunningApp, client: Client,
                                                                         tmp_path: Path):
    predictions = EXAMPLE_DIR / "predictions.jsonl"
    validation, _, _ = client.predict(handle_file(str(predictions)), "acebench", "en", "built-in example", "",
                                      api_name="/check_upload")
    assert validation["ok"]
    refused = client.predict("   ", "", api_name="/add_upload")
    assert "name" in str(refused) and "Added" not in str(refused)
    assert added_run_id(client.predict("Named after a refusal", "", api_name="/add_upload"))
    bad = write_predictions(tmp_path / "many_bad.jsonl", [{"id": "normal_atom_bool_0", "output": "[]"},
                                                           "{broken", "not json", "{\"id\": 1,}"])
    validation, report, message = client.predict(handle_file(str(bad)), "acebench", "en", "built-in example", "",
                                                 api_name="/check_upload")
    assert report is None and validation["problems"] == 3
    assert [e.split(":")[0] for e in validation["first_errors"]] == [f"many_bad.jsonl, line {n}" for n in (2, 3, 4)]
    assert "gradio/" not in message and "gradio/" not in json.dumps(validation)
    assert all(f"line {n}" in message for n in (2, 3, 4))


@pytest.mark.slow
def test_the_ranking_and_the_rows_kept_apart_have_their_own_endpoints(app: RunningApp, client: Client):
    from tests.app_fixtures import upload

    run_id = upload(app.context.store, "Apart upload")
    args = ("acebench", "en", "", LEADERBOARD_ALL, ["overall"], False, "official", "overall")
    ranked = table_rows(client.predict(*args, api_name="/leaderboard_ranked"))
    apart = table_rows(client.predict(*args, api_name="/leaderboard_apart"))
    everything = table_rows(client.predict(*args, api_name="/leaderboard"))
    assert ranked[0]["rank"] == 1 and all(r["rank"] is not None and not r.get("apart_reason") for r in ranked)
    assert apart and all(r["apart_reason"] and r["rank"] is None for r in apart)
    assert [r["model"] for r in everything] == [r["model"] for r in ranked + apart]
    # the newest run is marked; intervals in % beside each fraction (published ACEBench rows: n from its data)
    mine = next(r for r in apart if r["run_id"] == run_id)
    assert mine["newest"] is True and mine["overall_n"] > 0 and mine["overall_low"] < mine["overall"] < mine["overall_high"]
    assert ranked[0]["overall_n"] == 1023 and ranked[0]["overall_low"] < ranked[0]["overall"] < ranked[0]["overall_high"]
    assert not any(r["newest"] for r in ranked if r["source"] == "published")


@pytest.mark.slow
def test_api_messages_are_plain_text_without_markdown_escapes(app: RunningApp, client: Client, tmp_path: Path):
    started = client.predict(**form(app.server.base_url, "plain-model_name", app.data), api_name="/start_run")
    assert started["run_id"] and "\\" not in started["message"]
    wait_for_status(app.context, started["run_id"], ("finished", "failed", "cancelled"))
    refused = client.predict(**form("ftp://api.example.com/v1", "restart-model", app.data), api_name="/start_run")
    assert refused["run_id"] == "" and "\\" not in refused["message"]
    message, _ = client.predict("no-such-run", "", api_name="/resume_run")
    assert "no-such-run" in message and "\\" not in message
    message, _ = client.predict(started["run_id"], "", api_name="/rerun_errors")
    assert "\\" not in message
    bad = write_predictions(tmp_path / "plain_name.jsonl", ["{broken", "{also broken"])
    _, _, message = client.predict(handle_file(str(bad)), "acebench", "en", "built-in example", "",
                                   api_name="/check_upload")
    assert "plain_name.jsonl, line 1" in message and "plain_name.jsonl, line 2" in message and "\\" not in message


def test_the_page_offers_the_data_sources_that_exist_and_says_what_the_limit_counts(client: Client):
    props = [component.get("props", {}) for component in client.config["components"]]
    data_choices = [p["choices"] for p in props if p.get("label") == "Data"]
    # The first benchmark (acebench) ships an example; the download choice keeps its value for API callers.
    assert data_choices and all(["built-in example", "built-in example"] in [list(c) for c in choices]
                                and list(choices[0])[1] == "download" for choices in data_choices)
    assert any(str(p.get("value", "")).startswith("data:") for p in props)
    assert any("conversations" in str(p.get("label", "")) for p in props if str(p.get("label", "")).startswith("Limit"))
