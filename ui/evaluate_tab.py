"""Evaluate tab: point the engine at an endpoint, run in the background, watch the jobs panel.

The API key typed here goes to the job in memory for that run only: never into the store, the
logs, the jobs panel or back to the page.

Who acts: the page's visitor token (ui/visitor.py) for the page's own events; for API callers the
`owner_token` argument when given, else their Gradio session. On a private deployment everyone acts on
every run.
"""

from __future__ import annotations

from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.core.selection import language_names, resolve_language
from evaluators.core.types import PROMPT_STYLES
from evaluators.engine.endpoint_guard import check_endpoint_allowed, check_key_variable
from evaluators.engine.local_model import LOCAL_MODELS, installed_problem
from evaluators.engine.settings import (
    MODALITIES,
    REQUEST_MODES,
    JudgeSettings,
    ModelSettings,
    RunConfig,
    UserSimulatorSettings,
    describe_requests,
)
from ui.context import AppContext, resolve_data_dir
from ui.format import markdown_text, picked_value, table_json, user_error
from ui.jobs_panel import act_on_run, job_detail, jobs_table
from ui.leaderboard_tab import benchmark_names

DATA_SOURCES = ("download", "built-in example", "local folder")
AUTO_PROMPT_STYLE = "auto"
# A public deployment must not be usable to flood an endpoint or starve other visitors.
PUBLIC_MAX_CONCURRENCY = 16
PUBLIC_MAX_LIMIT = 100
LOCAL_DEMO = LOCAL_MODELS["smollm2"]
ENDPOINT_KINDS = ("your endpoint", LOCAL_DEMO.title)
# The demo preset: the local model on ACEBench's built-in example (15 normal items): no key, no network.
DEMO_PRESET = {"benchmark": "acebench", "language": "en", "subsets": ["normal"], "data_source": "built-in example",
               "limit": 20, "concurrency": 2, "request_mode": "tools", "temperature": 0.0}


def local_model_note(kind: str) -> str:
    if kind != LOCAL_DEMO.title:
        return ""
    problem = installed_problem()
    if problem:
        return f"⚠️ {problem}"
    return ("SmolLM2-135M runs on this machine (about 700 MB of RAM; its server starts with the first run). It is a "
            "smoke test of the whole pipeline, not a competitor: expect low scores. No key or base URL is needed.")


def subset_choices(benchmark: str) -> list[str]:
    spec = get_benchmark(benchmark)
    return [*[g for g in spec.groups if g != "all"], *[s for s in spec.subsets if spec.can_solve(s)]]


def language_choices(benchmark: str) -> list[str]:
    return language_names(get_benchmark(benchmark))


def key_variable(context: AppContext, name: str | None, base_url: str) -> str:
    """The environment variable a run may take its key from: only one named explicitly, ending in _KEY,
    and none on a public deployment or for the local model."""
    name = (name or "").strip()
    if context.public or base_url.startswith("local:"):
        return ""
    check_key_variable(name)
    return name


def other_endpoint(context: AppContext, form: dict[str, Any], prefix: str, what: str,
                   base_url: str) -> tuple[str, str, str] | None:
    """(base URL, model, key variable) of another model the run talks to, from the form's
    `<prefix>_base_url`, `<prefix>_model` and `<prefix>_key_env`; None when both are empty."""
    url = (form.get(f"{prefix}_base_url") or "").strip()
    model = (form.get(f"{prefix}_model") or "").strip()
    if not url and not model:
        return None
    if not (url and model):
        raise ToolboardError(f"{what} needs both a base URL and a model")
    check_endpoint_allowed(url)
    return url, model, key_variable(context, form.get(f"{prefix}_key_env"), base_url)


def run_config(context: AppContext, form: dict[str, Any]) -> RunConfig:
    """The form -> a run configuration, with every field checked and explained when wrong."""
    base_url = (form.get("base_url") or "").strip()
    model = (form.get("model") or "").strip()
    if form.get("endpoint_kind") == LOCAL_DEMO.title:
        problem = installed_problem()
        if problem:
            raise ToolboardError(problem)
        base_url, model = "local:" + LOCAL_DEMO.name, LOCAL_DEMO.name
        form = {**form, "max_tokens": LOCAL_DEMO.max_tokens}
    if not base_url or not model:
        raise ToolboardError("give the endpoint's base URL and the model name")
    check_endpoint_allowed(base_url)
    benchmark = get_benchmark(form["benchmark"])
    language = resolve_language(benchmark, form.get("language"))
    limit = int(form["limit"]) if form.get("limit") not in (None, "") else None
    if limit is not None and limit < 1:
        raise ToolboardError("limit must be at least 1 (or empty for every sample)")
    concurrency = int(form.get("concurrency") or 8)
    max_concurrency = PUBLIC_MAX_CONCURRENCY if context.public else 256
    if not 1 <= concurrency <= max_concurrency:
        raise ToolboardError(f"concurrency must be between 1 and {max_concurrency}")
    if context.public and (limit is None or limit > PUBLIC_MAX_LIMIT):
        raise ToolboardError(f"on a public deployment a run takes at most {PUBLIC_MAX_LIMIT} samples per subset: set the limit")
    request_mode = form.get("request_mode") or "prompt"
    if request_mode not in REQUEST_MODES:
        raise ToolboardError(f"request mode must be one of {', '.join(REQUEST_MODES)}")
    prompt_style = form.get("prompt_style") or AUTO_PROMPT_STYLE
    if prompt_style not in (AUTO_PROMPT_STYLE, *PROMPT_STYLES):
        raise ToolboardError(f"prompts must be one of {AUTO_PROMPT_STYLE}, {', '.join(PROMPT_STYLES)}")
    if benchmark.request_profile is None:
        prompt_style = AUTO_PROMPT_STYLE  # the choice is ACEBench's; other benchmarks have one kind of request
    modality = form.get("modality") or "text"
    if modality not in MODALITIES:
        raise ToolboardError(f"modality must be one of {', '.join(MODALITIES)}")
    if benchmark.name == "acebench" and (form.get("data_source") == "built-in example") and language != "en":
        raise ToolboardError("the built-in example is in English: choose language en")
    judge_endpoint = other_endpoint(context, form, "judge", "the judge", base_url)
    judge = JudgeSettings(*judge_endpoint) if judge_endpoint else None
    user_endpoint = other_endpoint(context, form, "user", "the simulated user", base_url)
    user = UserSimulatorSettings(*user_endpoint) if user_endpoint else None
    settings = ModelSettings(
        base_url=base_url, model=model,
        # On a public deployment the server's own keys must never reach a user's endpoint.
        api_key_env=key_variable(context, form.get("api_key_env"), base_url),
        request_mode=request_mode, temperature=_optional_number(form.get("temperature"), "temperature"),
        max_tokens=form.get("max_tokens"),
        modality=modality, judge=judge, prompt_style=None if prompt_style == AUTO_PROMPT_STYLE else prompt_style,
    )
    return RunConfig(
        benchmark=benchmark.name, model=settings, language=language, subsets=tuple(form.get("subsets") or ()), limit=limit,
        data_dir=resolve_data_dir(context, form.get("data_source") or "download", form.get("data_folder") or ""),
        concurrency=concurrency, user_simulator=user,
    )


def _optional_number(value: Any, name: str) -> float | None:
    """An empty field means the benchmark's own value."""
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ToolboardError(f"{name} must be a number (or empty for the benchmark's own)") from None


def start_job(context: AppContext, form: dict[str, Any], api_key: str | None, owner: str | None = None) -> dict[str, str]:
    """Check the form and start the run (if the deployment's limits allow it); the key goes to the job only."""
    try:
        run_id = context.jobs.start(run_config(context, form), api_key=api_key or None, owner=owner)
    except Exception as exc:  # noqa: BLE001 - every failure is shown on the page
        return {"run_id": "", "message": user_error(exc, context.redact_paths)}
    requests = describe_requests(context.store.get_run(run_id).config)
    return {"run_id": run_id, "message": f"Started run {run_id}. {markdown_text(requests)}"}


def build(context: AppContext, visitor: gr.BrowserState) -> dict[str, Any]:
    """The tab; `visitor` holds the page's visitor token (see ui/app.py)."""
    names = benchmark_names()
    with gr.Row():
        with gr.Column(scale=3):
            endpoint_kind = gr.Radio(list(ENDPOINT_KINDS), value=ENDPOINT_KINDS[0], label="Model to evaluate")
            local_note = gr.Markdown()
            base_url = gr.Textbox(label="Endpoint base URL", placeholder="http://127.0.0.1:8000/v1")
            api_key = gr.Textbox(label="API key (used for this run only; never stored or shown again)", type="password",
                                 placeholder="sk-… (optional)")
            model = gr.Textbox(label="Model", placeholder="name as the endpoint knows it")
            api_key_env = gr.Textbox(label="…or the environment variable holding the key", value="OPENAI_API_KEY",
                                     visible=not context.public)
        with gr.Column(scale=3):
            benchmark = gr.Dropdown(names, value="acebench", label="Benchmark")
            language = gr.Dropdown(language_choices("acebench"), value="en", label="Language", allow_custom_value=True)
            subsets = gr.Dropdown(subset_choices("acebench"), value=["normal"], multiselect=True, allow_custom_value=True,
                                  label="Subsets or groups (empty = every runnable subset)")
            data_source = gr.Radio(list(DATA_SOURCES) if not context.public else ["download", "built-in example"],
                                   value="download", label="Data")
            # Every value reaches the page's config, shown or not: no server path on a public deployment.
            data_folder = gr.Textbox(label="Local data folder", visible=not context.public,
                                     value="" if context.public else context.default_data_dir or "")
        with gr.Column(scale=2):
            limit = gr.Number(label="Limit per subset (empty = all)", value=20, precision=0)
            concurrency = gr.Slider(1, 128, value=8, step=1, label="Concurrency")
            request_mode = gr.Radio(list(REQUEST_MODES), value="prompt", label="Request mode (text prompt or native tools)")
            prompt_style = gr.Radio([AUTO_PROMPT_STYLE, *PROMPT_STYLES], value=AUTO_PROMPT_STYLE,
                                    label="Prompts (ACEBench): official = what the official code sends; auto = official "
                                          "when its files are there")
            temperature = gr.Number(label="Temperature (empty = the benchmark's: ACEBench official 0.7, agent 0.001; else 0)",
                                    value=None)
    with gr.Accordion("StepEval-Audio-Toolcall: modality and parameter judge", open=False):
        with gr.Row():
            modality = gr.Radio(list(MODALITIES), value="text", label="Modality")
            judge_base_url = gr.Textbox(label="Judge base URL (empty = exact-match fallback)")
            judge_model = gr.Textbox(label="Judge model")
            judge_key_env = gr.Textbox(label="Judge key environment variable", value="OPENAI_API_KEY",
                                       visible=not context.public)
    with gr.Accordion("ACEBench agent_multi_turn: the simulated user (empty = the tested model plays it)", open=False):
        with gr.Row():
            user_base_url = gr.Textbox(label="Simulated user base URL")
            user_model = gr.Textbox(label="Simulated user model")
            user_key_env = gr.Textbox(label="Simulated user key environment variable", value="OPENAI_API_KEY",
                                      visible=not context.public)
    with gr.Row():
        start = gr.Button("Start evaluation", variant="primary")
        demo = gr.Button(f"Demo: {LOCAL_DEMO.title} on the built-in ACEBench example (no key, no network)")
    start_message = gr.Markdown()
    gr.Markdown("### Jobs\nRuns keep going when you close the tab; they are listed here after a refresh.")
    # Built once for every visitor: on a public deployment it lists nobody's runs until the page loads.
    jobs = gr.Dataframe(jobs_table(context), interactive=False, label="Jobs", max_height=320, wrap=True)
    with gr.Row():
        run_id = gr.Textbox(label="Run id", scale=3)
        cancel = gr.Button("Cancel", size="sm", scale=1)
        resume = gr.Button("Resume", size="sm", scale=1)
        rerun = gr.Button("Re-run errors", size="sm", scale=1)
        share = gr.Button("Share outputs", size="sm", scale=1, visible=context.public)
    action_message = gr.Markdown()
    detail = gr.Markdown()
    report = gr.JSON(label="Report (official)")

    form_fields = [endpoint_kind, base_url, model, api_key_env, benchmark, language, subsets, data_source, data_folder, limit, concurrency,
                   request_mode, temperature, modality, judge_base_url, judge_model, judge_key_env, user_base_url,
                   user_model, user_key_env, prompt_style]
    form_names = ["endpoint_kind", "base_url", "model", "api_key_env", "benchmark", "language", "subsets", "data_source", "data_folder",
                  "limit", "concurrency", "request_mode", "temperature", "modality", "judge_base_url", "judge_model",
                  "judge_key_env", "user_base_url", "user_model", "user_key_env", "prompt_style"]

    def owner_of(token: Any, request: gr.Request | None) -> str | None:
        return context.visitors.owner(token, getattr(request, "session_hash", None))

    def start_from_form(values: dict[Any, Any], request: gr.Request) -> tuple[str, str, pd.DataFrame]:
        try:
            owner = owner_of(values[visitor], request)
        except ToolboardError as exc:
            return user_error(exc), "", jobs_table(context, None)
        form = {name: values[field] for name, field in zip(form_names, form_fields, strict=True)}
        outcome = start_job(context, form, values[api_key], owner)
        return outcome["message"], outcome["run_id"], jobs_table(context, owner)

    def start_run(base_url: str = "", model: str = "", benchmark: str = "acebench", api_key: str = "", language: str = "",
                  subsets: list[str] | None = None, limit: int | None = None, concurrency: int = 8,
                  request_mode: str = "prompt", temperature: float | None = None, data_source: str = "download",
                  data_folder: str = "", modality: str = "text", judge_base_url: str = "", judge_model: str = "",
                  judge_key_env: str = "", user_base_url: str = "", user_model: str = "", user_key_env: str = "",
                  api_key_env: str = "", endpoint_kind: str = "your endpoint", prompt_style: str = "auto",
                  owner_token: str = "", request: gr.Request = None) -> dict[str, str]:
        """Start an evaluation in the background: {"run_id", "message"} (run_id is empty when refused).
        endpoint_kind "Local demo model (SmolLM2-135M)" runs the built-in local model (base_url and model unused).
        prompt_style (ACEBench): auto (official when the official prompt files are there), official or toolboard;
        temperature None: the benchmark's own. On a public deployment the run is yours: owner_token (a secret
        you keep, 16+ characters) names you, else your client session does."""
        form = {name: value for name, value in locals().items() if name in form_names}
        try:
            owner = owner_of(owner_token, request)
        except ToolboardError as exc:
            return {"run_id": "", "message": user_error(exc)}
        return start_job(context, form, api_key, owner)

    def act(action: str, chosen: str, key: str, token: Any, request: gr.Request | None) -> tuple[str, pd.DataFrame]:
        owner = None
        try:
            owner = owner_of(token, request)
            message = act_on_run(context, action, chosen, key, owner)
        except Exception as exc:  # noqa: BLE001 - every failure is shown on the page
            message = user_error(exc, context.redact_paths)
        return message, jobs_table(context, owner)

    def cancel_clicked(chosen: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame]:
        return act("cancel", chosen, "", token, request)

    def resume_clicked(chosen: str, key: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame]:
        return act("resume", chosen, key, token, request)

    def rerun_clicked(chosen: str, key: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame]:
        return act("rerun", chosen, key, token, request)

    def share_clicked(chosen: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame]:
        return act("share", chosen, "", token, request)

    def cancel_run(run_id: str, owner_token: str = "", request: gr.Request = None) -> tuple[str, dict[str, Any]]:
        """Cancel a run you started: (message, your jobs table as {"headers", "data"})."""
        message, table = act("cancel", run_id, "", owner_token, request)
        return message, table_json(table)

    def resume_run(run_id: str, api_key: str = "", owner_token: str = "",
                   request: gr.Request = None) -> tuple[str, dict[str, Any]]:
        """Resume a run you started that was cancelled, interrupted or failed: (message, your jobs table)."""
        message, table = act("resume", run_id, api_key, owner_token, request)
        return message, table_json(table)

    def rerun_errors(run_id: str, api_key: str = "", owner_token: str = "",
                     request: gr.Request = None) -> tuple[str, dict[str, Any]]:
        """Re-send the failed requests of a run you started: (message, your jobs table)."""
        message, table = act("rerun", run_id, api_key, owner_token, request)
        return message, table_json(table)

    def share_run(run_id: str, owner_token: str = "", request: gr.Request = None) -> tuple[str, dict[str, Any]]:
        """Show the outputs of a finished run you started to every visitor (Explore): (message, your jobs table).
        Its scores are on the leaderboard either way."""
        message, table = act("share", run_id, "", owner_token, request)
        return message, table_json(table)

    def jobs_api(owner_token: str = "", request: gr.Request = None) -> dict[str, Any]:
        """Your runs (every run on a private deployment), newest first, with live progress: {"headers", "data"}."""
        try:
            owner = owner_of(owner_token, request)
        except ToolboardError as exc:
            raise gr.Error(user_error(exc)) from None
        return table_json(jobs_table(context, owner))

    def pick(evt: gr.SelectData, table: pd.DataFrame) -> str:
        return picked_value(table, evt.index, "run_id")

    def detail_view(chosen: str, token: Any, request: gr.Request | None) -> tuple[str, dict[str, Any] | None]:
        try:
            return job_detail(context, chosen, owner_of(token, request))
        except Exception as exc:  # noqa: BLE001
            return user_error(exc, context.redact_paths), None

    def job_detail_api(run_id: str, owner_token: str = "",
                       request: gr.Request = None) -> tuple[str, dict[str, Any] | None]:
        """A run's progress and its official report (None until it has finished): (Markdown text, report)."""
        return detail_view(run_id, owner_token, request)

    def visitor_jobs(token: Any, request: gr.Request) -> pd.DataFrame:
        try:
            return jobs_table(context, owner_of(token, request))
        except ToolboardError:
            return jobs_table(context, None)

    endpoint_kind.change(local_model_note, [endpoint_kind], [local_note], api_visibility="private")
    preset_outputs = [endpoint_kind, benchmark, language, subsets, data_source, limit, concurrency, request_mode, temperature,
                      prompt_style]

    def fill_demo_preset():
        return (LOCAL_DEMO.title, DEMO_PRESET["benchmark"], DEMO_PRESET["language"], DEMO_PRESET["subsets"],
                DEMO_PRESET["data_source"], DEMO_PRESET["limit"], DEMO_PRESET["concurrency"], DEMO_PRESET["request_mode"],
                DEMO_PRESET["temperature"], AUTO_PROMPT_STYLE)

    start_inputs = {visitor, api_key, *form_fields}
    demo.click(fill_demo_preset, None, preset_outputs, api_visibility="private").then(
        start_from_form, start_inputs, [start_message, run_id, jobs], api_visibility="private")
    start.click(start_from_form, start_inputs, [start_message, run_id, jobs], api_visibility="private")
    cancel.click(cancel_clicked, [run_id, visitor], [action_message, jobs], api_visibility="private")
    resume.click(resume_clicked, [run_id, api_key, visitor], [action_message, jobs], api_visibility="private")
    rerun.click(rerun_clicked, [run_id, api_key, visitor], [action_message, jobs], api_visibility="private")
    share.click(share_clicked, [run_id, visitor], [action_message, jobs], api_visibility="private")
    jobs.select(pick, [jobs], [run_id], api_visibility="private")
    run_id.change(detail_view, [run_id, visitor], [detail, report], api_visibility="private")
    # The API: the same actions, each caller acting as its owner_token or its session.
    gr.api(start_run, api_name="start_run")
    gr.api(cancel_run, api_name="cancel_run")
    gr.api(resume_run, api_name="resume_run")
    gr.api(rerun_errors, api_name="rerun_errors")
    gr.api(share_run, api_name="share_run")
    gr.api(jobs_api, api_name="jobs")
    gr.api(job_detail_api, api_name="job_detail")

    def switch_benchmark(name: str):
        languages = language_choices(name)
        return (gr.update(choices=languages, value=languages[0] if languages else None, visible=bool(languages)),
                gr.update(choices=subset_choices(name), value=[]))

    benchmark.change(switch_benchmark, [benchmark], [language, subsets], api_visibility="private")
    shown_status = gr.State("")

    def tick(chosen: str, last_status: str, token: Any, request: gr.Request) -> tuple[Any, ...]:
        """Live jobs and progress; the report is re-sent only when the chosen run's status changes, so a
        report the user has unfolded is not redrawn every second."""
        text, stored_report = detail_view(chosen, token, request)
        status = ""
        if (chosen or "").strip():
            try:
                status = context.jobs.status_of(chosen.strip(), context.store.get_run(chosen.strip()).status)
            except ToolboardError:
                status = "unknown"
        report_update = stored_report if status != last_status else gr.update()
        return visitor_jobs(token, request), text, report_update, status

    timer = gr.Timer(1.0)
    timer.tick(tick, [run_id, shown_status, visitor], [jobs, detail, report, shown_status], api_visibility="private")
    return {"jobs": jobs, "refresh_jobs": visitor_jobs}
