"""The format sensitivity items, as the official `load_format_sensitivity_test_cases` and
`load_format_sensitivity_ground_truth_entry` give them:

- `BFCL_v4_format_sensitivity.json` is ONE JSON object (not JSON Lines): category -> the ids it lends;
- for each category in the object's key order (one with an empty list is skipped), the category's items whose id
  is listed, in the category's data-file order (not the order of the list: official_items_in_data_file_order);
- each of those items under each of the 26 configurations, entry-major: id
  `format_sensitivity_{index}:{configuration}:{original id}` with index = item position × 26 + configuration
  position (official_format_sensitivity_id); its answer is the original item's, repeated per configuration.

A listed id the category's file lacks is refused (the official loader would silently take fewer items).

```
Sample(id="format_sensitivity_0:ret_fmt=python&tool_call_tag=True&func_doc_fmt=python&prompt_fmt=plaintext&style=classic:simple_python_19",
       subset="format_sensitivity", input={"question": ..., "function": [...]},   # the original item's, unhinted
       gold=[...],                                                                 # the original item's answer
       meta={"category": "format_sensitivity", "language": "python", "original_id": "simple_python_19",
             "original_category": "simple_python", "configuration": "ret_fmt=…"})
```
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from evaluators.benchmarks.bfcl.categories import FORMAT_SENSITIVITY, NO_ANSWER, PYTHON, SINGLE_TURN
from evaluators.benchmarks.bfcl.official_source import PromptConfiguration, parse_configuration
from evaluators.core.errors import DataError
from evaluators.core.jsonl import decode_utf8
from evaluators.core.types import Sample

IDS_FILE = "BFCL_v4_format_sensitivity.json"
# get_all_format_sensitivity_configs: every return format x tool-call tag x doc format in plain text, classic style
# (24), then the default configuration in markdown, then in the experimental style.
RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
TOOL_CALL_TAGS = (True, False)
DOC_FORMATS = ("python", "xml", "json")
PLAINTEXT, MARKDOWN = "plaintext", "markdown"
CLASSIC, EXPERIMENTAL = "classic", "experimental"
SEPARATOR = ":"


def official_configurations() -> tuple[PromptConfiguration, ...]:
    """The 26 configurations in the official order."""
    grid = tuple(PromptConfiguration(ret, tag, doc, PLAINTEXT, CLASSIC)
                 for ret in RETURN_FORMATS for tag in TOOL_CALL_TAGS for doc in DOC_FORMATS)
    return (*grid, PromptConfiguration("python", False, "json", MARKDOWN, CLASSIC),
            PromptConfiguration("python", False, "json", PLAINTEXT, EXPERIMENTAL))


CONFIGURATIONS = tuple(config.text for config in official_configurations())


def official_format_sensitivity_id(index: int, configuration: str, original_id: str) -> str:
    return f"{FORMAT_SENSITIVITY}_{index}{SEPARATOR}{configuration}{SEPARATOR}{original_id}"


def official_configuration_from_id(sample_id: str) -> PromptConfiguration:
    """extract_prompt_format_from_id / the runner's `index.split(":")[1]`: an id holds exactly two colons."""
    parts = sample_id.split(SEPARATOR)
    if len(parts) != 3:
        raise DataError(f"format sensitivity id {sample_id!r} must hold exactly two colons")
    return parse_configuration(parts[1])


def official_routing_id(sample_id: str) -> str:
    """What the AST checker is routed by (the runner's `index.split(':')[-1]`): the original item's id."""
    return sample_id.split(SEPARATOR)[-1]


def _read_ids(source: Any) -> Any:
    """The ids file as one JSON value; `source` is bfcl.data.DataSource."""
    where = source.where(IDS_FILE)
    raw = source.read_bytes(IDS_FILE)
    try:
        return json.loads(decode_utf8(raw, where))
    except ValueError as exc:
        raise DataError(f"not one JSON value: {exc}", where) from None


def listed_ids(source: Any) -> list[tuple[str, list[str]]]:
    """(category, ids) in the object's key order, categories with no id left out (as the official loader does)."""
    where = source.where(IDS_FILE)
    found = _read_ids(source)
    if not isinstance(found, dict):
        raise DataError("expected one JSON object: category -> list of item ids", where)
    listed = []
    for category, ids in found.items():
        if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
            raise DataError(f"{category}: expected a list of item ids", where)
        if not ids:
            continue
        if category not in SINGLE_TURN or category in NO_ANSWER:
            raise DataError(f"{category} is not a single-turn category with answers", where)
        listed.append((category, ids))
    return listed


def has_format_sensitivity_file(source: Any) -> bool:
    return bool(source.has(IDS_FILE))


def load_format_sensitivity(source: Any, load_category: Callable[[Any, str], list[Sample]]) -> list[Sample]:
    """Every format sensitivity item; `load_category` is bfcl.data.load_category (the original items, with their
    answers paired as the official runner pairs them)."""
    originals: list[Sample] = []
    for category, ids in listed_ids(source):
        wanted = set(ids)
        kept = [sample for sample in load_category(source, category) if sample.id in wanted]
        missing = wanted - {sample.id for sample in kept}
        if missing:
            raise DataError(f"{len(missing)} id(s) listed for {category} are not in its data file, e.g. "
                            f"{sorted(missing)[0]!r}", source.where(IDS_FILE))
        originals.extend(kept)
    samples = []
    for position, original in enumerate(originals):
        for offset, configuration in enumerate(CONFIGURATIONS):
            samples.append(Sample(
                id=official_format_sensitivity_id(position * len(CONFIGURATIONS) + offset, configuration, original.id),
                subset=FORMAT_SENSITIVITY,
                input={"question": original.input["question"], "function": original.input["function"]},
                gold=original.gold,
                meta={"category": FORMAT_SENSITIVITY, "language": PYTHON, "original_id": original.id,
                      "original_category": original.subset, "configuration": configuration},
            ))
    return samples
