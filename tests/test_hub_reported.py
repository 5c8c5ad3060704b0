"""What the Hub reports, as a fourth kind of row (publish/hub_reported.py), read from the project's fake Hub over
real HTTP: a dataset leaderboard's entries with their badges, a model repo's `.eval_results` files parsed with the
Hub's own parser, every bad entry or file skipped and counted, rows never ranked; and the app's board drawn at once
while the Hub does not answer, the rows joining once it does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from huggingface_hub import HfApi

from evaluators.core.declarations import HubBenchmark, HubTask
from evaluators.engine.store import Store
from evaluators.publish.board_table import APART_COLUMN, board_rows
from evaluators.publish.hub_reported import APART, COMMUNITY, MAX_FILE_BYTES, SOURCE, VERIFIED, HubReported
from evaluators.service.app_services import AppServices
from tests.aged_sources import reread_once_aged
from tests.fake_hub_repo import pointed_hub

TOKEN = "hf_reader"
TAU2 = "HuggingFaceH4/tau2-bench-data"
HUBS = {"tau2": HubBenchmark(dataset_id=TAU2, file_stem="tau2_bench",
                             tasks=tuple(HubTask(f"tau2_bench_{d}", d, "pass_1") for d in ("airline", "retail", "telecom")))}


def leaderboard_entry(model: str, value: Any, task: str | None, verified: bool = False, pull_request: int | None = None
                      ) -> dict[str, Any]:
    entry = {"rank": 1, "modelId": model, "value": value, "filename": ".eval_results/tau2.yaml", "verified": verified,
             "source": {"url": "https://example.org/logs", "name": "logs"}, "pullRequest": pull_request,
             "notes": "<b>pass@1</b>", "author": {"type": "org", "name": model.split("/")[0]}}
    if task is not None:
        entry["taskId"] = task
    return entry


def eval_results_file(entries: list[dict[str, Any]]) -> bytes:
    return yaml.safe_dump(entries).encode()


def publish_model_files(hub: Any, repo_id: str, files: dict[str, bytes]) -> None:
    from huggingface_hub import CommitOperationAdd

    api = HfApi(endpoint=hub.endpoint, token=TOKEN)
    api.create_repo(repo_id)
    api.create_commit(repo_id, [CommitOperationAdd(path, content) for path, content in files.items()],
                      commit_message="results")


def test_leaderboard_and_model_files_become_rows_and_bad_entries_are_counted(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    with pointed_hub(tmp_path, monkeypatch, TOKEN) as hub:
        hub.leaderboards[TAU2] = [
            leaderboard_entry("org/alpha", 61.5, "tau2_bench_airline", verified=True),
            leaderboard_entry("org/beta", 40.0, "tau2_bench_retail", pull_request=3),
            leaderboard_entry("org/gamma", 140.0, "tau2_bench_retail"),  # not a percent
            leaderboard_entry("org/delta", 50.0, "tau2_bench_banking"),  # not a declared task
            leaderboard_entry("org/eps", 50.0, None),  # no task, and the dataset has three
        ]
        good = [{"dataset": {"id": TAU2, "task_id": "tau2_bench_telecom"}, "value": 33.3, "date": "2026-11-02",
                 "source": {"url": "https://example.org/run"}, "notes": "4 trials"},
                {"dataset": {"id": "cais/hle", "task_id": "default"}, "value": 20.9}]  # not one of the board's
        publish_model_files(hub, "org/model-a", {
            ".eval_results/tau2.yaml": eval_results_file(good),
            ".eval_results/broken.yaml": b"- [this is: not an entry",
            ".eval_results/shape.yaml": eval_results_file([{"value": 3}]),
            ".eval_results/huge.yaml": b"#" * (MAX_FILE_BYTES + 1),
            "README.md": b"not read"})
        loaded = HubReported().load(models=["org/model-a", "org/missing"], token=TOKEN, endpoint=hub.endpoint,
                                    hubs=HUBS)
    rows = {(row["model"], row["view"]): row for row in loaded.rows_for("tau2")}
    assert set(rows) == {("org/alpha", "airline"), ("org/beta", "retail"), ("org/model-a", "telecom")}
    alpha, beta, model_a = rows[("org/alpha", "airline")], rows[("org/beta", "retail")], rows[("org/model-a", "telecom")]
    assert alpha["pass_1"] == pytest.approx(0.615) and VERIFIED in alpha["details"]
    assert "source: https://example.org/logs" in alpha["details"] and "<b>pass@1</b>" in alpha["details"]
    assert COMMUNITY in beta["details"]
    assert model_a["pass_1"] == pytest.approx(0.333) and model_a["updated"] == "2026-11-02"
    assert all(row["source"] == SOURCE and row[APART_COLUMN] == APART for row in rows.values())
    skipped = dict(loaded.skipped)
    assert skipped == {"with a value that is not a percent (0..100)": 1,
                       "naming a task the benchmark does not declare": 1, "naming no task": 1,
                       "naming a dataset that is not one of the board's benchmarks": 1,
                       "in files that are not .eval_results entries": 2,
                       f"in files larger than {MAX_FILE_BYTES // 1024} kB": 1}
    assert len(loaded.problems) == 1 and loaded.problems[0].startswith("org/missing")
    assert TOKEN not in loaded.summary() and "7 entries skipped" in loaded.summary()


def test_hub_rows_are_shown_apart_never_ranked_and_escaped_by_the_board(tmp_path: Path):
    reported = HubReported()
    reported.current = type(reported.current)(rows={"tau2": ({
        "model": "org/<script>x</script>", "source": SOURCE, "view": "airline", "mode": "official", "run_id": "",
        "fingerprint": "", "pass_1": 0.5, "details": "reported on the Hub (verified)", APART_COLUMN: APART,
        "origin": "Hugging Face Hub", "newest": False, "updated": None},)}, read_at=1.0, version=1)
    frame = board_rows("tau2", Store(tmp_path / "runs.sqlite"), others=reported.current.rows_for("tau2"))
    hub_rows = frame[frame["source"] == SOURCE]
    assert len(hub_rows) == 1 and (hub_rows[APART_COLUMN] == APART).all()


def test_the_board_is_drawn_at_once_while_the_hub_does_not_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import threading

    with pointed_hub(tmp_path, monkeypatch, TOKEN) as hub:
        hub.leaderboards[TAU2] = [leaderboard_entry("org/alpha", 61.5, "tau2_bench_airline", verified=True)]
        hub.hold = threading.Event()  # every request waits until released
        services = AppServices(store=Store(tmp_path / "runs.sqlite"))
        reading = services.hub_reported.load_in_background(models=[], token=TOKEN, endpoint=hub.endpoint, hubs=HUBS)
        first = services.board_frame("tau2", "official")  # does not wait for the Hub
        assert reading.is_alive() and (first["source"] != SOURCE).all() and services.hub_reported.version == 0
        hub.hold.set()
        reading.join(timeout=60)
        assert not reading.is_alive()
    later = services.board_frame("tau2", "official")  # the read changed the board's version: rebuilt with the rows
    assert list(later[later["source"] == SOURCE]["model"]) == ["org/alpha"]
    assert services.board_frame("tau2", "strict").query("source == @SOURCE").empty  # official figures only


def test_a_page_load_rereads_the_hub_once_its_rows_are_older_than_their_maximum_age(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    from evaluators.publish import hub_reported
    from evaluators.service.app_services import HUB_REPORTED_MAX_AGE

    monkeypatch.setattr(hub_reported, "hub_models", lambda: [])  # the leaderboard alone; no model facts' repos
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    now = [1000.0]  # the services' clock, moved by hand
    with pointed_hub(tmp_path, monkeypatch, TOKEN) as hub:
        hub.leaderboards[TAU2] = [leaderboard_entry("org/alpha", 61.5, "tau2_bench_airline")]
        services = AppServices(store=Store(tmp_path / "runs.sqlite"), clock=lambda: now[0])
        try:
            assert services.refresh_hub_reported() is None  # never read (not enabled): never reread
            services.read_hub_reported_in_background().join(timeout=60)
            first = services.board_frame("tau2", "official")
            assert list(first[first["source"] == SOURCE]["model"]) == ["org/alpha"]
            hub.leaderboards[TAU2].append(leaderboard_entry("org/beta", 40.0, "tau2_bench_retail"))
            reread_once_aged(services.refresh_hub_reported, now, HUB_REPORTED_MAX_AGE)
            assert services.hub_reported.version == 2
            later = services.board_frame("tau2", "official")
            assert sorted(later[later["source"] == SOURCE]["model"]) == ["org/alpha", "org/beta"]
        finally:
            services.close()
