"""Reading ToolBench-Static (one decision step per line) from a folder or from its hub dataset."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.core import source_files
from evaluators.core.downloads import download_failed
from evaluators.core.environment import declare, hub_endpoint
from evaluators.core.errors import DataError
from evaluators.core.jsonl import read_json_lines
from evaluators.core.paths import data_dir_from_env, datasets_dir
from evaluators.core.types import Sample

SUBSETS = ("in_domain", "out_of_domain")
HF_DATASET = "Sandyyy/ToolBench-Static"
MODELSCOPE_DATASET = "AI-ModelScope/ToolBench-Static"  # the reference's source; documented alternative
REVISION = declare("toolbench_revision", "the pinned revision",
                   "the ToolBench-Static dataset revision to read")
HF_REVISION_ENV = REVISION.name
DATA_VERSION = f"{HF_DATASET}@hub"


def subset_file(folder: Path, subset: str) -> Path | None:
    """The subset's file in `folder` or in the usual sub-folders (`toolbench_static/`, `…/derived/`)."""
    for candidate in (folder, folder / "toolbench_static", folder / "toolbench_static" / "derived"):
        path = candidate / f"{subset}.jsonl"
        if source_files.is_file(path):
            return path
    return None


def download_subset(subset: str) -> Path | None:
    """The subset's file from the hub dataset (cached); None when the dataset has no such file. A Hub that
    cannot be reached (or answers an error) is a DownloadFailed, never taken for a missing file."""
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.utils import EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError

    endpoint = hub_endpoint()
    try:
        return Path(
            hf_hub_download(
                HF_DATASET, f"{subset}.jsonl", repo_type="dataset", revision=REVISION.read(),
                endpoint=endpoint, cache_dir=str(datasets_dir() / "huggingface"),
            )
        )
    except EntryNotFoundError as exc:
        if not isinstance(exc, LocalEntryNotFoundError):  # the Hub answered: the dataset has no such file
            return None
        failure: BaseException = exc  # the Hub could not be asked, and the file is not in the cache
    except (HfHubHTTPError, OSError) as exc:
        failure = exc
    raise download_failed(failure, f"ToolBench-Static's {subset}.jsonl from the hub dataset {HF_DATASET}",
                          endpoint or constants.ENDPOINT,
                          f"the same files are on ModelScope ({MODELSCOPE_DATASET}) to download by hand") from None


@lru_cache(maxsize=4096)
def _literal(text: str) -> Any:
    """One parameters string read once: a split repeats a few hundred tool specs thousands of times
    (308 distinct in 9,640 out-of-domain). The result is shared between samples: read it, never change it."""
    return ast.literal_eval(text)


def parse_tools(tools: Any, path: Path, line: int) -> list[dict[str, Any]]:
    """`tools[*].parameters` is a Python-repr string: read it with ast.literal_eval, never eval."""
    if not isinstance(tools, list):
        raise DataError("field 'tools' must be a list", path, line)
    parsed = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise DataError(f"tools[{index}] needs a string 'name'", path, line)
        parameters = tool.get("parameters", {})
        if isinstance(parameters, str):
            try:
                parameters = _literal(parameters) if parameters.strip() else {}
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise DataError(f"tools[{index}].parameters is not a Python literal", path, line) from None
        parsed.append({**tool, "parameters": parameters if isinstance(parameters, dict) else {}})
    return parsed


def load_subset(path: Path, subset: str) -> list[Sample]:
    samples = []
    for index, (line, record) in enumerate(read_json_lines(path)):
        if not isinstance(record, dict):
            raise DataError(f"expected a JSON object, got {type(record).__name__}", path, line)
        for field in ("messages", "target", "tools"):
            if field not in record:
                raise DataError(f"missing field {field!r}", path, line)
        if not isinstance(record["messages"], list) or not all(isinstance(m, dict) for m in record["messages"]):
            raise DataError("field 'messages' must be a list of objects", path, line)
        if not isinstance(record["target"], str):
            raise DataError("field 'target' must be a string", path, line)
        samples.append(
            Sample(
                id=f"{subset}_{index}",
                subset=subset,
                input={"messages": record["messages"], "tools": parse_tools(record["tools"], path, line)},
                gold=record["target"],
                meta={"line": line},
            )
        )
    return samples


def available_files(data_dir: str | Path | None, subsets: list[str]) -> dict[str, Path | None]:
    root = Path(data_dir) if data_dir else data_dir_from_env()
    if root is not None and not source_files.is_dir(root):
        raise DataError("data folder not found", root)
    if root is None:
        return {subset: download_subset(subset) for subset in subsets}
    return {subset: subset_file(root, subset) for subset in subsets}


def load(
    data_dir: str | Path | None = None,
    language: str | None = None,
    subsets: list[str] | None = None,
    limit: int | None = None,
    options: Mapping[str, str] | None = None,  # none selects samples here
) -> list[Sample]:
    """Samples of the subsets whose files exist; a missing subset is left out (reported unavailable)."""
    chosen = list(subsets or SUBSETS)
    files = available_files(data_dir, chosen)
    if not any(files.values()):
        where = data_dir or data_dir_from_env() or HF_DATASET
        raise DataError(f"none of {', '.join(f'{s}.jsonl' for s in chosen)} found", where)
    samples: list[Sample] = []
    for subset, path in files.items():
        if path is not None:
            rows = load_subset(path, subset)
            samples.extend(rows[:limit] if limit else rows)
    return samples
