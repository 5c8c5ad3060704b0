"""What a run could read instead when the download of its data failed: the app's words (the form's Data choice,
the `start_run` API's `data_source`) for a DownloadFailed (evaluators/core/downloads.py), naming only the data
sources this benchmark and this deployment offer: its built-in example where it has one, a local folder except
on a public deployment. The Start button's message, a failed run's stored message and the jobs panel say the
same. The command line says it in its own flags (evaluators/cli/data_hint.py).
"""

from __future__ import annotations

from evaluators.core.display_names import subset_title
from evaluators.core.downloads import DownloadFailed, find_download_failure
from evaluators.core.errors import ToolboardError
from evaluators.core.paths import data_dir_from_env
from evaluators.core.registry import Benchmark, get_benchmark
from evaluators.engine.settings import RunConfig
from evaluators.engine.store import Store
from evaluators.service.run_request import BUILT_IN_EXAMPLE, LOCAL_FOLDER


def reads_the_download(data_dir: str | None) -> bool:
    """Whether a run reading `data_dir` (RunConfig.data_dir) reads the benchmark's download: it names no folder
    and no TOOLBOARD_DATA_DIR is set (the loaders' own rule)."""
    return not data_dir and data_dir_from_env() is None


def other_data_sources(benchmark: Benchmark, public: bool) -> list[str]:
    """The Data choices (run_request's names) besides the download that this deployment offers for `benchmark`:
    a local folder (not on a public deployment, where a visitor cannot name the server's folders) and the
    benchmark's built-in example, if it ships one."""
    sources = [] if public else [LOCAL_FOLDER]
    if benchmark.example is not None:
        sources.append(BUILT_IN_EXAMPLE)
    return sources


def _source_words(benchmark: Benchmark, source: str) -> str:
    if source == LOCAL_FOLDER:
        return "a local folder holding the data"
    example = benchmark.example
    language = f", in {subset_title(benchmark.name, example.language)}" if example and example.language else ""
    return f"the built-in example (a few items{language}, no download)"


def data_source_hint(benchmark: Benchmark, public: bool) -> str:
    """What to do instead of the download, in the form's words: "pick another Data source: a local folder holding
    the data, or the built-in example (…)"; when the deployment offers none, that it offers none."""
    sources = [_source_words(benchmark, source) for source in other_data_sources(benchmark, public)]
    if not sources:
        return f"this deployment offers no other Data source for {benchmark.title}: try again later"
    return "pick another Data source: " + ", or ".join(sources)


def download_failure_message(error: BaseException, benchmark_name: str, data_dir: str | None, public: bool) -> str | None:
    """The app's message for a run (of `benchmark_name`, reading `data_dir`) that failed because a download
    failed: what failed and why, then the other Data sources when reading one of them would do without that
    download, then the benchmark's own advice (not on a public deployment: it speaks to the server's operator).
    None when `error` is no failed download."""
    failure = find_download_failure(error)
    if failure is None:
        return None
    return _explained(failure, benchmark_name, data_dir, public)


def _explained(failure: DownloadFailed, benchmark_name: str, data_dir: str | None, public: bool) -> str:
    text = failure.summary
    if failure.avoidable and reads_the_download(data_dir):
        try:
            text += f" — {data_source_hint(get_benchmark(benchmark_name), public)}"
        except ToolboardError:  # a benchmark no longer installed: what failed is still told
            pass
    elif public:
        text += " — try again later"
    if failure.advice and not public:
        text += f"; {failure.advice}"
    return text


def run_failure_message(store: Store, run_id: str, error: BaseException, public: bool) -> str | None:
    """A failed run's message when its data could not be downloaded (download_failure_message, with the run's
    benchmark and data folder read from the store), else None: the engine's own words stay."""
    if find_download_failure(error) is None:
        return None
    config = RunConfig.from_json(store.get_run(run_id).config)
    return download_failure_message(error, config.benchmark, config.data_dir, public)
