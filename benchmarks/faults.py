"""Replay the fault table of a public deployment and print what was stored, sent, lost and duplicated.

Each row runs the real CLI (`python -m evaluators run`, a whole process) over N synthetic ACEBench
items against the scripted OpenAI-compatible server on 127.0.0.1 with one fault injected: 503s on
10% and 30% of prompts, 429 with Retry-After (a number, and `nan`), malformed bodies, bodies dripped
a byte at a time (longer than --timeout), the server killed and restarted mid-run, the CLI killed
with SIGKILL mid-run and resumed, and the web app killed mid-run and its run resumed from a
restarted app. Then it scores a 24-byte memory-bomb answer and a lying zip, and prints each one's
peak memory and time (whole `score` processes). Last, the hostile-visitor cases of issue 27
(benchmarks/public_probes.py: redirects to the deployment's own network, parser tricks in base URLs, an
endpoint that is not HTTP, a read-only home, bad settings, long ids, stopped runs, …), each with whether
its guarantee held and what was seen.

Columns: stored/total (prediction rows in the store after the run and any resume), requests (HTTP
requests the server received), lost (samples with no stored row), duplicates (store rows for a
sample beyond one) and re-answered (prompts answered 200 more than once: only requests in flight at
a kill may be). Every row must show 0 lost and 0 duplicates; exit status 1 otherwise.

Usage: python benchmarks/faults.py [--samples 100] [--concurrency 8] [--latency 0.05] [--probes-only]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.engine_fixtures import correct_reply, write_dataset  # noqa: E402
from tests.scripted_server import Fault, ScriptedServer, prompt_key  # noqa: E402

KEY_ENV = "TOOLBOARD_FAULTS_KEY"


@dataclass
class Outcome:
    name: str
    stored: int
    total: int
    requests: int
    duplicates: int
    re_answered: int
    seconds: float
    note: str = ""

    @property
    def lost(self) -> int:
        return self.total - self.stored


class CountingServer(ScriptedServer):
    """The scripted server, counting the prompts it answered with a 200, on a port that can be reused
    by a restarted server."""

    def __init__(self, fault: Callable[[str, int], Fault | None] | None, latency: float, port: int = 0):
        self.answered: Counter[str] = Counter()

        def reply(body: dict) -> dict:
            self.answered[prompt_key(body)] += 1
            return correct_reply(body)

        super().__init__(reply=reply, latency=latency, fault=fault)
        self.bind_port = port


def share(rate: float, fault: Fault) -> Callable[[str, int], Fault | None]:
    """`fault` on the first attempt of about `rate` of the prompts (chosen by their hash: repeatable)."""
    def pick(key: str, attempt: int) -> Fault | None:
        return fault if attempt == 1 and int(key, 16) % 1000 < rate * 1000 else None
    return pick


def cli(home: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "TOOLBOARD_HOME": str(home), KEY_ENV: "sk-faults-test"}
    return subprocess.Popen([sys.executable, "-m", "evaluators", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_args(server: ScriptedServer, data: Path, concurrency: int, *extra: str) -> list[str]:
    return ["run", "acebench", "--base-url", server.base_url, "--model", "scripted", "--api-key-env", KEY_ENV,
            "--data-dir", str(data), "--subset", "normal_atom_bool", "--concurrency", str(concurrency),
            "--json", "--no-cache", *extra]


def stored_rows(db: Path) -> tuple[int, int, str | None]:
    """(distinct samples stored, rows beyond one per sample, the newest run's id)."""
    if not db.exists():
        return 0, 0, None
    with sqlite3.connect(db) as conn:
        try:
            run = conn.execute("SELECT id FROM runs ORDER BY created_at DESC LIMIT 1").fetchone()
            rows = conn.execute("SELECT sample_id, COUNT(*) FROM predictions GROUP BY run_id, sample_id").fetchall()
        except sqlite3.OperationalError:
            return 0, 0, None
    return len(rows), sum(count - 1 for _, count in rows), run[0] if run else None


def wait_for_rows(db: Path, count: int, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stored, _, run_id = stored_rows(db)
        if stored >= count and run_id:
            return run_id
        time.sleep(0.02)
    raise RuntimeError(f"fewer than {count} rows were stored in {timeout} s")


def finish(process: subprocess.Popen, timeout: float = 600) -> str:
    out, err = process.communicate(timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"the CLI exited {process.returncode}: {err.strip()[-500:]}")
    return out


def outcome(name: str, server: CountingServer, home: Path, total: int, started: float, note: str = "") -> Outcome:
    stored, duplicates, _ = stored_rows(home / "toolboard.db")
    re_answered = sum(count > 1 for count in server.answered.values())
    return Outcome(name, stored, total, server.requests, duplicates, re_answered, time.monotonic() - started, note)


def plain_fault_row(name: str, fault: Callable[[str, int], Fault | None] | None, args: argparse.Namespace,
                    data: Path, *extra: str) -> Outcome:
    with tempfile.TemporaryDirectory() as tmp, CountingServer(fault, args.latency) as server:
        home = Path(tmp)
        started = time.monotonic()
        finish(cli(home, *run_args(server, data, args.concurrency, *extra)))
        return outcome(name, server, home, args.samples, started)


def server_restart_row(args: argparse.Namespace, data: Path) -> Outcome:
    """The endpoint dies a third of the way in and comes back on the same port 1 s later."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        first = CountingServer(None, args.latency).__enter__()
        started = time.monotonic()
        process = cli(home, *run_args(first, data, args.concurrency))
        wait_for_rows(home / "toolboard.db", args.samples // 3)
        first.__exit__(None, None, None)
        time.sleep(1.0)
        with CountingServer(None, args.latency, port=first.port) as second:
            finish(process)
            row = outcome("server killed, restarted", second, home, args.samples, started)
        row.requests += first.requests
        row.re_answered = sum(count > 1 for count in (first.answered + second.answered).values())
        return row


def cli_killed_row(args: argparse.Namespace, data: Path) -> Outcome:
    with tempfile.TemporaryDirectory() as tmp, CountingServer(None, args.latency) as server:
        home = Path(tmp)
        started = time.monotonic()
        process = cli(home, *run_args(server, data, args.concurrency))
        run_id = wait_for_rows(home / "toolboard.db", args.samples // 3)
        process.send_signal(signal.SIGKILL)
        process.wait()
        finish(cli(home, "run", "--resume", run_id, "--json"))
        return outcome("CLI killed (SIGKILL), resumed", server, home, args.samples, started)


def app_killed_row(args: argparse.Namespace, data: Path) -> Outcome:
    """The web app (a whole `python app.py` process) is killed mid-run; a new app resumes the run."""
    from gradio_client import Client

    with tempfile.TemporaryDirectory() as tmp, CountingServer(None, args.latency) as server:
        home = Path(tmp)
        env = {**os.environ, "TOOLBOARD_HOME": str(home), "TOOLBOARD_PUBLIC": "0"}
        started = time.monotonic()
        run_id = ""
        for attempt in ("start", "resume"):
            env["GRADIO_SERVER_PORT"] = str(_free_port())
            app = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            url = _app_url(app)
            client = Client(url, verbose=False)
            if attempt == "start":
                answer = client.predict(base_url=server.base_url, model="scripted", benchmark="acebench",
                                        language="en", subsets=["normal_atom_bool"], data_source="local folder",
                                        data_folder=str(data), limit=args.samples, concurrency=args.concurrency,
                                        api_name="/start_run")
                run_id = answer["run_id"]
                if not run_id:
                    raise RuntimeError(f"the app did not start the run: {answer['message']}")
                wait_for_rows(home / "toolboard.db", args.samples // 3)
                app.send_signal(signal.SIGKILL)
                app.wait()
                continue
            client.predict(run_id, "", api_name="/resume_run")
            _wait_finished(home / "toolboard.db", run_id)
            app.terminate()
            app.wait(30)
        return outcome("app killed (SIGKILL), resumed", server, home, args.samples, started)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _app_url(app: subprocess.Popen, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    assert app.stdout is not None
    while time.monotonic() < deadline:
        line = app.stdout.readline()
        if "http://" in line:
            return line[line.index("http://"):].split()[0]
        if not line and app.poll() is not None:
            break
    raise RuntimeError("the app did not print its URL")


def _wait_finished(db: Path, run_id: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with sqlite3.connect(db) as conn:
            status = conn.execute("SELECT status FROM runs WHERE id=?", (run_id,)).fetchone()[0]
        if status in ("finished", "failed"):
            return
        time.sleep(0.1)
    raise RuntimeError(f"run {run_id} did not finish")


# ---- bounded work per answer and per upload --------------------------------------------------------


def measured(command: list[str], home: Path) -> tuple[int, float, float, str]:
    """(exit status, peak RSS in MB, seconds, stderr tail) of one whole process."""
    env = {**os.environ, "TOOLBOARD_HOME": str(home)}
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    assert process.stderr is not None
    err = process.stderr.read()
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, usage.ru_maxrss / 1024, seconds, err.strip().splitlines()[-1] if err.strip() else ""


def bomb_rows(tmp: Path) -> list[tuple[str, int, float, float, str]]:
    example = ROOT / "evaluators" / "benchmarks" / "acebench" / "example"
    first = json.loads((example / "predictions.jsonl").read_text().splitlines()[0])
    answer = json.dumps({"id": first["id"], "result": "[F(a=[[1]*99999]*99999)]"})
    bomb = tmp / "bomb.jsonl"
    bomb.write_text(answer + "\n")
    rows = []
    score = [sys.executable, "-m", "evaluators", "score", "acebench"]
    status, peak, seconds, err = measured([*score, str(bomb), "--data-dir", str(example)], tmp)
    rows.append(("24-byte memory-bomb answer", status, peak, seconds, err))
    lying = tmp / "lying.zip"
    _lying_zip(lying, declared=48, real=1 << 30)
    status, peak, seconds, err = measured([*score, str(lying), "--data-dir", str(example)], tmp)
    rows.append(("zip member declaring 48 B, holding 1 GiB", status, peak, seconds, err))
    return rows


def _lying_zip(path: Path, declared: int, real: int) -> None:
    """A zip whose one member's headers declare `declared` bytes but whose data inflates to `real`."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bundle, bundle.open("p.jsonl", "w") as member:
        chunk = b" " * (1 << 20)
        for _ in range(real // len(chunk)):
            member.write(chunk)
    raw = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local header, central directory
        at = raw.find(signature)
        raw[at + offset:at + offset + 4] = declared.to_bytes(4, "little")
    path.write_bytes(bytes(raw))


def show_probes() -> bool:
    """Print the hostile-visitor cases of issues 27 and 41; True when every one held. Imported here, after the measured
    processes: the probes load the app's modules, and a forked child counts its parent's pages in its peak
    memory until it execs."""
    from benchmarks.public_probes import print_probes, public_probe_rows

    with tempfile.TemporaryDirectory() as tmp:
        probes = public_probe_rows(Path(tmp))
    print_probes(probes)
    return all(probe.held for probe in probes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--probes-only", action="store_true", help="only the hostile-visitor cases of issues 27 and 41")
    args = parser.parse_args()
    if args.probes_only:
        return 0 if show_probes() else 1
    with tempfile.TemporaryDirectory() as tmp:
        data = write_dataset(Path(tmp) / "data", args.samples)
        scenarios: list[Callable[[], Outcome]] = [
            lambda: plain_fault_row("no fault", None, args, data),
            lambda: plain_fault_row("503 on 10% of prompts", share(0.1, Fault(status=503, headers={"Retry-After": "0"})),
                                    args, data),
            lambda: plain_fault_row("503 on 30% of prompts", share(0.3, Fault(status=503, headers={"Retry-After": "0"})),
                                    args, data),
            lambda: plain_fault_row("429, Retry-After: 1", share(0.1, Fault(status=429, headers={"Retry-After": "1"})),
                                    args, data),
            lambda: plain_fault_row("429, Retry-After: nan", share(0.1, Fault(status=429, headers={"Retry-After": "nan"})),
                                    args, data),
            lambda: plain_fault_row("malformed bodies (10%)", share(0.1, Fault(malformed=True)), args, data),
            lambda: plain_fault_row("slow-drip bodies (5%), --timeout 2", share(0.05, Fault(drip=0.2)), args, data,
                                    "--timeout", "2"),
            lambda: server_restart_row(args, data),
            lambda: cli_killed_row(args, data),
            lambda: app_killed_row(args, data),
        ]
        print(f"{'fault':40} {'stored/total':>12} {'requests':>9} {'lost':>5} {'dupl.':>6} {'re-answered':>12} {'s':>7}",
              flush=True)
        rows = []
        for scenario in scenarios:
            row = scenario()
            rows.append(row)
            print(f"{row.name:40} {f'{row.stored}/{row.total}':>12} {row.requests:>9} {row.lost:>5} {row.duplicates:>6}"
                  f" {row.re_answered:>12} {row.seconds:>7.1f}", flush=True)
        bombs = bomb_rows(Path(tmp))
        print()
        print(f"{'bounded input':42} {'exit':>4} {'peak MB':>8} {'s':>6}  message")
        for name, status, peak, seconds, err in bombs:
            print(f"{name:42} {status:>4} {peak:>8.0f} {seconds:>6.2f}  {err[:90]}")
    print()
    held = show_probes()
    failed = any(row.lost or row.duplicates for row in rows) or any(peak >= 300 or seconds >= 5 for _, _, peak, seconds, _ in bombs)
    return 1 if failed or not held else 0


if __name__ == "__main__":
    sys.exit(main())
