"""Display names: every benchmark package's declared titles for its subsets, groups and views, the fallback
for a key without one, and the check at registration that titles name known keys."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evaluators.core.display_names import benchmark_title, column_title, error_type_title, subset_title
from evaluators.core.errors import ToolboardError
from evaluators.core.registry import all_benchmarks, get_benchmark, unique_titles


def test_declared_titles_are_what_a_person_reads():
    assert subset_title("bfcl", "non_live_ast") == "Non-live AST"
    assert subset_title("bfcl", "irrelevance_detection") == "Irrelevance detection"
    assert subset_title("acebench", "en") == "English"
    assert subset_title("acebench", "zh") == "Chinese"
    assert subset_title("acebench", "normal_similar_api") == "Normal: similar API"
    assert subset_title("toolbench_static", "out_of_domain") == "Out-of-domain"


def test_a_column_reads_the_metric_label_first_then_the_subset_title():
    assert column_title("acebench", "api") == "Similar API"
    assert column_title("acebench", "pref") == "Preference"
    assert column_title("bfcl", "live_ast") == "Live AST"
    # BFCL's detail columns are its categories: their titles.
    assert column_title("bfcl", "simple_javascript") == "Simple (JavaScript)"


def test_a_key_without_a_title_reads_with_spaces_and_a_capital():
    assert subset_title("stepeval_audio", "param_method") == "Param method"
    assert column_title("stepeval_audio", "param_method") == "Param method"
    assert subset_title("no_such_benchmark", "non_live_ast") == "Non live ast"
    assert column_title("no_such_benchmark", "req_per_s") == "Req per s"


def test_a_benchmark_reads_its_title_and_an_error_type_its_key_made_readable():
    assert benchmark_title("bfcl") == "BFCL v4" and benchmark_title("acebench") == "ACEBench"
    assert benchmark_title("no_such_benchmark") == "no_such_benchmark"  # a run of one no longer registered
    assert error_type_title("wrong_value") == "Wrong value"


def test_every_subset_group_and_view_of_the_shipped_benchmarks_has_a_title():
    for benchmark in all_benchmarks():
        if benchmark.name not in ("acebench", "bfcl", "stepeval_audio", "toolbench_static"):
            continue  # a package added later may go without titles (the fallback reads them)
        keys = {*benchmark.subsets, *benchmark.groups, *benchmark.board_layout().views}
        assert sorted(keys - set(benchmark.titles)) == [], benchmark.name
        assert all("_" not in title for title in benchmark.titles.values()), benchmark.name


def test_board_layout_labels_every_column_with_its_title():
    layout = get_benchmark("bfcl").board_layout()
    assert layout.labels["irrelevance_detection"] == "Irrelevance"
    assert layout.labels["live_parallel_multiple"] == "Live parallel multiple"
    acebench = get_benchmark("acebench").board_layout()
    assert [acebench.labels[c] for c in ("api", "pref")] == ["Similar API", "Preference"]


def test_titles_for_unknown_keys_are_refused_at_registration():
    bfcl = get_benchmark("bfcl")
    with pytest.raises(ToolboardError, match=r"titles for non_live_astt, which are not its subsets, groups or views"):
        replace(bfcl, titles={**bfcl.titles, "non_live_astt": "Non-live AST"})
    with pytest.raises(ToolboardError, match="empty titles for live"):
        replace(bfcl, titles={"live": " "})


def test_a_benchmark_declaring_no_titles_still_registers():
    bfcl = get_benchmark("bfcl")
    bare = replace(bfcl, titles={})
    assert bare.subset_title("non_live_ast") == "Non live ast"
    assert bare.column_title("non_live_ast") == "Non-Live AST"  # its metric label still


def test_a_table_never_shows_two_columns_under_one_header():
    for benchmark in all_benchmarks():
        layout = benchmark.board_layout()
        headers = [layout.labels[c] for c in dict.fromkeys((*layout.columns, *layout.detail_columns, *layout.text_columns))]
        assert len(headers) == len(set(headers)), (benchmark.name, headers)
    assert unique_titles({"pref": "Preference", "normal_preference": "Preference", "atom": "Atom"}) == {
        "pref": "Preference (pref)", "normal_preference": "Preference (normal_preference)", "atom": "Atom"}
