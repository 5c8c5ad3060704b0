"""The four multi-turn categories' samples, read from the same source as the single-turn ones (a folder laid
out like the wheel's `bfcl_eval/data/`, or the wheel): `BFCL_v4_<category>.json`,
`possible_answer/BFCL_v4_<category>.json` (paired by position, ids must match) and
`multi_turn_func_doc/<file>.json` (the official MULTI_TURN_FUNC_DOC_FILE_MAPPING, read from the wheel).

A sample, as the official `load_dataset_entry` + `populate_test_cases_with_predefined_functions` leave it
(without the language hint, which build_request adds):
```
Sample(id, subset=category,
  input={"question": [[message, ...], ...],        # per turn; a holdout turn of miss_func is []
         "function": [doc, ...],                   # the involved classes' docs in involved_classes order,
                                                   # the held-out ones removed
         "missed_function": {"3": [doc, ...]},     # turn index (text) -> the held-out docs; {} if none
         "involved_classes": [...], "initial_config": {...}},
  gold=[["cd(folder='document')", ...], ...],      # the ground-truth call texts per turn
  meta={"category": category, "language": "python", "long_context": category == "multi_turn_long_context"})
```
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from evaluators.benchmarks.bfcl.categories import MULTI_TURN, PYTHON
from evaluators.benchmarks.bfcl.multi_turn.environments import BackendConfig, backend_config
from evaluators.benchmarks.bfcl.records import paired_with_answers, required_fields
from evaluators.core import source_files
from evaluators.core.errors import DataError
from evaluators.core.types import Sample

FUNC_DOC_FOLDER = "multi_turn_func_doc"
LONG_CONTEXT = "multi_turn_long_context"


def _file(category: str) -> str:
    return f"BFCL_v4_{category}.json"


class FuncDocs:
    """Each class's function docs, read once per load from the source's multi_turn_func_doc/."""

    def __init__(self, source: Any, config: BackendConfig):
        self.source = source
        self.config = config
        self._docs: dict[str, list[dict]] = {}

    def of(self, class_name: str) -> list[dict]:
        if class_name not in self._docs:
            relative = f"{FUNC_DOC_FOLDER}/{self.config.func_doc_files[class_name]}"
            where = self.source.where(relative)
            if self.source.folder is not None and not source_files.is_dir(self.source.folder / FUNC_DOC_FOLDER):
                raise DataError(f"no {FUNC_DOC_FOLDER}/ folder beside the multi-turn files (a data folder for the "
                                "multi-turn categories holds the wheel's bfcl_eval/data/multi_turn_func_doc/ too)",
                                self.source.folder)
            docs = []
            for line, doc in self.source.read(relative):
                if not isinstance(doc, dict) or not isinstance(doc.get("name"), str):
                    raise DataError("expected a function doc with a string 'name'", where, line)
                docs.append(doc)
            self._docs[class_name] = docs
        return self._docs[class_name]


def _check_question(question: list[Any], where: str, line: int) -> None:
    if not question:
        raise DataError("field 'question' must hold at least one turn", where, line)
    for turn_index, turn in enumerate(question):
        if not isinstance(turn, list):
            raise DataError(f"question[{turn_index}] must be a list of messages, got {type(turn).__name__}", where,
                            line)
        for index, message in enumerate(turn):
            if (not isinstance(message, dict) or not isinstance(message.get("role"), str)
                    or not isinstance(message.get("content"), str)):
                raise DataError(f"question[{turn_index}][{index}] must be a message with a string 'role' and "
                                "'content'", where, line)


def _check_classes(classes: list[Any], config: BackendConfig, where: str, line: int) -> None:
    for name in classes:
        if not isinstance(name, str) or name not in config.class_modules:
            raise DataError(f"unknown class {name!r} in 'involved_classes'; known: {', '.join(config.classes)}",
                            where, line)


def _missed_names(record: dict[str, Any], question: list[Any], where: str, line: int) -> dict[str, list[str]]:
    missed = record.get("missed_function", {})
    if not isinstance(missed, dict):
        raise DataError(f"field 'missed_function' must be an object, got {type(missed).__name__}", where, line)
    for turn, names in missed.items():
        if not turn.isdigit() or int(turn) >= len(question):
            raise DataError(f"'missed_function' names turn {turn!r}, but the item has {len(question)} turns",
                            where, line)
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise DataError(f"'missed_function'[{turn!r}] must be a list of function names", where, line)
    return missed


def populate_functions(classes: list[str], missed: dict[str, list[str]], docs: FuncDocs
                       ) -> tuple[list[dict], dict[str, list[dict]]]:
    """The official populate step: every involved class's docs in order; each held-out name (turn by turn, in
    the item's order) moves its first matching doc out of the list; a name without a doc is skipped."""
    functions = [copy.deepcopy(doc) for name in classes for doc in docs.of(name)]
    held_out: dict[str, list[dict]] = {}
    for turn, names in missed.items():
        held_out[turn] = []
        for name in names:
            for index, doc in enumerate(functions):
                if doc["name"] == name:
                    held_out[turn].append(functions.pop(index))
                    break
    return functions, held_out


def _check_answer(answer: Any, item_id: str, turns: int, where: str, line: int, questions_file: str
                  ) -> list[list[str]]:
    answer = required_fields(answer, {"id": str, "ground_truth": list}, where, line)
    if answer["id"] != item_id:
        raise DataError(f"answer id {answer['id']!r} does not match the item id {item_id!r} at the same position "
                        f"({questions_file})", where, line)
    gold: list[list[str]] = answer["ground_truth"]
    if len(gold) != turns:
        raise DataError(f"{len(gold)} ground-truth turns for item {item_id!r}, which has {turns} turns", where, line)
    for index, turn in enumerate(gold):
        if not isinstance(turn, list) or not all(isinstance(call, str) for call in turn):
            raise DataError(f"ground_truth[{index}] must be a list of call texts", where, line)
    return gold


def load_multi_turn_category(source: Any, category: str, wheel: Path | None = None) -> list[Sample]:
    """One multi-turn category's items in file order; `source` is bfcl.data.DataSource."""
    if category not in MULTI_TURN:
        raise DataError(f"{category} is not a multi-turn category")
    config = backend_config(wheel or source.wheel)
    docs = FuncDocs(source, config)
    questions_file = _file(category)
    questions, answers, where, answer_where = paired_with_answers(source, questions_file)
    samples = []
    for (line, record), (answer_line, answer) in zip(questions, answers):
        item = required_fields(record, {"id": str, "question": list, "involved_classes": list, "initial_config": dict},
                        where, line)
        if item["id"].rpartition("_")[0] != category:
            raise DataError(f"id {item['id']!r} does not belong to category {category}", where, line)
        _check_question(item["question"], where, line)
        _check_classes(item["involved_classes"], config, where, line)
        missed = _missed_names(item, item["question"], where, line)
        gold = _check_answer(answer, item["id"], len(item["question"]), answer_where, answer_line, questions_file)
        functions, held_out = populate_functions(item["involved_classes"], missed, docs)
        samples.append(Sample(
            id=item["id"], subset=category,
            input={"question": item["question"], "function": functions, "missed_function": held_out,
                   "involved_classes": item["involved_classes"], "initial_config": item["initial_config"]},
            gold=gold, meta={"category": category, "language": PYTHON, "long_context": category == LONG_CONTEXT},
        ))
    return samples
