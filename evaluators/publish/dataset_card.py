"""The results dataset's card (its README.md): the YAML header the Hub and `datasets` read (the configs to load,
`contents` by default; licence, name, tags), then how to load it, every column, each benchmark's data licence
and how to cite. Built with huggingface_hub's DatasetCard from declarations only: nothing of the local machine.
huggingface_hub is imported inside functions (a CLI command that reads no card does not load it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from evaluators.core.registry import get_benchmark
from evaluators.publish.board_table import published_table
from evaluators.publish.dataset_schema import (
    CONFIGS,
    CONTENTS_COLUMNS,
    DETAILS_COLUMNS,
    KIND_TYPES,
    RUNS_COLUMNS,
    SPLIT,
)

if TYPE_CHECKING:
    from huggingface_hub import DatasetCard, DatasetCardData

CARD_TAGS = ("leaderboard", "tool-calling", "function-calling", "evaluation")
# The card's body; `card_data` is the YAML header DatasetCard renders from DatasetCardData.
CARD_TEMPLATE = """---
{{ card_data }}
---

# Toolboard results

Tool-calling scores from toolboard: the leaderboard rows (published tables, runs evaluated against endpoints,\
 uploaded predictions) and the per-item verdicts behind them.

```python
from datasets import load_dataset

contents = load_dataset("ORG/NAME", "contents", split="{{ split }}")  # or a local folder
details = load_dataset("ORG/NAME", "details", split="{{ split }}")
```

Fraction columns hold values in [0, 1], rounded as each benchmark's reference implementation rounds them; count\
 columns hold counts. No base URL (not even its host), API key, key variable name, request body or local path is\
 in this dataset.

{% macro column_table(columns) -%}
| column | type | holds |
|---|---|---|
{% for name, kind, holds in columns -%}
| `{{ name }}` | {{ kind }} | {{ holds }} |
{% endfor %}
{%- endmacro -%}
## `contents`: one row per leaderboard row

{{ column_table(contents_columns) }}
Then each benchmark's columns (null on other benchmarks' rows). Beside each fraction column `c`: `c_n` (the items\
 behind it) and `c_low`, `c_high` (its 95% Wilson interval); null when not known.

{% for benchmark in benchmarks -%}
### {{ benchmark.title }} (`{{ benchmark.name }}`)

{{ column_table(benchmark.columns) }}
{% endfor -%}
## `details`: one row per scored item and scoring mode

{{ column_table(details_columns) }}
## `runs`: one row per run, to rebuild a toolboard store

{{ column_table(runs_columns) }}
## Benchmarks: data, licences and citations

{% for benchmark in benchmarks -%}
### {{ benchmark.title }} (`{{ benchmark.name }}`)

{% for line in benchmark.about -%}
- {{ line }}
{% endfor %}
{% endfor -%}
## How to cite

Cite the benchmarks whose rows you use (above), and this dataset by its Hub address and the `updated` dates of the\
 rows you quote. Published rows are the benchmark authors' numbers; cite their sources.
"""


def card_data(configs: Iterable[str]) -> DatasetCardData:
    """The card's YAML header: the configs `datasets` loads (contents is the default) and the Hub's metadata."""
    from huggingface_hub import DatasetCardData

    return DatasetCardData(
        license="other", license_name="per-benchmark", pretty_name="Toolboard results", tags=list(CARD_TAGS),
        configs=[{"config_name": config, **({"default": True} if config == "contents" else {}),
                  "data_files": [{"split": SPLIT, "path": f"{config}/*.parquet"}]} for config in configs])


def cell_text(text: Any) -> str:
    """Text for one Markdown table cell (or list item): one line, pipes escaped."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _cell_rows(columns: Iterable[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    return [(name, kind, cell_text(holds)) for name, kind, holds in columns]


def _benchmark_section(name: str) -> dict[str, Any]:
    """What the card says of one benchmark: its columns and its data's licence, source and citation."""
    benchmark = get_benchmark(name)
    layout = benchmark.board_layout()
    columns = []
    for column in (*layout.columns, *layout.detail_columns, *layout.text_columns):
        metric = benchmark.metric(column)
        kind = "string" if column in layout.text_columns else KIND_TYPES.get(metric.kind, "float64")
        columns.append((column, kind, metric.description or metric.shown_as))
    about = benchmark.about
    published = (published_table(name) or {}).get("source") or {}
    lines = [f"Data licence: {cell_text(about.licence) or 'not stated'}"]
    if about.data:
        lines.append(f"Data: {cell_text(about.data)}")
    if about.source_url:
        lines.append(f"Source: {about.source_url}")
    if published.get("url"):
        lines.append(f"Published rows: {published['url']}" + (f" ({published['date']})" if published.get("date") else ""))
    if about.citation:
        lines.append(f"Cite: {cell_text(about.citation)}" + (f" ({about.paper_url})" if about.paper_url else ""))
    return {"name": name, "title": benchmark.title, "columns": _cell_rows(columns), "about": lines}


def dataset_card(benchmarks: Iterable[str], configs: Iterable[str] = CONFIGS) -> DatasetCard:
    """The card of a results dataset naming `configs`, with a section for each of `benchmarks`."""
    from huggingface_hub import DatasetCard

    card: DatasetCard = DatasetCard.from_template(
        card_data(configs), template_str=CARD_TEMPLATE, split=SPLIT,
        benchmarks=[_benchmark_section(name) for name in benchmarks],
        contents_columns=_cell_rows(CONTENTS_COLUMNS), details_columns=_cell_rows(DETAILS_COLUMNS),
        runs_columns=_cell_rows(RUNS_COLUMNS))
    return card


def card_text(benchmarks: Iterable[str], configs: Iterable[str] = CONFIGS) -> str:
    """The README.md text of a results dataset (dataset_card)."""
    return str(dataset_card(benchmarks, configs))
