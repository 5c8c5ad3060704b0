"""A function spec, a gold answer and a one-call scorer shared by the ACEBench rule tests."""

from __future__ import annotations

from pathlib import Path

from evaluators.benchmarks.acebench.checker import score
from evaluators.core.types import Prediction, Sample

# ACEBench's built-in example (a few items written for this project and one model's answers).
EXAMPLE_DIR = Path(__file__).resolve().parents[1] / "evaluators" / "benchmarks" / "acebench" / "example"

SPEC = {
    "name": "Trip_plan",
    "description": "Plan a trip.",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "budget": {"type": "number"},
            "rate": {"type": "float"},
            "kids": {"type": "boolean"},
            "stops": {"type": "array", "items": {"type": "string"}},
            "rooms": {"type": "array", "items": {"type": "object"}},
            "traveler": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
            "tags": {"type": "list"},
            "dates": {"type": "tuple"},
        },
        "required": ["city"],
    },
}

OTHER = {"name": "Trip", "description": "Shorter name.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": []}}

def verdict(output: str, gold: dict, strict: bool = False, functions: list | None = None, multi_turn: bool = False):
    subset = "normal_multi_turn_user_adjust" if multi_turn else "normal_single_turn_single_function"
    sample = Sample(id=f"{subset}_0", subset=subset, input={"functions": functions or [SPEC]}, gold=gold)
    return score(sample, Prediction(sample.id, output=output), "strict" if strict else "official")

def passes(output: str, gold: dict, **kwargs) -> bool:
    return verdict(output, gold, **kwargs).correct

GOLD = {"Trip_plan": {"city": "Paris", "days": 3}}
