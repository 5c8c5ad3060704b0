"""What the Hugging Face Hub already reports for this board's benchmarks: eval results entries read from the Hub,
shown as a fourth kind of row, *Hub-reported* (source `hub-reported`), never ranked. Pure data (huggingface_hub);
no gradio. Off unless the operator sets TOOLBOARD_HUB_REPORTED=1; the app reads it in the background at start (a
Hub that is slow or down never delays the board: it shows what it has, and when it was last read).

Where entries come from, for each benchmark that declares its Hub benchmark dataset (`Benchmark.hub`):
- the dataset's leaderboard (`HfApi.get_dataset_leaderboard`): each entry's model, value, the Hub's badge
  (`verified`; `community` when it comes from an open pull request), its source link and notes;
- the `.eval_results/*.yaml` files of the models whose facts (leaderboard_data/models.json `link`) name a Hub repo,
  parsed with `parse_eval_result_entries`.

An entry is a row only when it names one of the declared datasets and tasks (a leaderboard entry naming no task
counts for a dataset of one task), with a value that is a percent (0..100); a file larger than MAX_FILE_BYTES or
not in the format is skipped. Every skip is counted by its reason, never shown as a row. Each read is bounded in
time (TIMEOUT_SECONDS per request) and in what it takes (MAX_ENTRIES). Texts are kept as given: the board escapes
them where it shows them."""

from __future__ import annotations

import datetime
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.core.declarations import HubBenchmark
from evaluators.core.environment import read_flag
from evaluators.core.leaderboard import LEADERBOARD_DIR, load_model_facts
from evaluators.core.registry import benchmark_names, get_benchmark
from evaluators.engine.redact import redact
from evaluators.publish.board_table import APART_COLUMN, NEWEST_COLUMN, ORIGIN_COLUMN, UPDATED_COLUMN
from evaluators.publish.hub_sync import endpoint_from_env, token_from_env

SOURCE = "hub-reported"
ORIGIN = "Hugging Face Hub"
BADGE_COLUMN = "hub_badge"
SOURCE_URL_COLUMN = "hub_source"
VERIFIED, COMMUNITY = "verified", "community"
APART = "Hub-reported: how the figure was made is not known here, so it is not ranked beside the board's rows"
TIMEOUT_SECONDS = 10.0
MAX_FILE_BYTES = 64 * 1024
MAX_ENTRIES = 5000
MAX_PROBLEMS_SHOWN = 3  # of the sources not read, named in the board's line (the log has them all)
FOLDER = ".eval_results/"
HUB_MODEL_LINK = "https://huggingface.co/"


@dataclass(frozen=True)
class HubReportedLoad:
    """One read: rows by benchmark, skipped entries counted by reason, problems (a repo or dataset that could not be
    read), when it was read (None: never) and its version (0: nothing read yet)."""

    rows: Mapping[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    skipped: tuple[tuple[str, int], ...] = ()
    problems: tuple[str, ...] = ()
    read_at: float | None = None
    version: int = 0

    def rows_for(self, benchmark: str) -> list[dict[str, Any]]:
        return [dict(row) for row in self.rows.get(benchmark, ())]

    @property
    def skipped_count(self) -> int:
        return sum(count for _, count in self.skipped)

    def summary(self) -> str:
        """One line: how many rows, read when, how many entries skipped and why, how many problems."""
        if self.read_at is None:
            return "Hub-reported results: not read yet."
        rows = sum(len(found) for found in self.rows.values())
        when = datetime.datetime.fromtimestamp(self.read_at, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        text = f"Hub-reported results: {rows} row{'s' if rows != 1 else ''}, read {when}"
        if self.skipped:
            text += f"; {self.skipped_count} entr{'ies' if self.skipped_count != 1 else 'y'} skipped (" + \
                "; ".join(f"{count} {reason}" for reason, count in self.skipped) + ")"
        if self.problems:
            shown = "; ".join(self.problems[:MAX_PROBLEMS_SHOWN])
            more = f"; and {len(self.problems) - MAX_PROBLEMS_SHOWN} more" if len(self.problems) > MAX_PROBLEMS_SHOWN else ""
            text += f"; {len(self.problems)} source{'s' if len(self.problems) != 1 else ''} not read ({shown}{more})"
        return text


@dataclass(frozen=True)
class Entry:
    """One reported figure, whichever way it was read."""

    model: str
    dataset_id: str
    task_id: str | None
    value: Any
    badge: str | None = None
    source_url: str | None = None
    source_name: str | None = None
    notes: str | None = None
    date: str | None = None


def enabled() -> bool:
    return read_flag("hub_reported", unset=False)


def hub_models(folder: Path = LEADERBOARD_DIR) -> list[str]:
    """The model repos the board's model facts link to on the Hub (`https://huggingface.co/org/name`)."""
    repos = []
    for facts in load_model_facts(folder):
        link = facts.link or ""
        parts = link.removeprefix(HUB_MODEL_LINK).strip("/").split("/") if link.startswith(HUB_MODEL_LINK) else []
        if len(parts) == 2 and all(parts):
            repos.append("/".join(parts))
    return list(dict.fromkeys(repos))


def declared_hubs() -> dict[str, HubBenchmark]:
    """Each registered benchmark's Hub declaration, by benchmark."""
    found = {}
    for name in benchmark_names():
        hub = get_benchmark(name).hub
        if hub is not None:
            found[name] = hub
    return found


def rows_from(entries: Iterable[Entry], hubs: Mapping[str, HubBenchmark], skipped: Counter[str]
              ) -> dict[str, list[dict[str, Any]]]:
    """The entries that name a declared dataset and task, as board rows by benchmark; the others counted."""
    tasks: dict[tuple[str, str], tuple[str, Any]] = {}
    single: dict[str, tuple[str, Any]] = {}
    for name, hub in hubs.items():
        for task in hub.tasks:
            tasks[(hub.dataset_id, task.task_id)] = (name, task)
        if len(hub.tasks) == 1:
            single[hub.dataset_id] = (name, hub.tasks[0])
    rows: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        found = tasks.get((entry.dataset_id, entry.task_id)) if entry.task_id else single.get(entry.dataset_id)
        if not any(dataset == entry.dataset_id for dataset, _ in tasks):
            skipped["naming a dataset that is not one of the board's benchmarks"] += 1
            continue
        if found is None:
            skipped["naming a task the benchmark does not declare" if entry.task_id else "naming no task"] += 1
            continue
        value = entry.value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                or not 0 <= value <= 100:
            skipped["with a value that is not a percent (0..100)"] += 1
            continue
        benchmark, task = found
        details = "; ".join(filter(None, [f"reported on the Hub ({entry.badge or 'no badge'})",
                                          f"source: {entry.source_url}" if entry.source_url else "",
                                          f"notes: {entry.notes}" if entry.notes else ""]))
        rows.setdefault(benchmark, []).append({
            "model": entry.model, "source": SOURCE, "view": task.view, "mode": "official", "run_id": "",
            "fingerprint": "", task.column: float(value) / 100, "details": details, APART_COLUMN: APART,
            ORIGIN_COLUMN: ORIGIN, NEWEST_COLUMN: False, UPDATED_COLUMN: (entry.date or "")[:10] or None,
            BADGE_COLUMN: entry.badge, SOURCE_URL_COLUMN: entry.source_url})
    return rows


def read_leaderboard(api: Any, dataset_id: str) -> list[Entry]:
    """The dataset's Hub leaderboard as entries (every model, not only root repos)."""
    entries = []
    for item in api.get_dataset_leaderboard(dataset_id, base_model_only=False, timeout=TIMEOUT_SECONDS)[:MAX_ENTRIES]:
        source = item.source if isinstance(item.source, dict) else {}
        task_id = getattr(item, "taskId", None) or getattr(item, "task_id", None)
        entries.append(Entry(model=str(item.model_id), dataset_id=dataset_id,
                             task_id=str(task_id) if task_id else None, value=item.value,
                             badge=VERIFIED if item.verified else COMMUNITY if item.pull_request is not None else None,
                             source_url=source.get("url"), source_name=source.get("name"), notes=item.notes))
    return entries


def read_model_files(api: Any, repo_id: str, skipped: Counter[str]) -> list[Entry]:
    """A model repo's `.eval_results/*.yaml` entries (each file at most MAX_FILE_BYTES; a file that is not the
    format is skipped and counted)."""
    import yaml
    from huggingface_hub import parse_eval_result_entries

    entries = []
    files = [item for item in api.list_repo_tree(repo_id, recursive=True)
             if getattr(item, "path", "").startswith(FOLDER) and item.path.endswith((".yaml", ".yml"))]
    for item in files:
        if (getattr(item, "size", None) or 0) > MAX_FILE_BYTES:
            skipped[f"in files larger than {MAX_FILE_BYTES // 1024} kB"] += 1
            continue
        text = _read_bounded(api, repo_id, item.path)  # a file the Hub will not give: the repo's problem
        try:
            if len(text) > MAX_FILE_BYTES:
                skipped[f"in files larger than {MAX_FILE_BYTES // 1024} kB"] += 1
                continue
            data = yaml.safe_load(text)
            parsed = parse_eval_result_entries(data if isinstance(data, list) else [])
            if not isinstance(data, list) or not parsed:
                raise ValueError("not a list of entries")
        except Exception:  # noqa: BLE001 - any shape the parser refuses: the file is skipped, counted
            skipped["in files that are not .eval_results entries"] += 1
            continue
        for found in parsed:
            entries.append(Entry(model=repo_id, dataset_id=found.dataset_id, task_id=found.task_id, value=found.value,
                                 badge=VERIFIED if found.verify_token else None, source_url=found.source_url,
                                 source_name=found.source_name, notes=found.notes, date=found.date))
    return entries


def _read_bounded(api: Any, repo_id: str, path: str) -> bytes:
    """The file's first MAX_FILE_BYTES + 1 bytes, read over the Hub's session (no local cache is written)."""
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    url = hf_hub_url(repo_id, path, endpoint=api.endpoint)
    with get_session().stream("GET", url, headers=build_hf_headers(token=api.token), timeout=TIMEOUT_SECONDS,
                              follow_redirects=False) as response:  # a redirect's host is not checked: none
        hf_raise_for_status(response)
        if response.status_code != 200:
            raise ValueError(f"the Hub answered HTTP {response.status_code}")
        taken = bytearray()
        for chunk in response.iter_bytes():
            taken += chunk
            if len(taken) > MAX_FILE_BYTES:
                break
        return bytes(taken[:MAX_FILE_BYTES + 1])


class HubReported:
    """The Hub-reported rows the board shows: `current` is one HubReportedLoad, replaced whole by each read."""

    def __init__(self, clock: Callable[[], float] = time.time):
        self.current = HubReportedLoad()
        self.clock = clock
        self._lock = threading.Lock()
        self._reads = 0

    @property
    def version(self) -> int:
        return self.current.version

    def load(self, models: Iterable[str] | None = None, token: str | None = None, endpoint: str | None = None,
             hubs: Mapping[str, HubBenchmark] | None = None) -> HubReportedLoad:
        """Read every declared dataset's leaderboard and the listed model repos' files (default: the models' facts),
        and make the result current. Never raises for a dataset or a repo: each is a problem of the result."""
        from huggingface_hub import HfApi

        token = token if token is not None else token_from_env()
        endpoint = endpoint if endpoint is not None else endpoint_from_env()
        hubs = declared_hubs() if hubs is None else hubs
        api = HfApi(endpoint=endpoint, token=token or False)
        skipped: Counter[str] = Counter()
        problems: list[str] = []
        entries: list[Entry] = []
        with self._lock:
            for dataset_id in dict.fromkeys(hub.dataset_id for hub in hubs.values()):
                try:
                    entries += read_leaderboard(api, dataset_id)
                except Exception as error:  # noqa: BLE001 - a Hub without it, or down: said, the rest still read
                    problems.append(_problem(f"{dataset_id} leaderboard", error, token))
            for repo_id in (hub_models() if models is None else list(models)):
                if len(entries) >= MAX_ENTRIES:
                    break
                try:
                    entries += read_model_files(api, repo_id, skipped)
                except Exception as error:  # noqa: BLE001 - one model's repo never stops the others
                    problems.append(_problem(repo_id, error, token))
            rows = rows_from(entries[:MAX_ENTRIES], hubs, skipped)
            self._reads += 1
            self.current = HubReportedLoad({name: tuple(found) for name, found in rows.items()},
                                           tuple(sorted(skipped.items())), tuple(problems), self.clock(), self._reads)
            return self.current

    def load_in_background(self, **kwargs: Any) -> threading.Thread:
        """`load` on a thread of its own (the board shows what it has meanwhile)."""
        thread = threading.Thread(target=self._load_logging_failures, kwargs=kwargs, name="hub-reported", daemon=True)
        thread.start()
        return thread

    def _load_logging_failures(self, **kwargs: Any) -> None:
        import logging

        try:
            self.load(**kwargs)
        except Exception as error:  # noqa: BLE001 - a failed read never breaks the board
            logging.getLogger(__name__).warning("could not read Hub-reported results: %s", error)


def _problem(what: str, error: BaseException, token: str | None) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return redact(f"{what}: {type(error).__name__}{': ' + text if text else ''}", (token,))[:300]
