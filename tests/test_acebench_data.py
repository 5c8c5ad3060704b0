"""Reading the official layout from a folder or from the downloaded archive, and its errors."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from evaluators.benchmarks.acebench import data
from evaluators.benchmarks.acebench.categories import CATEGORIES
from evaluators.core.archive import safe_extract
from evaluators.core.errors import DataError


def test_example_loads_every_category(example_dir: Path):
    samples = data.load(example_dir, language="en")
    assert {s.subset for s in samples} == set(CATEGORIES)
    adjust = [s for s in samples if s.subset == "normal_multi_turn_user_adjust"]
    assert [s.meta["conversation"] for s in adjust] == ["0", "0"]
    agent = next(s for s in samples if s.subset == "agent_multi_step")
    assert agent.meta["mile_stone"] and agent.input["involved_classes"] == ["BaseApi"]


def test_limit_and_subsets(example_dir: Path):
    samples = data.load(example_dir, language="en", subsets=["normal_single_turn_single_function"], limit=1)
    assert [s.id for s in samples] == ["normal_single_turn_single_function_0"]


def test_limit_keeps_whole_conversations(real_acebench_dir: Path):
    samples = data.load(real_acebench_dir, language="en", subsets=["normal_multi_turn_user_adjust"], limit=2)
    assert {s.meta["conversation"] for s in samples} == {"0", "1"}
    assert all(s.id.startswith(("normal_multi_turn_user_adjust_0_", "normal_multi_turn_user_adjust_1_")) for s in samples)


def _copy(example_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "acebench"
    shutil.copytree(example_dir, target)
    return target


def test_missing_file_names_the_file(example_dir: Path, tmp_path: Path):
    root = _copy(example_dir, tmp_path)
    (root / "data_en" / "possible_answer" / "data_normal_atom_bool.json").unlink()
    with pytest.raises(DataError, match=r"possible_answer/data_normal_atom_bool\.json: file not found"):
        data.load(root, language="en")


def test_count_mismatch(example_dir: Path, tmp_path: Path):
    root = _copy(example_dir, tmp_path)
    path = root / "data_en" / "possible_answer" / "data_normal_single_turn_single_function.json"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    with pytest.raises(DataError, match="2 questions .* but 1 answers"):
        data.load(root, language="en")


def test_bad_json_line_names_file_and_line(example_dir: Path, tmp_path: Path):
    root = _copy(example_dir, tmp_path)
    path = root / "data_en" / "data_normal_single_turn_single_function.json"
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n{broken\n")
    with pytest.raises(DataError, match=r"data_normal_single_turn_single_function\.json, line 2: invalid JSON"):
        data.load(root, language="en")


def test_id_mismatch_and_missing_field(example_dir: Path, tmp_path: Path):
    root = _copy(example_dir, tmp_path)
    path = root / "data_en" / "possible_answer" / "data_normal_atom_bool.json"
    path.write_text(json.dumps({"id": "normal_atom_bool_7", "ground_truth": {}}) + "\n")
    with pytest.raises(DataError, match="line 1: answer id 'normal_atom_bool_7' does not match"):
        data.load(root, language="en")
    path.write_text(json.dumps({"id": "normal_atom_bool_0"}) + "\n")
    with pytest.raises(DataError, match="line 1: missing field 'ground_truth'"):
        data.load(root, language="en")


def test_unknown_language_and_folder(example_dir: Path, tmp_path: Path):
    with pytest.raises(DataError, match="unknown language"):
        data.load(example_dir, language="fr")
    with pytest.raises(DataError, match="no data_zh folder"):
        data.load(example_dir, language="zh")
    with pytest.raises(DataError, match="data folder not found"):
        data.load(tmp_path / "nope", language="en")


def test_data_dir_from_environment(example_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_DATA_DIR", str(example_dir))
    assert len(data.load(None, language="en", subsets=["normal_atom_bool"])) == 1


def _repo_archive(source: Path, target: Path) -> Path:
    """A zip shaped like the official repository archive: ACEBench-<commit>/data_all/data_<lang>/…"""
    top = f"ACEBench-{data.OFFICIAL_COMMIT}"
    with zipfile.ZipFile(target, "w") as bundle:
        bundle.writestr(f"{top}/README.md", "readme")
        bundle.writestr(f"{top}/eval_main.py", "# not unpacked")
        for path in sorted(source.rglob("*.json")):
            if "data_" in path.parent.name or path.parent.name == "possible_answer":
                bundle.write(path, f"{top}/data_all/{path.relative_to(source)}")
    return target


class _Server:
    def __init__(self, folder: Path):
        handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(folder), **k)  # noqa: E731
        http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None  # type: ignore[method-assign]
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def _download_and_load(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, language: str):
    served = tmp_path / "served"
    served.mkdir()
    _repo_archive(source, served / "acebench.zip")
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with _Server(served) as base:
        monkeypatch.setenv(data.ARCHIVE_URL_ENV, f"{base}/acebench.zip")
        samples = data.load(None, language=language)
    # the second load reads the cache: no server is running any more
    assert data.load(None, language=language) == samples
    cached = data.download_official_data()
    assert not (cached / "eval_main.py").exists()
    return samples


@pytest.mark.slow
def test_download_path_with_the_example(example_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    samples = _download_and_load(example_dir, tmp_path, monkeypatch, "en")
    assert len(samples) == len(data.load(example_dir, language="en"))


def test_download_path_with_the_real_data(real_acebench_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    samples = _download_and_load(real_acebench_dir, tmp_path, monkeypatch, "zh")
    assert len(samples) == 1017


@pytest.mark.slow  # over half a second in the fast loop
def test_failed_download_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with _Server(tmp_path) as base:
        monkeypatch.setenv(data.ARCHIVE_URL_ENV, f"{base}/missing.zip")
        with pytest.raises(DataError, match=r"could not download the ACEBench data \(127\.0\.0\.1:\d+ answered HTTP 404 Not Found\)"):
            data.load(None, language="en")


def test_safe_extract_refuses_paths_outside_the_target(tmp_path: Path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("top/data_all/ok.json", "{}")
        bundle.writestr("top/../../escape.json", "{}")
    with pytest.raises(DataError, match="unsafe path"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "escape.json").exists()


def test_real_data_counts(real_acebench_dir: Path):
    assert len(data.load(real_acebench_dir, language="en")) == 1023
    assert len(data.load(real_acebench_dir, language="zh")) == 1017


@pytest.mark.slow
def test_the_download_keeps_the_official_request_code(example_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """model_inference/ comes out of the same archive (read as data, never run), so a downloaded run
    sends the official requests; a cache made before keeping it fetches it once."""
    from evaluators.benchmarks.acebench.official_prompts import official_prompts_for_data
    from tests.official_fixtures import write_official_files

    served = tmp_path / "served"
    served.mkdir()
    archive = _repo_archive(example_dir, served / "acebench.zip")
    code = write_official_files(tmp_path / "official")
    with zipfile.ZipFile(archive, "a") as bundle:
        for path in sorted(code.rglob("*.py")):
            bundle.write(path, f"ACEBench-{data.OFFICIAL_COMMIT}/model_inference/{path.relative_to(code)}")
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with _Server(served) as base:
        monkeypatch.setenv(data.ARCHIVE_URL_ENV, f"{base}/acebench.zip")
        language_dir = data.resolve_language_dir(None, "en")
        assert data.official_code_dir(language_dir) == data.official_code_target() / "model_inference"
        shutil.rmtree(data.official_code_target())  # as in a cache from before the code was kept
        prompts = official_prompts_for_data(language_dir)
    assert prompts.code.root == data.official_code_target() / "model_inference"
    assert not (tmp_path / "official" / "executed.txt").exists()
