"""The command line's words for a download that failed (core/downloads.DownloadFailed): what failed and why, then
what the command takes instead, in its own flags: a local copy of the data with --data-dir (or
TOOLBOARD_DATA_DIR), the benchmark's built-in example as the folder it ships in. The app says the same in the
words of its Data choice (evaluators/service/data_sources.py); which sources exist is the service's to say."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from evaluators.core.display_names import subset_title
from evaluators.core.downloads import DownloadFailed, find_download_failure
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.service.data_sources import other_data_sources, reads_the_download
from evaluators.service.deployment import is_public_mode
from evaluators.service.run_request import BUILT_IN_EXAMPLE, LOCAL_FOLDER

LOCAL_COPY = "a local copy of the data with --data-dir DIR (or TOOLBOARD_DATA_DIR=DIR)"


def with_data_hint(error: ToolboardError, args: argparse.Namespace) -> ToolboardError:
    """`error` as the command line tells it: a failed download with what else the command could read, any
    other error as it is."""
    failure = find_download_failure(error)
    if failure is None:
        return error
    benchmark_name, data_dir, resumed = _what_was_read(args)
    try:
        public = args.command == "run" and is_public_mode()
    except ToolboardError:  # a bad TOOLBOARD_PUBLIC is said by the run itself; here it must not hide the failure
        public = True
    return ToolboardError(download_message(failure, benchmark_name, data_dir, resumed=resumed, public=public))


def download_message(failure: DownloadFailed, benchmark_name: str | None, data_dir: str | None, *,
                     resumed: bool = False, public: bool = False) -> str:
    """What failed and why; when reading another source does without that download and the command read the
    download, the sources it takes instead (`resumed`: the run read back from the store keeps its own, so a
    new run is the way; `public`: a `run` in public mode, which takes no data folder); the benchmark's advice."""
    text = failure.summary
    if failure.avoidable and reads_the_download(data_dir):
        benchmark = _benchmark(benchmark_name)
        # In public mode `run` refuses --data-dir, the one flag that names another source (the example is a folder).
        sources = [] if public else other_data_sources(benchmark, False) if benchmark is not None else [LOCAL_FOLDER]
        words = [_example_words(benchmark) if source == BUILT_IN_EXAMPLE and benchmark is not None else LOCAL_COPY
                 for source in sources]
        if words:
            text += " — " + ("start a new run that reads " if resumed else "read ") + ", or ".join(words)
        else:
            text += " — public mode (TOOLBOARD_PUBLIC) takes no other data source: try again later"
    if failure.advice:
        text += f"; {failure.advice}"
    return text


def _example_words(benchmark: Benchmark) -> str:
    example = benchmark.example
    assert example is not None
    language = (f", in {subset_title(benchmark.name, example.language)}", f" --language {example.language}") \
        if example.language else ("", "")
    return f"the built-in example (a few items{language[0]}) with --data-dir {_shown_path(example.folder)}{language[1]}"


def _shown_path(folder: Path) -> str:
    """The folder relative to the working directory when it is inside it (shorter to copy), else absolute."""
    try:
        relative = os.path.relpath(folder)
    except ValueError:  # another drive
        return str(folder)
    return relative if not relative.startswith("..") else str(folder)


def _benchmark(name: str | None) -> Benchmark | None:
    if not name:
        return None
    try:
        return get_benchmark(name)
    except ToolboardError:
        return None


def _what_was_read(args: argparse.Namespace) -> tuple[str | None, str | None, bool]:
    """(benchmark, data folder, whether a stored run was read back) of the command that failed: its flags, or
    for `run --resume/--rerun-errors RUN_ID` the stored run's settings."""
    run_id = getattr(args, "resume", None) or getattr(args, "rerun_errors", None)
    if run_id:
        from evaluators.engine.settings import RunConfig
        from evaluators.engine.store import Store

        try:
            store = Store()
            try:
                config = RunConfig.from_json(store.get_run(run_id).config)
            finally:
                store.close()
        except Exception:  # noqa: BLE001 - the store cannot tell: what failed is still told
            return None, None, True
        return config.benchmark, config.data_dir, True
    data_dir = getattr(args, "data_dir", None)
    return getattr(args, "benchmark", None), str(data_dir) if data_dir else None, False
