"""Reading StepEval-Audio-Toolcall: 8 JSON Lines files (`<tool>_positive` / `<tool>_negative`), one
dialogue per line as a list of turns, from a local folder or from the HF dataset (cached)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.benchmarks.stepeval_audio.extract import step_text_call
from evaluators.benchmarks.stepeval_audio.tools import POLARITIES, TOOLS, canonical_name, file_stem
from evaluators.core import source_files
from evaluators.core.downloads import download_failed
from evaluators.core.environment import declare, hub_endpoint
from evaluators.core.errors import DataError
from evaluators.core.jsonl import read_json_lines
from evaluators.core.paths import data_dir_from_env, datasets_dir
from evaluators.core.types import Sample

HF_DATASET = "stepfun-ai/StepEval-Audio-Toolcall"
REVISION = declare("stepeval_revision", "the pinned revision",
                   "the StepEval-Audio-Toolcall dataset revision to read")
HF_REVISION_ENV = REVISION.name
DATA_VERSION = f"{HF_DATASET}@hub"
LOCAL_FOLDERS = ("", "stepeval_audio_toolcall", "Step-Audio_Toolcall")
SPEAKERS = ("Human", "Assistant", "Input")


def _turn(raw: Any, index: int, path: Path, line: int) -> dict[str, Any]:
    """One turn, validated and normalised: kind user | assistant | call | tool_result."""
    where = f"turn {index}"
    if not isinstance(raw, dict):
        raise DataError(f"{where}: expected an object, got {type(raw).__name__}", path, line)
    speaker, text, value = raw.get("from"), raw.get("text"), raw.get("value")
    if speaker not in SPEAKERS:
        raise DataError(f"{where}: field 'from' must be one of {', '.join(SPEAKERS)}, got {speaker!r}", path, line)
    if not isinstance(text, str):
        raise DataError(f"{where}: field 'text' must be a string", path, line)
    turn_idx = raw.get("turn_idx", index)
    if not isinstance(turn_idx, int) or isinstance(turn_idx, bool):
        raise DataError(f"{where}: field 'turn_idx' must be an integer", path, line)
    wav = None
    if isinstance(value, dict):
        if value.get("type") != "wav" or not isinstance(value.get("value"), str):
            raise DataError(f"{where}: field 'value' must be {{\"type\": \"wav\", \"value\": PATH}} or a string", path, line)
        wav = value["value"]
    elif not isinstance(value, str):
        raise DataError(f"{where}: field 'value' must be a wav reference or a string", path, line)
    turn: dict[str, Any] = {"turn_idx": turn_idx, "text": text, "wav": wav}
    if speaker == "Human":
        if wav is None:
            raise DataError(f"{where}: a Human turn needs a wav reference in field 'value'", path, line)
        return {**turn, "kind": "user"}
    if speaker == "Input":
        return {**turn, "kind": "tool_result", "text": value if isinstance(value, str) else text}
    call = step_text_call(value) if isinstance(value, str) else None
    if call is None:
        return {**turn, "kind": "assistant"}
    name, arguments = call
    if arguments is None:
        raise DataError(f"{where}: the tool call's arguments in field 'value' are not a JSON object", path, line)
    return {**turn, "kind": "call", "call": {"name": canonical_name(name), "arguments": arguments}}


def parse_dialogue(record: Any, path: Path, line: int, tool: str, polarity: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(history turns, gold) of one line; the last turn, always the Assistant's, is the gold answer."""
    if not isinstance(record, list) or len(record) < 2:
        raise DataError("expected a JSON array of at least two turns", path, line)
    turns = [_turn(raw, index, path, line) for index, raw in enumerate(record)]
    last = turns[-1]
    if record[-1].get("from") != "Assistant":
        raise DataError(f"turn {len(turns) - 1}: the last turn (the gold answer) must be from 'Assistant'", path, line)
    for index, turn in enumerate(turns):
        if turn["kind"] == "tool_result" and (index == 0 or turns[index - 1]["kind"] != "call"):
            raise DataError(f"turn {index}: an 'Input' turn (tool result) must follow an Assistant tool call", path, line)
    if isinstance(record[-1].get("value"), str) and "<tool_call>" in record[-1]["value"] and last["kind"] != "call":
        raise DataError(f"turn {len(turns) - 1}: field 'value' holds an unreadable tool call", path, line)
    gold_call = last.get("call")
    if polarity == "positive" and (gold_call is None or gold_call["name"] != tool):
        raise DataError(f"turn {len(turns) - 1}: a {tool} positive must end in a call to {tool}", path, line)
    if polarity == "negative" and gold_call is not None and gold_call["name"] == tool:
        raise DataError(f"turn {len(turns) - 1}: a {tool} negative must not end in a call to {tool}", path, line)
    return turns[:-1], {"call": gold_call, "text": last["text"]}


def load_file(path: Path, tool: str, polarity: str, source: str) -> list[Sample]:
    stem = file_stem(tool, polarity)
    samples = []
    for line, record in read_json_lines(path):
        history, gold = parse_dialogue(record, path, line, tool, polarity)
        session = record[0].get("session_id")
        samples.append(
            Sample(
                id=f"{stem}_{line - 1}",  # 0-based line number, as the wav names use it
                subset=tool,
                input={"history": history, "polarity": polarity},
                gold=gold,
                meta={"file": path.name, "line": line, "session_id": session, "root": str(path.parent), "source": source},
            )
        )
    return samples


def local_files(root: Path) -> dict[str, Path]:
    """file stem -> path, from the first of `root`, `root/stepeval_audio_toolcall`, `root/Step-Audio_Toolcall`
    that holds any of the files."""
    stems = [file_stem(tool, polarity) for tool in TOOLS for polarity in POLARITIES]
    for folder in LOCAL_FOLDERS:
        candidate = root / folder if folder else root
        found = {stem: candidate / f"{stem}.jsonl" for stem in stems if source_files.is_file(candidate / f"{stem}.jsonl")}
        if found:
            return found
    return {}


def download_file(stem: str) -> Path | None:
    """One data file from the HF dataset (cached under TOOLBOARD_HOME); None when the dataset lacks it."""
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.utils import EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError

    endpoint = hub_endpoint()
    try:
        return Path(
            hf_hub_download(
                HF_DATASET, f"{stem}.jsonl", repo_type="dataset", revision=REVISION.read(),
                endpoint=endpoint, cache_dir=str(datasets_dir() / "huggingface"),
            )
        )
    except EntryNotFoundError as exc:
        if not isinstance(exc, LocalEntryNotFoundError):  # the Hub answered: the dataset has no such file
            return None
        failure: BaseException = exc  # the Hub could not be asked, and the file is not in the cache
    except (HfHubHTTPError, OSError) as exc:
        failure = exc
    raise download_failed(failure, f"StepEval-Audio-Toolcall's {stem}.jsonl from the hub dataset {HF_DATASET}",
                          endpoint or constants.ENDPOINT) from None


def load(
    data_dir: str | Path | None = None,
    language: str | None = None,
    subsets: list[str] | None = None,
    limit: int | None = None,
    options: Mapping[str, str] | None = None,  # none selects samples here
) -> list[Sample]:
    """Samples of the chosen tools. A tool needs both of its files; one whose files are both absent is
    left out (reported unavailable). `limit` keeps the first N dialogues of each file."""
    tools = list(subsets or TOOLS)
    unknown = [tool for tool in tools if tool not in TOOLS]
    if unknown:
        raise DataError(f"unknown tool {unknown[0]!r}; known: {', '.join(TOOLS)}")
    root = Path(data_dir) if data_dir else data_dir_from_env()
    if root is not None and not source_files.is_dir(root):
        raise DataError("data folder not found", root)
    source = "local" if root is not None else "hub"
    found = local_files(root) if root is not None else {}
    samples: list[Sample] = []
    for tool in tools:
        paths = {}
        for polarity in POLARITIES:
            stem = file_stem(tool, polarity)
            paths[polarity] = found.get(stem) if root is not None else download_file(stem)
        if not any(paths.values()):
            continue
        for polarity, path in paths.items():
            if path is None:
                other = next(p for p in paths.values() if p is not None)
                raise DataError(f"{file_stem(tool, polarity)}.jsonl is missing beside {other.name}; {tool} needs both files", other.parent)
            rows = load_file(path, tool, polarity, source)
            samples.extend(rows[:limit] if limit else rows)
    if not samples:
        where = root if root is not None else HF_DATASET
        raise DataError(f"none of the data files ({', '.join(file_stem(t, 'positive') + '.jsonl' for t in tools)}, …) found", where)
    return samples
