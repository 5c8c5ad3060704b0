"""Predictions files: formats accepted and precise errors for bad input."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench.predictions import match_predictions, read_predictions
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import Unreadable, parse_predictions


@pytest.fixture
def samples(acebench, example_dir: Path):
    return acebench.load(example_dir, language="en")


def _write(tmp_path: Path, rows: list, name: str = "pred.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_jsonl_with_output_result_and_tool_calls(samples, tmp_path: Path):
    path = _write(tmp_path, [
        {"id": "normal_atom_bool_0", "output": "[Clock_setAlarm(time='07:00')]"},
        {"id": "normal_atom_enum_0", "result": "[x()]"},
        {"id": "normal_atom_number_0", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"id": "agent_multi_step_0", "result": [{"BaseApi": {"wifi": True}}], "process": ["[turn_on_wifi()]"]},
    ])
    predictions, summary = match_predictions(path, samples)
    assert summary.matched == 4 and summary.lines_read == 4 and not summary.errors
    assert predictions["normal_atom_enum_0"].output == "[x()]"
    assert predictions["normal_atom_number_0"].tool_calls[0].name == "f"
    assert predictions["agent_multi_step_0"].extra["process"] == ["[turn_on_wifi()]"]
    assert len(summary.missing) == len(samples) - 4


def test_json_array_folder_and_zip_of_official_result_files(samples, tmp_path: Path):
    array = tmp_path / "pred.json"
    array.write_text(json.dumps([{"id": "normal_atom_bool_0", "result": "[f()]"}]))
    assert list(read_predictions(array, samples)) == ["normal_atom_bool_0"]
    folder = tmp_path / "model"
    folder.mkdir()
    _write(folder, [{"id": "normal_atom_bool_0", "result": "[f()]"}], "data_normal_atom_bool_result.json")
    _write(folder, [{"id": "special_irrelevant_0", "result": "no"}], "data_special_irrelevant_result.json")
    assert set(read_predictions(folder, samples)) == {"normal_atom_bool_0", "special_irrelevant_0"}
    bundle = tmp_path / "results.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        for file in folder.iterdir():
            z.write(file, f"model/{file.name}")
    assert set(read_predictions(bundle, samples)) == {"normal_atom_bool_0", "special_irrelevant_0"}


def test_every_problem_is_listed_with_its_line(samples, tmp_path: Path):
    path = _write(tmp_path, [
        {"id": "normal_atom_bool_0", "output": "[f()]"},
        {"id": "normal_atom_bool_0", "output": "[g()]"},
        {"id": "normal_atom_bool_99", "output": "[f()]"},
        {"id": "no_such_category_1", "output": "[f()]"},
        {"output": "[f()]"},
        {"id": "normal_atom_enum_0", "output": ["not", "text"]},
        {"id": "normal_atom_number_0"},
        {"id": "agent_multi_step_0", "result": "[f()]"},
        {"id": "agent_multi_turn_0", "result": [], "process": [1]},
        {"id": "normal_atom_list_0", "tool_calls": [{"arguments": {}}]},
        [1, 2],
    ])
    with pytest.raises(PredictionsError) as raised:
        read_predictions(path, samples)
    message = str(raised.value)
    assert "10 problem(s)" in message
    for expected in [
        "line 2: duplicate id 'normal_atom_bool_0' (first at",
        "line 3: unknown id 'normal_atom_bool_99'",
        "line 4: unknown id 'no_such_category_1'",
        "line 5: field 'id' must be a non-empty string",
        "line 6: field 'output' must be a string",
        "line 7: needs 'output'",
        "line 8: agent item: field 'result' must be the end state",
        "line 9: agent item: field 'process' must be a list of strings",
        "line 10: tool_calls[0] must be an object with a string 'name'",
    ]:
        assert expected in message, expected
    _, summary = match_predictions(path, samples)
    assert summary.duplicates == ["normal_atom_bool_0"]
    assert summary.unknown == ["normal_atom_bool_99", "no_such_category_1"]


def test_ids_of_categories_not_being_scored_are_skipped(acebench, example_dir: Path, tmp_path: Path):
    only_bool = acebench.load(example_dir, language="en", subsets=["normal_atom_bool"])
    path = _write(tmp_path, [{"id": "normal_atom_bool_0", "output": "[f()]"}, {"id": "normal_atom_enum_0", "output": "[f()]"}])
    predictions, summary = match_predictions(path, only_bool)
    assert list(predictions) == ["normal_atom_bool_0"] and summary.other_subsets == 1


def test_invalid_json_and_non_utf8(samples, tmp_path: Path):
    bad_json = _write(tmp_path, ['{"id": "normal_atom_bool_0", "output": "[f()]"}', "{oops"])
    with pytest.raises(PredictionsError, match=r"pred\.jsonl, line 2: invalid JSON"):
        read_predictions(bad_json, samples)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "normal_atom_bool_0", "output": "ok"}\n{"id": "x", "output": "caf\xe9"}\n')
    with pytest.raises(PredictionsError, match=r"latin\.jsonl, line 2: not valid UTF-8"):
        read_predictions(latin, samples)


def test_missing_file_and_empty_folder(samples, tmp_path: Path):
    with pytest.raises(PredictionsError, match="file not found"):
        read_predictions(tmp_path / "nope.jsonl", samples)
    with pytest.raises(PredictionsError, match="no .json or .jsonl files"):
        read_predictions(tmp_path, samples)


def test_unicode_line_separators_inside_strings_are_not_line_breaks(samples, tmp_path: Path):
    path = tmp_path / "pred.jsonl"
    rows = [{"id": "normal_atom_bool_0", "output": "[f()]\u2028\u0085"}, {"id": "normal_atom_enum_0", "output": "x"}]
    path.write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n", encoding="utf-8")
    predictions = read_predictions(path, samples)
    assert predictions["normal_atom_bool_0"].output == "[f()]\u2028\u0085" and predictions["normal_atom_enum_0"].source_line == 2


def test_an_invalid_json_line_does_not_hide_the_other_problems_of_the_file(samples, tmp_path: Path):
    from evaluators.core.predictions import parse_predictions

    latin = '{"id": "normal_atom_bool_1", "output": "caf\xe9"}'
    path = _write(tmp_path, [{"id": "normal_atom_bool_0", "output": "[f()]"}, "{oops", {"output": "[f()]"},
                             {"id": "normal_atom_enum_0", "output": 3}, {"id": "normal_atom_bool_0", "output": "[g()]"}])
    path.write_bytes(path.read_bytes() + latin.encode("latin-1") + b"\n")
    for source in (path, parse_predictions(path)):
        predictions, summary = match_predictions(source, samples)
        assert summary.lines_read == 6 and list(predictions) == ["normal_atom_bool_0"]
        assert [error.split(": ", 1)[0].rsplit("/", 1)[-1] for error in summary.errors] == [
            f"pred.jsonl, line {n}" for n in (2, 3, 4, 5, 6)]
        assert "invalid JSON" in summary.errors[0] and "field 'id' must be a non-empty string" in summary.errors[1]
        assert "field 'output' must be a string" in summary.errors[2] and "duplicate id" in summary.errors[3]
        assert "not valid UTF-8" in summary.errors[4]
    with pytest.raises(PredictionsError) as raised:  # the command line lists them all too
        read_predictions(path, samples)
    assert "5 problem(s)" in str(raised.value) and "line 2: invalid JSON" in str(raised.value)
    assert "line 3: field 'id'" in str(raised.value)
    parsed = parse_predictions(path)
    assert parsed.name == "pred.jsonl" and parsed.parsed_bytes > 0
    assert all(row.where == "pred.jsonl" for row in parsed.rows) and str(tmp_path) not in repr(parsed.rows)


# ---- a file of one JSON object spread over lines (an official harness's results file) ---------------------------

def test_an_indented_json_object_is_one_row(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{\n  "info": {"x": 1},\n  "simulations": [\n    {"task_id": "0"}\n  ]\n}\n')
    parsed = parse_predictions(path)
    assert [(row.line, row.data) for row in parsed.rows] == [(1, {"info": {"x": 1}, "simulations": [{"task_id": "0"}]})]
    # a first line that opens an object and a broken rest: JSON Lines after all, each line's problem kept
    path.write_text('{"id": "a",\n"output": 1}\n{"id": "b", "output": 2}\n')
    rows = parse_predictions(path).rows
    assert [row.line for row in rows] == [1, 2, 3] and isinstance(rows[0].data, Unreadable)
    assert rows[2].data == {"id": "b", "output": 2}
    # a lone "{" first line is a document: its syntax error is reported where it is
    path.write_text('{\n  "info": {"x": 1},\n  "simulations": [\n')
    with pytest.raises(PredictionsError, match="invalid JSON") as caught:
        parse_predictions(path)
    assert "results.json" in str(caught.value)
    # JSON Lines whose first line is whole stay JSON Lines
    path.write_text('{"id": "a", "output": 1}\n{"id": "b", "output": 2}\n')
    assert [row.data["id"] for row in parse_predictions(path).rows] == ["a", "b"]
