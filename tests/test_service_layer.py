"""The application services called directly, as any front door calls them (a real SQLite store, no Gradio): who may
see and act on a run, the queries the tabs and the API serve, the one scoring path; and every endpoint of the app's
API declared in ui/api.py."""

from __future__ import annotations

import ast
import re
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark
from evaluators.engine.redact import redacted
from evaluators.engine.scoring import score_and_report
from evaluators.engine.store import Store
from evaluators.service import explore_queries
from evaluators.service.app_services import BUILT_IN_EXAMPLE, AppServices
from evaluators.service.board_queries import view_rows
from evaluators.service.offline_scoring import benchmark_with_example, score_example
from evaluators.service.ownership import SECRET_FILE, Visitors, owns
from evaluators.service.runs import act_on_run, job_state, requests_of, visible_jobs
from evaluators.service.submissions import check_submission, store_submission
from evaluators.service.uploads import add_upload, check_upload
from tests.conftest import PROJECT

ALICE_TOKEN = "alice-" + "a" * 30
BOB_TOKEN = "bob-" + "b" * 30


@pytest.fixture
def example() -> Benchmark:
    return benchmark_with_example(None)


@pytest.fixture
def public(tmp_path: Path) -> Iterator[AppServices]:
    services = AppServices(store=Store(tmp_path / "home" / "toolboard.sqlite"), public=True)
    yield services
    services.close()


def _upload(services: AppServices, benchmark: Benchmark, model: str, owner: str | None) -> str:
    """The benchmark's built-in example predictions, checked and added as `owner`: the new run's id."""
    assert benchmark.example is not None
    submission = check_upload(services, benchmark.example.folder / "predictions.jsonl", benchmark.name,
                              benchmark.example.language, BUILT_IN_EXAMPLE, "")
    assert submission.ok
    return add_upload(services, submission, model, "", owner)


def test_an_upload_is_its_visitors_until_they_share_it(public: AppServices, example: Benchmark):
    alice, bob = public.visitors.owner(ALICE_TOKEN, None), public.visitors.owner(BOB_TOKEN, None)
    assert alice and bob and alice != bob
    run_id = _upload(public, example, "model-a", alice)
    public.store.set_shared(run_id, False)  # as a run Alice evaluated is (an upload is shared when added)

    assert [run.id for run in explore_queries.visible_runs(public, alice)] == [run_id]
    assert explore_queries.visible_runs(public, bob) == []
    # Not shared: for Bob there is no such run (the words an id nobody has gets).
    with pytest.raises(ToolboardError, match=f"no run '{run_id}' here that you can see"):
        explore_queries.samples(public, run_id, "official", None, None, None, bob)
    with pytest.raises(ToolboardError, match=f"no run '{run_id}' here that you can see"):
        act_on_run(public, "share", run_id, None, bob)
    with pytest.raises(ToolboardError, match=f"no run '{run_id}' here that you can see"):
        act_on_run(public, "cancel", run_id, None, bob)

    assert "now shown to every visitor" in act_on_run(public, "share", run_id, None, alice)
    assert [run.id for run in explore_queries.visible_runs(public, bob)] == [run_id]
    with pytest.raises(ToolboardError, match="started by another visitor: only they can cancel it"):
        act_on_run(public, "cancel", run_id, None, bob)  # shared: Bob sees it, and is told why he cannot act
    frame = explore_queries.samples(public, run_id, "official", None, None, None, bob)
    assert len(frame) == len(example.load(example.example.folder, language=example.example.language, subsets=None))
    assert job_state(public, run_id, bob).owned is False and job_state(public, run_id, alice).owned is True


def test_the_operators_runs_and_a_private_deployment(tmp_path: Path, public: AppServices, example: Benchmark):
    operators = _upload(public, example, "operator-model", None)  # e.g. pulled from the hub: nobody's
    visitor = public.visitors.owner(ALICE_TOKEN, None)
    assert [run.id for run in explore_queries.visible_runs(public, visitor)] == [operators]
    with pytest.raises(ToolboardError, match="belongs to the operator of this deployment"):
        act_on_run(public, "share", operators, None, visitor)

    private = AppServices(store=Store(tmp_path / "private.sqlite"))
    try:
        assert private.visitors.owner(ALICE_TOKEN, "session") is None  # nobody is anyone
        run_id = _upload(private, example, "model-b", None)
        run = private.store.get_run(run_id)
        assert owns(False, run, None) and owns(False, run, "anyone")
        assert "now shown" in act_on_run(private, "share", run_id, None, None)
        assert not (tmp_path / SECRET_FILE).exists()  # a private deployment makes no secret
    finally:
        private.close()


def test_a_visitors_identity(public: AppServices, tmp_path: Path):
    with pytest.raises(ToolboardError, match="owner_token must be a secret of 16 to 200 characters"):
        public.visitors.owner("short", None)
    with pytest.raises(ToolboardError, match="this request has no visitor identity"):
        public.visitors.owner("", None)
    assert public.visitors.owner("", "session-1") != public.visitors.owner("", "session-2")
    # One secret per installation, owner-only, the same for every process that opens it.
    secret = public.store.path.parent / SECRET_FILE
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    again = Visitors(True, public.store.path.parent)
    assert again.owner(ALICE_TOKEN, None) == public.visitors.owner(ALICE_TOKEN, None)


def test_the_queries_the_tabs_and_the_api_serve(public: AppServices, example: Benchmark, tmp_path: Path):
    owner = public.visitors.owner(ALICE_TOKEN, None)
    toy_id = _upload(public, example, "model-a", owner)
    assert visible_jobs(public, owner) == []  # uploads are no jobs
    # Scored on the built-in example: never a board row. Scored on a copy of its items: a board row.
    assert example.example is not None
    items = shutil.copytree(example.example.folder, tmp_path / "items")
    submission = check_submission(example.example.folder / "predictions.jsonl", example.name,
                                  language=example.example.language, data_dir=items)
    run_id = store_submission(public.store, submission, "model-b", owner=owner)
    rows = view_rows(public, example.name, "", "", None, None, False, "official", "")
    assert run_id in set(rows["run_id"].dropna()) and toy_id not in set(rows["run_id"].dropna())
    with pytest.raises(ToolboardError, match="unknown scoring mode 'lenient'"):
        view_rows(public, example.name, "", "", None, None, False, "lenient", "")
    with pytest.raises(ToolboardError, match="no run 'nope' here"):
        job_state(public, "nope", None)
    with pytest.raises(ToolboardError, match="unknown action 'delete'"):
        act_on_run(public, "delete", run_id, None, None)


def test_a_request_profiles_note_names_no_server_folder_on_a_public_deployment(public: AppServices):
    folder = public.store.path.parent / "downloads" / "official"
    profile = {"prompt_style": "official", "sampling": {}, "note": f"prompts read from {folder}/prompts.py"}
    config = {"model": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}, "request_profile": profile}
    owner = public.visitors.owner(ALICE_TOKEN, None)
    run_id = public.store.create_run("any", None, "m", "http://127.0.0.1:9/v1", config, "fp", 1, owner=owner)
    for text in (job_state(public, run_id, owner).requests, requests_of(public, run_id)):
        assert str(public.store.path.parent) not in text and "<toolboard home>/downloads/official/prompts.py" in text
    assert redacted({"note": [f"{folder}/a"], "n": 1}, public.redact_paths) == {
        "note": ["<toolboard home>/downloads/official/a"], "n": 1}


def test_one_scoring_path_for_uploads_and_the_command_line(public: AppServices, example: Benchmark):
    assert example.example is not None
    _, scored = score_example(example, "official")
    submission = check_upload(public, example.example.folder / "predictions.jsonl", example.name,
                              example.example.language, BUILT_IN_EXAMPLE, "")
    assert submission.reports["official"] == scored.report
    predictions = example.read_predictions(example.example.folder / "predictions.jsonl", scored.samples)
    by_mode = score_and_report(example, scored.samples, predictions, language=example.example.language)
    assert by_mode["official"].report == scored.report
    assert set(by_mode) == set(submission.reports)
    with pytest.raises(ToolboardError, match="unknown mode 'lenient'"):
        score_and_report(example, scored.samples, predictions, ["lenient"])


# ---- the API: declared in ui/api.py only --------------------------------------------------------------------------

UI = PROJECT / "ui"


def _api_declarations(path: Path) -> list[str]:
    """Each gr.api call and each call with an api_name keyword in the module (its api name, or its source)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        named = [keyword for keyword in node.keywords if keyword.arg == "api_name"]
        is_gr_api = isinstance(node.func, ast.Attribute) and node.func.attr == "api" and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "gr"
        if named or is_gr_api:
            value = named[0].value if named else None
            found.append(value.value if isinstance(value, ast.Constant) else ast.unparse(value or node))
    return found


@pytest.mark.slow
def test_no_module_of_the_ui_but_ui_api_declares_an_endpoint():
    elsewhere = {path.name: found for path in sorted(UI.glob("*.py")) if path.name != "api.py"
                 if (found := _api_declarations(path))}
    assert elsewhere == {}


@pytest.mark.slow
def test_every_api_name_the_app_exposes_is_declared_in_ui_api(public: AppServices):
    from ui.app import build_app

    declared = _api_declarations(UI / "api.py")
    patterns = [re.escape(name) if re.fullmatch(r"\w+", name) else
                re.sub(r"\\\{[^}]*\\\}", r"\\w+", re.escape(name.strip("f\"'"))) for name in declared]
    demo = build_app(public)
    exposed = {fn.api_name for fn in demo.fns.values() if fn.api_visibility != "private"}
    assert exposed, "the app exposes an API"
    undeclared = {name for name in exposed if not any(re.fullmatch(pattern, name) for pattern in patterns)}
    assert undeclared == set()
    # The public deployment has no load_results; the rest of the typed endpoints and the 4 event APIs are there.
    assert len(exposed) == 26 and "load_results" not in exposed and "run_queue" in exposed
