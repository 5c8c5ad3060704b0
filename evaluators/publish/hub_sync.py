"""Keep finished runs in a Hugging Face dataset repo, in the results dataset form
(evaluators/publish/results_dataset.py): a restarted Space rebuilds its board from it, and anyone with access can
`load_dataset` it. Enabled by TOOLBOARD_HUB_REPO (e.g. `org/toolboard-results`), with the token from
HF_TOKEN; HF_ENDPOINT points at another Hub. The repo is created private.

The repo holds `runs/<run id>.parquet` and `details/<run id>.parquet` (one file per run, so pushes of
different runs never write the same file, and a run pushed again, e.g. once shared, replaces its own),
`contents/train-00000-of-00001.parquet` (every board row the pushing store makes, rewritten by each push)
and the dataset card. `push` uploads one run in one commit; `pull` imports the runs the local store does
not have, file by file (a damaged file is logged and skipped; the others and the board still load).

A run scored on a benchmark's built-in example (a few items shipped to try the app) is never pushed: nothing is
sent for it, and the files of such runs that an earlier version pushed are deleted by the next push, when this
store still knows the run as one on example data (a pulled copy cannot tell: its data folder is never published).

The service and the front doors drive it (the app pushes a run once it has finished, whether it ran here or on
a queue worker, and pulls at start-up); the engine never imports it.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evaluators.core.environment import hub_endpoint, read_other, read_setting
from evaluators.core.errors import ToolboardError
from evaluators.core.paths import toolboard_home
from evaluators.engine.redact import redact
from evaluators.engine.run_document import RUN_ID_PATTERN
from evaluators.engine.store import Store
from evaluators.publish.board_table import run_on_example_data

logger = logging.getLogger(__name__)

REPO_ENV = "TOOLBOARD_HUB_REPO"
TOKEN_ENV = "HF_TOKEN"
RUNS_FOLDER = "runs"
SHARD_SUFFIX = ".parquet"
# What an exported dataset folder holds, as pushed by push_dataset_folder (nothing else in it is sent).
DATASET_PATTERNS = ("README.md", "contents/*.parquet", "details/*.parquet", "runs/*.parquet")


class HubSync:
    """Push finished runs to, and pull them from, the dataset repo `repo_id`."""

    def __init__(self, repo_id: str, token: str | None, store: Store, endpoint: str | None = None,
                 cache_dir: str | Path | None = None):
        check_repo_id(repo_id)
        self.repo_id = repo_id
        self.store = store
        self._token = token or None
        # huggingface_hub reads HF_ENDPOINT once, at import; read it here so a later setting counts.
        self.endpoint = endpoint or hub_endpoint()
        self.cache_dir = Path(cache_dir) if cache_dir else toolboard_home() / "hub_sync" / repo_id.replace("/", "--")
        self._repo_ready = False
        # One push at a time: each rewrites `contents` from the store, so the last one has every run.
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never shows the token
        return f"HubSync(repo_id={self.repo_id!r}, endpoint={self.endpoint!r})"

    def push(self, run_id: str) -> list[str]:
        """Upload the run (its `runs` and `details` files) with the whole `contents` and the card, in one
        commit; returns the paths written in the repo. A run scored on a built-in example is left out: nothing
        is sent, and nothing written."""
        if not RUN_ID_PATTERN.fullmatch(run_id):
            raise ToolboardError(f"run id {run_id!r} cannot be a file name in the hub repo")
        if self._on_example_data(run_id):
            logger.info("hub sync: left out 1 run scored on the built-in example data (run %s): never published", run_id)
            return []
        with self._lock:
            api = self._api()
            try:
                if not self._repo_ready:
                    api.create_repo(self.repo_id, repo_type="dataset", private=True, exist_ok=True)
                    self._repo_ready = True
                existing = api.list_repo_files(self.repo_id, repo_type="dataset")
                return self._commit(api, run_id, existing, f"Add run {run_id}")
            except ToolboardError:
                raise
            except Exception as error:  # network, auth, server: one clear error, without the token
                raise self._error(f"push run {run_id} to", error) from None

    def pull(self) -> int:
        """Import every run of the repo this store does not have; returns how many."""
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import RepositoryNotFoundError

        api = self._api()
        try:
            # Resolving the head first makes auth and network failures raise here, instead of
            # snapshot_download quietly returning an older local copy.
            head = api.repo_info(self.repo_id, repo_type="dataset").sha
            files = api.list_repo_files(self.repo_id, repo_type="dataset", revision=head)
            folder = Path(snapshot_download(self.repo_id, repo_type="dataset", revision=head,
                                            allow_patterns=[f"{RUNS_FOLDER}/*{SHARD_SUFFIX}"],
                                            local_dir=self.cache_dir, token=self._token, endpoint=self.endpoint))
        except RepositoryNotFoundError:
            logger.warning("hub sync: dataset repo %s does not exist yet (or the token cannot read it); nothing to pull",
                           self.repo_id)
            return 0
        except Exception as error:
            raise self._error("pull runs from", error) from None
        return sum(self._import_shard(folder / RUNS_FOLDER / f"{run_id}{SHARD_SUFFIX}")
                   for run_id in _run_files(files, SHARD_SUFFIX))

    def push_in_background(self, run_id: str) -> threading.Thread:
        """Push from a daemon thread; a failure is logged (without the token), never raised."""
        thread = threading.Thread(target=self._push_logging_failures, args=(run_id,), daemon=True,
                                  name=f"hub-sync-push-{run_id}")
        thread.start()
        return thread

    def _push_logging_failures(self, run_id: str) -> None:
        try:
            self.push(run_id)
        except Exception as error:
            logger.warning("hub sync: %s", redact(str(error), (self._token,)))

    def _on_example_data(self, run_id: str) -> bool:
        return self.store.has_run(run_id) and run_on_example_data(self.store.get_run(run_id))

    def _commit(self, api: Any, run_id: str, existing: Iterable[str], message: str) -> list[str]:
        """One commit with the run's files, the whole `contents` and the card (naming the configs that will
        have files), deleting the files of runs on example data an earlier version pushed; returns the paths
        written."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        from evaluators.publish.dataset_schema import CONFIGS
        from evaluators.publish.results_dataset import write_contents_and_card, write_run_shards

        existing = list(existing)
        toys = self._example_data_files(existing)
        with tempfile.TemporaryDirectory(prefix="toolboard-hub-") as folder:
            paths = write_run_shards(folder, self.store, run_id)
            present = [*(path for path in existing if path not in toys), *paths]
            configs = [config for config in CONFIGS
                       if config == "contents" or any(_is_shard(path, config) for path in present)]
            paths += write_contents_and_card(folder, self.store, configs)
            operations: list[Any] = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(Path(folder) / path))
                                     for path in paths]
            operations += [CommitOperationDelete(path_in_repo=path) for path in toys]
            api.create_commit(self.repo_id, operations, commit_message=message, repo_type="dataset")
        if toys:
            count = len({_shard_run_id(path) for path in toys})
            logger.info("hub sync: deleted the files of %d run%s scored on the built-in example data, pushed by an"
                        " earlier version", count, "" if count == 1 else "s")
        return paths

    def _example_data_files(self, existing: Iterable[str]) -> list[str]:
        """The repo's `runs` and `details` files of runs this store knows as scored on a built-in example."""
        toys = {run.id for run in self.store.list_runs() if run_on_example_data(run)}
        return [path for path in existing if _shard_run_id(path) in toys] if toys else []

    def _import_shard(self, path: Path) -> int:
        """Import the runs of one `runs` file; a damaged file or row is logged and skipped."""
        from evaluators.publish.dataset_rows import import_runs
        from evaluators.publish.results_dataset import read_config_file

        if self.store.has_run(path.name.removesuffix(SHARD_SUFFIX)):
            return 0
        try:
            result = import_runs(self.store, read_config_file(path, "runs"))
        except (ToolboardError, OSError) as error:
            logger.warning("hub sync: skipped %s/%s: %s", RUNS_FOLDER, path.name, redact(str(error), (self._token,)))
            return 0
        for problem in result.skipped:
            logger.warning("hub sync: skipped a run in %s/%s: %s", RUNS_FOLDER, path.name, redact(problem, (self._token,)))
        return len(result.imported)

    def _api(self) -> Any:
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.endpoint, token=self._token)

    def _error(self, action: str, error: BaseException) -> ToolboardError:
        return hub_error(f"could not {action} dataset {self.repo_id}", error, self._token)


def _run_files(files: Iterable[str], suffix: str) -> list[str]:
    """The run ids of the repo's runs/<id><suffix> files."""
    return sorted(path[len(RUNS_FOLDER) + 1:-len(suffix)] for path in files
                  if path.startswith(f"{RUNS_FOLDER}/") and path.endswith(suffix) and path.count("/") == 1)


def _is_shard(path: str, config: str) -> bool:
    return path.startswith(f"{config}/") and path.endswith(SHARD_SUFFIX)


def _shard_run_id(path: str) -> str | None:
    """The run of a `runs/<id>.parquet` or `details/<id>.parquet` file (None for any other file)."""
    config, _, name = path.partition("/")
    if config not in ("runs", "details") or "/" in name or not name.endswith(SHARD_SUFFIX):
        return None
    run_id = name.removesuffix(SHARD_SUFFIX)
    return run_id if RUN_ID_PATTERN.fullmatch(run_id) else None


def check_repo_id(repo_id: str) -> None:
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ToolboardError(f"hub repo {repo_id!r} should look like 'org/name'")


def hub_error(what: str, error: BaseException, token: str | None) -> ToolboardError:
    """A Hub failure as one clear line, without the token; a hint when the token was refused."""
    text = redact(str(error), (token,))
    detail = text.strip().splitlines()
    reason = f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__
    status = getattr(getattr(error, "response", None), "status_code", None)
    hint = f"; check that {TOKEN_ENV} is set to a token with write access to it" if status in (401, 403) else ""
    return ToolboardError(f"hub sync: {what} ({reason}){hint}")


def push_dataset_folder(folder: str | Path, repo_id: str, token: str | None, endpoint: str | None = None,
                        private: bool = True) -> str:
    """Push an exported results dataset folder (write_dataset) to the dataset repo `repo_id`, created private
    unless `private` is False, in one commit: the card and the Parquet files of each config; Parquet files of
    those configs already in the repo and not in the folder are deleted (they would load as rows too).
    Nothing else in the folder is sent. Returns the commit's URL."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    check_repo_id(repo_id)
    folder = Path(folder)
    local = sorted({path.relative_to(folder).as_posix() for pattern in DATASET_PATTERNS for path in folder.glob(pattern)})
    if not any(path.startswith("contents/") for path in local):
        raise ToolboardError(f"{folder} is not an exported results dataset (no contents/*.parquet): write it with"
                             " `python -m evaluators export --dataset`")
    api = HfApi(endpoint=endpoint or hub_endpoint(), token=token or None)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        stale = [path for path in api.list_repo_files(repo_id, repo_type="dataset")
                 if path not in local and any(_is_shard(path, config) for config in ("contents", "details", "runs"))]
        operations: list[CommitOperationAdd | CommitOperationDelete] = [
            CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(folder / path)) for path in local]
        operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
        commit = api.create_commit(repo_id, operations, commit_message="Toolboard results", repo_type="dataset")
    except Exception as error:  # network, auth, server: one clear error, without the token
        raise hub_error(f"could not push {folder.name} to dataset {repo_id}", error, token) from None
    return str(commit.commit_url)


def token_from_env() -> str | None:
    """The operator's Hub token, HF_TOKEN, read from the server's environment only (never from a visitor); None when
    unset. Every Hub read and write that is not handed a token uses this one."""
    return read_other(TOKEN_ENV)


def endpoint_from_env() -> str | None:
    """The Hub to talk to, HF_ENDPOINT (a mirror, or a test's fake Hub); None: huggingface_hub's default."""
    return hub_endpoint()


def from_env(store: Store) -> HubSync | None:
    """A HubSync for TOOLBOARD_HUB_REPO with the token in HF_TOKEN, or None when TOOLBOARD_HUB_REPO is unset."""
    repo_id = read_setting("hub_repo") or ""
    if not repo_id:
        return None
    return HubSync(repo_id, token_from_env(), store)
