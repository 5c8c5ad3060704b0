"""Reading the BFCL v4 categories: from a folder laid out like the wheel's `bfcl_eval/data/`
(`BFCL_v4_<category>.json` + `possible_answer/`, and `multi_turn_func_doc/` for the multi-turn ones), else
straight from the pinned wheel. The 13 single-turn categories are read here, the 4 multi-turn ones by
multi_turn/data.py, the 5 agentic ones by agentic/data.py, format sensitivity by format_sensitivity/data.py."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.agentic.data import AGENTIC_FILES, has_agentic_files, load_agentic_category
from evaluators.benchmarks.bfcl.categories import (
    CATEGORIES,
    FORMAT_SENSITIVITY,
    MULTI_TURN,
    NO_ANSWER,
    SINGLE_TURN,
    category_of_id,
    is_agentic,
    is_multi_turn,
    language_of,
)
from evaluators.benchmarks.bfcl.format_sensitivity.data import has_format_sensitivity_file, load_format_sensitivity
from evaluators.benchmarks.bfcl.multi_turn.data import load_multi_turn_category
from evaluators.benchmarks.bfcl.records import ANSWER_FOLDER, required_fields
from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, VERSION, WHEEL_NAME, has_member, pinned_wheel, read_member
from evaluators.core import source_files
from evaluators.core.errors import DataError
from evaluators.core.jsonl import decode_utf8, iter_json_lines
from evaluators.core.paths import data_dir_from_env
from evaluators.core.types import Sample

DATA_VERSION = f"bfcl-eval {VERSION} ({WHEEL_NAME})"


def category_file(category: str) -> str:
    return f"BFCL_v4_{category}.json"


@dataclass(frozen=True)
class DataSource:
    """Where the files come from: a folder, or the wheel (read member by member)."""

    folder: Path | None = None
    wheel: Path | None = None

    def where(self, relative: str) -> str:
        if self.folder is not None:
            return str(self.folder / relative)
        return f"{self.wheel}:{DATA_PREFIX}{relative}"

    def has(self, relative: str) -> bool:
        if self.folder is not None:
            return source_files.is_file(self.folder / relative)
        assert self.wheel is not None
        source_files.note_read(self.wheel)
        return has_member(self.wheel, DATA_PREFIX + relative)

    def read(self, relative: str) -> list[tuple[int, Any]]:
        """(line number, parsed value) of one JSON Lines file (the `.json` suffix notwithstanding)."""
        return list(iter_json_lines(decode_utf8(self.read_bytes(relative), self.where(relative)), self.where(relative)))

    def read_bytes(self, relative: str) -> bytes:
        """One data file's bytes, from the folder or the wheel; a clear error when the folder lacks it."""
        if self.folder is not None:
            path = self.folder / relative
            if not source_files.is_file(path):
                raise DataError(f"file not found (expected {relative} in the folder laid out like the wheel's "
                                "bfcl_eval/data/)", path)
            return source_files.read_bytes(path)
        assert self.wheel is not None
        source_files.note_read(self.wheel)
        return read_member(self.wheel, DATA_PREFIX + relative)


def find_data_folder(root: Path) -> Path | None:
    """The folder holding `BFCL_v4_<category>.json`: `root` itself or `root/bfcl/`."""
    for candidate in (root, root / "bfcl"):
        names = [category_file(category) for category in SINGLE_TURN + MULTI_TURN] + list(AGENTIC_FILES)
        if any(source_files.is_file(candidate / name) for name in names):
            return candidate
    return None


def data_source(data_dir: str | Path | None) -> DataSource:
    root = Path(data_dir) if data_dir else data_dir_from_env()
    if root is None:
        return DataSource(wheel=pinned_wheel())
    if not source_files.is_dir(root):
        raise DataError("data folder not found", root)
    folder = find_data_folder(root)
    if folder is None:
        raise DataError("no BFCL_v4_<category>.json files here or in bfcl/ (expected the layout of the wheel's "
                        "bfcl_eval/data/: BFCL_v4_<category>.json and possible_answer/BFCL_v4_<category>.json)", root)
    return DataSource(folder=folder)


def _check_question(question: list[Any], where: str, line: int) -> None:
    """A list of turns, the first a list of {role, content} messages (single-turn items have one turn)."""
    if not question or not isinstance(question[0], list):
        raise DataError("field 'question' must be a list of turns, each a list of messages", where, line)
    for index, message in enumerate(question[0]):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise DataError(f"question[0][{index}] must be a message with a string 'role'", where, line)


def _check_functions(functions: list[Any], where: str, line: int) -> None:
    for index, doc in enumerate(functions):
        if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
            raise DataError(f"function[{index}] must be a function doc with a string 'name'", where, line)
        parameters = doc.get("parameters")
        if not isinstance(parameters, dict) or not isinstance(parameters.get("properties"), dict):
            raise DataError(f"function[{index}] ({doc['name']}) needs 'parameters' with 'properties'", where, line)


def _check_category(sample_id: str, category: str, where: str, line: int) -> None:
    if category_of_id(sample_id) != category:
        raise DataError(f"id {sample_id!r} does not belong to category {category}", where, line)


def load_category(source: DataSource, category: str) -> list[Sample]:
    """One category's items; answers are paired with questions by position, as the official runner does,
    and their ids must match line by line."""
    questions_file = category_file(category)
    questions = source.read(questions_file)
    answers: list[tuple[int, Any]] | None = None
    answers_file = f"{ANSWER_FOLDER}/{questions_file}"
    if category not in NO_ANSWER:
        answers = source.read(answers_file)
        if len(answers) != len(questions):
            raise DataError(f"{len(questions)} items in {questions_file} but {len(answers)} answers (they are paired "
                            "by position and must be equally many)", source.where(answers_file))
    samples = []
    for index, (line, record) in enumerate(questions):
        where = source.where(questions_file)
        item = required_fields(record, {"id": str, "question": list, "function": list}, where, line)
        _check_category(item["id"], category, where, line)
        _check_question(item["question"], where, line)
        _check_functions(item["function"], where, line)
        gold = None
        if answers is not None:
            answer_line, answer = answers[index]
            answer_where = source.where(answers_file)
            answer = required_fields(answer, {"id": str, "ground_truth": list}, answer_where, answer_line)
            if answer["id"] != item["id"]:
                raise DataError(f"answer id {answer['id']!r} does not match the item id {item['id']!r} at the same "
                                f"position ({questions_file} line {line})", answer_where, answer_line)
            gold = answer["ground_truth"]
        samples.append(Sample(
            id=item["id"], subset=category, input={"question": item["question"], "function": item["function"]},
            gold=gold, meta={"category": category, "language": language_of(category)},
        ))
    return samples


def optional_multi_turn(source: DataSource) -> bool:
    """A source (a folder, a stand-in wheel) without any multi-turn question file: the multi-turn categories are
    only read when asked for. The pinned wheel holds them."""
    return not any(source.has(category_file(category)) for category in MULTI_TURN)


def asks_every_category(chosen: Sequence[str]) -> bool:
    """Every category, or every one a run can play (all but the agentic ones): the categories a source lacks are
    left out rather than refused."""
    return set(SINGLE_TURN + MULTI_TURN) <= set(chosen)


def load(
    data_dir: str | Path | None = None,
    language: str | None = None,
    subsets: Sequence[str] | None = None,
    limit: int | None = None,
    options: Mapping[str, str] | None = None,  # none selects samples here
) -> list[Sample]:
    """Samples of the chosen categories in the official order; `limit` caps each one. Every category (no
    `subsets`, or all of them named) from a source holding none of the multi-turn files (a copy of the
    single-turn data) gives the single-turn ones only (optional_multi_turn), and one without the agentic files
    leaves those out; the report lists the others as unavailable. `language` is accepted for the common signature:
    BFCL has one (English) set."""
    chosen = list(subsets or CATEGORIES)
    unknown = [name for name in chosen if name not in CATEGORIES]
    if unknown:
        raise DataError(f"unknown BFCL categories: {', '.join(unknown)}; known: {', '.join(CATEGORIES)}")
    source = data_source(data_dir)
    if asks_every_category(chosen):
        if optional_multi_turn(source):
            chosen = [name for name in chosen if not is_multi_turn(name)]
        if not has_agentic_files(source):
            chosen = [name for name in chosen if not is_agentic(name)]
        if not has_format_sensitivity_file(source):
            chosen = [name for name in chosen if name != FORMAT_SENSITIVITY]
    samples: list[Sample] = []
    for category in CATEGORIES:
        if category in chosen:
            if category == FORMAT_SENSITIVITY:
                rows = load_format_sensitivity(source, load_category)
            elif is_agentic(category):
                rows = load_agentic_category(source, category)
            elif is_multi_turn(category):
                rows = load_multi_turn_category(source, category)
            else:
                rows = load_category(source, category)
            samples.extend(rows[:limit] if limit else rows)
    return samples
