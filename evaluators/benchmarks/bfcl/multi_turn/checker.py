"""A multi-turn item's verdict, as bfcl-eval 2026.3.23 scores it (`_evaluate_single_multi_turn_entry` +
`multi_turn_checker`), each rule by its name:

In the main process (`score`):
- official_multi_turn_inference_error: `extra["turns"]` missing or not a list -> "multi_turn:inference_error".
- official_multi_turn_force_terminated: fewer or more turns than the ground truth -> "multi_turn:force_terminated".
- official_multi_turn_skips_undecodable_steps: each step's text goes through official_call_texts; a step that
  fails to decode or decodes to an empty call list is left out (the model may chat between calls).
Then in an environment worker, on fresh instances (namespaces model_name+"_eval" and
model_name+"_ground_truth_eval"), turn by turn (`run_official_checker`):
- the model's steps of the turn run, then the ground truth's calls;
- official_multi_turn_empty_turn: a turn with ground truth but no decoded step -> "multi_turn:empty_turn_model_response";
- official_multi_turn_irrelevance_unchecked: a turn with no ground truth (a miss_func / miss_param holdout turn)
  is not checked at all, whatever the model called (the official runner never calls its irrelevance checker);
- official_multi_turn_state_check: every involved instance's public attributes equal the ground truth's ->
  else "multi_turn:instance_state_mismatch";
- official_multi_turn_response_check: the ground truth's results of this turn are an unordered sub-multiset of
  the model's results of ALL turns so far -> else "multi_turn:execution_response_mismatch";
- official_multi_turn_checker_crash_scores_wrong: where the official checker would raise (it stops its run),
  the item fails ("multi_turn:checker_crash").
Strict mode (`mode="strict"`) adds:
- strict_multi_turn_irrelevance: in a turn without ground truth, a decoded call fails the item
  ("multi_turn:irrelevance_error:decoder_success", the official irrelevance checker's verdict), checked before
  the turns are executed, as that checker reads only the decoded output.
Bounded: a worker that runs out of memory or time fails the item (bounded_environment_limit,
"multi_turn:environment_limit"); the official checker has no bounds.

SampleScore.metadata: {"failed_turn": int | None, "differences": {attr: {"model", "ground_truth"}} | None,
"missing_items": [...] | None, "turn_states": [{"model": state, "ground_truth": state}, ...] (per turn checked,
JSON-safe), "deviations": {name: count}}.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from typing import Any

from evaluators.benchmarks.bfcl.decode_common import DecodeFailure
from evaluators.benchmarks.bfcl.multi_turn.evidence import TURNS
from evaluators.benchmarks.bfcl.multi_turn.execution import (
    Environment,
    execute_call_texts,
    is_empty_execute_response,
    json_safe,
    official_call_texts,
    public_state,
)
from evaluators.core.types import Prediction, Sample, SampleScore

PASS_RULE = "official_multi_turn_all_turns_pass"
# The instance-name prefix of the checker's namespaces (the official runner uses the result folder's model name;
# it shows only in texts that name an instance, which no decoded call reaches).
DEFAULT_MODEL_NAME = "model"
ERROR_TYPES = {
    "inference_error": "multi_turn:inference_error",
    "force_terminated": "multi_turn:force_terminated",
    "empty_turn": "multi_turn:empty_turn_model_response",
    "state": "multi_turn:instance_state_mismatch",
    "response": "multi_turn:execution_response_mismatch",
    "irrelevance": "multi_turn:irrelevance_error:decoder_success",
    "crash": "multi_turn:checker_crash",
    "limit": "multi_turn:environment_limit",
}


# ---- main process ------------------------------------------------------------------------------------------


def decode_turns(turns: list[Any]) -> list[list[list[str]]]:
    """official_multi_turn_skips_undecodable_steps. A turn that is not a list is iterated as the official loop
    iterates it (a text by character, an object by key); anything else cannot be iterated (TypeError)."""
    decoded = []
    for turn in turns:
        steps = []
        for step in _official_iteration(turn):
            try:
                calls = official_call_texts(step)
            except DecodeFailure:
                continue
            if not is_empty_execute_response(calls):
                steps.append(calls)
        decoded.append(steps)
    return decoded


def _official_iteration(turn: Any) -> list[Any]:
    if isinstance(turn, (list, str)):
        return list(turn)
    if isinstance(turn, dict):
        return list(turn)
    raise TypeError(f"'{type(turn).__name__}' object is not iterable")


def score(sample: Sample, prediction: Prediction, mode: str = "official", host: Any = None) -> SampleScore:
    """The verdict on one answered multi-turn item (bfcl.checker.score rules on an item without an answer); the
    execution runs in the environment host's worker (`host`, default the process's shared host)."""
    turns = (prediction.extra or {}).get(TURNS)
    if type(turns) is not list:
        return _verdict(sample, False, ERROR_TYPES["inference_error"], "official_multi_turn_inference_error",
                        "Error during inference phase. Model did not output a list of model responses.")
    gold = sample.gold
    if len(turns) != len(gold):
        return _verdict(sample, False, ERROR_TYPES["force_terminated"], "official_multi_turn_force_terminated",
                        f"Model was force-terminated during inference phase. The length of the model result turns "
                        f"({len(turns)}) does not match the length of the ground truth turns ({len(gold)}).")
    try:
        decoded = decode_turns(turns)
    except TypeError as exc:
        return _verdict(sample, False, ERROR_TYPES["crash"], "official_multi_turn_checker_crash_scores_wrong",
                        f"the official checker raises on this answer: TypeError: {exc}")
    if mode == "strict":
        failed = strict_multi_turn_irrelevance(decoded, gold)
        if failed is not None:
            return _verdict(sample, False, ERROR_TYPES["irrelevance"], "strict_multi_turn_irrelevance",
                            f"Model outputs valid function calls when it should not for turn {failed}.", decoded,
                            {"failed_turn": failed, "differences": None, "missing_items": None, "turn_states": [],
                             "deviations": {}})
    from evaluators.benchmarks.bfcl.multi_turn.env_host import EnvironmentLimit

    try:
        result = check(sample, decoded, (prediction.extra or {}).get("model_name") or DEFAULT_MODEL_NAME, host)
    except EnvironmentLimit as exc:
        return _verdict(sample, False, ERROR_TYPES["limit"], "bounded_environment_limit", str(exc), decoded)
    return verdict_of_result(sample, result, decoded)


def check(sample: Sample, decoded_turns: list[list[list[str]]], model_name: str = DEFAULT_MODEL_NAME,
          host: Any = None) -> dict[str, Any]:
    """The official multi_turn_checker on decoded turns (as decode_turns gives them), run in a worker on fresh
    instances: {"valid", "error_type", "rule", "error_message", "failed_turn", "differences", "missing_items",
    "turn_states", "deviations"}. Raises env_host.EnvironmentLimit when the worker runs out of memory or time."""
    from evaluators.benchmarks.bfcl.multi_turn.env_host import shared_host

    request = checker_request(sample, decoded_turns, model_name)
    # A run scores each item in both modes, one after the other, and they replay the same turns: replayed once.
    key = json.dumps(request, sort_keys=True, default=repr)
    recent = _RECENT_CHECKS.get(key)
    if recent is not None:
        return copy.deepcopy(recent)
    calls = sum(len(step) for turn in decoded_turns for step in turn) + sum(len(turn) for turn in sample.gold)
    result = (host or shared_host()).check(request, calls)
    with _RECENT_CHECKS_LOCK:  # runs score on their own scoring threads (engine/background_scoring.py)
        _RECENT_CHECKS[key] = copy.deepcopy(result)
        while len(_RECENT_CHECKS) > RECENT_CHECKS:
            _RECENT_CHECKS.popitem(last=False)
    return result


# The last few checks' results, by request (the item, its decoded answers, the namespace), so both modes of an
# item read one replay.
RECENT_CHECKS = 64
_RECENT_CHECKS: OrderedDict[str, dict[str, Any]] = OrderedDict()
_RECENT_CHECKS_LOCK = threading.Lock()


def checker_request(sample: Sample, decoded: list[list[list[str]]], model_name: str) -> dict[str, Any]:
    return {"entry": {"id": sample.id, "involved_classes": sample.input["involved_classes"],
                      "initial_config": sample.input["initial_config"],
                      "long_context": bool(sample.meta.get("long_context"))},
            "decoded": decoded, "gold": sample.gold, "model_name": model_name}


def verdict_of_result(sample: Sample, result: dict[str, Any], decoded: Any) -> SampleScore:
    metadata = {key: result.get(key) for key in ("failed_turn", "differences", "missing_items", "turn_states")}
    if result.get("deviations"):  # kept only when the documented deviations were met (Explore shows no empty {})
        metadata["deviations"] = result["deviations"]
    if result["valid"]:
        return _verdict(sample, True, None, PASS_RULE, "", decoded, metadata)
    return _verdict(sample, False, result["error_type"], result["rule"], result["error_message"], decoded, metadata)


def strict_multi_turn_irrelevance(decoded: list[list[list[str]]], gold: list[list[str]]) -> int | None:
    """The official multi_turn_irrelevance_checker, which the official runner never calls: the first turn without
    ground truth in which the model's decoded steps hold a call, else None."""
    for index, gold_turn in enumerate(gold):
        if not gold_turn and not is_empty_execute_response(decoded[index]):
            return index
    return None


def _verdict(sample: Sample, correct: bool, error_type: str | None, rule: str, detail: str, decoded: Any = None,
             metadata: dict[str, Any] | None = None) -> SampleScore:
    return SampleScore(sample_id=sample.id, subset=sample.subset, correct=correct, error_type=error_type, rule=rule,
                       detail=detail, decoded=decoded, metadata=metadata)


# ---- worker process ----------------------------------------------------------------------------------------


def run_official_checker(worker: Any, request: dict[str, Any]) -> dict[str, Any]:
    """multi_turn_checker on fresh instances in the worker (worker.py's Worker)."""
    entry, decoded, gold, model_name = request["entry"], request["decoded"], request["gold"], request["model_name"]

    def environment(namespace: str) -> Environment:
        opened: Environment = worker.environment(entry["involved_classes"], entry["initial_config"], namespace, entry["id"],
                                  entry["long_context"])
        return opened

    model = environment(model_name + "_eval")
    ground_truth = environment(model_name + "_ground_truth_eval")
    states: list[dict[str, Any]] = []
    try:
        result = _official_turns(model, ground_truth, decoded, gold, states, worker.time_limit)
    except (AssertionError, AttributeError, TypeError) as exc:
        result = _failed("crash", "official_multi_turn_checker_crash_scores_wrong", None,
                         f"the official checker raises here: {type(exc).__name__}: {exc}")
    result["turn_states"] = states
    result["deviations"] = {key: model.deviations.get(key, 0) + ground_truth.deviations.get(key, 0)
                            for key in {*model.deviations, *ground_truth.deviations}}
    return result


def _failed(kind: str, rule: str, turn: int | None, message: str, **details: Any) -> dict[str, Any]:
    return {"valid": False, "error_type": ERROR_TYPES[kind], "rule": rule, "error_message": message,
            "failed_turn": turn, "differences": details.get("differences"),
            "missing_items": details.get("missing_items")}


def _official_turns(model: Environment, ground_truth: Environment, decoded: list[list[list[str]]],
                    gold: list[list[str]], states: list[dict[str, Any]], guard: Any) -> dict[str, Any]:
    all_model_results: list[str] = []
    for turn_index, gold_turn in enumerate(gold):
        model_turn = decoded[turn_index]
        for step in model_turn:
            all_model_results.extend(execute_call_texts(model, step, guard))
        gold_results = execute_call_texts(ground_truth, gold_turn, guard)
        states.append({"model": public_state(model), "ground_truth": public_state(ground_truth)})
        if gold_turn and (not model_turn or is_empty_execute_response(model_turn)):
            return _failed("empty_turn", "official_multi_turn_empty_turn", turn_index,
                           f"Model response list is empty for turn {turn_index}")
        if not gold_turn:  # official_multi_turn_irrelevance_unchecked
            continue
        for class_name, expected in ground_truth.instances.items():
            differences = _compare_instances(model.instances[class_name], expected)
            if differences:
                return _failed("state", "official_multi_turn_state_check", turn_index,
                               f"Model instance for {class_name} does not match the state with ground truth instance.",
                               differences=json_safe(differences))
        missing = _missing_unordered(gold_results, all_model_results)
        if missing:
            return _failed("response", "official_multi_turn_response_check", turn_index,
                           f"Model response execution results so far does not contain all the ground truth response "
                           f"execution results for turn {turn_index}.", missing_items=missing)
    return {"valid": True, "failed_turn": None, "differences": None, "missing_items": None}


def _compare_instances(model: Any, expected: Any) -> dict[str, Any]:
    """The official _compare_instances: each public attribute of the ground truth's instance, compared with !=."""
    assert type(model) is type(expected), "Objects are not of the same type."
    differences = {}
    for name in vars(expected):
        if name.startswith("_"):
            continue
        model_value, expected_value = getattr(model, name), getattr(expected, name)
        if model_value != expected_value:
            differences[name] = {"model": model_value, "ground_truth": expected_value}
    return differences


def _missing_unordered(expected: list[str], found: list[str]) -> list[str]:
    """The official _is_subsequence_unordered: each expected item removes one equal item from a copy of `found`."""
    remaining = list(found)
    missing = []
    for item in expected:
        try:
            remaining.remove(item)
        except ValueError:
            missing.append(item)
    return missing
