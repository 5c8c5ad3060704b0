"""Evidence kinds (issue 28, item 3): a benchmark declares the evidence it keeps with each verdict, and Explore
and the details export show it from the declaration alone. A tiny benchmark package with a new evidence kind (a
judge's rationale) is added to a copy of the project, nothing else changed; a run of it from the CLI shows the
rationale on its sample's page (the app's `sample` API), in the details export and in the run's record, with
every model call of the sample (the tested model's and the judge's) as an event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from evaluators.core.declarations import EvidenceKind
from evaluators.core.registry import get_benchmark
from evaluators.core.types import Prediction, SampleScore
from evaluators.service.explore import sample_evidence
from tests.project_copies import copy_with_package, run_in_copy
from tests.scripted_server import ScriptedServer, last_user_text

TEMPLATE = Path(__file__).parent / "new_benchmark" / "judged_benchmark.py"
ITEMS = [{"question": "What colour is the sky?", "answer": "blue"}, {"question": "Capital of France?", "answer": "Paris"}]
ANSWERS = {"sky": "blue", "France": "Lyon"}
RATIONALES = {"blue": "yes: <b>blue</b> is the sky's colour", "Lyon": "no: Lyon is not the capital, Paris is"}


def reply(body: dict[str, Any]) -> dict[str, Any]:
    text = last_user_text(body)
    if text.startswith("Judge:"):
        return {"content": next(why for answer, why in RATIONALES.items() if repr(answer) in text)}
    return {"content": next(answer for key, answer in ANSWERS.items() if key in text)}


@pytest.fixture(scope="module")
def project_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with one new package, and nothing else touched."""
    root = copy_with_package(tmp_path_factory.mktemp("copy"), "tinyjudge", TEMPLATE)
    (root / "tinydata").mkdir()
    (root / "tinydata" / "tinyjudge.json").write_text(json.dumps(ITEMS), encoding="utf-8")
    return root


def _run(copy: Path, *args: str, home: Path) -> subprocess.CompletedProcess:
    return run_in_copy(copy, *args, home=home)


# In the copy: the run's sample pages through the app's API, and the run's record.
EXPLORE_SCRIPT = r'''
import json, sys
from pathlib import Path
from gradio_client import Client
from evaluators.engine.run_document import export_run
from evaluators.engine.store import Store
from ui.app import build_app
from ui.context import AppContext

out = Path(sys.argv[1])
store = Store()
run_id = store.list_runs()[0].id
context = AppContext(store=store)
demo = build_app(context)
demo.launch(server_name="127.0.0.1", prevent_thread_lock=True, quiet=True)
client = Client(demo.local_url, verbose=False)
pages = {sample_id: client.predict(run_id, sample_id, "official", "", api_name="/sample")
         for sample_id in ("easy_0", "easy_1")}
out.write_text(json.dumps({"run_id": run_id, "pages": pages, "document": export_run(store, run_id)}), encoding="utf-8")
demo.close()
context.close()
'''


@pytest.mark.slow
def test_a_new_evidence_kind_shows_in_explore_and_the_details_export_with_no_edit_outside_its_package(
        project_copy: Path, tmp_path: Path):
    home = tmp_path / "home"
    with ScriptedServer(reply=reply) as server:
        ran = _run(project_copy, "-m", "evaluators", "run", "tinyjudge", "--base-url", server.base_url, "--model",
                   "tiny-llm", "--api-key-env", "", "--data-dir", str(project_copy / "tinydata"), "--json", home=home)
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert server.requests == 4  # per sample: the answer, then the judge (played by the tested model)
    assert json.loads(ran.stdout)["summary"]["accuracy"] == 0.5

    script, out = tmp_path / "explore.py", tmp_path / "out.json"
    script.write_text(EXPLORE_SCRIPT, encoding="utf-8")
    shown = _run(project_copy, str(script), str(out), home=home)
    assert shown.returncode == 0, shown.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))

    # Explore: the declared title, the rationale as text (escaped), the checker's metadata as code, the model calls.
    right, wrong = result["pages"]["easy_0"], result["pages"]["easy_1"]
    assert "<h4>Judge&#x27;s rationale</h4>" in right
    assert "yes: &lt;b&gt;blue&lt;/b&gt; is the sky&#x27;s colour" in right and "<b>blue</b>" not in right
    assert "no: Lyon is not the capital, Paris is" in wrong
    assert "<h4>How the verdict was read</h4><pre><code>judge_says(&#x27;no&#x27;)" in wrong
    assert "<h4>Model calls (2)</h4>" in wrong
    assert "1. model: Lyon" in wrong and "2. judge: no: Lyon is not the capital" in wrong

    # The run's record: the evidence by its key, the generic score, both calls as events.
    samples = {sample["id"]: sample for sample in result["document"]["samples"]}
    assert result["document"]["version"] == 2
    assert samples["easy_1"]["evidence"] == {"rationale": RATIONALES["Lyon"]}
    assert samples["easy_1"]["scores"]["official"]["value"] == 0.0
    assert samples["easy_1"]["scores"]["official"]["answer"] == "Lyon"
    assert samples["easy_1"]["scores"]["official"]["metadata"]["check"].startswith("judge_says('no')")
    events = samples["easy_1"]["events"]
    assert [event["role"] for event in events] == ["model", "judge"]
    assert events[1]["request"]["messages"][0]["content"].startswith("Judge: is 'Lyon' right")
    assert events[1]["response"]["text"] == RATIONALES["Lyon"] and events[0]["response"]["text"] == "Lyon"

    # The details export: every piece of evidence, with how the benchmark declares it.
    dataset = tmp_path / "dataset"
    exported = _run(project_copy, "-m", "evaluators", "export", result["run_id"], "--dataset", str(dataset), home=home)
    assert exported.returncode == 0, exported.stderr[-3000:]
    details = pq.read_table(dataset / "details").to_pylist()
    official = {row["sample_id"]: row for row in details if row["mode"] == "official"}
    assert json.loads(official["easy_0"]["evidence"])["rationale"] == RATIONALES["blue"]
    assert json.loads(official["easy_1"]["evidence"]) == {"rationale": RATIONALES["Lyon"],
                                                          "check": samples["easy_1"]["scores"]["official"]["metadata"]["check"]}
    kinds = json.loads(official["easy_1"]["evidence_kinds"])
    assert kinds["rationale"] == {"title": "Judge's rationale", "render": "text", "source": "prediction"}
    assert kinds["check"]["source"] == "score"


def test_evidence_is_shown_in_the_declared_order_and_undeclared_evidence_under_its_key():
    prediction = Prediction("agent_multi_step_0", extra={"stop": "finish", "result": [], "surprise": {"x": 1},
                                                         "transcript": [{"role": "user", "content": "hi"}]})
    score = SampleScore("agent_multi_step_0", "agent_multi_step", False, metadata={"note": "checked"})
    shown = sample_evidence("acebench", prediction, score)
    declared = [kind.key for kind in get_benchmark("acebench").evidence]
    assert [item["key"] for item in shown] == ["transcript", "result", "stop", "surprise", "note"]
    assert [item["key"] for item in shown][:3] == [key for key in declared if key in prediction.extra]
    assert shown[0]["render"] == "transcript" and shown[3] == {"key": "surprise", "title": "surprise", "render": "json",
                                                              "source": "prediction", "value": {"x": 1}}
    assert shown[4]["source"] == "score" and sample_evidence("acebench", None, None) == []


def test_an_evidence_kind_is_checked_when_declared():
    with pytest.raises(ValueError, match="render must be one of json, text, transcript, code"):
        EvidenceKind("x", "X", "html")
    with pytest.raises(ValueError, match="source must be one of prediction, score"):
        EvidenceKind("x", "X", source="gold")
    kind = EvidenceKind("why", "Why", source="score")
    assert kind.value_in({"why": "not this"}, {"why": "this"}) == "this" and kind.value_in(None, None) is None
