"""Evaluate tab: point the engine at an endpoint, run in the background, watch the jobs panel.

The API key typed here goes to the job in memory for that run only: never into the store, the
logs, the jobs panel or back to the page.

Who acts: the page's visitor token (ui/visitor.py) for the page's own events; for API callers the
`owner_token` argument when given, else their Gradio session. On a private deployment everyone acts on
every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.declarations import Option, Role
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, all_benchmarks, get_benchmark, readable
from evaluators.service.run_request import PUBLIC_MAX_CONCURRENCY, PUBLIC_MAX_LIMIT
from evaluators.service.run_settings import MAX_CONCURRENCY, default_of, number_range, title_of
from evaluators.service.runs import live_status
from ui.api import declare_runs_api
from ui.context import AppContext, as_markdown
from ui.format import benchmark_choices, picked_value, user_error
from ui.jobs_panel import LIVE_STATUSES, RUN_HEADER, act_on_page, any_live, detail_view, jobs_dataframe, visitor_jobs
from ui.jobs_panel import page_jobs_table as jobs_table
from ui.report_view import ReportPanel, build_report_panel
from ui.run_form import (
    ADVANCED_FIELDS,
    AUTO_PROMPT_STYLE,
    ENDPOINT_KINDS,
    FIELDS,
    LOCAL_DEMO,
    LOCAL_DEMO_FORM,
    advanced_default,
    advanced_label,
    data_line,
    data_source_choices,
    data_source_value,
    demo_preset,
    endpoint_kinds,
    language_choices,
    language_ids,
    local_model_note,
    local_model_works,
    rank_line,
    start_job,
    subset_choices,
)
from ui.visitor import owner_of

# ---- the form's parts, built from the registry --------------------------------------------------

def declared(kind: str) -> dict[str, dict[str, Any]]:
    """Every declared role (kind "roles") or option ("options") by name -> {benchmark name: its
    declaration}: benchmarks that declare one of the same name share its control."""
    found: dict[str, dict[str, Any]] = {}
    for benchmark in all_benchmarks():
        for item in getattr(benchmark, kind):
            found.setdefault(item.name, {})[benchmark.name] = item
    return found


def role_title(role: Role) -> str:
    left_empty = f" Left empty: {role.fallback}." if role.fallback else ""
    return f"{role.label} ({role.description}).{left_empty}"


def role_part_labels(role: Role) -> dict[str, str]:
    return {"base_url": f"{role.label}: base URL", "model": f"{role.label}: model",
            "key_env": f"{role.label}: key environment variable"}


def option_label(option: Option) -> str:
    """The option as a person reads it (its name is what the API and the command line take)."""
    return f"{readable(option.name)}: {option.description}"


@dataclass
class RoleBox:
    """The box of one role name: base URL, model and key variable of the model that plays it."""

    name: str
    box: gr.Accordion
    parts: dict[str, gr.Textbox]  # ROLE_PARTS -> its textbox
    declared_by: dict[str, Role]  # benchmark name -> the role it declares under this name

    @property
    def components(self) -> list[Any]:
        return [self.box, *self.parts.values()]

    def updates(self, benchmark: str) -> list[Any]:
        """Shown only for a benchmark that declares the role, labelled as that benchmark declares it."""
        role = self.declared_by.get(benchmark)
        if role is None:
            return [gr.update(visible=False)] + [gr.update() for _ in self.parts]
        labels = role_part_labels(role)
        return [gr.update(visible=True, label=role_title(role))] + [gr.update(label=labels[part]) for part in self.parts]


@dataclass
class OptionControl:
    """The control of one option name, its choices and default as the chosen benchmark declares them."""

    name: str
    radio: gr.Radio
    declared_by: dict[str, Option]

    def update(self, benchmark: str) -> Any:
        option = self.declared_by.get(benchmark)
        if option is None:
            return gr.update(visible=False)
        return gr.update(visible=True, choices=list(option.choices), value=option.default, label=option_label(option))


def build_role_boxes(context: AppContext, shown: Benchmark) -> list[RoleBox]:
    """One box per declared role name across all benchmarks, shown for `shown` if it declares it."""
    boxes = []
    for name, declared_by in declared("roles").items():
        role = declared_by.get(shown.name) or next(iter(declared_by.values()))
        labels = role_part_labels(role)
        with gr.Accordion(role_title(role), open=False, visible=shown.name in declared_by) as box:
            with gr.Row():
                parts = {
                    "base_url": gr.Textbox(label=labels["base_url"]),
                    "model": gr.Textbox(label=labels["model"]),
                    # Empty: the tested model's key variable for a role on its host, else no key.
                    "key_env": gr.Textbox(label=labels["key_env"], value="", visible=not context.public,
                                          placeholder="empty: the tested model's, on its host; else none"),
                }
        boxes.append(RoleBox(name, box, parts, declared_by))
    return boxes


def build_option_controls(shown: Benchmark) -> list[OptionControl]:
    """One control per declared option name across all benchmarks, shown for `shown` if it declares it."""
    controls = []
    for name, declared_by in declared("options").items():
        option = declared_by.get(shown.name) or next(iter(declared_by.values()))
        radio = gr.Radio(list(option.choices), value=option.default, label=option_label(option),
                         visible=shown.name in declared_by)
        controls.append(OptionControl(name, radio, declared_by))
    return controls


@dataclass
class EvaluateForm:
    """The form's inputs, each named once: `fields` by the names start_job reads (ui/run_form.FIELDS),
    the role boxes and the option controls. The API key is apart: it goes to the job only."""

    fields: dict[str, Any]
    roles: list[RoleBox]
    options: list[OptionControl]
    api_key: gr.Textbox
    local_note: gr.Markdown
    data_note: gr.Markdown

    def inputs(self) -> list[Any]:
        return [*self.fields.values(), *(box for role in self.roles for box in role.parts.values()),
                *(option.radio for option in self.options)]

    def read(self, values: dict[Any, Any]) -> dict[str, Any]:
        """The page's values (by component) -> the form dict start_job takes: what the page shows, so
        the roles and options of the chosen benchmark only (the others' boxes are hidden)."""
        form = {name: values[component] for name, component in self.fields.items()}
        chosen = form["benchmark"]
        form["roles"] = {role.name: {part: values[box] for part, box in role.parts.items()}
                         for role in self.roles if chosen in role.declared_by}
        form["options"] = {option.name: values[option.radio] for option in self.options if chosen in option.declared_by}
        return form

    def switch_outputs(self) -> list[Any]:
        return [self.fields["language"], self.fields["subsets"], self.fields["request_mode"], self.fields["prompt_style"],
                *(part for role in self.roles for part in role.components), *(option.radio for option in self.options)]

    def switch(self, name: str, language: str | None) -> list[Any]:
        """Updates for `switch_outputs` when the benchmark changes: its languages (the chosen one kept
        when it has it), subsets, request modes (hidden when it has one), prompt styles, roles and options."""
        benchmark = get_benchmark(name)
        languages = language_ids(name)
        chosen = language if language in languages else (languages[0] if languages else None)
        return [gr.update(choices=language_choices(name), value=chosen, visible=bool(languages)),
                gr.update(choices=subset_choices(name), value=[]),
                gr.update(choices=list(benchmark.request_modes), value=benchmark.request_modes[0],
                          visible=len(benchmark.request_modes) > 1),
                gr.update(choices=[AUTO_PROMPT_STYLE, *benchmark.prompt_styles], value=AUTO_PROMPT_STYLE,
                          visible=offers_prompt_styles(benchmark)),
                *(update for role in self.roles for update in role.updates(name)),
                *(option.update(name) for option in self.options)]


def offers_prompt_styles(benchmark: Benchmark) -> bool:
    """Whether the form asks which prompts to send: only for a benchmark whose requests come in several styles."""
    return benchmark.request_profile is not None and len(benchmark.prompt_styles) > 1


def build_form(context: AppContext, shown: Benchmark, local_works: bool) -> EvaluateForm:
    """The form's controls, laid out for the benchmark `shown` first; the local model offered only where it
    works (`local_works`): elsewhere there is nothing to choose, so no choice is shown."""
    languages = language_ids(shown.name)
    with gr.Row():
        with gr.Column(scale=3):
            endpoint_kind = gr.Radio(endpoint_kinds(local_works), value=ENDPOINT_KINDS[0], label="Model to evaluate",
                                     visible=local_works)
            local_note = gr.Markdown()
            base_url = gr.Textbox(label=title_of("base_url"), placeholder="http://127.0.0.1:8000/v1")
            api_key = gr.Textbox(label="API key (used for this run only; never stored or shown again)", type="password",
                                 placeholder="sk-… (optional)")
            model = gr.Textbox(label=title_of("model"), placeholder="name as the endpoint knows it")
            api_key_env = gr.Textbox(label=title_of("api_key_env"),
                                     value="" if context.public else "OPENAI_API_KEY", visible=not context.public)
        with gr.Column(scale=3):
            benchmark = gr.Dropdown(benchmark_choices(), value=shown.name, label=title_of("benchmark"))
            language = gr.Dropdown(language_choices(shown.name), value=languages[0] if languages else None, label=title_of("language"),
                                   allow_custom_value=True, visible=bool(languages))
            subsets = gr.Dropdown(subset_choices(shown.name), value=[], multiselect=True, allow_custom_value=True,
                                  label=title_of("subsets"))
            data_source = gr.Radio(data_source_choices(context, shown.name), value="download", label=title_of("data_source"))
            # Every value reaches the page's config, shown or not: no server path on a public deployment.
            # Shown only when "local folder" is chosen: it is read only then.
            data_folder = gr.Textbox(label=title_of("data_folder"), visible=False,
                                     value="" if context.public else context.default_data_dir or "")
            data_note = gr.Markdown(as_markdown(data_line(context, "download", "", shown.name,
                                                          languages[0] if languages else None)))
            options = build_option_controls(shown)
        with gr.Column(scale=2):
            # The defaults are the official experiment (every item, the benchmark's sampling): a run left at
            # them ranks beside the published rows. A public deployment caps the limit, so it starts there.
            # Text, as the temperature: an empty number box is sent as 0, not as "every item".
            limit = gr.Textbox(label=title_of("limit"), value=str(PUBLIC_MAX_LIMIT) if context.public else "", placeholder="all")
            concurrency = gr.Slider(number_range("concurrency").low,
                                    PUBLIC_MAX_CONCURRENCY if context.public else MAX_CONCURRENCY,
                                    value=default_of("concurrency"), step=1, label=title_of("concurrency"))
            request_mode = gr.Radio(list(shown.request_modes), value=shown.request_modes[0],
                                    visible=len(shown.request_modes) > 1,
                                    label=title_of("request_mode"))
            prompt_style = gr.Radio([AUTO_PROMPT_STYLE, *shown.prompt_styles], value=AUTO_PROMPT_STYLE,
                                    visible=offers_prompt_styles(shown),
                                    label=title_of("prompt_style"))
            # Text, so the box shows exactly what is sent: empty is "unset", never a 0 shown as empty.
            temperature = gr.Textbox(label=title_of("temperature"), value="", placeholder="unset")
            advanced = build_advanced_fields()
    roles = build_role_boxes(context, shown)
    fields = {"endpoint_kind": endpoint_kind, "base_url": base_url, "model": model, "api_key_env": api_key_env,
              "benchmark": benchmark, "language": language, "subsets": subsets, "data_source": data_source,
              "data_folder": data_folder, "limit": limit, "concurrency": concurrency, "request_mode": request_mode,
              "prompt_style": prompt_style, "temperature": temperature, **advanced}
    assert tuple(fields) == FIELDS, "the page's fields are ui/run_form.FIELDS"
    return EvaluateForm(fields, roles, options, api_key, local_note, data_note)


def build_advanced_fields() -> dict[str, Any]:
    """The settings people rarely change (RunSettings marks them advanced), folded, each at its declared default:
    text boxes (empty = unset), a tick box for on/off."""
    fields: dict[str, Any] = {}
    with gr.Accordion("Advanced: sampling, timeout, retries, extra request fields, cache", open=False,
                      elem_id="evaluate-advanced"):
        for name in ADVANCED_FIELDS:
            value = advanced_default(name)
            if isinstance(value, bool):
                fields[name] = gr.Checkbox(value=value, label=advanced_label(name), elem_id=f"evaluate-{name}")
            else:
                fields[name] = gr.Textbox(value=value, label=advanced_label(name), placeholder="unset" if value == "" else None,
                                          elem_id=f"evaluate-{name}")
    return fields


# ---- the jobs panel -----------------------------------------------------------------------------

@dataclass
class JobsPanel:
    jobs: gr.Dataframe
    run_id: gr.Textbox
    cancel: gr.Button
    resume: gr.Button
    rerun: gr.Button
    share: gr.Button
    action_message: gr.Markdown
    detail: gr.Markdown
    report: ReportPanel
    # The panel's live refresh: every LIVE_TICK_S while a run it lists goes on, every IDLE_TICK_S otherwise.
    timer: gr.Timer


# Each refresh is a Gradio event, which costs the visitor's browser a tenth to a fifth of a CPU-second on this page
# (Gradio re-reads every component earlier events answered into: ui/tab_select.py) and the server a query: a page
# left open with nothing going on refreshes seldom. A run started elsewhere (the CLI, another tab) shows within
# IDLE_TICK_S; one started here is followed at once.
LIVE_TICK_S = 1.0
IDLE_TICK_S = 5.0


def follow(live: bool) -> gr.Timer:
    """The jobs panel's refresh interval for a page that follows a live run (`live`) or not."""
    return gr.Timer(value=LIVE_TICK_S if live else IDLE_TICK_S)


def build_jobs_panel(context: AppContext) -> JobsPanel:
    gr.Markdown("### Jobs\nRuns keep going when you close the tab; they are listed here after a refresh.")
    # Built once for every visitor: on a public deployment it lists nobody's runs until the page loads.
    jobs = jobs_dataframe(context)
    with gr.Row():
        run_id = gr.Textbox(label="Run id", scale=3)
        cancel = gr.Button("Cancel", size="sm", scale=1)
        resume = gr.Button("Resume", size="sm", scale=1)
        rerun = gr.Button("Re-run errors", size="sm", scale=1)
        share = gr.Button("Share outputs", size="sm", scale=1, visible=context.public)
    action_message, detail = gr.Markdown(), gr.Markdown()
    return JobsPanel(jobs, run_id, cancel, resume, rerun, share, action_message, detail,
                     build_report_panel("Report (official)"), gr.Timer(LIVE_TICK_S))


def wire_jobs_panel(context: AppContext, panel: JobsPanel, visitor: gr.BrowserState, api_key: gr.Textbox) -> None:
    """The panel's buttons, its row selection and its live refresh."""

    # Cancel, Resume and Re-run make a run live (or end it): the panel follows it every second again.
    def cancel_clicked(chosen: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame, gr.Timer]:
        return *act_on_page(context, "cancel", chosen, "", token, request), follow(True)

    def resume_clicked(chosen: str, key: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame, gr.Timer]:
        return *act_on_page(context, "resume", chosen, key, token, request), follow(True)

    def rerun_clicked(chosen: str, key: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame, gr.Timer]:
        return *act_on_page(context, "rerun", chosen, key, token, request), follow(True)

    def share_clicked(chosen: str, token: Any, request: gr.Request) -> tuple[str, pd.DataFrame, Any]:
        return *act_on_page(context, "share", chosen, "", token, request), gr.update()

    def pick(evt: gr.SelectData, table: pd.DataFrame) -> str:
        return picked_value(table, evt.index, RUN_HEADER)

    def show_detail(chosen: str, token: Any, request: gr.Request | None) -> tuple[Any, ...]:
        """The chosen run's detail and report; the action message, about the run chosen before, is cleared."""
        text, stored_report = detail_view(context, chosen, token, request)
        return text, *panel.report.all_updates(stored_report), ""

    refresh_jobs = visitor_jobs(context)

    def tick(chosen: str, last_status: str, token: Any, request: gr.Request) -> tuple[Any, ...]:
        """Live jobs and progress; the report is re-sent only when the chosen run's status changes, so a
        report the user has unfolded is not redrawn every second."""
        text, stored_report = detail_view(context, chosen, token, request)
        status = ""
        if (chosen or "").strip():
            try:
                status = live_status(context, chosen.strip(), owner_of(context, token, request))
            except ToolboardError:
                status = "unknown"
        report_updates = (panel.report.all_updates(stored_report) if status != last_status
                          else [gr.update() for _ in panel.report.all_outputs()])
        table = refresh_jobs(token, request)
        return table, text, *report_updates, status, follow(any_live(table) or status in LIVE_STATUSES)

    outputs = [panel.action_message, panel.jobs, panel.timer]
    panel.cancel.click(cancel_clicked, [panel.run_id, visitor], outputs, api_visibility="private")
    panel.resume.click(resume_clicked, [panel.run_id, api_key, visitor], outputs, api_visibility="private")
    panel.rerun.click(rerun_clicked, [panel.run_id, api_key, visitor], outputs, api_visibility="private")
    panel.share.click(share_clicked, [panel.run_id, visitor], outputs, api_visibility="private")
    panel.jobs.select(pick, [panel.jobs], [panel.run_id], api_visibility="private")
    panel.run_id.change(show_detail, [panel.run_id, visitor],
                        [panel.detail, *panel.report.all_outputs(), panel.action_message], api_visibility="private")
    shown_status = gr.State("")
    panel.timer.tick(tick, [panel.run_id, shown_status, visitor],
                     [panel.jobs, panel.detail, *panel.report.all_outputs(), shown_status, panel.timer],
                     api_visibility="private")


# ---- the tab ------------------------------------------------------------------------------------

# The fields a visitor changes that can change whether the run would be ranked (the endpoint's boxes cannot; the
# local model's choice sets other fields, and is followed up once they are set).
RANKING_FIELDS = ("language", "subsets", "data_source", "data_folder", "limit", "request_mode", "prompt_style",
                  "temperature")


def wire_rank_line(context: AppContext, form: EvaluateForm, line: gr.Markdown, after: list[Any]) -> None:
    """The line before Start, redrawn on each change a visitor makes to a field that can change it, and after
    each event in `after` (those that set several fields: the benchmark switch, the local model's settings,
    the demo): one event each, reading the settings only (no endpoint call), so not queued behind runs.
    A choice is followed on the visitor's pick only (`.input`): an event that sets several fields is followed
    once it has set them all, never read half-way (a Data choice whose options changed before its value would
    be refused)."""

    def redraw(values: dict[Any, Any]) -> str:
        return as_markdown(rank_line(context, form.read(values)))

    inputs = set(form.inputs())
    # A text box on .change: a value pasted or filled in is no .input; the others on the visitor's pick only.
    triggers = [form.fields[name].change if isinstance(form.fields[name], gr.Textbox) else form.fields[name].input
                for name in RANKING_FIELDS] + [option.radio.input for option in form.options]
    gr.on(triggers, redraw, inputs, [line], trigger_mode="always_last", queue=False, show_progress="hidden",
          api_visibility="private")
    for event in after:
        event.then(redraw, inputs, [line], queue=False, show_progress="hidden", api_visibility="private")


def wire_form(context: AppContext, form: EvaluateForm, panel: JobsPanel, visitor: gr.BrowserState,
              start: gr.Button, demo: gr.Button, start_message: gr.Markdown, rank: gr.Markdown) -> None:
    """Start (from the form or the demo preset), the local model's note, and the benchmark switch."""
    preset = demo_preset()
    preset_fields = [name for name in FIELDS if preset and name in preset]

    def start_from_form(values: dict[Any, Any], request: gr.Request) -> tuple[str, str, pd.DataFrame, str, Any]:
        """(start message, the run id to follow, the jobs table, the panel's action message: cleared, as
        it was about another run, and the panel's refresh: every second once a run started)."""
        try:
            owner = owner_of(context, values[visitor], request)
        except ToolboardError as exc:
            return user_error(exc), "", jobs_table(context, None), "", gr.update()
        outcome = start_job(context, form.read(values), values[form.api_key], owner)
        return (as_markdown(outcome["message"]), outcome["run_id"], jobs_table(context, owner), "",
                follow(True) if outcome["run_id"] else gr.update())

    def fill_demo_preset() -> list[Any]:
        return [preset[name] for name in preset_fields] if preset else []

    start_inputs = {visitor, form.api_key, *form.inputs()}
    start_outputs = [start_message, panel.run_id, panel.jobs, panel.action_message, panel.timer]

    def local_model_settings(kind: str) -> list[Any]:
        """The local model's settings when a visitor picks it (the others stay as they were otherwise)."""
        local = kind == LOCAL_DEMO.title
        return [gr.update(value=value) if local else gr.update() for value in LOCAL_DEMO_FORM.values()]

    def switch_benchmark(name: str, language: str | None, source: str, folder: str) -> list[Any]:
        """The form's switch and the Data choice's, in one event: the line before Start reads them both set."""
        updates = form.switch(name, language)
        return [*updates, *data_choice_updates(context, source, folder, name, updates[0].get("value"))]

    form.fields["endpoint_kind"].change(local_model_note, [form.fields["endpoint_kind"]], [form.local_note],
                                        api_visibility="private")
    # On the visitor's pick only (.input): the demo preset sets its own values and must keep them.
    local_set = form.fields["endpoint_kind"].input(local_model_settings, [form.fields["endpoint_kind"]],
                                                   [form.fields[name] for name in LOCAL_DEMO_FORM], api_visibility="private")
    demo_started = demo.click(fill_demo_preset, None, [form.fields[name] for name in preset_fields],
                              api_visibility="private").then(start_from_form, start_inputs, start_outputs,
                                                             api_visibility="private")
    start.click(start_from_form, start_inputs, start_outputs, api_visibility="private")
    fields = form.fields
    switched = fields["benchmark"].change(
        switch_benchmark, [fields["benchmark"], fields["language"], fields["data_source"], fields["data_folder"]],
        [*form.switch_outputs(), fields["data_source"], form.data_note], api_visibility="private")
    wire_data_choice(context, form.fields, form.data_note, on_benchmark=False)
    wire_rank_line(context, form, rank, [switched, local_set, demo_started])


def data_note_text(context: AppContext, chosen: str, folder_text: str, name: str, lang: str | None) -> str:
    """The line under the Data choice: what a run (or a check) will read."""
    return as_markdown(data_line(context, data_source_value(context, name, chosen), folder_text, name, lang or None))


def data_choice_updates(context: AppContext, chosen: str, folder_text: str, name: str, lang: str | None) -> tuple[Any, str]:
    """The Data choice and its line for benchmark `name`: its sources, the chosen one kept when it has it."""
    value = data_source_value(context, name, chosen)
    return (gr.update(choices=data_source_choices(context, name), value=value),
            data_note_text(context, value, folder_text, name, lang))


def wire_data_choice(context: AppContext, fields: dict[str, Any], data_note: gr.Markdown, on_benchmark: bool = True) -> None:
    """The Data choice offers what the chosen benchmark has; the line under it says what will be read;
    the local folder box is shown only when it is what will be read. Used by the Evaluate and Submit tabs
    (`fields` holds "benchmark", "language", "data_source" and "data_folder"). `on_benchmark` False: the
    caller's own benchmark switch sets the choice (data_choice_updates)."""
    benchmark, language, source, folder = (fields[name] for name in ("benchmark", "language", "data_source", "data_folder"))

    def note(chosen: str, folder_text: str, name: str, lang: str | None) -> str:
        return data_note_text(context, chosen, folder_text, name, lang)

    def source_changed(chosen: str, folder_text: str, name: str, lang: str | None) -> tuple[str, Any]:
        return note(chosen, folder_text, name, lang), gr.update(visible=chosen == "local folder" and not context.public)

    def benchmark_changed(chosen: str, folder_text: str, name: str, lang: str | None) -> tuple[Any, str]:
        return data_choice_updates(context, chosen, folder_text, name, lang)

    inputs = [source, folder, benchmark, language]
    source.change(source_changed, inputs, [data_note, folder], api_visibility="private")
    if on_benchmark:
        benchmark.change(benchmark_changed, inputs, [source, data_note], api_visibility="private")
    folder.change(note, inputs, [data_note], api_visibility="private")
    # With the caller's switch setting the language with the Data choice, on the visitor's pick only: a language
    # set by the switch would be read beside a Data choice not yet set.
    (language.change if on_benchmark else language.input)(note, inputs, [data_note], api_visibility="private")


def build(context: AppContext, visitor: gr.BrowserState) -> dict[str, Any]:
    """The tab; `visitor` holds the page's visitor token (see ui/app.py)."""
    shown = all_benchmarks()[0]
    local_works = local_model_works()
    form = build_form(context, shown, local_works)
    preset = demo_preset() if local_works else None
    # Whether the run the form holds would be ranked, for the form as it is first shown, then live.
    rank = gr.Markdown(as_markdown(rank_line(context, form.read({c: c.value for c in form.inputs()}))),
                       elem_id="rank-forecast")
    with gr.Row():
        start = gr.Button("Start evaluation", variant="primary")
        example_of = get_benchmark(preset["benchmark"]).title if preset else ""
        demo = gr.Button(f"Demo: {LOCAL_DEMO.title} on the built-in {example_of} example (no key, no network)",
                         visible=preset is not None)
    start_message = gr.Markdown()
    panel = build_jobs_panel(context)
    wire_form(context, form, panel, visitor, start, demo, start_message, rank)
    wire_jobs_panel(context, panel, visitor, form.api_key)
    declare_runs_api(context, start_job)
    return {"jobs": panel.jobs, "refresh_jobs": visitor_jobs(context)}
