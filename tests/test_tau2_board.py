"""τ²-bench on the board (issue 45): the published rows (leaderboard_data/tau2.json) read through the project's
reader, each figure equal to its submission file in the reference archive (slow: ../shared/reference), the overall
view as taubench.com computes it, the table's views and columns, which rows rank (the same user simulator and tasks)
and why the others are kept apart, for published rows and for runs, the overview entry, the evidence kinds and
About. The benchmark is not registered here (its benchmark.py is written at merge): the declarations are built into
a Benchmark directly, and the board reads that one."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evaluators.benchmarks.tau2 import board, published, run_rules
from evaluators.benchmarks.tau2.about import ABOUT
from evaluators.benchmarks.tau2.source import COMMIT
from evaluators.core.board_layout import TOKEN_USAGE
from evaluators.core.declarations import DIALOGUE_CHECKS
from evaluators.core.errors import DataError
from evaluators.core.leaderboard import LEADERBOARD_DIR, load_published
from evaluators.core.registry import Benchmark
from evaluators.publish import board_table
from evaluators.publish.board_table import APART_COLUMN, UPDATED_COLUMN, board_rows
from evaluators.publish.ranking_rule import unranked_reasons
from evaluators.publish.run_costs import add_priced_column
from evaluators.service.board import RANK_COLUMN, BoardQuery, query_board

PROJECT = Path(__file__).resolve().parent.parent
REFERENCE_ARCHIVE = PROJECT.parent / "shared" / "reference" / "tau2-bench-a2c0247.tar.gz"
DOMAINS = board.DOMAINS
PASS_K = board.PASS_K
# The submissions ranked at the pinned commit: Sierra's with gpt-5.2 as the user simulator on the 1.0.1 tasks.
RANKED_SUBMISSIONS = {
    "claude-opus-4-5_sierra_2026-02-26", "claude-sonnet-4-5_sierra_2026-02-26", "gpt-5-2_sierra_2026-02-26",
    "gpt-5-2-none_sierra_2026-02-26", "gemini-3-flash_sierra_2026-03-02", "gemini-3-pro_sierra_2026-03-02",
    "glm-5-think_sierra_2026-03-02", "qwen3.5-397b-a17b-think_sierra_2026-03-02",
}
# A published percent read as a fraction is exact to a double's precision (rounded to 15 places).
EXACT = 1e-13


def declared() -> Benchmark:
    """A Benchmark made of this package's declarations, as benchmark.py will make it (the hooks that do not
    concern the board are stand-ins)."""
    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("not a board hook")

    return Benchmark(
        name=board.BENCHMARK_NAME, title="τ²-bench", description="τ²-bench (text): airline, retail, telecom.",
        about=ABOUT, subsets=DOMAINS, groups={}, metrics=board.METRICS, summary_metrics=board.SUMMARY_METRICS,
        languages=(None,), data_version=COMMIT, load=never, read_predictions=never, score=never, report=never,
        layout=board.LAYOUT, overview=board.OVERVIEW, evidence=board.EVIDENCE, titles=board.TITLES,
        unranked_reasons=run_rules.unranked_reasons,
    )


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    return load_published(board.BENCHMARK_NAME)


def _rows_of(table: dict[str, Any], view: str) -> dict[str, dict[str, Any]]:
    return {row["submission"]: row for row in table["rows"] if row["view"] == view}


# ---- the JSON alone --------------------------------------------------------------------------------------------

def test_every_published_row_is_fractions_with_its_source(table: dict[str, Any]):
    assert table["source"]["commit"] == COMMIT and table["source"]["repository"].endswith("sierra-research/tau2-bench")
    assert table["caveats"] and table["overall"] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", table["source"]["date"])
    assert len({row["submission"] for row in table["rows"]}) == 26
    for row in table["rows"]:
        label = (row["submission"], row["view"])
        assert row["view"] in board.VIEWS, label
        assert row["summary"] and set(row["summary"]) <= {*PASS_K, board.COST}, label
        assert all(0.0 <= row["summary"][k] <= 1.0 for k in PASS_K if k in row["summary"]), label
        assert PASS_K[0] in row["summary"], label  # every submission reports pass^1 where it reports a domain
        assert row["summary"].get(board.COST, 1.0) > 0, label
        assert row["source_url"] == f"https://github.com/sierra-research/tau2-bench/blob/{COMMIT}/{row['source_path']}"
        assert row["source_path"] == f"web/leaderboard/public/submissions/{row['submission']}/submission.json"
        assert row["link"].startswith("https://taubench.com/"), label
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date"]), label
        assert row["submitting_organisation"] and row["model_organisation"], label


def test_rows_without_every_domain_are_kept_with_what_they_have(table: dict[str, Any]):
    by_view = {view: _rows_of(table, view) for view in board.VIEWS}
    assert {view: len(rows) for view, rows in by_view.items()} == {"overall": 21, "retail": 26, "airline": 25,
                                                                    "telecom": 21}
    assert set(by_view["retail"]) - set(by_view["telecom"]) == {
        "o3_openai_2025-01-15", "claude-opus-4-1_anthropic_2025-01-15", "claude-opus-4_anthropic_2025-05-22",
        "claude-sonnet-4_anthropic_2025-05-22", "raft-30b-a3b_neu_2026-04-29"}
    only_pass_1 = by_view["retail"]["kimi-k2_moonshot-ai_2025-07-11"]["summary"]
    assert set(only_pass_1) == {"pass_1"}
    no_pass_3 = by_view["airline"]["qwen3-max_qwen_2024_09_23"]["summary"]
    assert set(no_pass_3) == {"pass_1", "pass_2", "pass_4"}


def test_overall_is_the_mean_of_the_three_domains_as_the_site_computes_it(table: dict[str, Any]):
    domains = {domain: _rows_of(table, domain) for domain in DOMAINS}
    overall = _rows_of(table, board.OVERALL)
    with_all = {s for s in domains["retail"] if all(s in domains[d] for d in DOMAINS)}
    assert set(overall) == with_all
    for submission, row in overall.items():
        for key in PASS_K:
            values = [domains[d][submission]["summary"][key] for d in DOMAINS if key in domains[d][submission]["summary"]]
            assert (key in row["summary"]) == bool(values), (submission, key)
            if values:
                assert row["summary"][key] == pytest.approx(sum(values) / len(values), abs=EXACT), (submission, key)
        assert board.COST not in row["summary"]  # the site shows no overall cost
    opus = overall["claude-opus-4-5_sierra_2026-02-26"]["summary"]
    assert opus["pass_1"] == pytest.approx((84.0 + 79.61 + 92.32) / 300, abs=EXACT)


def test_only_the_rows_of_the_ranked_user_simulator_and_tasks_rank(table: dict[str, Any]):
    ranked = {row["submission"] for row in table["rows"] if not row[APART_COLUMN]}
    assert ranked == RANKED_SUBMISSIONS
    for row in table["rows"]:
        if row["submission"] in RANKED_SUBMISSIONS:
            assert (row["user_model"], row["tau2_version"], row["submission_type"]) == ("gpt-5.2", "1.0.1", "standard")
    reasons = {row["submission"]: row[APART_COLUMN] for row in table["rows"] if row["view"] == "retail"}
    assert reasons["gpt-5_sierra_2025-08-09"] == ("user simulator gpt-4.1-2025-04-14 (the ranked rows': gpt-5.2); "
                                                   "tau2 0.1.3 (tasks before the 1.0 task fixes)")
    assert reasons["kimi-k2_moonshot-ai_2025-07-11"].startswith("user simulator not stated; tau2 0.1.3")
    assert reasons["raft-30b-a3b_neu_2026-04-29"] == (
        "user simulator claude-sonnet-4-5-20250929 (the ranked rows': gpt-5.2); tau2 version not stated; custom "
        "scaffold; no airline or telecom")


def test_published_apart_reasons_name_each_difference():
    same = {board.USER_MODEL: "GPT-5.2", board.TAU2_VERSION: "v1.0.1", board.SUBMISSION_TYPE: "standard"}
    assert board.published_apart_reasons(same, DOMAINS) == []
    assert board.published_apart_reasons({**same, board.TAU2_VERSION: "original tau-bench"}, DOMAINS) == [
        "tau2 original tau-bench (tasks before the 1.0 task fixes)"]
    assert board.published_apart_reasons({board.TAU2_VERSION: "1.0.1"}, ("retail",)) == [
        "user simulator not stated", "no airline or telecom"]


# ---- the declarations ------------------------------------------------------------------------------------------

def test_the_layout_has_an_overall_view_and_one_per_domain_with_the_pass_k_columns():
    layout = declared().board_layout()
    assert layout.views == ("overall", "retail", "airline", "telecom") and layout.view_label == "Domain"
    assert layout.columns == ("pass_1", "pass_2", "pass_3", "pass_4")
    assert layout.detail_columns == ("avg_reward", "cost")
    assert layout.text_columns == ("user_model", "reasoning_effort", "tau2_version", "submission_type")
    assert layout.default_sort == "pass_1" == board.OVERVIEW.aggregate
    assert layout.lower_is_better == frozenset({"cost"})
    assert [layout.labels[c] for c in (*layout.columns, "cost")] == ["Pass^1", "Pass^2", "Pass^3", "Pass^4",
                                                                     "Cost ($/trajectory)"]
    assert layout.labels["user_model"] == "User model"


def test_metrics_say_what_they_are():
    benchmark = declared()
    assert benchmark.metric_names == (*PASS_K, "avg_reward", "cost") == benchmark.summary_names
    cost = benchmark.metric("cost")
    assert (cost.higher_is_better, cost.kind, cost.share_of_items) == (False, "count", False)
    assert all(benchmark.metric(k).kind == "fraction" and benchmark.metric(k).higher_is_better for k in PASS_K)
    assert [benchmark.subset_title(v) for v in board.VIEWS] == ["Overall (mean of the 3 domains)", "Retail", "Airline",
                                                               "Telecom"]


def test_the_overview_reads_overall_pass_1_and_pass_4():
    assert (board.OVERVIEW.view, board.OVERVIEW.columns, board.OVERVIEW.aggregate) == ("overall", ("pass_1", "pass_4"),
                                                                                      "pass_1")


def test_a_report_fills_the_domains_it_ran_and_overall_only_with_all_three():
    metrics = {"pass_1": 0.5, "pass_2": 0.4, "pass_3": 0.3, "pass_4": 0.2, "avg_reward": 0.5, "cost": 0.1}
    report = {"subsets": {d: {"n": 5, "metrics": dict(metrics)} for d in DOMAINS}, "summary": dict(metrics),
              "user_model": "gpt-5.2"}
    views = board.run_values(report)
    assert set(views) == {"overall", *DOMAINS}
    assert views["overall"]["pass_1"] == 0.5 and views["airline"]["user_model"] == "gpt-5.2"
    assert (views["telecom"]["tau2_version"], views["telecom"]["submission_type"]) == ("1.0.1", "standard")
    partial = {**report, "subsets": {"airline": report["subsets"]["airline"]}}
    assert set(board.run_values(partial)) == {"airline"}


def _priced_report(**telecom: float) -> dict[str, Any]:
    tokens = {"agent_prompt_tokens": 3000.0, "agent_completion_tokens": 500.0, "priced_trials": 2.0}
    return {"subsets": {d: {"n": 1, "metrics": {"pass_1": 1.0, **tokens, **(telecom if d == "telecom" else {})}}
                        for d in DOMAINS}, "summary": {"pass_1": 1.0}}


def _priced_rows(report: dict[str, Any], model: str = "gpt-4o-mini", source: str = "evaluated") -> dict[str, Any]:
    rows = [{"model": model, "source": source, "view": view, **values}
            for view, values in board.run_values(report).items()]
    add_priced_column(rows, board.LAYOUT.priced_column)
    assert all(TOKEN_USAGE not in row for row in rows)  # priced, then taken off
    return {row["view"]: row.get(board.COST) for row in rows}


def test_a_runs_cost_per_trajectory_is_its_agent_tokens_at_the_models_list_price():
    # gpt-4o-mini: $0.15 in, $0.60 out per 1M tokens (leaderboard_data/prices.json)
    costs = _priced_rows(_priced_report(agent_prompt_tokens=6000.0))
    assert costs["airline"] == costs["retail"] == pytest.approx((3000 * 0.15 + 500 * 0.60) / 1e6 / 2)
    assert costs["telecom"] == pytest.approx((6000 * 0.15 + 500 * 0.60) / 1e6 / 2)
    # overall: the mean of the three domains' costs, as the summary's other figures
    assert costs["overall"] == pytest.approx((0.000375 * 2 + 0.0006) / 3)
    # no price for the model, a domain whose endpoint reported no usage, an upload: blank, never zero
    assert set(_priced_rows(_priced_report(), model="no-such-model").values()) == {None}
    partial = _priced_rows(_priced_report(priced_trials=0.0))
    assert partial["telecom"] is None and partial["overall"] is None and partial["airline"] is not None
    assert set(_priced_rows(_priced_report(), source="uploaded").values()) == {None}


def test_published_values_give_the_view_the_figures_and_the_labels(table: dict[str, Any]):
    row = next(r for r in table["rows"] if r["submission"] == "gpt-5-2-none_sierra_2026-02-26" and r["view"] == "telecom")
    view, values = board.published_values(row)
    assert view == "telecom"
    assert values == {**row["summary"], "user_model": "gpt-5.2", "reasoning_effort": "none", "tau2_version": "1.0.1",
                      "submission_type": "standard"}


def test_evidence_kinds_name_the_trials_their_checks_and_the_reward_components():
    kinds = {(kind.source, kind.key): (kind.title, kind.render) for kind in board.EVIDENCE}
    assert kinds == {("prediction", "trials"): ("Trials: the agent, the simulated user and the tools", "dialogues"),
                     ("score", DIALOGUE_CHECKS): ("Checks per trial", "json"),
                     ("score", "trials"): ("Reward info per trial (the official fields)", "json"),
                     ("prediction", "user_model"): ("User simulator", "text"),
                     ("prediction", "judge_model"): ("NL assertion judge", "text")}


def test_about_names_the_paper_the_pinned_data_and_the_licence():
    assert ABOUT.paper_url == "https://arxiv.org/abs/2506.07982" and "Dual-Control" in ABOUT.paper
    assert ABOUT.licence == "MIT" and COMMIT[:7] in ABOUT.data and COMMIT in ABOUT.source_url
    assert "2506.07982" in ABOUT.citation and "taubench.com" in ABOUT.published
    assert "pass^k" in ABOUT.measures and "gpt-5.2" in ABOUT.measures


# ---- which runs rank -------------------------------------------------------------------------------------------

def _config(**roles: str) -> dict[str, Any]:
    return {"model": {"base_url": "http://127.0.0.1:1/v1", "model": "my-model", "request_mode": "prompt"},
            "subsets": [], "limit": None,
            "roles": {name: {"base_url": "http://127.0.0.1:2/v1", "model": model} for name, model in roles.items()}}


def test_a_run_ranks_only_with_the_ranked_user_simulator_and_the_official_judge():
    benchmark = declared()
    assert unranked_reasons(_config(user="openai/gpt-5.2", judge="gpt-4.1-2025-04-14"), benchmark) == []
    assert unranked_reasons(_config(user="gpt-4.1-2025-04-14", judge="gpt-4.1-2025-04-14"), benchmark) == [
        "user simulator gpt-4.1-2025-04-14 (the ranked rows': gpt-5.2)"]
    assert unranked_reasons(_config(), benchmark) == [
        "user simulator: the model under test (my-model); the ranked rows': gpt-5.2",
        "no NL judge: tasks with NL assertions get no reward"]
    assert unranked_reasons(_config(user="gpt-5.2", judge="local-judge"), benchmark) == [
        "NL judge local-judge (official: gpt-4.1-2025-04-14)"]
    other_split = {**_config(user="gpt-5.2", judge="gpt-4.1-2025-04-14"), "options": {"split": "test"}}
    assert unranked_reasons(other_split, benchmark) == ["the test split, not the board's base"]


def test_the_board_ranks_the_ranked_published_rows_and_keeps_the_others_apart(monkeypatch: pytest.MonkeyPatch):
    benchmark = declared()
    monkeypatch.setattr(board_table, "get_benchmark", lambda name: benchmark)
    frame = board_rows(board.BENCHMARK_NAME, None)
    assert set(frame["view"]) == set(board.VIEWS)
    overall = query_board(frame, benchmark.board_layout(), BoardQuery(view="overall"))
    ranked = overall[overall[RANK_COLUMN].notna()]
    assert len(ranked) == len(RANKED_SUBMISSIONS)
    assert set(ranked["user_model"]) == {"gpt-5.2"} and (ranked[APART_COLUMN].fillna("") == "").all()
    assert ranked.iloc[0]["model"] == "Qwen3.5-397B-A17B" and ranked.iloc[0][RANK_COLUMN] == 1
    apart = overall[overall[RANK_COLUMN].isna()]
    assert len(apart) == 21 - len(RANKED_SUBMISSIONS) and (apart[APART_COLUMN].str.len() > 0).all()
    # each row is dated by its own submission
    gpt5 = frame[(frame["model"] == "GPT-5") & (frame["view"] == "airline")].iloc[0]
    assert gpt5[UPDATED_COLUMN] == "2025-10-02" and pd.isna(gpt5["pass_1_n"])


# ---- against the submission files (slow) -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def submissions() -> dict[str, dict[str, Any]]:
    if not REFERENCE_ARCHIVE.is_file():
        pytest.skip(f"the τ²-bench reference archive not found at {REFERENCE_ARCHIVE}: place ../shared beside the "
                    "project")
    found = {}
    with tarfile.open(REFERENCE_ARCHIVE, "r:gz") as tar:
        for member in tar:
            match = re.fullmatch(r"[^/]+/web/leaderboard/public/submissions/([^/]+)/submission\.json", member.name)
            handle = tar.extractfile(member) if match else None
            if match and handle is not None:
                found[match.group(1)] = json.loads(handle.read())
    return found


@pytest.mark.slow
def test_every_figure_equals_its_submission_file(table: dict[str, Any], submissions: dict[str, dict[str, Any]]):
    text = {folder: s for folder, s in submissions.items() if not folder.startswith("A_EXAMPLE_")
            and s.get("modality", "text") == "text" and any(s["results"].get(d) for d in DOMAINS)}
    assert len(text) == 26
    expected_domains = {(folder, d) for folder, s in text.items() for d in DOMAINS
                        if (s["results"].get(d) or {}).get("pass_1") is not None}
    rows = {(row["submission"], row["view"]): row for row in table["rows"]}
    assert {key for key in rows if key[1] != board.OVERALL} == expected_domains
    for (folder, domain), row in rows.items():
        submission = text[folder]
        methodology = submission.get("methodology") or {}
        assert row["model"] == submission["model_name"]
        assert (row["user_model"], row["tau2_version"]) == (methodology.get("user_simulator"),
                                                            methodology.get("tau2_bench_version"))
        assert (row["submission_type"], row["reasoning_effort"]) == (submission.get("submission_type"),
                                                                     submission.get("reasoning_effort"))
        assert row["submitting_organisation"] == submission["submitting_organization"]
        assert row["date"] == submission["submission_date"]
        if domain == board.OVERALL:
            continue
        given = submission["results"][domain]
        for key in PASS_K:
            if given.get(key) is None:
                assert key not in row["summary"], (folder, domain, key)
            else:
                assert row["summary"][key] == pytest.approx(given[key] / 100, abs=EXACT), (folder, domain, key)
        # a cost of 0 is no price known: left out, as the site shows it
        assert row["summary"].get(board.COST) == (given.get("cost") or None), (folder, domain)


@pytest.mark.slow
def test_the_committed_table_is_what_the_builder_writes_from_the_archive(submissions: dict[str, dict[str, Any]]):
    committed = json.loads((LEADERBOARD_DIR / f"{board.BENCHMARK_NAME}.json").read_text(encoding="utf-8"))
    assert published.published_table(submissions) == committed
    assert published.read_archive(REFERENCE_ARCHIVE) == submissions


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("date", "2 March 2026", "row 0 (m): 'date' must be an ISO date YYYY-MM-DD, got \"2 March 2026\""),
    ("apart_reason", ["other user"], "row 0 (m): 'apart_reason' must be a text (empty: ranked)"),
])
def test_a_published_rows_own_date_and_apart_reason_are_checked(tmp_path: Path, field: str, value: Any, problem: str):
    row = {"model": "m", "view": "airline", "summary": {"pass_1": 0.5}, field: value}
    (tmp_path / "t.json").write_text(json.dumps({"source": {"date": "2026-01-01"}, "rows": [row]}), encoding="utf-8")
    with pytest.raises(DataError, match=re.escape(problem)):
        load_published("t", tmp_path)
