"""A new benchmark is one package plus its leaderboard_data file: a tiny test benchmark is written into
a copy of the project (nothing else in the copy is changed) and is then listed, scored, run against an
endpoint from the CLI, from the app's `start_run` API and from the app's form in a real headless
browser, shown on the board and in About. And no module outside a benchmark package names a benchmark."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluators.core.registry import all_benchmarks, benchmark_packages
from tests.browser_fixtures import CHROMIUM, browser_page, open_tab
from tests.project_copies import PROJECT, copy_with_package, run_in_copy
from tests.scripted_server import ScriptedServer
from ui.evaluate_tab import option_label

TEMPLATE = Path(__file__).parent / "new_benchmark" / "tinybench_benchmark.py"
ITEMS = [{"subset": "easy", "question": "What colour is the sky?", "answer": "blue"},
         {"subset": "easy", "question": "What is 2 + 2, in letters?", "answer": "four"},
         {"subset": "hard", "question": "Capital of France?", "answer": "Paris"}]
PUBLISHED = {"benchmark": "tinybench", "kind": "published", "source": {"title": "made up", "url": "https://example.org/tiny"},
             "rows": [{"model": "Published-Tiny", "subset": "all", "metrics": {"accuracy": 0.5}}]}
ANSWERS = {"sky": "blue", "2 + 2": "four", "France": "Lyon"}


def reply(body: dict) -> dict:
    question = body["messages"][-1]["content"]
    return {"content": next(answer for key, answer in ANSWERS.items() if key in question)}


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with one new package and one published table added, and nothing else touched."""
    root = copy_with_package(tmp_path_factory.mktemp("copy"), "tinybench", TEMPLATE,
                             {"leaderboard_data/tinybench.json": json.dumps(PUBLISHED)})
    data = root / "tinydata"
    data.mkdir()
    (data / "tinybench.json").write_text(json.dumps(ITEMS), encoding="utf-8")
    return root


def _run(copy: Path, *args: str, home: Path) -> subprocess.CompletedProcess:
    return run_in_copy(copy, *args, home=home, timeout=240)


@pytest.mark.slow
def test_the_new_package_is_listed_scored_and_run_from_the_cli(project_copy: Path, tmp_path: Path):
    home = tmp_path / "home"
    listed = _run(project_copy, "-m", "evaluators", "list", home=home)
    assert listed.returncode == 0, listed.stderr
    assert "tinybench: TinyBench" in listed.stdout and "option style: plain | terse (default plain)" in listed.stdout

    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "easy_0", "output": "Blue"}, {"id": "easy_1", "output": "five"}, {"id": "hard_0", "output": "Paris"}]))
    scored = _run(project_copy, "-m", "evaluators", "score", "tinybench", str(predictions), "--data-dir",
                  str(project_copy / "tinydata"), "--json", home=home)
    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert report["summary"]["accuracy"] == pytest.approx(2 / 3)
    assert report["subsets"]["easy"] == {"n": 2, "metrics": {"accuracy": 0.5}}

    with ScriptedServer(reply=reply) as server:
        ran = _run(project_copy, "-m", "evaluators", "run", "tinybench", "--base-url", server.base_url, "--model", "tiny-llm",
                   "--api-key-env", "", "--data-dir", str(project_copy / "tinydata"), "--option", "style=terse", "--json",
                   home=home)
        assert ran.returncode == 0, ran.stderr
        assert [body["messages"][-1]["content"][:9] for body in server.bodies] == ["One word."] * 3
    assert json.loads(ran.stdout)["summary"]["accuracy"] == pytest.approx(2 / 3)
    refused = _run(project_copy, "-m", "evaluators", "run", "tinybench", "--base-url", "http://127.0.0.1:9/v1", "--model",
                   "m", "--data-dir", str(project_copy / "tinydata"), "--option", "style=loud", home=home)
    assert refused.returncode == 2 and "option style of tinybench takes plain, terse (got 'loud')" in refused.stderr


# The app inside the copy, shared by the API and browser tests (starting it costs seconds): it writes its
# URL to `url`, then reads run ids from stdin, one a line, until the test module closes it; for each, it
# waits for that run to end and writes to <results>/<run id>.json what neither the API nor the page shows.
SERVED_APP_SCRIPT = r"""
import json, sys, time
from pathlib import Path
from gradio_client import Client
from evaluators.engine.store import Store
from ui.app import build_app
from ui.context import AppContext
from ui.about_tab import about_text

url, results = Path(sys.argv[1]), Path(sys.argv[2])
context = AppContext(store=Store(Path(results, "app.db")))
demo = build_app(context)
demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
url.with_suffix(".part").write_text(demo.local_url, encoding="utf-8")
url.with_suffix(".part").replace(url)
client = None
for line in iter(sys.stdin.readline, ""):
    run_id = line.strip()
    deadline = time.monotonic() + 60
    while context.store.get_run(run_id).status != "finished" and time.monotonic() < deadline:
        time.sleep(0.1)
    run = context.store.get_run(run_id)
    client = client or Client(demo.local_url, verbose=False)
    board = client.predict("tinybench", "all", "", ["published", "evaluated", "uploaded"], ["accuracy"], False,
                           "official", "accuracy", api_name="/leaderboard")
    result = {"run_id": run_id, "status": run.status, "config": run.config, "board": board, "about": about_text()}
    Path(results, f"{run_id}.part").write_text(json.dumps(result, default=str), encoding="utf-8")
    Path(results, f"{run_id}.part").replace(Path(results, f"{run_id}.json"))
demo.close()
context.close()
"""


@dataclass
class CopyApp:
    """The app served from the project copy (SERVED_APP_SCRIPT)."""

    url: str
    process: subprocess.Popen
    results: Path
    log: Path

    def report_on(self, run_id: str, timeout: float = 120) -> dict[str, Any]:
        """What the app says of `run_id` once it has ended: status, config, the TinyBench board, About."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{run_id}\n")
        self.process.stdin.flush()
        path = self.results / f"{run_id}.json"
        deadline = time.monotonic() + timeout
        while not path.exists():
            assert self.process.poll() is None, f"the app exited ({self.process.returncode}):\n{self.log.read_text()[-3000:]}"
            if time.monotonic() > deadline:  # a time-out for the wait, not a speed check
                raise AssertionError(f"the app did not report on {run_id} within {timeout:g} s:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def copy_app(project_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CopyApp]:
    root = tmp_path_factory.mktemp("copy_app")
    script, url, log = root / "serve_app.py", root / "url.txt", root / "app.log"
    script.write_text(SERVED_APP_SCRIPT, encoding="utf-8")
    env = {**os.environ, "TOOLBOARD_HOME": str(root / "home"), "PYTHONPATH": str(project_copy)}
    with log.open("w") as log_file:
        app = subprocess.Popen([sys.executable, str(script), str(url), str(root)], cwd=project_copy, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=log_file, stderr=subprocess.STDOUT)
    try:
        yield CopyApp(_served_url(app, url, log), app, root, log)
    finally:  # closing its stdin ends the app
        try:
            app.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            app.kill()
            app.wait()
            raise
    assert app.returncode == 0, log.read_text()[-3000:]


@pytest.mark.slow
def test_the_new_package_runs_from_the_api_and_shows_on_the_board_and_in_about(copy_app: CopyApp, project_copy: Path):
    from gradio_client import Client

    with ScriptedServer(reply=reply) as server:
        started = Client(copy_app.url, verbose=False).predict(
            base_url=server.base_url, model="tiny-api-llm", benchmark="tinybench", data_source="local folder",
            data_folder=str(project_copy / "tinydata"), limit=5, concurrency=2, options={"style": "terse"},
            api_name="/start_run")
        assert started["run_id"], started["message"]
        result = copy_app.report_on(started["run_id"])
    assert result["status"] == "finished", started
    assert result["config"]["options"] == {"style": "terse"}
    rows = [dict(zip(result["board"]["headers"], row)) for row in result["board"]["data"]]
    models = {row["model"] for row in rows}
    assert {"Published-Tiny", "tiny-api-llm"} <= models, rows
    assert "TinyBench" in result["about"] and "one-word answers" in result["about"]


def _served_url(app: subprocess.Popen, url: Path, log: Path, timeout: float = 120) -> str:
    """The URL the app in the copy serves on, once it is up."""
    deadline = time.monotonic() + timeout
    while not url.exists():
        assert app.poll() is None, f"the app exited ({app.returncode}):\n{log.read_text()[-3000:]}"
        if time.monotonic() > deadline:  # a time-out for the wait, not a speed check
            raise AssertionError(f"the app did not start within {timeout:g} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    return url.read_text(encoding="utf-8")


def _wait_for_text(page: Any, pattern: str) -> str:
    """The visible text matching `pattern`, waited for (generously); the page's text when it never shows."""
    found = page.get_by_text(re.compile(pattern)).filter(visible=True).first
    try:
        found.wait_for()
    except Exception as exc:  # noqa: BLE001 - a timeout says more with what the page showed
        pytest.fail(f"{pattern!r} never showed ({exc.__class__.__name__}); the page said:\n"
                    f"{page.locator('body').inner_text()[-3000:]}")
    return found.inner_text()


def _choose(page: Any, label: str, option: str) -> None:
    """Pick `option` in the visible Gradio dropdown labelled `label`."""
    page.get_by_label(label, exact=True).filter(visible=True).first.click()
    page.get_by_role("option", name=option, exact=True).click()


def _hidden(page: Any, pattern: str) -> None:
    """Wait until no visible text matches `pattern`."""
    page.get_by_text(re.compile(pattern)).filter(visible=True).first.wait_for(state="detached")


def _controls_of(benchmarks: list[Any]) -> list[str]:
    """Patterns of the form's role boxes and option controls these benchmarks (of the project) declare."""
    return [*(f"^{re.escape(role.label)}" for b in benchmarks for role in b.roles),
            *(f"^{re.escape(option_label(option).split(':')[0])}: " for b in benchmarks for option in b.options)]


@pytest.mark.skipif(not Path(CHROMIUM).exists(),
                    reason="headless browser test needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
def test_the_new_package_runs_from_the_form_in_a_browser_and_shows_on_the_board_and_in_about(copy_app: CopyApp,
                                                                                             project_copy: Path):
    with ScriptedServer(reply=reply) as server:
        with browser_page() as (page, problems):
            page.goto(copy_app.url, wait_until="load")
            open_tab(page, "Evaluate")
            # The first benchmark's form is shown first: its role boxes and options, no style control.
            for control in _controls_of(all_benchmarks()[:1]):
                _wait_for_text(page, control)
            _hidden(page, "^Style: ")
            _choose(page, "Benchmark", "TinyBench")  # by its title
            # TinyBench's option appears with its choices; every other benchmark's roles and options go.
            _wait_for_text(page, "^Style: how the question is put")
            for control in _controls_of(all_benchmarks()):
                _hidden(page, control)
            page.get_by_label("local folder", exact=True).filter(visible=True).first.check()
            page.get_by_label("Local data folder").filter(visible=True).first.fill(str(project_copy / "tinydata"))
            page.get_by_label("Endpoint base URL").fill(server.base_url)
            page.get_by_label("Model", exact=True).fill("tiny-form-llm")
            # No key from this machine's environment goes to the scripted endpoint.
            page.get_by_label("…or the environment variable holding the key").fill("")
            assert page.get_by_label("plain", exact=True).filter(visible=True).first.is_checked()
            page.get_by_label("terse", exact=True).filter(visible=True).first.check()
            page.get_by_role("button", name="Start evaluation").click()
            started = _wait_for_text(page, "Started run")
            run_id = re.search(r"Started run (\S+)\.", started).group(1)
            _wait_for_text(page, "^finished$")  # the jobs panel, polled by its timer

            # The board: the published row and the run just evaluated, both from the page.
            open_tab(page, "Leaderboard")
            _choose(page, "Benchmark", "TinyBench")
            _wait_for_text(page, "Published rows: made up")  # the board has switched to TinyBench
            _choose(page, "Subset", "All")  # the published table has the overall score only
            _wait_for_text(page, "^tiny-form-llm$")
            _wait_for_text(page, "^Published-Tiny$")
            open_tab(page, "About")
            _wait_for_text(page, "one-word answers to short questions")
        assert not problems, "\n".join(problems)
        result = copy_app.report_on(run_id)
        prompts = [body["messages"][-1]["content"] for body in server.bodies]
    assert len(prompts) == 3 and all(prompt.startswith("One word. ") for prompt in prompts), prompts
    assert result["status"] == "finished", result
    assert result["config"]["options"] == {"style": "terse"}
    rows = [dict(zip(result["board"]["headers"], row)) for row in result["board"]["data"]]
    assert {"Published-Tiny", "tiny-form-llm"} <= {row["model"] for row in rows}, rows
    assert "TinyBench" in result["about"] and "one-word answers" in result["about"]


BENCHMARK_NAME = re.compile("|".join(sorted({b.name for b in all_benchmarks()} | {"acebench", "toolbench", "stepeval"})),
                            re.IGNORECASE)


def test_no_module_outside_a_benchmark_package_names_a_benchmark():
    """The board, About, uploads, the CLI, the engine and the form read the declarations: a benchmark's
    name (or an import of its package) appears only inside its own package."""
    packages = set(benchmark_packages())
    offenders = []
    for path in sorted([*(PROJECT / "evaluators").rglob("*.py"), *(PROJECT / "ui").rglob("*.py"), PROJECT / "app.py"]):
        relative = path.relative_to(PROJECT)
        if relative.parts[:2] == ("evaluators", "benchmarks") and len(relative.parts) > 3 and relative.parts[2] in packages:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if BENCHMARK_NAME.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
