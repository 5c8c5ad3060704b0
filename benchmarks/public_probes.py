"""The hostile-visitor cases of issues 27 and 41, replayed for benchmarks/faults.py: each probe tries one thing a
bad endpoint, a bad upload or a bad day would bring, and says whether the guarantee held and what was seen.

Only this machine is ever a target: a "public host" is a loopback server on 127.0.0.2 that the endpoint
guard is told to take for a public address (in this process only); the "internal service" it redirects to
is another loopback server that counts what reaches it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluators.core import public_hosts  # noqa: E402
from tests.engine_fixtures import correct_reply, write_dataset  # noqa: E402
from tests.raw_servers import answer_in_ssh, raw_tcp_server  # noqa: E402
from tests.scripted_server import ScriptedServer  # noqa: E402
from tests.test_hardening_redirects import STAND_IN_PUBLIC, InternalService, Redirector  # noqa: E402


@dataclass
class Probe:
    name: str
    held: bool
    seen: str


def cli(home: Path, *args: str, prefix: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess:
    """A whole `python -m evaluators` process on its own home."""
    environment = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_PUBLIC": "0", **env}
    return subprocess.run([*prefix, sys.executable, "-m", "evaluators", *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True, timeout=300)


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


@contextlib.contextmanager
def guard_takes_stand_in_for_public() -> Iterator[None]:
    """Public mode, with 127.0.0.2 (only it) taken for a public address, in this process."""
    real, before = public_hosts.non_public_reason, os.environ.get(public_hosts.PUBLIC_MODE_ENV)
    public_hosts.non_public_reason = lambda address: None if str(address) == STAND_IN_PUBLIC else real(address)
    os.environ[public_hosts.PUBLIC_MODE_ENV] = "1"
    try:
        yield
    finally:
        public_hosts.non_public_reason = real
        if before is None:
            os.environ.pop(public_hosts.PUBLIC_MODE_ENV, None)
        else:
            os.environ[public_hosts.PUBLIC_MODE_ENV] = before


def redirect_probe(status: int) -> Probe:
    from evaluators.engine.preflight import EndpointCheckFailed, check_endpoint

    with guard_takes_stand_in_for_public(), InternalService() as internal, \
            Redirector(f"http://127.0.0.1:{internal.port}", status) as public:
        try:
            check_endpoint(public.base_url, "gpt-x", "sk-visitor-key")
            seen = "the pre-flight passed"
        except EndpointCheckFailed as refused:
            seen = str(refused).split(": ", 1)[-1]
    held = not internal.requests and "redirect" in seen and "internal" not in seen
    return Probe(f"public host answering {status} to 127.0.0.1 (pre-flight)", held,
                 f"{len(internal.requests)} requests reached the target; said: {seen}")


def run_request_redirect_probe() -> Probe:
    from evaluators.engine.sdk_transport import AttemptFailed, EndpointSpec, make_sdk_client, post_completion

    async def send(base_url: str) -> str:
        client = make_sdk_client(EndpointSpec(base_url, "sk-visitor-key", 10.0))
        try:
            await post_completion(client, b'{"model": "m", "messages": []}', 10.0)
            return "answered"
        except AttemptFailed as failed:
            return failed.problem
        finally:
            await client.close()

    with guard_takes_stand_in_for_public(), InternalService() as internal, \
            Redirector(f"http://127.0.0.1:{internal.port}", 307) as public:
        seen = asyncio.run(send(public.base_url))
    keys = sum(1 for request in internal.requests if request["authorization"])
    return Probe("run request answered 307 to 127.0.0.1", not internal.requests and "redirect" in seen,
                 f"{len(internal.requests)} requests ({keys} with the key) reached the target; said: {seen}")


def hub_redirect_probe() -> Probe:
    from huggingface_hub.utils import get_session

    from evaluators.engine.endpoint_guard import guard_hub_requests

    guard_hub_requests()
    with guard_takes_stand_in_for_public(), InternalService() as internal, \
            Redirector(f"http://127.0.0.1:{internal.port}", 302) as public:
        try:
            get_session().get(public.base_url + "/file")
            seen = "followed"
        except public_hosts.HostNotAllowedError as refused:
            seen = str(refused)
    return Probe("Hub download redirected to 127.0.0.1", not internal.requests and "loopback" in seen,
                 f"{len(internal.requests)} requests reached the target; said: {seen}")


def credentials_probe(tmp: Path) -> Probe:
    done = cli(tmp / "credentials", "run", "acebench", "--base-url", "http://127.0.0.1:18103;@8.8.8.1/v1", "--model", "m")
    said = last_line(done.stderr)
    return Probe("base URL with ';@' parser trick", done.returncode != 0 and "Traceback" not in done.stderr
                 and "the base URL" in said and "8.8.8.1" not in said, said)




def not_http_probe(tmp: Path, data: Path) -> Probe:
    with raw_tcp_server(answer_in_ssh) as port:
        done = cli(tmp / "not-http", "run", "acebench", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m",
                   "--data-dir", str(data), "--language", "en", "--subset", "normal_atom_bool")
    said = last_line(done.stderr)
    return Probe("endpoint that does not speak HTTP", "Traceback" not in done.stderr and "does not answer in HTTP" in said,
                 said)


def read_only_home_probes(tmp: Path, data: Path) -> list[Probe]:
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        return [Probe("read-only TOOLBOARD_HOME", False, "not tried: unshare -rm is not allowed here")]
    from evaluators.engine.store import Store

    home = tmp / "read-only"
    Store(home / "toolboard.db").close()
    prefix = ("unshare", "-rm", "sh", "-c", 'mount -o bind,ro "$1" "$1" && shift && exec "$@"', "sh", str(home))
    listed = cli(home, "runs", prefix=prefix)
    with ScriptedServer(reply=correct_reply) as server:
        run = cli(home, "run", "acebench", "--base-url", server.base_url, "--model", "m", "--data-dir", str(data),
                  "--language", "en", "--subset", "normal_atom_bool", prefix=prefix)
    said = last_line(run.stderr)
    return [
        Probe("read-only TOOLBOARD_HOME: runs", listed.returncode == 0 and "Traceback" not in listed.stderr,
              f"exit {listed.returncode}{': ' + last_line(listed.stderr) if listed.stderr.strip() else ''}"),
        Probe("read-only TOOLBOARD_HOME: run", run.returncode != 0 and "Traceback" not in run.stderr
              and "can only be read" in said, said[:160] + ("…" if len(said) > 160 else "")),
    ]


def settings_probes(tmp: Path, data: Path) -> list[Probe]:
    probes = []
    with ScriptedServer(reply=correct_reply) as server:
        base = ["run", "acebench", "--base-url", server.base_url, "--data-dir", str(data), "--language", "en",
                "--subset", "normal_atom_bool"]
        for name, flags in (("--concurrency 0", ["--model", "m", "--concurrency", "0"]),
                            ("--temperature -5", ["--model", "m", "--temperature", "-5"]),
                            ("a 100,000-character model name", ["--model", "m" * 100_000])):
            done = cli(tmp / "settings", *base, *flags)
            said = last_line(done.stderr)
            probes.append(Probe(name, done.returncode != 0 and "Traceback" not in done.stderr and len(said) < 300
                                and not server.requests, said))
    return probes


def echoed_id_probe(tmp: Path) -> Probe:
    done = cli(tmp / "echo", "export", "r" * 100_000, "--report", str(tmp / "report.json"))
    said = last_line(done.stderr)
    return Probe("a 100,000-character run id", done.returncode != 0 and len(said) < 300, said)


def stopped_run_probes(tmp: Path, data: Path) -> list[Probe]:
    """SIGTERM to a CLI run, then SIGKILL to another: what `runs` says of each."""
    probes = []
    with ScriptedServer(reply=correct_reply, latency=0.5) as server:
        for signum in (signal.SIGTERM, signal.SIGKILL):
            home = tmp / f"stopped-{signum.name}"
            env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_PUBLIC": "0"}
            process = subprocess.Popen([sys.executable, "-m", "evaluators", "run", "acebench", "--base-url",
                                        server.base_url, "--model", "m", "--data-dir", str(data), "--language", "en",
                                        "--subset", "normal_atom_bool", "--concurrency", "1", "--no-cache"],
                                       cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline, before = time.monotonic() + 120, server.requests
            while server.requests < before + 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            process.send_signal(signum)
            process.wait(timeout=120)
            rows = json.loads(cli(home, "runs", "--json").stdout or "[]")
            row = rows[0] if rows else {}
            status, message = row.get("status"), row.get("message") or ""
            probes.append(Probe(f"CLI run sent {signum.name}", status in ("cancelled", "interrupted") and bool(message),
                                f"runs: {status}: {message}"))
    return probes


def unknown_mode_probe(tmp: Path) -> Probe:
    from evaluators.engine.store import Store
    from evaluators.service.explore import sample_table

    store = Store(tmp / "mode" / "toolboard.db")
    run_id = store.create_run("acebench", "en", "m", "http://127.0.0.1:1/v1", {"benchmark": "acebench"}, "fp", 1)
    try:
        sample_table(store, run_id, "lenient")
        seen = "an empty table"
    except Exception as refused:  # noqa: BLE001 - what it says is the probe's finding
        seen = str(refused)
    finally:
        store.close()
    return Probe("Explore asked for scoring mode 'lenient'", "unknown scoring mode" in seen, seen)


def lost_queue_task_probe(tmp: Path, data: Path) -> Probe:
    """`run --queue` waiting on its run while Redis (no persistence) restarts empty before any worker took it."""
    if shutil.which("redis-server") is None:
        return Probe("queued run, Redis restarted empty", False, "not tried: redis-server is not installed")
    import redis as redis_py

    from tests.queue_fixtures import RedisServer, queue_env, workers

    redis = RedisServer(tmp / "redis", persistent=False)
    redis.start()
    try:
        with ScriptedServer(reply=correct_reply) as server:
            command = subprocess.Popen(
                [sys.executable, "-m", "evaluators", "run", "acebench", "--base-url", server.base_url, "--model", "m",
                 "--language", "en", "--subset", "normal_atom_bool", "--data-dir", str(data), "--queue", "--json"],
                cwd=ROOT, env=queue_env(redis.url, tmp / "queue-cli", OPENAI_API_KEY="x"), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)
            client = redis_py.Redis.from_url(redis.url)
            deadline = time.monotonic() + 60
            while client.llen("toolboard") != 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            redis.stop()
            redis.start()
            with workers(redis.url, tmp / "queue-workers", ("w1",)):
                try:
                    out, err = command.communicate(timeout=180)
                except subprocess.TimeoutExpired:
                    command.kill()
                    out, err = command.communicate()
            answered = server.requests
    finally:
        redis.stop()
    scored = json.loads(out)["subsets"]["normal_atom_bool"]["n"] if command.returncode == 0 else 0
    said = next((line for line in err.splitlines() if "sent again" in line), last_line(err))
    return Probe("queued run, Redis restarted empty", command.returncode == 0 and scored == answered == 20,
                 f"{scored}/20 scored, {answered} requests; said: {said.strip()}")


def flood_probes(tmp: Path) -> list[Probe]:
    """One visitor floods the board: 150 uploads, one of them (as an older version let it) with a 2 MB name and
    2 MB notes, one named like a spreadsheet formula; then an 11th Add of the day from one owner_token."""
    import csv
    import sqlite3

    from gradio_client import Client, handle_file

    from evaluators.service.quota import Admission
    from evaluators.service.submissions import check_submission, store_submission
    from tests.acebench_fixtures import EXAMPLE_DIR
    from tests.app_fixtures import items_copy
    from tests.test_hardening_flood import public_app

    formula = '=HYPERLINK("http://x.example","open me")'
    with public_app(tmp / "flood", Admission(max_uploads_per_day=10)) as app:
        # Scored on a copy of the example's items: rows scored on the built-in example itself never join the board.
        submission = check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en",
                                      data_dir=items_copy(app.context.store))
        ids = [store_submission(app.context.store, submission, f"flood-{index:03d}", "flood notes") for index in range(149)]
        ids.append(store_submission(app.context.store, submission, formula, "notes"))
        with sqlite3.connect(app.db_path) as db:
            db.execute("UPDATE runs SET model=?, notes=? WHERE id=?", ("H" * 2_000_000, "N" * 2_000_000, ids[0]))
        app.context.store.create_run("acebench", "en", "bump", "upload", {}, "f", 1, source="upload")
        client = Client(app.url, verbose=False)
        board = ("acebench", "", "", ["published", "evaluated", "uploaded"], ["normal", "overall"], False, "official",
                 "overall")
        read = client.predict(*board, api_name="/leaderboard")
        sent = len(json.dumps(read, ensure_ascii=False).encode())
        with open(client.predict(*board, api_name="/download_csv"), encoding="utf-8", newline="") as handle:
            cell = next((row["model"] for row in csv.DictReader(handle) if "HYPERLINK" in row["model"]), "")
        token, said = "flood-probe-visitor-token", ""
        for index in range(11):
            client.predict(handle_file(str(EXAMPLE_DIR / "predictions.jsonl")), "acebench", "en", "built-in example", "",
                           api_name="/check_upload")
            said = str(client.predict(f"mine-{index}", "", owner_token=token, api_name="/add_upload"))
        client.predict(handle_file(str(EXAMPLE_DIR / "predictions.jsonl")), "acebench", "en", "built-in example", "",
                       api_name="/check_upload")
        long_name = str(client.predict("x" * 2_000_000, "", owner_token="another-probe-visitor", api_name="/add_upload"))
    return [
        Probe("one /leaderboard read, 150 uploads + a 2 MB name", sent < 200_000 and len(read["data"]) <= 200,
              f"{sent:,} bytes, {len(read['data'])} rows, {read.get('more_rows')} more not sent"),
        Probe("CSV cell of a model named =HYPERLINK(…)", cell.startswith("'="), f"written as {cell[:40]!r}"),
        Probe("an 11th upload of the day from one visitor", "TOOLBOARD_MAX_UPLOADS_PER_DAY" in said, said[:150]),
        Probe("an upload named with 2,000,000 characters", "Added" not in long_name and len(long_name) < 400,
              long_name[:150]),
    ]


def native_parser_probes(tmp: Path) -> list[Probe]:
    """Whole `score` processes on BFCL answers that crashed (20,000-deep brackets) or stalled (1.4 MB) the
    native JavaScript parser."""
    from tests.bfcl_fixtures import write_bfcl_folder

    data = write_bfcl_folder(tmp / "bfcl")
    answers = {"JavaScript answer nested 20,000 deep (40 KB)": "f(a=" + "[" * 20_000 + "1" + "]" * 20_000 + ")",
               "JavaScript answer of 1.4 MB": "f(a=[" + "1," * 700_000 + "1])"}
    probes = []
    for name, answer in answers.items():
        predictions = tmp / "native.jsonl"
        predictions.write_text(json.dumps({"id": "simple_javascript_0", "output": answer}) + "\n")
        started = time.monotonic()
        done = cli(tmp / "native", "score", "bfcl", str(predictions), "--data-dir", str(data), "--subset",
                   "simple_javascript")
        seconds = time.monotonic() - started
        verdict = next((line.strip() for line in done.stdout.splitlines() if line.startswith("errors")), last_line(done.stderr))
        probes.append(Probe(name, done.returncode == 0 and "decoder_failed=1" in verdict,
                            f"exit {done.returncode} in {seconds:.1f} s (whole process); {verdict}"))
    return probes


def hidden_character_probes(tmp: Path) -> list[Probe]:
    """Issue 41, case 1: a name with ANSI colour codes and a right-to-left override, through Add and Start on a
    public app, and in a row an older version stored (the board, its CSV and the model page show it escaped)."""
    import csv
    import sqlite3

    from gradio_client import Client, handle_file

    from evaluators.service.quota import Admission
    from evaluators.service.submissions import check_submission, store_submission
    from tests.acebench_fixtures import EXAMPLE_DIR
    from tests.app_fixtures import form, items_copy
    from tests.test_hardening_flood import public_app
    from tests.test_public_limits import HOSTILE_NAME

    hidden = ("\x1b", "\u202e")
    with public_app(tmp / "names", Admission()) as app:
        client = Client(app.url, verbose=False)
        client.predict(handle_file(str(EXAMPLE_DIR / "predictions.jsonl")), "acebench", "en", "built-in example", "",
                       api_name="/check_upload")
        added = str(client.predict(HOSTILE_NAME, "", owner_token="names-probe-visitor-token", api_name="/add_upload"))
        started = str(client.predict(**form(app.server.base_url, HOSTILE_NAME, app.data,
                                            owner_token="names-probe-visitor-token", data_source="built-in example"),
                                     api_name="/start_run"))
        refused_everywhere = not app.context.store.list_runs()
        store = app.context.store
        old_row = store_submission(store, check_submission(EXAMPLE_DIR / "predictions.jsonl", "acebench", language="en",
                                                           data_dir=items_copy(store)), "placeholder")
        with sqlite3.connect(app.db_path) as db:
            db.execute("UPDATE runs SET model=? WHERE id=?", (HOSTILE_NAME, old_row))
        store.create_run("acebench", "en", "bump", "upload", {}, "f", 1, source="upload")
        board = ("acebench", "en", "", ["published", "evaluated", "uploaded"], ["overall"], False, "official", "overall")
        shown = json.dumps(client.predict(*board, api_name="/leaderboard"), ensure_ascii=False)
        with open(client.predict(*board, api_name="/download_csv"), encoding="utf-8") as handle:
            shown += json.dumps(list(csv.reader(handle)), ensure_ascii=False)
        page = client.predict(HOSTILE_NAME, api_name="/model")
        shown += json.dumps([page["model"], page["runs"]], ensure_ascii=False)
    said = f"Add: {added[:70]}… Start: {'refused' if 'invisible character' in started else started[:60]}"
    return [
        Probe("upload and run named with ESC and U+202E", refused_everywhere and "invisible character" in added
              and "invisible character" in started, said),
        Probe("a row stored with them before the rule", not any(mark in shown for mark in hidden),
              "board, CSV and model page show it as \\x1b[31mANSI\\x1b[0m\\u202eRTL"),
    ]


def killed_add_probe(tmp: Path) -> Probe:
    """Issue 41, case 2: kill -9 while an upload is being added (its predictions and first verdicts written)."""
    import sqlite3

    from evaluators.engine.store import Store
    from tests.test_public_limits import kill_during_add

    store = Store(tmp / "killed" / "toolboard.db")
    inside = kill_during_add(store)
    with sqlite3.connect(store.path) as db:
        left = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("runs", "predictions", "sample_scores")}
    return Probe("kill -9 during Add", inside and not any(left.values()),
                 "left behind: " + ", ".join(f"{count} {table}" for table, count in left.items()))


def disk_probes(tmp: Path) -> list[Probe]:
    """Issue 41, case 3: a 47 MB upload's bytes on disk (the store and its write-ahead log), then the same upload
    against a store capped 10 MB above what it holds, and against one visitor's daily byte budget."""
    from evaluators.engine.store import Store
    from evaluators.service.quota import MB, Admission, NoRoomError
    from evaluators.service.submissions import check_submission, store_submission
    from tests.acebench_fixtures import EXAMPLE_DIR
    from tests.app_fixtures import items_copy

    store = Store(tmp / "disk" / "toolboard.db")
    rows = [json.loads(line) for line in (EXAMPLE_DIR / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    pad = 47 * MB // len(rows)
    upload = tmp / "disk" / "bulky.jsonl"
    upload.write_text("".join(json.dumps({**row, "output": row["output"] + " " * pad} if "output" in row else row) + "\n"
                              for row in rows), encoding="utf-8")
    submission = check_submission(upload, "acebench", language="en", data_dir=items_copy(store))
    before = store.used_bytes()
    store_submission(store, submission, "bulky", owner="disk-probe-visitor")
    grown = store.used_bytes() - before
    wal = store.path.with_name(store.path.name + "-wal")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    ratio = grown / upload.stat().st_size
    outcomes = []
    for name, admission in (("store capped 10 MB above its size", Admission(max_store_bytes=store.used_bytes() + 10 * MB)),
                            ("visitor past 100 MB stored today", Admission(max_stored_bytes_per_day=100 * MB))):
        size = store.used_bytes()
        try:
            store_submission(store, submission, "again", owner="disk-probe-visitor", admission=admission)
            outcomes.append(Probe(f"47 MB upload, {name}", False, "added"))
        except NoRoomError as refused:
            outcomes.append(Probe(f"47 MB upload, {name}", store.used_bytes() == size and len(store.list_runs()) == 1,
                                  str(refused)[:120]))
    return [Probe("47 MB upload: bytes on disk per uploaded byte", ratio < 1.5 and wal_bytes == 0,
                  f"{ratio:.2f} (store +{grown / MB:.1f} MB), write-ahead log {wal_bytes / MB:.1f} MB after"),
            *outcomes]


def other_visitors_runs_probe(tmp: Path) -> Probe:
    """Issue 41, case 4: a second visitor reads /model for a model whose run the first visitor has going."""
    from gradio_client import Client

    from evaluators.service.quota import Admission
    from tests.app_fixtures import form, running_app

    with running_app(tmp / "model-page", latency=0.5, public=True, data_is_default=True, admission=Admission()) as app:
        first, second = Client(app.url, verbose=False), Client(app.url, verbose=False)
        started = first.predict(**form(app.server.base_url, "probe-model", app.data, owner_token="first-visitor-token-1",
                                       data_source="download"), api_name="/start_run")
        run_id = started["run_id"] if isinstance(started, dict) else ""
        seen = json.dumps(second.predict("probe-model", api_name="/model"))
        listed = json.loads(seen).get("runs", [])
    return Probe("/model read by a second visitor", bool(run_id) and run_id not in seen and bool(listed),
                 f"{len(listed)} run listed, its id {'shown' if run_id and run_id in seen else 'not shown'}")


def public_probe_rows(tmp: Path) -> list[Probe]:
    data = write_dataset(tmp / "probe-data", 20)
    steps: list[Callable[[], Probe | list[Probe]]] = [
        lambda: redirect_probe(302),
        lambda: redirect_probe(307),
        run_request_redirect_probe,
        hub_redirect_probe,
        lambda: credentials_probe(tmp),
        lambda: not_http_probe(tmp, data),
        lambda: read_only_home_probes(tmp, data),
        lambda: settings_probes(tmp, data),
        lambda: echoed_id_probe(tmp),
        lambda: stopped_run_probes(tmp, data),
        lambda: unknown_mode_probe(tmp),
        lambda: lost_queue_task_probe(tmp, data),
        lambda: flood_probes(tmp),
        lambda: native_parser_probes(tmp),
        lambda: hidden_character_probes(tmp),
        lambda: killed_add_probe(tmp),
        lambda: disk_probes(tmp),
        lambda: other_visitors_runs_probe(tmp),
    ]
    probes: list[Probe] = []
    for step in steps:
        found = step()
        probes.extend(found if isinstance(found, list) else [found])
    return probes


def print_probes(probes: list[Probe]) -> None:
    print(f"{'hostile case (issues 27, 41)':52} {'held':>4}  seen")
    for probe in probes:
        print(f"{probe.name:52} {'yes' if probe.held else 'NO':>4}  {probe.seen[:150]}")
