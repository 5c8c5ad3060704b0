"""Every endpoint of the app's API, declared here and nowhere else (tests/test_service_layer.py checks it): the
typed gr.api functions, and the events whose api_name makes a page button an API (the downloads, the upload's
check and add). A tab calls the declaration of its part with the components and views it built; the rules behind
each endpoint are the service layer's (evaluators/service/).

Who acts: an API caller's `owner_token` when given, else its Gradio session (ui/visitor.py). On a private
deployment everyone acts on every run."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks
from evaluators.service import model_page
from evaluators.service.app_services import load_other_results_report
from evaluators.service.hub_eval_results import eval_results_preview, offered_here, open_pr_as_operator
from evaluators.service.overview import aggregate_rule
from evaluators.service.run_request import PUBLIC_MAX_CONCURRENCY, PUBLIC_MAX_LIMIT
from evaluators.service.run_settings import DEFAULT_CONCURRENCY, settings_reference
from evaluators.service.submissions import Submission
from ui.board_views import bounded_json, chart_figure, exporter, hashable, percent_table
from ui.context import READ_EVENT, AppContext, plain_error
from ui.format import table_json
from ui.jobs_panel import act_as_visitor, detail_view, jobs_table
from ui.run_form import AUTO_PROMPT_STYLE, ENDPOINT_KINDS
from ui.visitor import owner_of

# start_job(context, form, api_key, owner) -> {"run_id", "message"}: the Evaluate tab's start of a run.
StartJob = Callable[[AppContext, dict[str, Any], str | None, str | None], dict[str, str]]


def _caller(context: AppContext, owner_token: str, request: gr.Request | None) -> str | None:
    """The API caller's owner hash; a bad owner_token is the caller's error."""
    try:
        return owner_of(context, owner_token, request)
    except ToolboardError as exc:
        raise gr.Error(plain_error(exc, context.redact_paths)) from None


# ---- runs: start, cancel, resume, re-send errors, share, the jobs and one job ----------------------------------

def start_run_description(start_run: Callable[..., Any], public: bool) -> str:
    """start_run's docs as the API page shows them: its docstring as one paragraph, then every setting with its
    declared help, a line each; on a public deployment, the tighter caps it applies."""
    text = f"{' '.join((inspect.getdoc(start_run) or '').split())}\n\nSettings:\n{settings_reference()}"
    if public:
        text += (f"\n\nThis deployment is public: concurrency at most {PUBLIC_MAX_CONCURRENCY}, a limit given, of "
                 f"at most {PUBLIC_MAX_LIMIT}, the key given in api_key only (no api_key_env), and "
                 "no data folder.")
    return text


def declare_runs_api(context: AppContext, start_job: StartJob) -> None:
    """start_run, cancel_run, resume_run, rerun_errors, share_run, jobs and job_detail."""
    default_benchmark = all_benchmarks()[0].name

    def start_run(base_url: str = "", model: str = "", benchmark: str = default_benchmark, api_key: str = "",
                  language: str = "", subsets: list[str] | None = None, limit: int | None = None,
                  concurrency: int = DEFAULT_CONCURRENCY, request_mode: str = "", temperature: float | None = None,
                  data_source: str = "", data_folder: str = "", modality: str = "",
                  judge_base_url: str = "", judge_model: str = "", judge_key_env: str = "", user_base_url: str = "",
                  user_model: str = "", user_key_env: str = "", api_key_env: str = "",
                  endpoint_kind: str = ENDPOINT_KINDS[0], prompt_style: str = AUTO_PROMPT_STYLE,
                  owner_token: str = "", roles: dict[str, dict[str, str]] | None = None,
                  options: dict[str, str] | None = None, top_p: float | None = None, max_tokens: int | None = None,
                  timeout: float | None = None, max_attempts: int | None = None,
                  extra_body: dict[str, Any] | str | None = None, use_cache: bool = True,
                  request: gr.Request | None = None) -> dict[str, str]:
        """Start an evaluation in the background: {"run_id", "message"} (run_id is empty when refused).
        Every setting (listed below) takes the command line's default when left out, api_key_env apart (no server
        variable is read unless one is named); data_source empty reads
        data_folder when one is given, else downloads. api_key: used for this run only, never stored.
        endpoint_kind "Local demo model (SmolLM2-135M)" runs the built-in local model (base_url and model unused);
        prompt_style auto: official when the official prompt files are there. A role left out of roles takes the
        benchmark's fallback (the About tab lists roles and options). On a public deployment the run is yours:
        owner_token (a secret you keep, 16+ characters) names you, else your client session does."""
        # The parameters keep the order and names API callers have used; the old judge_*, user_* and modality
        # ones are read as the roles "judge" and "user" and the option "modality".
        given = locals()
        form = {name: given[name] for name in form_fields}
        try:
            owner = owner_of(context, owner_token, request)
        except ToolboardError as exc:
            return {"run_id": "", "message": plain_error(exc)}
        return start_job(context, form, api_key, owner)

    form_fields = [name for name in inspect.signature(start_run).parameters
                   if name not in ("api_key", "owner_token", "request")]

    def act(action: str, run_id: str, api_key: str, owner_token: str, request: gr.Request | None) -> tuple[str, dict[str, Any]]:
        message, table = act_as_visitor(context, action, run_id, api_key, owner_token, request)
        return message, table_json(table)

    def cancel_run(run_id: str, owner_token: str = "", request: gr.Request | None = None) -> tuple[str, dict[str, Any]]:
        """Cancel a run you started: (message, your jobs table as {"headers", "data"})."""
        return act("cancel", run_id, "", owner_token, request)

    def resume_run(run_id: str, api_key: str = "", owner_token: str = "",
                   request: gr.Request | None = None) -> tuple[str, dict[str, Any]]:
        """Resume a run you started that was cancelled, interrupted or failed: (message, your jobs table)."""
        return act("resume", run_id, api_key, owner_token, request)

    def rerun_errors(run_id: str, api_key: str = "", owner_token: str = "",
                     request: gr.Request | None = None) -> tuple[str, dict[str, Any]]:
        """Re-send the failed requests of a run you started: (message, your jobs table)."""
        return act("rerun", run_id, api_key, owner_token, request)

    def share_run(run_id: str, owner_token: str = "", request: gr.Request | None = None) -> tuple[str, dict[str, Any]]:
        """Show the outputs of a finished run you started to every visitor (Explore): (message, your jobs table).
        Its scores are on the leaderboard either way."""
        return act("share", run_id, "", owner_token, request)

    def jobs_api(owner_token: str = "", request: gr.Request | None = None) -> dict[str, Any]:
        """Your runs (every run on a private deployment), newest first, with live progress: {"headers", "data"}."""
        return table_json(jobs_table(context, _caller(context, owner_token, request)))

    def job_detail_api(run_id: str, owner_token: str = "",
                       request: gr.Request | None = None) -> tuple[str, dict[str, Any] | None]:
        """A run's progress and its official report (None until it has finished): (Markdown text, report)."""
        return detail_view(context, run_id, owner_token, request)

    # The API page shows an endpoint's description only: each setting's help is listed there, from its declaration.
    gr.api(start_run, api_name="start_run", api_description=start_run_description(start_run, context.public))
    gr.api(cancel_run, api_name="cancel_run")
    gr.api(resume_run, api_name="resume_run")
    gr.api(rerun_errors, api_name="rerun_errors")
    gr.api(share_run, api_name="share_run")
    gr.api(jobs_api, api_name="jobs")
    gr.api(job_detail_api, api_name="job_detail")


# ---- the leaderboard: its views, charts and downloads -----------------------------------------------------------

def declare_board_api(context: AppContext) -> None:
    """leaderboard, leaderboard_ranked, leaderboard_apart and chart: any benchmark's views and columns,
    independent of what the page shows."""
    def part_api(benchmark: str, view: str, search: str, sources: list[str] | None, columns: list[str] | None,
                 details: bool, mode: str, sort_by: str, part: str, organisations: list[str] | None,
                 open_weights_only: bool, request_modes: list[str] | None, min_params_b: float | None,
                 max_params_b: float | None, weights: str, hide_flagged: bool) -> dict[str, Any]:
        # in view_rows' order after `part`: percent_table passes them on as they come
        values = (benchmark, view, search, sources, columns, details, mode, sort_by, organisations, open_weights_only,
                  request_modes, min_params_b, max_params_b, weights, hide_flagged)
        try:
            # Most visitors ask the same few views: each is built once per change of the board.
            return context.board_view(("api", part, *hashable(values)), lambda: bounded_json(
                percent_table(context, *values, part=part)))
        except Exception as exc:  # noqa: BLE001 - API callers get the reason, not a generic failure
            raise gr.Error(plain_error(exc, context.redact_paths)) from None

    def leaderboard_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                        columns: list[str] | None = None, details: bool = False, mode: str = "official",
                        sort_by: str = "", organisations: list[str] | None = None, open_weights_only: bool = False,
                        request_modes: list[str] | None = None, min_params_b: float | None = None,
                        max_params_b: float | None = None, weights: str = "any",
                        hide_flagged: bool = False) -> dict[str, Any]:
        """The leaderboard's current view (values in %): {"headers", "data", "total_rows", "more_rows", "note"};
        the ranked rows (with `rank`) first, then the rows kept apart (with `apart_reason`); at most 200 rows
        (more_rows: how many more the view has, note: how to narrow it; the downloads hold every row); `newest`
        marks the newest evaluated or uploaded run; `<column>_n`, `_low`, `_high`: n and 95% Wilson interval (in
        %) of each share column; the model facts (organisation, params_b, licence, open_weights, request_mode,
        link, flag) and `updated` (ISO date) per row.
        rank: by the sort column (sort_by, default the benchmark's), within the view: 1 + the number of ranked rows
        whose 95% interval lies wholly above this row's (for a lower-is-better column, wholly below); a row without
        an interval counts as the point of its value. Rows that no other row clearly beats share a rank, the next
        rank skips; ranked rows come by rank, then by the sort column. Filters and search hide rows, never re-rank.
        organisations / request_modes: keep only these (empty: all); min_params_b / max_params_b: a size range in
        billions of parameters, bounds included (a model of unknown size is left out when either is given);
        weights: "any", "open" or "closed" (a model whose weights are not known is left out by either);
        open_weights_only: the same as weights "open"; hide_flagged: leave out the rows whose `flag` says why their
        figures cannot be tied to one released model. A bad filter is refused with its reason."""
        return part_api(benchmark, view, search, sources, columns, details, mode, sort_by, "all", organisations,
                        open_weights_only, request_modes, min_params_b, max_params_b, weights, hide_flagged)

    def leaderboard_ranked_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                               columns: list[str] | None = None, details: bool = False, mode: str = "official",
                               sort_by: str = "", organisations: list[str] | None = None,
                               open_weights_only: bool = False, request_modes: list[str] | None = None,
                               min_params_b: float | None = None, max_params_b: float | None = None,
                               weights: str = "any", hide_flagged: bool = False) -> dict[str, Any]:
        """The ranked table only: published rows and comparable runs, with `rank` (values in %); at most 200 rows;
        ranks and filters as /leaderboard."""
        return part_api(benchmark, view, search, sources, columns, details, mode, sort_by, "ranked", organisations,
                        open_weights_only, request_modes, min_params_b, max_params_b, weights, hide_flagged)

    def leaderboard_apart_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                              columns: list[str] | None = None, details: bool = False, mode: str = "official",
                              sort_by: str = "", organisations: list[str] | None = None,
                              open_weights_only: bool = False, request_modes: list[str] | None = None,
                              min_params_b: float | None = None, max_params_b: float | None = None,
                              weights: str = "any", hide_flagged: bool = False) -> dict[str, Any]:
        """The rows kept out of the ranking, each with its `apart_reason` (values in %); at most 200 rows; filters as
        /leaderboard."""
        return part_api(benchmark, view, search, sources, columns, details, mode, sort_by, "apart", organisations,
                        open_weights_only, request_modes, min_params_b, max_params_b, weights, hide_flagged)

    def chart_api(benchmark: str, view: str = "", search: str = "", sources: list[str] | None = None,
                  columns: list[str] | None = None, mode: str = "official", kind: str = "subset bars",
                  top: int = 5) -> dict[str, Any]:
        """A chart of the view's top rows, as plotly JSON: {"type": "plotly", "plot": str}."""
        try:
            figure = chart_figure(context, benchmark, view, search, sources, columns, False, mode, "", [], False, [], kind,
                                  top)
        except Exception as exc:  # noqa: BLE001
            raise gr.Error(plain_error(exc, context.redact_paths)) from None
        return {"type": "plotly", "plot": figure.to_json()}

    gr.api(leaderboard_api, api_name="leaderboard", **READ_EVENT)
    gr.api(leaderboard_ranked_api, api_name="leaderboard_ranked", **READ_EVENT)
    gr.api(leaderboard_apart_api, api_name="leaderboard_apart", **READ_EVENT)
    gr.api(chart_api, api_name="chart", **READ_EVENT)


def declare_download(context: AppContext, kind: str, button: gr.Button, filters: list[Any], download: gr.File) -> Any:
    """download_csv / download_json: the page's download button, also an API (the view the filters give, as a
    file); returns the event, for the page's own follow-up."""
    return button.click(exporter(context, kind), filters, download, api_name=f"download_{kind}", **READ_EVENT)


# ---- the overview and others' results ---------------------------------------------------------------------------

def declare_overview_api(context: AppContext, overview_in_percent: Callable[[], pd.DataFrame]) -> None:
    """overview: the table across benchmarks that the Overview tab shows, in %."""

    def overview_api() -> dict[str, Any]:
        """The overview (values in %): {"headers", "data", "aggregate"}; one row per model in rank order: by
        `win_rate`, the mean win rate over the benchmarks it has, never above a model that beats it on every
        figure they share ("aggregate" states the rule); `coverage` ("2 of 4") and `benchmarks` (2) say how many it
        has, `lacks` names the others; `<title> · source` says where each benchmark's figures come from."""
        try:
            frame = overview_in_percent()
        except Exception as exc:  # noqa: BLE001 - API callers get the reason, not a generic failure
            raise gr.Error(plain_error(exc, context.redact_paths)) from None
        return table_json(frame, aggregate=aggregate_rule())

    gr.api(overview_api, api_name="overview", **READ_EVENT)


def declare_queue_api(context: AppContext, queue: Callable[[], dict[str, Any]]) -> None:
    """run_queue: every run evaluated on this deployment, as the Queue tab shows it (no owner, endpoint, key or notes)."""

    def run_queue_api() -> dict[str, Any]:
        """The queue: {"runs": [{"benchmark", "language", "model", "status", "stage", "done", "total", "created",
        "started", "finished"}], "counts": {"pending", "running", "finished"}}; pending and running runs first."""
        return queue()

    gr.api(run_queue_api, api_name="run_queue", **READ_EVENT)


def declare_other_results_api(context: AppContext) -> None:
    """load_results, on a private deployment only."""
    if context.public:
        return

    def load_results_api(repos: str) -> str:
        """(Re)load the other results datasets (comma-separated Hub dataset repo ids) into the board: one line per
        repo (rows joined, what was skipped and why, problems), then one per run dropped. Private deployments only."""
        return load_other_results_report(context, repos)

    gr.api(load_results_api, api_name="load_results")


# ---- Explore: samples, one sample, two runs compared -------------------------------------------------------------

@dataclass(frozen=True)
class ExploreViews:
    """What the Explore tab makes of a run for whoever sends the request (token, request): each view checks
    the caller may see the run's outputs and says why not."""

    samples: Callable[..., tuple[pd.DataFrame, str]]  # (run, mode, subset, verdict, error type, token, request)
    filters: Callable[..., dict[str, list[str]]]  # (context, run, mode, owner)
    sample: Callable[..., str]  # (run, sample id, mode, token, request) -> escaped HTML
    compare: Callable[..., tuple[pd.DataFrame, str]]  # (run a, run b, mode, token, request)
    compare_sample: Callable[..., str]  # (run a, run b, sample id, mode, token, request) -> escaped HTML
    runs: Callable[..., list[tuple[str, str]]]  # (context, owner) -> [(label, run id)]


def declare_explore_api(context: AppContext, views: ExploreViews) -> None:
    """samples, sample_filters, sample, compare, compare_sample and explore_runs."""

    def samples_api(run_id: str, mode: str = "official", subset: str = "", verdict: str = "",
                    error_type: str = "", owner_token: str = "", request: gr.Request | None = None) -> dict[str, Any]:
        """A run's scored samples, filtered ("" or "all": any): {"headers", "data", "count"} (count says why
        when the run is unknown or its outputs are not yours to see)."""
        frame, note = views.samples(run_id, mode, subset, verdict, error_type, owner_token, request)
        return table_json(frame, count=note)

    def filters_api(run_id: str, mode: str = "official", owner_token: str = "",
                    request: gr.Request | None = None) -> dict[str, list[str]]:
        """The subsets and error types of a run's verdicts, each led by "all": {"subset", "error_type"}."""
        return views.filters(context, run_id, mode, _caller(context, owner_token, request))

    def sample_api(run_id: str, sample_id: str, mode: str = "official", owner_token: str = "",
                   request: gr.Request | None = None) -> str:
        """One sample's evidence as escaped HTML."""
        return views.sample(run_id, sample_id, mode, owner_token, request)

    def compare_api(run_a: str, run_b: str, mode: str = "official", owner_token: str = "",
                    request: gr.Request | None = None) -> dict[str, Any]:
        """Samples whose verdict flipped between two runs: {"headers", "data", "note"}."""
        frame, note = views.compare(run_a, run_b, mode, owner_token, request)
        return table_json(frame, note=note)

    def compare_sample_api(run_a: str, run_b: str, sample_id: str, mode: str = "official", owner_token: str = "",
                           request: gr.Request | None = None) -> str:
        """One sample's evidence in both runs, side by side, as escaped HTML."""
        return views.compare_sample(run_a, run_b, sample_id, mode, owner_token, request)

    def runs_api(owner_token: str = "", request: gr.Request | None = None) -> list[list[str]]:
        """The finished runs whose outputs you may see, as [label, run_id] pairs."""
        owner = _caller(context, owner_token, request)
        return [[label, run_id] for label, run_id in views.runs(context, owner)]

    gr.api(samples_api, api_name="samples", **READ_EVENT)
    gr.api(filters_api, api_name="sample_filters", **READ_EVENT)
    gr.api(sample_api, api_name="sample", **READ_EVENT)
    gr.api(compare_api, api_name="compare", **READ_EVENT)
    gr.api(compare_sample_api, api_name="compare_sample", **READ_EVENT)
    gr.api(runs_api, api_name="explore_runs", **READ_EVENT)


def declare_eval_results_api(context: AppContext) -> None:
    """eval_results_file and open_eval_results_pr (Explore's Hub eval results), on a private deployment only: on a
    public one neither exists. The pull request is the operator's, opened with HF_TOKEN read on the server."""
    if not offered_here(context.public):
        return

    def eval_results_file_api(run_id: str) -> dict[str, str]:
        """The Hub `.eval_results` file a finished run that ranks on the board would add to a model repo:
        {"path_in_repo", "yaml"}. A run that cannot be exported is refused with the reason."""
        try:
            found = eval_results_preview(context.store, run_id, context.public)
        except Exception as exc:  # noqa: BLE001 - API callers get the reason, not a generic failure
            raise gr.Error(plain_error(exc, context.redact_paths)) from None
        return {"path_in_repo": found.path, "yaml": found.text}

    def open_eval_results_pr_api(run_id: str, model_repo: str) -> str:
        """Open one pull request on the model repo (org/name) adding the run's eval results file (see
        /eval_results_file), with the operator's HF_TOKEN from the server's environment (never sent by the caller):
        the pull request's URL. Refused with the reason in one line: no HF_TOKEN, a bad repo id, a run that cannot
        be exported, the Hub's answer."""
        try:
            return open_pr_as_operator(context.store, run_id, model_repo, context.public)
        except Exception as exc:  # noqa: BLE001
            raise gr.Error(plain_error(exc, context.redact_paths)) from None

    gr.api(eval_results_file_api, api_name="eval_results_file", **READ_EVENT)
    gr.api(open_eval_results_pr_api, api_name="open_eval_results_pr")


# ---- the model page: one model across the benchmarks, models compared ----------------------------------------------

def declare_model_api(context: AppContext) -> None:
    """model, model_names and compare_models (evaluators/service/model_page.py)."""

    def model_api(name: str, owner_token: str = "", request: gr.Request | None = None) -> dict[str, Any]:
        """One model across every benchmark (any spelling the boards or the facts table know): {"query", "found",
        "model", "key", "facts", "benchmarks": [{"benchmark", "title", "view_label", "headline", "headline_title",
        "rows": [{"view", "view_title", "source", "model", "run_ids", "ranked", "apart_reason", "updated",
        "figures": [{"column", "title", "value", "low", "high", "n", "lower_is_better"}]}]}], "runs", "suggestions"};
        values are fractions, low/high their 95% Wilson interval; runs without endpoints or keys. On a public
        deployment a run you may not see (another visitor's, until it has finished and they share it) is listed as
        the queue lists it: "hidden" true, no run_id, tokens, latency or errors; owner_token (else your client
        session) names you. Not found: found false and similar names in suggestions."""
        owner = _caller(context, owner_token, request)
        try:
            return model_page.model_page(context, name, owner=owner)
        except Exception as exc:  # noqa: BLE001 - API callers get the reason, not a generic failure
            raise gr.Error(plain_error(exc, context.redact_paths)) from None

    def model_names_api() -> list[str]:
        """Every model of the boards and of the facts table, one name per model, sorted."""
        return model_page.board_models(context)

    def compare_models_api(models: list[str], benchmark: str, view: str = "") -> dict[str, Any]:
        """Two to six models on one benchmark's view (empty: its overview view), each by one row (published and
        ranked first): {"benchmark", "title", "view", "view_title", "view_label", "columns", "models": [{"name",
        "model", "source", "run_ids", "apart_reason", "figures", "latency_mean_s", "latency_p95_s", "cost"}],
        "missing", "cost_note"}; values are fractions, latency in seconds of the runs evaluated here."""
        try:
            return model_page.compare_models(context, models, benchmark, view or None)
        except Exception as exc:  # noqa: BLE001
            raise gr.Error(plain_error(exc, context.redact_paths)) from None

    gr.api(model_api, api_name="model", **READ_EVENT)
    gr.api(model_names_api, api_name="model_names", **READ_EVENT)
    gr.api(compare_models_api, api_name="compare_models", **READ_EVENT)


# ---- Submit: check an upload, add it ------------------------------------------------------------------------------

def declare_check_upload(button: gr.Button, check: Callable[..., tuple[Any, ...]], inputs: list[Any],
                         outputs: list[Any]) -> Any:
    """check_upload: the page's Check button, also an API (file, benchmark, language, data source, data folder ->
    validation, report, the pending submission, message); returns the event, for the page's own follow-ups."""
    return button.click(check, inputs, outputs, api_name="check_upload")


AddAs = Callable[[Submission | None, str, str, Any, gr.Request | None], tuple[str, Submission | None]]


def declare_add_upload(button: gr.Button, add_as: AddAs, inputs: list[Any], outputs: list[Any]) -> Any:
    """add_upload: the page's Add, for an API caller who names itself with owner_token (else its session)."""

    def add(submission: Submission | None, model_name: str, notes_text: str, owner_token: str = "",
            request: gr.Request | None = None) -> tuple[str, Submission | None]:
        """Add the file checked last (check_upload, same session) to the leaderboard under model_name (at most
        200 characters) with notes_text (at most 2,000): the message. On a public deployment owner_token (a
        secret you keep, 16+ characters) names you for the daily upload quota, else your client session does."""
        return add_as(submission, model_name, notes_text, owner_token, request)

    return button.click(add, inputs, outputs, api_name="add_upload")
