"""What a run does before its first request and after its last answer (issue 31): the parsed data kept between
runs and when it is read anew, packages whose `__init__` is deferred, a passed endpoint check kept for a while,
a request body stored once per sample, one benchmark loaded for a run of it, and the phase log of a CLI run
that ends with its output whole."""

from __future__ import annotations

import collections
import dataclasses
import enum
import json
import marshal
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evaluators.core import source_files
from evaluators.core.lazy_packages import defer_package_inits
from evaluators.core.phase_log import PHASE_LOG_ENV
from evaluators.core.registry import get_benchmark
from evaluators.engine import parsed_data, preflight, runner
from evaluators.engine.client import EventLog, _Call
from evaluators.engine.parsed_data import load_samples, parsed_data_dir
from evaluators.engine.preflight import EndpointCheckFailed, UnlistedModelRule, check_endpoint
from evaluators.engine.sdk_transport import endpoint_tls_context, tls_context
from evaluators.engine.settings import RunRequest
from evaluators.engine.store import ROW_REQUEST, Store
from tests.engine_fixtures import correct_reply, run_to_end, scripted_run_config, write_dataset
from tests.scripted_server import ScriptedServer
from tests.test_preflight import ModelsServer
from tests.toolbench_fixtures import write_toolbench

PROJECT = Path(__file__).resolve().parents[1]


# ---- parsed data kept between runs ---------------------------------------------------------------------------

def _counting(name: str) -> tuple[object, list[int]]:
    """The benchmark with a load that counts its calls (the real loader underneath)."""
    benchmark = get_benchmark(name)
    calls: list[int] = []

    def load(*args, **kwargs):
        calls.append(1)
        return benchmark.load(*args, **kwargs)

    load.__module__ = benchmark.load.__module__  # the loader's code is the benchmark's own
    return dataclasses.replace(benchmark, load=load), calls


def test_samples_are_read_once_and_kept_until_a_source_file_changes(tmp_path: Path):
    data = write_toolbench(tmp_path / "data")
    benchmark, calls = _counting("toolbench_static")
    first = load_samples(benchmark, str(data), None, None, None)
    again = load_samples(benchmark, str(data), None, None, None)
    assert calls == [1] and again == first and again is not first  # the kept copy, as new objects
    (kept,) = parsed_data_dir().glob("toolbench_static-*.marshal")

    source = data / "out_of_domain.jsonl"
    lines = source.read_text().splitlines()
    source.write_text("\n".join(lines[:-1]) + "\n")  # one step fewer: another size
    assert len(load_samples(benchmark, str(data), None, None, None)) == len(first) - 1 and calls == [1, 1]

    # Same size and time, other bytes: the hash tells.
    text = source.read_text()
    stat = source.stat()
    source.write_text(text.replace("Oslo", "Osla"))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    changed = load_samples(benchmark, str(data), None, None, None)
    assert calls == [1, 1, 1] and "Osla" in json.dumps([s.gold for s in changed])
    assert kept.exists()


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in _strings(key) + _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def test_a_kept_copy_reads_back_each_repeated_string_as_one_object(tmp_path: Path):
    data = write_toolbench(tmp_path / "data")
    benchmark, calls = _counting("toolbench_static")
    first = load_samples(benchmark, str(data), None, None, None)
    again = load_samples(benchmark, str(data), None, None, None)
    assert calls == [1] and again == first
    texts = _strings([[getattr(sample, field.name) for field in dataclasses.fields(sample)] for sample in again])
    assert len(texts) > 2 * len(set(texts))  # the samples repeat their strings…
    assert len({id(text) for text in texts}) == len(set(texts))  # …and each comes back as one object

    # A list or dict the loader shares between samples stays one object, written once.
    shared = {"name": "shared tool", "parameters": {"type": "object"}}
    rows = parsed_data._one_object_per_string([("a", [shared]), ("b", [shared])], {}, {})
    assert rows == [("a", [shared]), ("b", [shared])] and rows[0][1][0] is rows[1][1][0]


def _wait_for_the_file_clock_to_pass(folder: Path, ns: int) -> None:
    """Until a file written now gets a change time after `ns` (file times move in ticks of a few ms)."""
    probe = folder / "clock-probe"
    deadline = time.monotonic() + 10
    while True:
        probe.write_text("tick")
        if probe.stat().st_ctime_ns > ns:
            return
        if time.monotonic() > deadline:
            raise AssertionError("the file system's clock did not move in 10 s")


def test_a_source_whose_times_are_as_they_were_is_not_hashed_again_and_any_write_is_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(parsed_data, "RACY_SECONDS", 0.0)  # the files were written just before: trust their times now
    data = write_toolbench(tmp_path / "data")
    source = data / "out_of_domain.jsonl"
    _wait_for_the_file_clock_to_pass(tmp_path, source.stat().st_ctime_ns)
    benchmark, calls = _counting("toolbench_static")
    first = load_samples(benchmark, str(data), None, None, None)
    hashed: list[str] = []
    sha256 = parsed_data._sha256
    monkeypatch.setattr(parsed_data, "_sha256", lambda path: hashed.append(path) or sha256(path))
    assert load_samples(benchmark, str(data), None, None, None) == first and calls == [1] and hashed == []

    # Written in place with the same size, its modification time set back: its change time tells.
    _wait_for_the_file_clock_to_pass(tmp_path, source.stat().st_ctime_ns)
    stat = source.stat()
    source.write_text(source.read_text().replace("Oslo", "Osla"))
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "Osla" in json.dumps([s.gold for s in load_samples(benchmark, str(data), None, None, None)])
    assert calls == [1, 1] and set(hashed) == {str(source)}  # checked, then hashed for the new copy

    # A file just changed when it was kept is hashed on every use.
    monkeypatch.setattr(parsed_data, "RACY_SECONDS", 3600.0)
    source.write_text(source.read_text().replace("Osla", "Oslo"))
    kept = load_samples(benchmark, str(data), None, None, None)
    hashed.clear()
    assert load_samples(benchmark, str(data), None, None, None) == kept and calls == [1, 1, 1]
    assert str(source) in hashed


def test_other_asks_get_their_own_copy_and_a_file_that_appears_where_the_loader_looked_is_read(tmp_path: Path):
    data = write_toolbench(tmp_path / "data")
    benchmark, calls = _counting("toolbench_static")
    load_samples(benchmark, str(data), None, None, None)
    load_samples(benchmark, str(data), None, None, 2)
    assert calls == [1, 1] and len(load_samples(benchmark, str(data), None, None, 2)) == 2 and calls == [1, 1]

    # The loader looks in the folder itself before its sub-folders: a file there now is the one to read.
    moved = write_toolbench(tmp_path / "nested" / "toolbench_static")
    benchmark_nested, nested_calls = _counting("toolbench_static")
    assert len(load_samples(benchmark_nested, str(tmp_path / "nested"), None, None, None)) == 5
    write_toolbench(tmp_path / "nested", ()).joinpath("out_of_domain.jsonl").write_text(
        (moved / "out_of_domain.jsonl").read_text().splitlines()[0] + "\n")
    assert len(load_samples(benchmark_nested, str(tmp_path / "nested"), None, None, None)) == 1
    assert nested_calls == [1, 1]


def test_a_damaged_or_unwritable_copy_is_never_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = write_toolbench(tmp_path / "data")
    benchmark, calls = _counting("toolbench_static")
    first = load_samples(benchmark, str(data), None, None, None)
    (kept,) = parsed_data_dir().glob("*.marshal")
    kept.write_bytes(b"\x00not marshal data")
    assert load_samples(benchmark, str(data), None, None, None) == first and calls == [1, 1]
    kept.write_bytes(kept.read_bytes()[:100])  # cut short
    assert load_samples(benchmark, str(data), None, None, None) == first and calls == [1, 1, 1]

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setattr(parsed_data, "parsed_data_dir", lambda: blocked / "parsed-data")
    assert load_samples(benchmark, str(data), None, None, None) == first


def test_samples_holding_values_other_than_plain_data_are_not_kept(tmp_path: Path):
    data = write_toolbench(tmp_path / "data")
    benchmark = get_benchmark("toolbench_static")

    def load(*args, **kwargs):
        samples = benchmark.load(*args, **kwargs)
        samples[0].meta["folder"] = Path("/somewhere")
        return samples

    load.__module__ = benchmark.load.__module__
    odd = dataclasses.replace(benchmark, load=load)
    assert load_samples(odd, str(data), None, None, None)[0].meta["folder"] == Path("/somewhere")
    assert not list(parsed_data_dir().glob("*.marshal"))

    # Subclasses of plain types (an ordered dict, a named tuple, a string enum) are not made plain to be kept.
    Pair = collections.namedtuple("Pair", "left right")
    for odd_value in (collections.OrderedDict(a=1), Pair(1, 2), enum.StrEnum("Kind", "tool")("tool")):
        def load_odd(*args, odd_value=odd_value, **kwargs):
            samples = benchmark.load(*args, **kwargs)
            samples[0].meta["odd"] = odd_value
            return samples

        load_odd.__module__ = benchmark.load.__module__
        loaded = load_samples(dataclasses.replace(benchmark, load=load_odd), str(data), None, None, None)
        assert type(loaded[0].meta["odd"]) is type(odd_value)
        assert not list(parsed_data_dir().glob("*.marshal")), type(odd_value)


def test_a_kept_copy_whose_rows_do_not_fit_the_samples_is_read_anew(tmp_path: Path):
    data = write_toolbench(tmp_path / "data")
    benchmark, calls = _counting("toolbench_static")
    first = load_samples(benchmark, str(data), None, None, None)
    (kept,) = parsed_data_dir().glob("*.marshal")
    copy = marshal.loads(kept.read_bytes())
    kept.write_bytes(marshal.dumps({**copy, "rows": [row[:-1] for row in copy["rows"]]}))  # a field short
    assert load_samples(benchmark, str(data), None, None, None) == first and calls == [1, 1]


def test_loaders_note_what_they_read_and_looked_for(tmp_path: Path):
    data = write_toolbench(tmp_path / "data")
    with source_files.noting() as notes:
        get_benchmark("toolbench_static").load(str(data))
    assert notes.read == {str((data / "out_of_domain.jsonl").resolve())}
    assert notes.looked_for[str(data.absolute())] == "folder"
    assert notes.looked_for[str((data / "out_of_domain.jsonl").absolute())] == "file"
    source_files.is_file(data / "x")  # outside `noting`: nothing noted, nothing fails
    assert str((data / "x").absolute()) not in notes.looked_for


# ---- deferred package inits ----------------------------------------------------------------------------------

def test_a_deferred_package_runs_its_init_only_when_a_name_is_asked_of_it(tmp_path: Path):
    package = tmp_path / "deferpkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("import sys\nsys.modules['deferpkg_log'].runs.append('pkg')\n"
                                          "from deferpkg.leaf import VALUE as SHOWN\nSUB = 'bound by init'\n__version__ = '1.0'\n"
                                          "__all__ = ['SHOWN', 'SUB']\n")
    (package / "leaf.py").write_text("VALUE = 41\n")
    (package / "inner" / "__init__.py").write_text("import sys\nsys.modules['deferpkg_log'].runs.append('inner')\n")
    (package / "inner" / "deep.py").write_text("from deferpkg import leaf\nDEEP = leaf.VALUE + 1\n")
    script = textwrap.dedent(f"""
        import sys, types
        log = types.ModuleType("deferpkg_log"); log.runs = []; sys.modules["deferpkg_log"] = log
        sys.path.insert(0, {str(tmp_path)!r})
        from evaluators.core.lazy_packages import defer_package_inits
        defer_package_inits("deferpkg")
        from deferpkg.inner.deep import DEEP          # submodules import as usual
        assert DEEP == 42 and log.runs == [], log.runs
        import deferpkg
        assert deferpkg.leaf.VALUE == 41 and log.runs == []   # a submodule asked by name is that submodule
        from deferpkg import __version__                        # any other name, dunders too, runs the __init__
        assert __version__ == "1.0" and log.runs == ["pkg"]
        assert deferpkg.SHOWN == 41 and log.runs == ["pkg"]   # once
        assert deferpkg.SUB == "bound by init" and log.runs == ["pkg"]
        namespace = {{}}
        exec("from deferpkg import *", namespace)
        assert namespace["SHOWN"] == 41 and log.runs == ["pkg"]
        try:
            deferpkg.nothing_here
        except AttributeError as error:
            assert "nothing_here" in str(error)
        else:
            raise AssertionError("a missing name must raise AttributeError")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr


def test_a_deferred_init_run_in_one_thread_waits_for_a_submodule_another_is_importing(tmp_path: Path):
    """Thread 1 imports a submodule, which asks the package for a sibling (`from . import helper`) midway; thread 2
    meanwhile asks the package a name, so runs its `__init__`, which imports that same submodule (and waits for
    thread 1 to finish it). Thread 1's sibling import must not wait for thread 2's run of the `__init__`."""
    package = tmp_path / "racepkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import racepkg_sync\nracepkg_sync.init_running.set()\nfrom .slow import VALUE\nNAME = 'bound by init'\n")
    (package / "helper.py").write_text("HELP = 1\n")
    (package / "slow.py").write_text(
        "import racepkg_sync\nracepkg_sync.started.set()\nracepkg_sync.go.wait()\nfrom . import helper\nVALUE = helper.HELP\n")
    script = textwrap.dedent(f"""
        import os, sys, threading, types
        sync = types.ModuleType("racepkg_sync")
        sync.started, sync.go, sync.init_running = threading.Event(), threading.Event(), threading.Event()
        sys.modules["racepkg_sync"] = sync
        sys.path.insert(0, {str(tmp_path)!r})
        from evaluators.core import lazy_packages
        lazy_packages.defer_package_inits("racepkg")
        first = threading.Thread(target=lambda: __import__("racepkg.slow"), daemon=True)
        first.start()
        sync.started.wait()
        import racepkg
        second = threading.Thread(target=lambda: getattr(racepkg, "NAME"), daemon=True)
        second.start()
        sync.init_running.wait()  # the second thread runs the __init__ (and holds the lock while it does)
        sync.go.set()
        first.join()
        second.join()
        print(f"ok {{racepkg.NAME}} {{racepkg.VALUE}}")
        sys.stdout.flush()
        os._exit(0)
    """)
    try:
        done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the two threads wait for each other: the submodule's import waits for the __init__ to end")
    assert done.stdout.strip() == "ok bound by init 1", done.stdout + done.stderr


def test_plain_http_endpoints_get_a_context_that_trusts_nothing_and_https_ones_the_sdks():
    assert endpoint_tls_context("https://api.example.com/v1") is tls_context()
    local = endpoint_tls_context("http://127.0.0.1:8000/v1")
    assert local is not tls_context() and local.cert_store_stats()["x509_ca"] == 0
    assert local.verify_mode.name == "CERT_REQUIRED" and local.check_hostname


def test_deferring_a_package_already_imported_changes_nothing():
    import json as already

    defer_package_inits("json")
    assert sys.modules["json"] is already and already.dumps([1]) == "[1]"


# ---- the endpoint check kept for a while ---------------------------------------------------------------------

def test_a_passed_endpoint_check_is_kept_for_the_same_endpoint_model_key_and_policy():
    with ModelsServer(["m1", "m2"]) as server:
        base_url = server.base_url
        check_endpoint(base_url, "m1", None)
    check_endpoint(base_url, "m1", None)  # the server is gone: the kept check answers
    with pytest.raises(EndpointCheckFailed):
        check_endpoint(base_url, "m2", None)  # another model is looked at
    with pytest.raises(EndpointCheckFailed):
        check_endpoint(base_url, "m1", "sk-another-key-0123456789")  # another key too
    with pytest.raises(EndpointCheckFailed):
        check_endpoint(base_url, "m1", None, unlisted=UnlistedModelRule(allowed=True))  # and under another policy


def test_samples_are_read_anew_only_once_the_endpoint_passed_and_a_kept_copy_while_it_is_looked_at(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    data = write_dataset(tmp_path / "data", 3)
    benchmark, calls = _counting("acebench")
    monkeypatch.setattr(runner, "get_benchmark", lambda name: benchmark)
    store = Store(tmp_path / "toolboard.db")
    with ModelsServer(["scripted"]) as server:
        config = scripted_run_config(server, data)
        dead = dataclasses.replace(config, model=dataclasses.replace(config.model, model="unknown-model"))
        with pytest.raises(EndpointCheckFailed, match="does not list the model"):
            runner.start_run(RunRequest(dead), store)
        assert calls == [] and store.list_runs() == []  # a dead endpoint is told before the data is read

        runner.start_run(RunRequest(config), store)
        assert calls == [1]

        # Kept: read while the endpoint is looked at (the check here waits until the copy has been read).
        read = threading.Event()
        kept_samples, check_endpoints = runner.kept_samples, runner._check_endpoints

        def reading(*args):
            samples = kept_samples(*args)
            read.set()
            return samples

        def checking(*args):
            if not read.wait(10):
                raise AssertionError("the kept copy was not read while the endpoint was looked at")
            check_endpoints(*args)

        monkeypatch.setattr(runner, "kept_samples", reading)
        monkeypatch.setattr(runner, "_check_endpoints", checking)
        run_id, samples = runner.start_run(RunRequest(config), store)
        assert calls == [1] and len(samples) == 3
        with pytest.raises(EndpointCheckFailed):
            runner.start_run(RunRequest(dead), store)

        def failing(*args):
            raise OSError("the copy could not be read")

        monkeypatch.setattr(runner, "kept_samples", failing)  # the endpoint's failure is still the one told
        with pytest.raises(EndpointCheckFailed):
            runner.start_run(RunRequest(dead), store)
        assert len(store.list_runs()) == 2
    store.close()


def test_a_kept_check_expires_and_a_damaged_file_of_checks_is_ignored(tmp_path: Path):
    with ModelsServer(["m1"]) as server:
        base_url = server.base_url
        check_endpoint(base_url, "m1", None)
    checks = Path(os.environ["TOOLBOARD_HOME"]) / preflight.CHECKS_FILE
    kept = json.loads(checks.read_text())
    checks.write_text(json.dumps({name: when - preflight.ENDPOINT_CHECK_KEPT_SECONDS - 1 for name, when in kept.items()}))
    with pytest.raises(EndpointCheckFailed):
        check_endpoint(base_url, "m1", None)
    checks.write_text("{not json")
    with pytest.raises(EndpointCheckFailed):
        check_endpoint(base_url, "m1", None)


def test_the_file_of_checks_never_holds_a_key(tmp_path: Path):
    key = "sk-test-0123456789abcdef0123456789"
    with ModelsServer(["m1"], key=key) as server:
        check_endpoint(server.base_url, "m1", key)
    text = (Path(os.environ["TOOLBOARD_HOME"]) / preflight.CHECKS_FILE).read_text()
    assert key not in text and "m1" not in text and "127.0.0.1" not in text


# ---- a request body stored once per sample -------------------------------------------------------------------

def test_a_samples_request_body_is_stored_once_and_read_back_in_its_events(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 3)
    store = Store(tmp_path / "db.sqlite")
    with ScriptedServer(reply=correct_reply) as server:
        outcome = run_to_end(store, scripted_run_config(server, data))
    raw = sqlite3.connect(tmp_path / "db.sqlite").execute(
        "SELECT request, events FROM predictions WHERE run_id = ?", (outcome.run_id,)).fetchall()
    for request, events in raw:
        assert json.loads(events)[0]["request"][ROW_REQUEST] is True  # a note, not the body again
        assert len(events) < len(request)
    sample = store.load_sample_evidence(outcome.run_id, "normal_atom_bool_0")
    assert sample.events[0]["request"] == sample.request["body"]
    assert all(stored.events[0]["request"] == stored.request["body"] for stored in store.iter_stored_samples(outcome.run_id))


def test_events_without_a_row_body_keep_every_body_and_match_the_parsed_form():
    log = EventLog()
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "héllo \u2028"}]}, ensure_ascii=False).encode()
    log.add(_Call("model", body, {"text": "a\ud800b", "tool_calls": None, "usage": {}}, None, 0.25, False))
    text = log.events_json().text
    assert json.loads(text) == log.events()
    assert log.events()[0]["request"] == json.loads(body) and log.events()[0]["response"]["text"] == "a\ud800b"
    text.encode()  # a lone surrogate goes as its escape: the text is valid UTF-8
    noted = json.loads(log.events_json(row_body=body).text)
    assert noted[0]["request"][ROW_REQUEST] is True and noted[0]["request"]["bytes"] == len(body)


# ---- one benchmark for a run of it; the phases of a CLI run --------------------------------------------------

@pytest.mark.slow
def test_a_run_of_one_benchmark_imports_no_other_and_the_list_keeps_its_order():
    script = textwrap.dedent("""
        import sys
        from evaluators.core.registry import all_benchmarks, benchmark_packages, get_benchmark
        get_benchmark("toolbench_static")
        loaded = {name.split(".")[2] for name in sys.modules if name.startswith("evaluators.benchmarks.")}
        assert loaded == {"toolbench_static"}, loaded
        names = [benchmark.name for benchmark in all_benchmarks()]
        assert names == benchmark_packages(), names
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.slow
def test_a_cli_run_logs_its_phases_in_order_and_ends_with_its_output_whole(tmp_path: Path):
    data = write_dataset(tmp_path / "data", 40)
    phases = tmp_path / "phases.json"
    env = {**os.environ, PHASE_LOG_ENV: str(phases), "TOOLBOARD_HOME": str(tmp_path / "home")}
    with ScriptedServer(reply=correct_reply) as server:
        done = subprocess.run(
            [sys.executable, "-m", "evaluators", "run", "acebench", "--language", "en", "--subset", "normal_atom_bool",
             "--data-dir", str(data), "--base-url", server.base_url, "--model", "scripted", "--concurrency", "4", "--json"],
            cwd=PROJECT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)  # the whole report, flushed before the process ended
    assert report["subsets"]["normal_atom_bool"]["n"] == 40
    times = json.loads(phases.read_text())
    order = ["imports done", "endpoint checked", "data loaded", "run created", "first request", "last answer",
             "requests done", "scored and stored", "report printed", "exit"]
    # The log keeps each phase where it was first reached: its keys are the phases in the order they came.
    assert list(times) == order and all(isinstance(at, float) for at in times.values())


def test_the_cache_answers_many_keys_in_few_queries_and_leaves_out_the_unknown(tmp_path: Path):
    store = Store(tmp_path / "db.sqlite")
    keys = [f"k{index}" for index in range(Store.CACHE_KEYS_PER_QUERY + 20)]
    store.save_batch("no-run", [(key, {"text": key}) for key in keys[::2]], [])
    found = store.cache_get_many([*keys, "never"])
    assert set(found) == set(keys[::2]) and found["k0"] == {"text": "k0"}
    assert store.cache_get_many([]) == {}


def test_an_option_that_selects_samples_reaches_load_and_keys_the_kept_copy(tmp_path: Path):
    """A benchmark whose option picks its samples (τ²-bench's task split, here declared on a counting stand-in):
    `load` receives the option's value, defaults filled in, and each value has its own kept copy; an option that
    selects nothing (trials) neither reaches `load` nor splits the copies."""
    from evaluators.core.declarations import Option

    data = write_toolbench(tmp_path / "data")
    benchmark, calls = _counting("toolbench_static")
    received: list[Any] = []
    inner = benchmark.load

    def load(*args: Any, options: Any = None, **kwargs: Any) -> Any:
        received.append(options)
        return inner(*args, **kwargs)

    load.__module__ = inner.__module__
    benchmark = dataclasses.replace(benchmark, load=load, options=(
        Option("part", ("a", "b"), "a", "which part", selects_samples=True), Option("trials", ("1", "2"), "1", "t")))
    load_samples(benchmark, str(data), None, None, None, {})
    load_samples(benchmark, str(data), None, None, None, {"part": "a", "trials": "2"})  # the same copy
    load_samples(benchmark, str(data), None, None, None, {"part": "b"})
    load_samples(benchmark, str(data), None, None, None, {"part": "b"})
    assert received == [{"part": "a"}, {"part": "b"}] and calls == [1, 1]
