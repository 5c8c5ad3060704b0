"""Language and subset resolution, shared by the CLI, the engine, uploads and the Evaluate form."""

from __future__ import annotations

import pytest

from evaluators.core.errors import ToolboardError
from evaluators.core.registry import get_benchmark
from evaluators.core.selection import language_names, resolve_language, runnable_subsets


def test_a_language_defaults_to_the_benchmarks_first_and_unknown_ones_are_named():
    acebench = get_benchmark("acebench")
    assert language_names(acebench) == ["en", "zh"]
    assert resolve_language(acebench, None) == resolve_language(acebench, "") == "en"
    assert resolve_language(acebench, "zh") == "zh"
    with pytest.raises(ToolboardError, match=r"unknown language 'fr' for acebench; known: en, zh"):
        resolve_language(acebench, "fr")


def test_a_benchmark_without_languages_refuses_one():
    toolbench = get_benchmark("toolbench_static")
    assert language_names(toolbench) == [] and resolve_language(toolbench, None) is None
    with pytest.raises(ToolboardError, match="toolbench_static has no languages"):
        resolve_language(toolbench, "en")


def test_runnable_subsets_expand_groups_and_refuse_unknown_names():
    acebench = get_benchmark("acebench")
    assert runnable_subsets(acebench, ()) == list(acebench.subsets)
    assert runnable_subsets(acebench, ["normal_atom_bool"]) == ["normal_atom_bool"]
    with pytest.raises(ToolboardError, match="unknown subset 'atoms' for acebench"):
        runnable_subsets(acebench, ["atoms"])
