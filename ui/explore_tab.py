"""Explore tab: a run's samples with their verdicts, one sample's full evidence, and the samples that
flipped between two runs. Every piece of model or file text is escaped before it is shown.

On a public deployment a run's raw outputs are shown to its owner, and to everyone once the owner
shares the run (or when it is the operator's); API callers are their owner_token, else their session."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import gradio as gr
import pandas as pd

from evaluators.core.declarations import (
    DIALOGUE_CHECKS,
    ROLLOUT_DIFFERENCES,
    ROLLOUT_FAILED_TURN,
    ROLLOUT_INITIAL_STATE,
    ROLLOUT_MISSING_ITEMS,
    ROLLOUT_TURN_STATES,
)
from evaluators.core.display_names import benchmark_title, error_type_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.limits import MAX_MODEL_NAME_CHARS, cut_text, shown_text
from evaluators.core.registry import MODES, unique_titles
from evaluators.engine.client import request_of_event
from evaluators.engine.redact import shown_as_is
from evaluators.service import explore_queries
from evaluators.service.board import EXAMPLE_DATA_LABEL, run_on_example_data
from evaluators.service.explore import ALL, COMPARE_COLUMNS, SAMPLE_COLUMNS, VERDICTS, kept_choice
from ui import hub_results
from ui.api import ExploreViews, declare_eval_results_api, declare_explore_api
from ui.context import READ_EVENT, AppContext
from ui.dialogue_view import dialogues_html, is_dialogues
from ui.format import escaped_block, picked_value, user_error
from ui.rollout_view import is_rollout, rollout_html
from ui.visitor import owner_of

# The sample tables' headers as the page shows them; the API keeps the keys (SAMPLE_COLUMNS, COMPARE_COLUMNS).
SHOWN_HEADERS = {"sample_id": "Sample", "subset": "Subset", "verdict": "Verdict", "error_type": "Error type",
                 "rule": "Rule", "latency_s": "Latency (s)", "request_error": "Request error", "change": "Change",
                 "first run": "First run", "second run": "Second run"}
SAMPLE_HEADER = SHOWN_HEADERS["sample_id"]  # the column a click on a row reads


def run_choices(context: AppContext, owner: str | None = None) -> list[tuple[str, str]]:
    """Finished runs whose outputs the visitor may see, each named by its id, its benchmark's and language's
    titles, its model and source."""
    return [(f"{run.id} · {benchmark_title(run.benchmark)}"
             f"{' ' + subset_title(run.benchmark, run.language) if run.language else ''} · "
             f"{shown_text(run.model, MAX_MODEL_NAME_CHARS)} ({run.source}"
             f"{', ' + EXAMPLE_DATA_LABEL if run_on_example_data(run) else ''})", run.id)
            for run in explore_queries.visible_runs(context, owner)]


def samples_view(context: AppContext, run_id: str | None, mode: str, subset: str, verdict: str,
                 error_type: str, owner: str | None = None) -> tuple[pd.DataFrame, str]:
    if not run_id:
        return pd.DataFrame(columns=list(SAMPLE_COLUMNS)), "Pick a run."
    try:
        frame = explore_queries.samples(context, run_id, mode or "official", subset or None, verdict or None,
                                        error_type or None, owner)
    except Exception as exc:  # noqa: BLE001
        return pd.DataFrame(columns=list(SAMPLE_COLUMNS)), user_error(exc, context.redact_paths)
    return frame, f"{len(frame)} samples"


def titled_choices(benchmark: str, choices: dict[str, list[str]]) -> dict[str, list[tuple[str, str]]]:
    """A run's filter choices as the page offers them: (display name, id) pairs, "all" as itself; subsets by
    their benchmark's titles, error types made readable, two keys of one title told apart by their key."""
    titles = {"subset": unique_titles({key: subset_title(benchmark, key) for key in choices["subset"] if key != ALL}),
              "error_type": unique_titles({key: error_type_title(key) for key in choices["error_type"] if key != ALL})}
    return {name: [(ALL, ALL) if key == ALL else (titles[name][key], key) for key in keys]
            for name, keys in choices.items()}


def _verdict_shown(value: Any) -> Any:
    """A run's verdict in the flipped-samples table: right, wrong, or the error type's display name."""
    return value if not isinstance(value, str) or value in ("", "right", "wrong") else error_type_title(value)


def shown_table(frame: pd.DataFrame, benchmark: str, run_columns: tuple[str, ...] = ()) -> pd.DataFrame:
    """A samples or flipped-samples table as the page shows it: subsets and error types by their display names
    (the sample id keeps the subset's key for searching), headers in words; `run_columns` hold each run's
    verdict (the flipped table)."""
    shown = frame.copy()
    if "subset" in shown:
        shown["subset"] = shown["subset"].map(lambda key: subset_title(benchmark, key) if isinstance(key, str) and key else key)
    if "error_type" in shown:
        shown["error_type"] = shown["error_type"].map(lambda key: error_type_title(key) if isinstance(key, str) and key else key)
    for column in run_columns:
        shown[column] = shown[column].map(_verdict_shown)
    return shown.rename(columns=SHOWN_HEADERS)


def _audio_elided(content: Any) -> Any:
    """Message content with each audio part's base64 data replaced by its length (a request as sent
    in audio mode holds whole recordings)."""
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        audio = part.get("input_audio") if isinstance(part, dict) else None
        if isinstance(audio, dict) and isinstance(audio.get("data"), str):
            part = {**part, "input_audio": {**audio, "data": f"<{len(audio['data']):,} characters of base64 audio>"}}
        parts.append(part)
    return parts


def request_besides_messages(request: Any) -> Any:
    """A stored request (see store.Evidence) without its messages, shown beside them: how many requests,
    and the model, tools, tool choice and sampling sent (or the note kept instead)."""
    if not isinstance(request, dict):
        return None
    shown = {key: value for key, value in request.items() if key != "body"}
    body = request.get("body")
    if isinstance(body, dict):
        shown["body"] = {key: value for key, value in body.items() if key != "messages"}
    return shown


def turns_html(title: str, turns: list[dict[str, Any]] | None) -> str:
    """Chat messages or a transcript ({"role", "content"} turns, e.g. a rollout's) as escaped blocks."""
    if not turns:
        return ""
    blocks = []
    for turn in turns:
        role = html.escape(str(turn.get("role", "?")))
        content = _audio_elided(turn.get("content", ""))
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=1, default=repr)
        if turn.get("tool_calls"):  # an assistant turn of a request's history that called tools
            calls = json.dumps(turn["tool_calls"], ensure_ascii=False, indent=1, default=repr)
            text = calls if content is None else f"{text}\n{calls}"
        blocks.append(f"<div class='turn turn-{role}'><b>{role}</b><pre style='white-space:pre-wrap'>"
                      f"{html.escape(text)}</pre></div>")
    return f"<h4>{html.escape(title)}</h4>" + "".join(blocks)


def evidence_html(item: dict[str, Any]) -> str:
    """One piece of a benchmark's evidence, shown as its declaration says (see EvidenceKind): chat turns, text,
    code or JSON; a value not of the declared shape is shown as JSON. Always escaped."""
    value, title = item["value"], str(item["title"])
    if item["render"] == "transcript" and isinstance(value, list) and all(isinstance(turn, dict) for turn in value):
        return turns_html(title, value)
    if item["render"] == "code" and isinstance(value, str):
        return f"<h4>{html.escape(title)}</h4><pre><code>{html.escape(value)}</code></pre>"
    if item["render"] == "text" and not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=repr)
    return escaped_block(title, value)


# What a rollout shows inside its turns (the state it starts from, the failed turn's checks): not shown again apart.
ROLLOUT_CONTEXT = {"initial_state": ("prediction", ROLLOUT_INITIAL_STATE), "failed_turn": ("score", ROLLOUT_FAILED_TURN),
                   "differences": ("score", ROLLOUT_DIFFERENCES), "missing_items": ("score", ROLLOUT_MISSING_ITEMS),
                   "turn_states": ("score", ROLLOUT_TURN_STATES)}


def evidence_parts(items: list[dict[str, Any]], checker_detail: str = "") -> list[str]:
    """A sample's evidence items as HTML blocks, in order. The first dialogues-rendered item of the render's shape is
    shown with the score's per-dialogue checks inside it. The first rollout-rendered item of the render's shape is
    shown as a rollout, with the evidence it reads (ROLLOUT_CONTEXT) inside it and the checker's detail at its failed
    turn; every other item as evidence_html shows it (another rollout-rendered one as JSON)."""
    dialogues = next((item for item in items if item["render"] == "dialogues" and is_dialogues(item["value"])), None)
    if dialogues is not None:
        checks = {(item["source"], item["key"]): item["value"] for item in items}.get(("score", DIALOGUE_CHECKS))
        return [dialogues_html(str(item["title"]), item["value"], checks) if item is dialogues else evidence_html(item)
                for item in items if item is dialogues or (item["source"], item["key"]) != ("score", DIALOGUE_CHECKS)]
    rollout = next((item for item in items if item["render"] == "rollout" and is_rollout(item["value"])), None)
    if rollout is None:
        return [evidence_html(item) for item in items]
    found = {(item["source"], item["key"]): item["value"] for item in items}
    context = {name: found.get(where) for name, where in ROLLOUT_CONTEXT.items()}
    used = set(ROLLOUT_CONTEXT.values())
    return [rollout_html(str(rollout["title"]), rollout["value"], failure_note=checker_detail, **context)
            if item is rollout else evidence_html(item)
            for item in items if item is rollout or (item["source"], item["key"]) not in used]


def events_html(events: list[Any], redact: Callable[[str], str] = shown_as_is, prompt: Any = None) -> str:
    """Every model call made for the sample (the tested model's, a judge's, a simulated user's), each folded:
    its role and answer in the summary, the request's messages and the rest inside; messages equal to the sample's
    `prompt` (shown once, apart) are not printed again. Always escaped; a call's error through `redact` (it can name
    a server file, as a request error can)."""
    if not events:
        return ""
    parts = []
    for number, event in enumerate(events, 1):
        if not isinstance(event, dict):
            continue
        if isinstance(event.get("error"), str):
            event = {**event, "error": redact(event["error"])}
        answer = event.get("response")
        response = answer if isinstance(answer, dict) else {}
        said = event.get("error") or response.get("text") or (json.dumps(response.get("tool_calls"), ensure_ascii=False)
                                                               if response.get("tool_calls") else event.get("note") or "")
        summary = f"{number}. {event.get('role') or '?'}{' (cached)' if event.get('cached') else ''}: {cut_text(str(said), 160)}"
        request = request_of_event(events, number)
        messages = request.get("messages") if isinstance(request, dict) else None
        repeated = isinstance(messages, list) and bool(messages) and messages == prompt
        inside = ["<p>Request messages: the prompt messages, as shown above.</p>" if repeated else
                  turns_html("Request messages", messages if isinstance(messages, list) else None),
                  escaped_block("Request, besides its messages", request_besides_messages({"body": request})
                                if isinstance(request, dict) else request),
                  escaped_block("Response", event.get("response")), escaped_block("Error", event.get("error"))]
        parts.append(f"<details><summary>{html.escape(summary)}</summary>{''.join(inside)}</details>")
    return f"<h4>Model calls ({len(parts)})</h4>" + "".join(parts)


def detail_html(context: AppContext, run_id: str | None, sample_id: str | None, mode: str,
                owner: str | None = None) -> str:
    if not run_id or not sample_id:
        return "<p>Pick a sample in the table.</p>"
    try:
        detail = explore_queries.sample(context, run_id, sample_id.strip(), mode or "official", owner)
    except Exception as exc:  # noqa: BLE001
        return f"<p>⚠️ {html.escape(context.redact_paths(str(exc)))}</p>"
    verdict = html.escape(str(detail["verdict"]))
    benchmark, subset, error_type = str(detail.get("benchmark") or ""), str(detail["subset"] or ""), detail["error_type"]
    # Display names; the keys stay in a tooltip, for searching the data or the code.
    subset_shown = (f"<span title='{html.escape(subset)}'>{html.escape(subset_title(benchmark, subset))}</span>"
                    if subset else "—")
    error_shown = (f"<span title='{html.escape(str(error_type))}'>{html.escape(error_type_title(str(error_type)))}</span>"
                   if error_type else "—")
    head = (f"<h3>{html.escape(detail['sample_id'])} — {verdict}</h3>"
            f"<p>Subset: {subset_shown}; error type: {error_shown}; decided by rule "
            f"<code>{html.escape(str(detail['rule'] or '—'))}</code></p>")
    # Evidence first: the verdict and why, what the model did (its answer, the transcript with the state it changed),
    # the gold answer; then, folded and printed once, what it was given (the prompt with every tool's docs, the
    # request as sent) and every model call.
    answer = "".join(filter(None, [
        escaped_block("Raw output", detail["raw_output"]),
        escaped_block("Native tool calls", detail["tool_calls"]),
        escaped_block("Decoded calls", detail["decoded"]),
        *evidence_parts(detail["evidence"], str(detail["detail"] or "")),
    ]))
    given = "".join(filter(None, [
        turns_html("Prompt messages" + (f" ({context.redact_paths(detail['prompt_note'])})" if detail["prompt_note"] else ""),
                   detail["prompt_messages"]),
        escaped_block("Request as sent, besides its messages (how many requests; model, tools, sampling)",
                      request_besides_messages(detail["request_as_sent"])),
        escaped_block("Request profile of the run (prompt style, sampling sent, known differences)",
                      detail["request_profile"]),
    ]))
    calls = events_html(detail["events"], context.redact_paths, detail["prompt_messages"])
    # (anchor, its jump link, title when folded, content, shown open)
    sections = [("explore-answer", "the model's answer", "", answer, True),
                ("explore-gold", "the expected answer", "", escaped_block("Gold answer", detail["gold"]), True),
                ("explore-metrics", "metrics", "", escaped_block("Per-sample metrics", detail["metrics"]), True),
                ("explore-given", "prompt and tool docs", "What the model was given: the prompt with every tool's docs, "
                 "the request as sent", given, False),
                ("explore-calls", "every model call", "Every model call", calls, False)]
    present = [section for section in sections if section[3]]
    jumps = " · ".join(f"<a href='#{anchor}'>{html.escape(link)}</a>" for anchor, link, _, _, _ in present)
    parts = [
        head,
        escaped_block("Checker detail", detail["detail"]),
        escaped_block("Request error", detail["request_error"] and context.redact_paths(detail["request_error"])),
        f"<p class='explore-jumps'>Jump to: {jumps}</p>" if jumps else "",
        *(f"<div id='{anchor}'>{inner}</div>" if shown else
          f"<details id='{anchor}'><summary><b>{html.escape(title)}</b> (folded)</summary>{inner}</details>"
          for anchor, _, title, inner, shown in present),
    ]
    return "".join(part for part in parts if part)


def filters_view(context: AppContext, run_id: str | None, mode: str, owner: str | None = None) -> dict[str, list[str]]:
    """The subset and error type choices of a run the visitor may see; only "all" otherwise (the sample
    table says why)."""
    if not run_id:
        return {"subset": [ALL], "error_type": [ALL]}
    try:
        return explore_queries.sample_filters(context, run_id, mode or "official", owner)
    except Exception:  # noqa: BLE001 - samples_view reports the same problem
        return {"subset": [ALL], "error_type": [ALL]}


def flipped_detail_html(context: AppContext, run_a: str | None, run_b: str | None, sample_id: str | None, mode: str,
                        owner: str | None = None) -> str:
    """A flipped sample's evidence in both runs, side by side (each as the single-run view shows it)."""
    if not sample_id:
        return "<p>Click a flipped sample to see its evidence in both runs.</p>"
    columns = "".join(
        f"<div style='flex:1 1 0;min-width:0'><h3>{label} run <code>{html.escape(str(run_id or '—'))}</code></h3>"
        f"{detail_html(context, run_id, sample_id, mode, owner)}</div>"
        for label, run_id in (("First", run_a), ("Second", run_b)))
    return f"<div style='display:flex;gap:1.5em;align-items:flex-start'>{columns}</div>"


def compare_view(context: AppContext, run_a: str | None, run_b: str | None, mode: str,
                 owner: str | None = None) -> tuple[pd.DataFrame, str]:
    """The flipped samples of two runs and their note; a refused comparison is an empty table (its columns
    named) and the reason, never the previous comparison."""
    if not run_a or not run_b:
        return pd.DataFrame(columns=list(COMPARE_COLUMNS)), "Pick two runs."
    try:
        frame = explore_queries.flipped_samples(context, run_a, run_b, mode or "official", owner)
    except Exception as exc:  # noqa: BLE001
        return pd.DataFrame(columns=list(COMPARE_COLUMNS)), user_error(exc, context.redact_paths)
    fixed = int((frame["change"] == "fixed").sum()) if len(frame) else 0
    return frame, f"{len(frame)} samples flipped: {fixed} fixed, {len(frame) - fixed} broken (second run against first)."


def compared_pair(run_a: str | None, run_b: str | None, note: str) -> list[str]:
    """The two runs a comparison was made of (what a click on a flipped sample opens), none when it was refused."""
    return [run_a, run_b] if run_a and run_b and "samples flipped" in note else []


def visitor_or_none(context: AppContext, token: Any, request: gr.Request | None) -> str | None:
    """The visitor, or nobody (runs everyone may see) when the token is not valid."""
    try:
        return owner_of(context, token, request)
    except ToolboardError:
        return None


def samples_as(context: AppContext, run_id: str | None, mode: str, subset: str, verdict: str, error_type: str,
               token: Any, request: gr.Request | None) -> tuple[pd.DataFrame, str]:
    """The samples table and its note, for whoever sends the request."""
    try:
        owner = owner_of(context, token, request)
    except ToolboardError as exc:
        return pd.DataFrame(columns=list(SAMPLE_COLUMNS)), user_error(exc, context.redact_paths)
    return samples_view(context, run_id, mode, subset, verdict, error_type, owner)


def sample_as(context: AppContext, run_id: str | None, chosen: str | None, mode: str, token: Any,
              request: gr.Request | None) -> str:
    """One sample's evidence as escaped HTML, for whoever sends the request."""
    try:
        owner = owner_of(context, token, request)
    except ToolboardError as exc:
        return f"<p>⚠️ {html.escape(str(exc))}</p>"
    return detail_html(context, run_id, chosen, mode, owner)


def flipped_as(context: AppContext, first: str | None, second: str | None, mode: str, token: Any,
               request: gr.Request | None) -> tuple[pd.DataFrame, str]:
    """The flipped samples of two runs and their note, for whoever sends the request."""
    try:
        owner = owner_of(context, token, request)
    except ToolboardError as exc:
        return pd.DataFrame(), user_error(exc, context.redact_paths)
    return compare_view(context, first, second, mode, owner)


def flipped_sample_as(context: AppContext, first: str | None, second: str | None, chosen: str | None, mode: str,
                      token: Any, request: gr.Request | None) -> str:
    """A flipped sample's evidence in both runs, for whoever sends the request."""
    try:
        owner = owner_of(context, token, request)
    except ToolboardError as exc:
        return f"<p>⚠️ {html.escape(str(exc))}</p>"
    return flipped_detail_html(context, first, second, chosen, mode, owner)


def build(context: AppContext, visitor: gr.BrowserState) -> dict[str, Any]:
    """The tab; `visitor` holds the page's visitor token (see ui/app.py). Returns `reload` and its outputs,
    `run_controls`, for the page's load event (the run pickers, then the chosen run's filters and samples),
    and `refresh_pickers` and its outputs, `run_pickers`, to list new runs when the tab is opened."""
    # Built once for every visitor: on a public deployment only runs everyone may see, until the page loads.
    choices = run_choices(context)
    with gr.Row():
        run = gr.Dropdown(choices, value=choices[0][1] if choices else None, label="Run", scale=4, allow_custom_value=True)
        mode = gr.Radio(list(MODES), value="official", label="Scoring mode", scale=1)
        reload_runs = gr.Button("Reload runs", size="sm", scale=1)
    with gr.Row():
        # Subsets and error types: those of the chosen run's verdicts, filled when a run (or mode) is chosen.
        subset = gr.Dropdown([ALL], value=ALL, label="Subset")
        verdict = gr.Dropdown([ALL, *VERDICTS], value=ALL, label="Verdict")
        error_type = gr.Dropdown([ALL], value=ALL, label="Error type")
    count = gr.Markdown()
    hub_results.build(context, run)  # the operator's only: the run's Hub eval results, as a pull request
    samples = gr.Dataframe(shown_table(pd.DataFrame(columns=list(SAMPLE_COLUMNS)), ""), interactive=False, max_height=400, label="Samples")
    sample_id = gr.Textbox(label="Sample id")
    detail = gr.HTML()
    gr.Markdown("### Compare two runs")
    with gr.Row():
        run_a = gr.Dropdown(choices, label="First run", allow_custom_value=True)
        run_b = gr.Dropdown(choices, label="Second run", allow_custom_value=True)
        compare = gr.Button("Compare", size="sm")
    flipped_note = gr.Markdown()
    flipped = gr.Dataframe(shown_table(pd.DataFrame(columns=list(COMPARE_COLUMNS)), ""), interactive=False, max_height=360,
                           label="Flipped samples")
    flipped_detail = gr.HTML()
    # The runs the table shows (the pickers may change after): [first, second], or [] when none is shown.
    compared = gr.State([])

    def owner_or_none(token: Any, request: gr.Request | None) -> str | None:
        return visitor_or_none(context, token, request)

    def list_samples(run_id: str | None, mode: str, subset: str, verdict: str, error_type: str, token: Any,
                     request: gr.Request) -> tuple[pd.DataFrame, str]:
        return samples_as(context, run_id, mode, subset, verdict, error_type, token, request)

    def list_shown_samples(run_id: str | None, mode: str, subset: str, verdict: str, error_type: str, token: Any,
                           request: gr.Request) -> tuple[pd.DataFrame, str]:
        """The samples table as the page shows it (list_samples is also the API, which keeps the keys)."""
        frame, note = list_samples(run_id, mode, subset, verdict, error_type, token, request)
        return shown_table(frame, explore_queries.run_benchmark(context, run_id)), note

    def run_view(run_id: str | None, mode: str, subset: str, verdict: str, error_type: str,
                 owner: str | None) -> tuple[Any, Any, pd.DataFrame, str]:
        """The chosen run's filter choices by display name (keeping the current ones it still has) and its samples."""
        found = filters_view(context, run_id, mode, owner)
        subset, error_type = kept_choice(subset, found["subset"]), kept_choice(error_type, found["error_type"])
        frame, note = samples_view(context, run_id, mode, subset, verdict, error_type, owner)
        benchmark = explore_queries.run_benchmark(context, run_id)
        titled = titled_choices(benchmark, found)
        return (gr.update(choices=titled["subset"], value=subset), gr.update(choices=titled["error_type"], value=error_type),
                shown_table(frame, benchmark), note)

    def choose_run(run_id: str | None, mode: str, subset: str, verdict: str, error_type: str, token: Any,
                   request: gr.Request) -> tuple[Any, Any, pd.DataFrame, str]:
        try:
            owner = owner_of(context, token, request)
        except ToolboardError as exc:
            empty = gr.update(choices=[ALL], value=ALL)
            return (empty, empty, shown_table(pd.DataFrame(columns=list(SAMPLE_COLUMNS)), ""),
                    user_error(exc, context.redact_paths))
        return run_view(run_id, mode, subset, verdict, error_type, owner)

    def show_sample(run_id: str | None, chosen: str | None, mode: str, token: Any, request: gr.Request) -> str:
        return sample_as(context, run_id, chosen, mode, token, request)

    def show_flipped(first: str | None, second: str | None, mode: str, token: Any,
                     request: gr.Request) -> tuple[pd.DataFrame, str]:
        return flipped_as(context, first, second, mode, token, request)

    def show_flipped_sample(first: str | None, second: str | None, chosen: str | None, mode: str, token: Any,
                            request: gr.Request) -> str:
        return flipped_sample_as(context, first, second, chosen, mode, token, request)

    # A new run or mode changes what the filters offer; a filter the visitor picks only re-filters.
    filters = [run, mode, subset, verdict, error_type]
    for control in (run, mode):
        control.change(choose_run, [*filters, visitor], [subset, error_type, samples, count], api_visibility="private",
                       **READ_EVENT)
    for control in (subset, verdict, error_type):
        control.input(list_shown_samples, [*filters, visitor], [samples, count], api_visibility="private", **READ_EVENT)

    declare_explore_api(context, ExploreViews(
        samples=list_samples, filters=filters_view, sample=show_sample, compare=show_flipped,
        compare_sample=show_flipped_sample, runs=run_choices))
    declare_eval_results_api(context)

    def pick(evt: gr.SelectData, table: pd.DataFrame) -> str:
        return picked_value(table, evt.index, SAMPLE_HEADER)

    def pick_flipped(evt: gr.SelectData, table: pd.DataFrame, pair: list[str], mode: str, token: Any,
                     request: gr.Request) -> str:
        first, second = pair if len(pair) == 2 else (None, None)
        return show_flipped_sample(first, second, picked_value(table, evt.index, SAMPLE_HEADER), mode, token, request)

    def compare_runs_shown(first: str | None, second: str | None, mode: str, token: Any,
                           request: gr.Request) -> tuple[pd.DataFrame, str, list[str], str]:
        """The comparison, the runs it is of, and the evidence pane emptied (it showed the previous comparison)."""
        frame, note = show_flipped(first, second, mode, token, request)
        shown = shown_table(frame, explore_queries.run_benchmark(context, first), tuple(frame.columns[3:]))
        return shown, note, compared_pair(first, second, note), flipped_detail_html(context, None, None, None, mode)

    samples.select(pick, [samples], [sample_id], api_visibility="private", **READ_EVENT)
    sample_id.change(show_sample, [run, sample_id, mode, visitor], detail, api_visibility="private", **READ_EVENT)
    compare.click(compare_runs_shown, [run_a, run_b, mode, visitor], [flipped, flipped_note, compared, flipped_detail],
                  api_visibility="private", **READ_EVENT)
    flipped.select(pick_flipped, [flipped, compared, mode, visitor], flipped_detail, api_visibility="private",
                   **READ_EVENT)

    def fresh_choices(token: Any, request: gr.Request) -> list[tuple[str, str]]:
        return run_choices(context, owner_or_none(token, request))

    def reload(token: Any, request: gr.Request) -> tuple[Any, ...]:
        """On page load: the visitor's runs, the newest chosen, with its filters (all) and samples."""
        owner = owner_or_none(token, request)
        fresh = run_choices(context, owner)
        first = fresh[0][1] if fresh else None
        return (gr.update(choices=fresh, value=first), gr.update(choices=fresh), gr.update(choices=fresh),
                gr.update(value=ALL), *run_view(first, "official", ALL, ALL, ALL, owner))

    def reload_keeping(current: str | None, mode: str, subset: str, verdict: str, error_type: str, token: Any,
                       request: gr.Request) -> tuple[Any, ...]:
        """The button: runs listed again, the chosen one kept while it is still listed (else the newest)."""
        owner = owner_or_none(token, request)
        fresh = run_choices(context, owner)
        chosen = current if current in {run_id for _, run_id in fresh} else (fresh[0][1] if fresh else None)
        return (gr.update(choices=fresh, value=chosen), gr.update(choices=fresh), gr.update(choices=fresh),
                *run_view(chosen, mode, subset, verdict, error_type, owner))

    def refresh_choices(token: Any, request: gr.Request) -> Any:
        """Runs finished since the page loaded, offered when a run picker gets focus; its choice is kept."""
        return gr.update(choices=fresh_choices(token, request))

    def refresh_pickers(token: Any, request: gr.Request) -> tuple[Any, Any, Any]:
        """Every run picker's choices, choices kept (for the tab's select event: see ui/app.py). Lists
        refreshed before a picker opens keep its check mark on the chosen run, which an open list does not."""
        fresh = fresh_choices(token, request)
        return gr.update(choices=fresh), gr.update(choices=fresh), gr.update(choices=fresh)

    reload_runs.click(reload_keeping, [*filters, visitor], [run, run_a, run_b, subset, error_type, samples, count],
                      api_visibility="private", **READ_EVENT)
    for picker in (run, run_a, run_b):
        picker.focus(refresh_choices, [visitor], [picker], api_visibility="private", show_progress="hidden",
                     **READ_EVENT)
    return {"reload": reload, "run_controls": [run, run_a, run_b, verdict, subset, error_type, samples, count],
            "refresh_pickers": refresh_pickers, "run_pickers": [run, run_a, run_b]}
