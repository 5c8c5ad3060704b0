"""The project uses libraries through their public names only (issue 43): a pin's upgrade must not break it
silently. What is kept of a library's inner workings is listed here, each with the test that fails when that
library behaves differently; everything else is held to public names by the scan below."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
SCANNED = ("evaluators", "ui", "benchmarks", "tests", "app.py")

# (file, name): the private names of other code the project still uses, and why each may stay.
ALLOWED = {
    # Documented in the os module (an exit without cleanup, for a child process).
    ("evaluators/core/worker_process.py", "_exit"),
    ("evaluators/core/isolated_call.py", "_exit"),
    # A type hint for what `add_subparsers` returns: argparse has no public name for it.
    ("evaluators/cli/parser.py", "_SubParsersAction"),
    # The official memory classes' protocol (bfcl-eval's own loop calls these two methods of a memory instance; they
    # have no public name): the memory system prompt's dump and a prerequisite conversation's snapshot flush.
    # tests/test_bfcl_memory.py and the request parity of tests/test_bfcl_memory_parity.py fail if they change.
    ("evaluators/benchmarks/bfcl/multi_turn/worker.py", "_dump_core_memory_to_context"),
    ("evaluators/benchmarks/bfcl/multi_turn/worker.py", "_flush_memory_to_local_file"),
    # The official BFCL inference loop, run as the reference in a test: its CLI takes registered models only.
    ("tests/test_bfcl_multi_turn_uploads.py", "bfcl_eval._llm_response_generation"),
    # The official BFCL classes' scenario loader (bfcl-eval's own executor calls it; it has no public name).
    # tests/test_bfcl_multi_turn_execution.py and the multi-turn parity tests fail if it changes.
    ("evaluators/benchmarks/bfcl/multi_turn/execution.py", "_load_scenario"),
    # Our own ACEBench agent API classes, which keep the official classes' name for their loader.
    ("evaluators/benchmarks/acebench/agent/env.py", "_load_scenario"),
    ("evaluators/benchmarks/acebench/agent/apis/food.py", "_load_scenario"),
}
# Private names of other code that the project also defines to fit that code's protocol (BFCL's web search class
# of our own has the official classes' `_load_scenario`): never taken for the project's own, so each use is listed.
PROTOCOL_NAMES = {"_load_scenario"}

IMPORTED_PRIVATE = re.compile(r"\b(?:from|import)\s+((?:[A-Za-z]\w*\.)+_[A-Za-z]\w*)")
# Inner modules whose names do not say so: Gradio's `context` (the Blocks being built) is not its API.
INNER_MODULES = re.compile(r"\b(?:gradio|gr)\.context\b|\bfrom\s+gradio\s+import\s+[^\n]*\bcontext\b")


def python_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        path = PROJECT / name
        files.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return files


def own_names(trees: dict[Path, ast.AST]) -> set[str]:
    """Every name the project itself defines (functions, classes, arguments, assigned names, its objects'
    attributes):
    `x._name` for a name it never defines reaches into someone else's code."""
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                names.add(node.attr)  # set on an object of its own (setting another's does not make it ours)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


@functools.cache  # both tests below read it: one parse of every file (about 5 s)
def private_uses() -> frozenset[tuple[str, str]]:
    trees = {path: ast.parse(path.read_text(encoding="utf-8"), filename=str(path)) for path in python_files()}
    own = own_names(trees) - PROTOCOL_NAMES
    found: set[tuple[str, str]] = set()
    for path, tree in trees.items():
        where = path.relative_to(PROJECT).as_posix()
        # Imports of a module or name whose own name says it is private, also in scripts held as text.
        text = path.read_text(encoding="utf-8")
        found.update((where, module) for module in IMPORTED_PRIVATE.findall(text)
                     if not module.startswith(("evaluators.", "ui.", "tests.", "benchmarks.")))
        found.update((where, inner) for inner in INNER_MODULES.findall(text) if path.name != Path(__file__).name)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] not in ("evaluators", "ui", "tests", "benchmarks"):
                    found.update((where, f"{node.module}.{alias.name}") for alias in node.names
                                 if alias.name.startswith("_") and not alias.name.startswith("__"))
            name = None
            if isinstance(node, ast.Attribute):
                name = node.attr
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
                name = node.args[1].value
            if name and name.startswith("_") and not name.startswith("__") and name not in own:
                found.add((where, name))
    return frozenset(found)


@pytest.mark.slow
def test_no_private_name_of_another_library_is_used_outside_the_list():
    assert private_uses() - ALLOWED == set()


@pytest.mark.slow
def test_the_list_holds_only_uses_that_are_still_there():
    assert ALLOWED - private_uses() == set()


# ---- kept: packages whose `__init__` is deferred (evaluators/core/lazy_packages.py) ----------------------------

def run_script(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=PROJECT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
def test_the_sdk_works_without_its_type_catalogue_or_httpcore2_and_still_has_every_name():
    """Fails when the SDK's client, its exceptions or the chat types start to need `openai.types`' own
    `__init__` (the whole catalogue), or its aiohttp transport httpcore2's (for a plain-http endpoint: an https
    one loads the certificate store, and httpcore2 with it), or the deferred packages stop answering every
    name as the whole package does."""
    out = run_script("""
        import sys
        from evaluators.engine.sdk_transport import (EndpointSpec, load_sdk, make_sdk_client, sdk_client_classes,
                                                     sdk_echo, sdk_errors)
        load_sdk()
        make_sdk_client(EndpointSpec("http://127.0.0.1:9/v1", None, 5.0))
        assert issubclass(sdk_errors().NotFoundError, sdk_errors().APIStatusError)
        assert sdk_echo({"role": "assistant", "content": "hi"}) == {"content": "hi", "role": "assistant"}
        loaded = sum(name.startswith("openai.types") for name in sys.modules)
        types = vars(sys.modules["openai.types"])
        assert loaded < 150 and "ChatCompletion" not in types and "httpcore2._async" not in sys.modules, loaded
        import httpcore2, openai
        assert openai.types.Completion.__name__ == "Completion"   # asked for: the catalogue built then
        assert openai.types.responses.Response.__name__ == "Response"
        assert openai.AsyncOpenAI is sdk_client_classes()[0] and httpcore2.AsyncConnectionPool.__name__
        print("ok")
    """)
    assert out == "ok"


@pytest.mark.slow
def test_rouge_l_scores_as_with_the_whole_packages_without_running_nltk_or_numpys_init():
    """Fails when rouge-score (or the Porter stemmer module it imports) starts to need NLTK's or numpy's own
    `__init__`, or scores otherwise than rouge-score with every package imported whole."""
    pairs = [("the cat sat on the mat", "a cat sat on a mat"), ("none", "Give up and restart"),
             ("running runs ran", "run running")]
    deferred = run_script(f"""
        import sys
        from evaluators.benchmarks.toolbench_static.metrics import rouge_l_f
        scores = [rouge_l_f(p, r) for p, r in {pairs!r}]
        assert "__version__" not in vars(sys.modules["nltk"]) and "__version__" not in vars(sys.modules["numpy"])
        print(scores)
    """)
    whole = run_script(f"""
        from rouge_score import rouge_scorer
        from evaluators.benchmarks.toolbench_static.metrics import WhitespaceTokenizer
        scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=WhitespaceTokenizer())
        print([scorer.score(target=r, prediction=p)["rougeL"].fmeasure for p, r in {pairs!r}])
    """)
    assert deferred == whole


# ---- public replacements that lean on a library's documented behaviour ------------------------------------------

@pytest.mark.slow  # over half a second in the fast loop
def test_the_guarded_hub_client_is_the_hub_librarys_own_with_the_redirect_check_added():
    out = run_script("""
        from huggingface_hub import get_session
        made = get_session()
        before = (dict(made.event_hooks), made.follow_redirects, made.timeout, dict(made.headers))
        from evaluators.engine.endpoint_guard import _check_next_hop, guard_hub_requests
        guard_hub_requests()
        guard_hub_requests()  # twice: one check
        guarded = get_session()
        assert guarded is not made and guarded.event_hooks["request"] == before[0]["request"]
        assert guarded.event_hooks["response"] == [*before[0]["response"], _check_next_hop]
        assert (guarded.follow_redirects, guarded.timeout, dict(guarded.headers)) == before[1:]
        print("ok")
    """)
    assert out == "ok"
