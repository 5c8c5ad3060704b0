"""A run's headline figures as the Hugging Face Hub's `.eval_results/*.yaml` entries, for a model repo: one file
per run (`<stem>[_<language>].yaml`, the stem its benchmark declares in `Benchmark.hub`), one entry per Hub task the
benchmark declares (its dataset id and task id, the board figure as a percent, the day the run finished, a source
link to the results dataset the runs are pushed to when there is one, and notes saying how the figure was made).
Written with huggingface_hub's own types (EvalResultEntry, eval_result_entries_to_yaml), so that the file reads
back with parse_eval_result_entries as the board shows it.

Only a run that ranks on the board exports: finished, evaluated here, the benchmark's ranked experiment (the same
rule as the board's, `board_table.apart_reason`), every declared figure present. Anything else is refused with the
reason, before anything is written. `open_pull_request` sends the files to a model repo as one pull request
(create_commit(create_pr=True)), with the operator's token."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.core.declarations import HubBenchmark
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.engine.redact import redact
from evaluators.engine.store import Store
from evaluators.engine.store.rows import RunRow
from evaluators.publish.board_table import apart_reason, run_on_example_data

FOLDER = ".eval_results"
MODE = "official"
SOURCE_NAME = "toolboard results dataset"
HUB_SITE = "https://huggingface.co"
DECIMALS = 2  # a percent to two places: what the Hub's leaderboards print, and exact for n up to 10,000


class NotExportable(ToolboardError):
    """The run cannot be written as Hub eval results; the message says why."""


@dataclass(frozen=True)
class EvalResultFile:
    path: str  # in the model repo: .eval_results/<name>.yaml
    text: str  # the YAML
    entries: list[dict[str, Any]]  # as written (eval_result_entries_to_yaml)


def exportable_run(store: Store, run_id: str) -> tuple[RunRow, Benchmark, HubBenchmark, dict[str, Any]]:
    """The run, its benchmark and Hub declaration and its official report; NotExportable saying why not."""
    run = store.get_run(run_id)
    try:
        benchmark = get_benchmark(run.benchmark)
    except ToolboardError:
        raise NotExportable(f"run {run.id}: benchmark {run.benchmark!r} is not installed here") from None
    if benchmark.hub is None:
        raise NotExportable(f"run {run.id}: no Hub benchmark dataset measures {benchmark.title}'s experiment, so "
                            "there is no task to enter its figures under")
    if run.status != "finished":
        raise NotExportable(f"run {run.id} is {run.status}, not finished")
    if run.source != "endpoint":
        raise NotExportable(f"run {run.id} is an upload: how its predictions were made is not known, so its "
                            "figures are not entered as a model's result")
    if run_on_example_data(run):
        raise NotExportable(f"run {run.id} read the built-in example data, which measures no model")
    report = store.load_report(run.id, MODE)
    if report is None:
        raise NotExportable(f"run {run.id} has no {MODE} report")
    reason = apart_reason(run, benchmark, store.run_totals(run.id), report)
    if reason:
        raise NotExportable(f"run {run.id} is not the board's ranked experiment, so its figures are not entered as "
                            f"the benchmark's: {reason}")
    return run, benchmark, benchmark.hub, report


def eval_result_file(store: Store, run_id: str, source_repo: str | None = None,
                     hub_site: str = HUB_SITE) -> EvalResultFile:
    """The run's `.eval_results` file (NotExportable when the run cannot be written; see the module docstring).
    `source_repo`: the results dataset the run was pushed to (linked as the entries' source)."""
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    run, benchmark, hub, report = exportable_run(store, run_id)
    views = benchmark.board_layout().run_values(report)
    missing = [f"{task.task_id} ({task.view} {task.column})" for task in hub.tasks
               if not _is_share((views.get(task.view) or {}).get(task.column))]
    if missing:
        raise NotExportable(f"run {run.id} has no figure for {', '.join(missing)}: a partial run is not exported")
    notes = run_notes(run, hub)
    day = _day(run.finished_at)
    entries = [EvalResultEntry(
        dataset_id=hub.dataset_id, task_id=task.task_id,
        value=round(float(views[task.view][task.column]) * 100, DECIMALS), date=day,
        source_url=f"{hub_site}/datasets/{source_repo}" if source_repo else None,
        source_name=f"{SOURCE_NAME} (run {run.id})" if source_repo else None, notes=notes)
        for task in hub.tasks]
    written = eval_result_entries_to_yaml(entries)
    return EvalResultFile(path=f"{FOLDER}/{file_name(run, benchmark, hub)}", text=_yaml(written), entries=written)


def file_name(run: RunRow, benchmark: Benchmark, hub: HubBenchmark) -> str:
    """`<stem>.yaml`, or `<stem>_<language>.yaml` for a benchmark run in one of several languages."""
    variant = run.language if run.language and len(benchmark.languages) > 1 else None
    return f"{hub.file_stem}_{variant}.yaml" if variant else f"{hub.file_stem}.yaml"


def run_notes(run: RunRow, hub: HubBenchmark) -> str:
    """How the figure was made, beside the Hub task's own definition: the tool, the model's settings where they are
    not the benchmark's (request mode, prompt style, sampling), the models of the run's roles, its options and what
    the benchmark says of the experiment (hub.setup)."""
    config = run.config
    model = config.get("model") or {}
    parts = [f"toolboard run {run.id}", f"{model.get('request_mode', 'prompt')} mode"]
    if model.get("request_mode") == "tools":
        parts[-1] = "native tools"
    if model.get("prompt_style") not in (None, "official"):
        parts.append(f"{model['prompt_style']} prompts")
    for name in ("temperature", "top_p", "max_tokens"):
        if model.get(name) is not None:
            parts.append(f"{name} {model[name]}")
    for name, endpoint in sorted((config.get("roles") or {}).items()):
        parts.append(f"{name}: {(endpoint or {}).get('model')}")
    for name, value in sorted((config.get("options") or {}).items()):
        parts.append(f"{name} {value}")
    if hub.setup:
        parts.append(hub.setup)
    return "; ".join(parts)


def write_eval_results(store: Store, run_id: str, folder: Path, source_repo: str | None = None) -> Path:
    """Write the run's file under `folder/.eval_results/`; the path written. The file appears only when whole."""
    found = eval_result_file(store, run_id, source_repo)
    target = Path(folder) / found.path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        partial.write_text(found.text, encoding="utf-8")
        partial.replace(target)
    except OSError as exc:
        raise ToolboardError(f"{target}: cannot be written ({exc.strerror or type(exc).__name__})") from None
    return target


def open_pull_request(store: Store, run_id: str, model_repo: str, token: str, source_repo: str | None = None,
                      endpoint: str | None = None) -> str:
    """Open one pull request on the model repo adding the run's file; its URL. The description names the run
    and its settings. Hub errors are one line naming the repo (never the token)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    found = eval_result_file(store, run_id, source_repo)
    run = store.get_run(run_id)
    description = (f"Adds `{found.path}`: the figures of toolboard run {run.id} ({run.benchmark}, finished "
                   f"{_day(run.finished_at)}).\n\nNotes: {found.entries[0].get('notes', '')}\n")
    api = HfApi(endpoint=endpoint, token=token)
    try:
        commit = api.create_commit(
            model_repo, [CommitOperationAdd(path_in_repo=found.path, path_or_fileobj=found.text.encode())],
            commit_message=f"Add {run.benchmark} eval results (toolboard run {run.id})", commit_description=description,
            repo_type="model", create_pr=True)
    except Exception as error:  # noqa: BLE001 - network, auth, a missing repo: one line naming the repo
        message = redact(str(error), [token])
        raise ToolboardError(f"{model_repo}: the pull request could not be opened: "
                             f"{type(error).__name__}: {message.splitlines()[0] if message else ''}") from None
    return str(commit.pr_url or commit.commit_url)


def _is_share(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _day(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.datetime.fromtimestamp(timestamp, datetime.UTC).date().isoformat()


def _yaml(entries: list[dict[str, Any]]) -> str:
    import yaml

    return str(yaml.safe_dump(entries, sort_keys=False, allow_unicode=True))
