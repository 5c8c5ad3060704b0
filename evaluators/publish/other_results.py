"""Read others' results: the `contents` config of other toolboard results datasets (Hugging Face dataset repos,
evaluators/publish/results_dataset.py) joins this board, each row labelled with the repo it came from. Pure data
(pandas, huggingface_hub); no gradio. The app lists the repos in TOOLBOARD_RESULTS (`org/a,org/b`) and loads them
at start; a private deployment can reload them from its About tab.

Rules:

- Download: only `contents/*.parquet` of each repo, at the repo's head resolved first (`HfApi.repo_info`, so an
  auth or network failure raises instead of a stale local copy being read), into
  `TOOLBOARD_HOME/results/<org>--<name>`, with the token in HF_TOKEN and the Hub in HF_ENDPOINT. Only the files
  `HfApi.list_repo_files` lists at that revision are read: stale local files are ignored.
- Bad data never stops the board: a repo that is missing, unreachable or refused, or a file that is truncated,
  malformed or incompatible (results_dataset.read_config_file), is reported by repo name (and file) in
  `problems` and skipped; the other files and repos still join. No message holds the token.
- What joins: `evaluated` and `uploaded` rows only. Their `published` rows are skipped (the published rows come
  from this project's own `leaderboard_data/`); so are rows of a benchmark not registered here, of an unknown
  scoring mode or source, of a view this board does not have, or without a run id; each kind is counted per repo.
  Metric columns unknown to the benchmark's board layout are ignored.
- Conflicts: a row naming a run (a combined row `a + b`: any part) that the local store has is dropped (local
  rows win; board_rows drops such rows again when it draws, for runs added after the load); a run in two listed
  repos joins from the first repo in the list's order, the later repos' rows naming it are dropped. Every dropped
  group is reported (repo, run id, why).
- Labelling: `origin` holds the repo id, `details` starts with "from <repo>" (so searching the board finds it),
  `newest` is False. `apart_reason` is kept as written (their toolboard computed it by the same rules), so their
  comparable rows rank beside ours; model facts, n and intervals are recomputed by board_rows as for any row.

Others' rows are never written into this project's own results dataset: dataset_rows.contents_table builds
the board without them.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evaluators.core.environment import read_setting
from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.core.registry import MODES, benchmark_names, get_benchmark
from evaluators.engine.redact import redact
from evaluators.publish.board_table import (
    NEWEST_COLUMN,
    ORIGIN_COLUMN,
    SOURCES,
    board_columns,
    frame_records,
    run_ids_of,
)
from evaluators.publish.hub_sync import TOKEN_ENV, endpoint_from_env, token_from_env

RESULTS_ENV = "TOOLBOARD_RESULTS"
CONFIG = "contents"
CONTENTS_PATTERN = f"{CONFIG}/*.parquet"
# The sources whose rows join; published rows come from this project's own leaderboard_data/.
JOINING_SOURCES = ("evaluated", "uploaded")
# A Hub repo id: `org/name`, each part starting with a letter or digit (so never `..` or an absolute path).
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
LOCAL_RUN = "a run of this board has that id (local rows win)"


class OtherResultsError(ToolboardError):
    """A results dataset repo could not be read (missing, unreachable, refused, or not a results dataset)."""


@dataclass(frozen=True)
class Dropped:
    """Rows of one run left out of the board because another source has that run."""

    repo_id: str
    run_id: str
    why: str
    rows: int

    def __str__(self) -> str:
        return f"{self.repo_id}: run {self.run_id} dropped ({self.rows} row{'s' if self.rows != 1 else ''}): {self.why}"


@dataclass(frozen=True)
class RepoReport:
    """What one listed repo gave: rows and runs that joined, what was skipped (counted, why) and problems."""

    repo_id: str
    joined: int = 0
    runs: int = 0
    files: int = 0
    skipped: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for the page: `org/a: 12 rows of 2 runs joined (…); skipped: …; problems: …`."""
        text = f"{self.repo_id}: {self.joined} row{'s' if self.joined != 1 else ''} of {self.runs} run" \
               f"{'s' if self.runs != 1 else ''} joined"
        if self.skipped:
            text += "; skipped: " + "; ".join(self.skipped)
        if self.problems:  # each names its repo for the problems list; here the line does
            prefix = f"{self.repo_id}: "
            text += "; problems: " + "; ".join(p[len(prefix):] if p.startswith(prefix) else p for p in self.problems)
        return text


@dataclass(frozen=True)
class LoadedResults:
    """One load of the listed repos: their rows by (benchmark, mode), each repo's report, what was dropped.
    `version` changes with every load (0: nothing loaded yet), so a cached board knows to redraw."""

    repos: tuple[str, ...] = ()
    rows: Mapping[tuple[str, str], tuple[dict[str, Any], ...]] = field(default_factory=dict)
    reports: tuple[RepoReport, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    version: int = 0

    def rows_for(self, benchmark: str, mode: str) -> list[dict[str, Any]]:
        """The rows of one board (benchmark, scoring mode), as copies: board_rows may change them."""
        return [dict(row) for row in self.rows.get((benchmark, mode), ())]

    @property
    def problems(self) -> list[str]:
        """Every repo or file that could not be read, each naming its repo (and file)."""
        return [problem for report in self.reports for problem in report.problems]

    def summary(self) -> str:
        """What the load did, one line per repo, then one per dropped run; plain text."""
        if not self.repos:
            return "No other results datasets listed."
        return "\n".join([*(f"- {report.line()}" for report in self.reports), *(f"- {item}" for item in self.dropped)])


def parse_repos(text: str | Iterable[str] | None) -> list[str]:
    """Repo ids from `org/a, org/b` (or a list), stripped, each once, in the order given."""
    parts = text.split(",") if isinstance(text, str) else list(text or [])
    return list(dict.fromkeys(part.strip() for part in parts if part and part.strip()))


def repos_from_env() -> list[str]:
    """The repos TOOLBOARD_RESULTS lists (comma-separated Hub dataset repo ids); none when unset."""
    return parse_repos(read_setting("results") or "")


def local_folder(repo_id: str, home: Path | None = None) -> Path:
    """Where a repo's `contents` files are downloaded: TOOLBOARD_HOME/results/<org>--<name>."""
    return (home or toolboard_home()) / "results" / repo_id.replace("/", "--")


def _hub_problem(repo_id: str, error: BaseException, token: str | None) -> OtherResultsError:
    """A Hub failure as one line naming the repo, without the token."""
    from huggingface_hub.errors import RepositoryNotFoundError

    status = getattr(getattr(error, "response", None), "status_code", None)
    if isinstance(error, RepositoryNotFoundError) or status == 404:
        return OtherResultsError(f"{repo_id}: no such dataset repo on the Hub, or it is private and {TOKEN_ENV} cannot"
                                 " read it")
    lines = redact(str(error), (token,)).strip().splitlines()
    reason = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    hint = f"; check that {TOKEN_ENV} can read it" if status in (401, 403) else ""
    return OtherResultsError(f"{repo_id}: could not read the dataset repo ({reason}){hint}")


def download_contents(repo_id: str, home: Path | None = None, token: str | None = None,
                      endpoint: str | None = None) -> list[tuple[str, Path]]:
    """The repo's `contents/*.parquet` files at its head, downloaded: (path in the repo, local path), sorted.
    OtherResultsError (naming the repo, never the token) when the repo cannot be read or has no such file."""
    from huggingface_hub import HfApi, snapshot_download

    if not REPO_ID.fullmatch(repo_id):
        raise OtherResultsError(f"{repo_id!r}: not a dataset repo id (write it as org/name)")
    api = HfApi(endpoint=endpoint, token=token)
    try:
        # The head first: a refused token or no network raise here, instead of snapshot_download quietly
        # returning an older local copy.
        head = api.repo_info(repo_id, repo_type="dataset").sha
        wanted = sorted(path for path in api.list_repo_files(repo_id, repo_type="dataset", revision=head)
                        if path.startswith(f"{CONFIG}/") and path.endswith(".parquet") and path.count("/") == 1)
        if not wanted:
            raise OtherResultsError(f"{repo_id}: no {CONTENTS_PATTERN} file: not a toolboard results dataset (written by"
                                    " `python -m evaluators export --dataset` or a Space's hub sync)")
        folder = Path(snapshot_download(repo_id, repo_type="dataset", revision=head, allow_patterns=[CONTENTS_PATTERN],
                                        local_dir=local_folder(repo_id, home), token=token, endpoint=endpoint))
    except OtherResultsError:
        raise
    except Exception as error:  # noqa: BLE001 - network, auth, server: one line naming the repo
        raise _hub_problem(repo_id, error, token) from None
    return [(path, folder / path) for path in wanted]


def read_contents(repo_id: str, files: Iterable[tuple[str, Path]],
                  token: str | None = None) -> tuple[list[pd.DataFrame], list[str]]:
    """Each file read and checked (results_dataset.read_config_file); a file that cannot be read is a problem
    naming the repo and the file, and the others are still read."""
    from evaluators.publish.results_dataset import read_config_file

    frames, problems = [], []
    for relative, path in files:
        try:
            frames.append(read_config_file(path, CONFIG))
        except (ToolboardError, OSError, ValueError) as error:
            text = redact(str(error), (token,)).replace(str(path), relative)
            text = text if text.startswith(relative) else f"{relative}: {text}"
            problems.append(f"{repo_id}: {text}")
    return frames, problems


@dataclass
class _Repo:
    """One repo while merging."""

    repo_id: str
    frames: list[pd.DataFrame]
    problems: list[str]
    files: int = 0


def _board_row(record: dict[str, Any], repo_id: str, keep: list[str]) -> dict[str, Any]:
    """A `contents` record as a board row: the board's columns only, labelled with its repo."""
    row = {name: record.get(name) for name in keep}
    row[ORIGIN_COLUMN] = repo_id
    row[NEWEST_COLUMN] = False
    details = row.get("details")
    row["details"] = f"from {repo_id}: {details}" if details else f"from {repo_id}"
    return row


def _skip_reason(record: dict[str, Any], views: dict[str, set[str]]) -> str | None:
    """Why a `contents` record does not join (None: it does)."""
    benchmark, source = record.get("benchmark"), record.get("source")
    if benchmark not in views:
        return f"benchmark {benchmark!r} (not registered here)"
    if source == "published":
        return "published (the published rows come from this board's own tables)"
    if source not in JOINING_SOURCES:
        return f"source {source!r} (not one of {', '.join(SOURCES)})"
    if record.get("mode") not in MODES:
        return f"scoring mode {record.get('mode')!r}"
    if record.get("view") not in views[benchmark]:
        return f"{benchmark} view {record.get('view')!r} (not on this board)"
    if not run_ids_of(record):
        return "no run id"
    return None


def merge(repos: list[_Repo], local_run_ids: Iterable[str], version: int) -> LoadedResults:
    """The repos' rows by (benchmark, mode) under the rules of this module, in the repos' order."""
    names = benchmark_names()
    layouts = {name: get_benchmark(name).board_layout() for name in names}
    views = {name: set(layout.views) for name, layout in layouts.items()}
    keep = {name: [c for c in board_columns(get_benchmark(name), layouts[name]) if c != NEWEST_COLUMN] for name in names}
    local = set(local_run_ids)
    claimed: dict[str, str] = {}  # run id -> the repo it joined from
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    reports, dropped = [], []
    for repo in repos:
        skipped: Counter[str] = Counter()
        drops: Counter[tuple[str, str]] = Counter()
        joined_runs: set[str] = set()
        joined = 0
        for frame in repo.frames:
            for record in frame_records(frame):
                record = {name: None if value is None or value is pd.NA or value != value else value
                          for name, value in record.items()}
                reason = _skip_reason(record, views)
                if reason is not None:
                    skipped[reason] += 1
                    continue
                parts = run_ids_of(record)
                if local.intersection(parts):
                    drops[(next(p for p in parts if p in local), LOCAL_RUN)] += 1
                    continue
                earlier = [p for p in parts if p in claimed]
                if earlier:
                    drops[(earlier[0], f"it joined from {claimed[earlier[0]]}, listed first")] += 1
                    continue
                rows.setdefault((record["benchmark"], record["mode"]), []).append(
                    _board_row(record, repo.repo_id, keep[record["benchmark"]]))
                joined += 1
                joined_runs.update(parts)
        for run_id in joined_runs:
            claimed.setdefault(run_id, repo.repo_id)
        dropped += [Dropped(repo.repo_id, run_id, why, count) for (run_id, why), count in drops.items()]
        skipped_lines = [f"{count} row{'s' if count != 1 else ''} of {reason}" for reason, count in skipped.items()]
        if drops:
            runs_dropped = len({run_id for run_id, _ in drops})
            skipped_lines.append(f"{sum(drops.values())} rows of {runs_dropped} run{'s' if runs_dropped != 1 else ''}"
                                 " another source has (listed below)")
        reports.append(RepoReport(repo.repo_id, joined, len(joined_runs), repo.files, tuple(skipped_lines),
                                  tuple(repo.problems)))
    return LoadedResults(tuple(r.repo_id for r in repos), {key: tuple(value) for key, value in rows.items()},
                         tuple(reports), tuple(dropped), version)


class OtherResults:
    """The other results datasets the board shows, reloaded as a whole: `current` is one LoadedResults, replaced
    at once by each load (readers never see half a load), its version one more than the last."""

    def __init__(self, home: Path | None = None):
        self.home = home
        self.current = LoadedResults()
        self._lock = threading.Lock()  # one load at a time
        self._loads = 0

    @property
    def version(self) -> int:
        return self.current.version

    def load(self, repos: str | Iterable[str], local_run_ids: Iterable[str] = (), token: str | None = None,
             endpoint: str | None = None) -> LoadedResults:
        """Download and merge the repos (in their order; see the module's rules) and make them current. The token
        and the Hub default to HF_TOKEN and HF_ENDPOINT. Never raises for a repo or a file: each is a problem of
        the result."""
        names = parse_repos(repos)
        token = token if token is not None else token_from_env()
        endpoint = endpoint if endpoint is not None else endpoint_from_env()
        with self._lock:
            found = []
            for repo_id in names:
                try:
                    files = download_contents(repo_id, self.home, token, endpoint)
                except OtherResultsError as error:
                    found.append(_Repo(repo_id, [], [redact(str(error), (token,))]))
                    continue
                frames, problems = read_contents(repo_id, files, token)
                found.append(_Repo(repo_id, frames, problems, len(files)))
            self._loads += 1
            self.current = merge(found, local_run_ids, self._loads)
            return self.current


__all__ = ["RESULTS_ENV", "Dropped", "LoadedResults", "OtherResults", "OtherResultsError", "RepoReport",
           "download_contents", "local_folder", "merge", "parse_repos", "read_contents", "repos_from_env"]
