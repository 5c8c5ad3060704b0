"""BFCL multi-turn samples: the four categories of the pinned wheel as the contract shapes them (holdout docs moved
out of `function` into `missed_function`, ground truth per turn), the same from a data folder, and clear
DataErrors for bad files (which file, which line, what was expected)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evaluators.benchmarks.bfcl.categories import MULTI_TURN
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.multi_turn.environments import backend_config
from evaluators.benchmarks.bfcl.wheel import DATA_PREFIX, WHEEL_PATH_ENV, read_member
from evaluators.core.errors import DataError
from tests.conftest import BfclOfficial

BASE = "multi_turn_base"


@pytest.fixture
def wheel(bfcl_official: BfclOfficial, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    return bfcl_official.wheel


def _member_lines(wheel: Path, relative: str) -> list[dict]:
    return [json.loads(line) for line in read_member(wheel, DATA_PREFIX + relative).decode().splitlines() if line]


def _folder(wheel: Path, root: Path, category: str = BASE, items: list[dict] | None = None,
            answers: list[dict] | None = None, func_docs: bool = True) -> Path:
    """A data folder with one multi-turn category (its first three items, or the given lines)."""
    items = items if items is not None else _member_lines(wheel, f"BFCL_v4_{category}.json")[:3]
    answers = answers if answers is not None else _member_lines(wheel, f"possible_answer/BFCL_v4_{category}.json")[:3]
    (root / "possible_answer").mkdir(parents=True, exist_ok=True)
    (root / f"BFCL_v4_{category}.json").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    (root / f"possible_answer/BFCL_v4_{category}.json").write_text("".join(json.dumps(a) + "\n" for a in answers),
                                                                   encoding="utf-8")
    if func_docs:
        (root / "multi_turn_func_doc").mkdir(exist_ok=True)
        for name in backend_config(wheel).func_doc_files.values():
            (root / "multi_turn_func_doc" / name).write_bytes(read_member(wheel, f"{DATA_PREFIX}multi_turn_func_doc/{name}"))
    return root


@pytest.mark.slow
def test_the_four_categories_load_from_the_wheel(wheel: Path):
    samples = load(subsets=list(MULTI_TURN))
    assert Counter(s.subset for s in samples) == {category: 200 for category in MULTI_TURN}
    for sample in samples:
        assert len(sample.gold) == len(sample.input["question"])
        assert sample.meta == {"category": sample.subset, "language": "python",
                               "long_context": sample.subset == "multi_turn_long_context"}
        assert set(sample.input) == {"question", "function", "missed_function", "involved_classes", "initial_config"}
        names = [doc["name"] for doc in sample.input["function"]]
        held_out = [doc["name"] for docs in sample.input["missed_function"].values() for doc in docs]
        assert not set(names) & set(held_out)
        if sample.subset == "multi_turn_miss_func":
            assert held_out
            for turn in sample.input["missed_function"]:
                assert sample.input["question"][int(turn)] == []
        else:
            assert sample.input["missed_function"] == {}


@pytest.mark.slow
def test_functions_follow_the_involved_classes_in_order_without_the_holdouts(wheel: Path):
    samples = {s.id: s for s in load(subsets=["multi_turn_miss_func"])}
    sample = samples["multi_turn_miss_func_0"]
    config = backend_config(wheel)
    expected = [doc for name in sample.input["involved_classes"]
                for doc in _member_lines(wheel, f"multi_turn_func_doc/{config.func_doc_files[name]}")]
    held = sample.input["missed_function"]["3"]
    assert [doc["name"] for doc in held] == ["sort"]
    assert [d for d in expected if d["name"] != "sort"] == sample.input["function"]
    assert sample.gold[3] == ["sort('final_report.pdf')"]


@pytest.mark.slow
def test_a_data_folder_reads_as_the_wheel(wheel: Path, tmp_path: Path):
    from_folder = load(_folder(wheel, tmp_path / "data"), subsets=[BASE])
    from_wheel = load(subsets=[BASE], limit=3)
    assert from_folder == from_wheel


def test_a_folder_without_func_docs_is_a_clear_error(wheel: Path, tmp_path: Path):
    folder = _folder(wheel, tmp_path / "data", func_docs=False)
    with pytest.raises(DataError, match="multi_turn_func_doc"):
        load(folder, subsets=[BASE])


@pytest.mark.parametrize(("change", "message"), [
    (lambda item, answer: item.update(question="hello"), "field 'question' must be a list"),
    (lambda item, answer: item["question"].__setitem__(0, "hi"), r"question\[0\] must be a list of messages"),
    (lambda item, answer: item.update(involved_classes=["GorillaFileSystem", "Toaster"]), "unknown class 'Toaster'"),
    (lambda item, answer: item.update(initial_config=[]), "field 'initial_config' must be a dict"),
    (lambda item, answer: answer["ground_truth"].pop(), "ground-truth turns for item"),
    (lambda item, answer: answer.update(id="multi_turn_base_77"), "does not match the item id"),
    (lambda item, answer: answer["ground_truth"].__setitem__(0, [1]), r"ground_truth\[0\] must be a list of call texts"),
    (lambda item, answer: item.update(missed_function={"9": ["cd"]}), "names turn '9'"),
    (lambda item, answer: item.update(id="multi_turn_other_1"), "does not belong to category"),
])
def test_bad_items_are_clear_data_errors(wheel: Path, tmp_path: Path, change, message: str):
    items = _member_lines(wheel, f"BFCL_v4_{BASE}.json")[:2]
    answers = _member_lines(wheel, f"possible_answer/BFCL_v4_{BASE}.json")[:2]
    change(items[1], answers[1])
    folder = _folder(wheel, tmp_path / "data", items=items, answers=answers)
    with pytest.raises(DataError, match=message) as caught:
        load(folder, subsets=[BASE])
    assert caught.value.line == 2
    assert caught.value.path is not None and caught.value.path.endswith(f"BFCL_v4_{BASE}.json")


def test_unequal_item_and_answer_counts_are_a_clear_error(wheel: Path, tmp_path: Path):
    items = _member_lines(wheel, f"BFCL_v4_{BASE}.json")[:3]
    answers = _member_lines(wheel, f"possible_answer/BFCL_v4_{BASE}.json")[:2]
    with pytest.raises(DataError, match="3 items in BFCL_v4_multi_turn_base.json but 2 answers"):
        load(_folder(wheel, tmp_path / "data", items=items, answers=answers), subsets=[BASE])


def test_a_bad_func_doc_line_names_its_file(wheel: Path, tmp_path: Path):
    folder = _folder(wheel, tmp_path / "data")
    (folder / "multi_turn_func_doc" / "gorilla_file_system.json").write_text('{"name": "ls"}\n[1]\n', encoding="utf-8")
    with pytest.raises(DataError, match="expected a function doc") as caught:
        load(folder, subsets=[BASE])
    assert caught.value.line == 2 and caught.value.path.endswith("gorilla_file_system.json")
