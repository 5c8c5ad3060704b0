"""Published results shipped with the project (`leaderboard_data/`), shown as reference rows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from evaluators.core.errors import DataError

LEADERBOARD_DIR = Path(__file__).resolve().parents[2] / "leaderboard_data"
# How a published table (or one of its rows) says its numbers were requested; null: not known.
PUBLISHED_REQUEST_MODES = ("prompt", "native tools", None)


def _read_json(path: Path, missing: str) -> Any:
    """A JSON file of leaderboard_data; `missing` says what is missing when it is not there."""
    if not path.is_file():
        raise DataError(missing, path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path, exc.lineno) from None


def load_published(benchmark: str, folder: Path = LEADERBOARD_DIR) -> dict[str, Any]:
    """The benchmark's published table: its source, caveats and rows (metric values as fractions)."""
    path = folder / f"{benchmark}.json"
    table = _read_json(path, "no published results for this benchmark")
    if not isinstance(table, dict):
        raise DataError("a published table must be a JSON object", path)
    for view, counts in (table.get("n_by_view") or {}).items():
        if not isinstance(counts, dict) or not all(isinstance(n, int) and n > 0 for n in counts.values()):
            raise DataError(f"n_by_view[{view!r}] must map each column to a positive number of items", path)
    for index, row in enumerate(table.get("rows", [])):
        values = row.get("summary", row.get("metrics"))
        if not isinstance(row.get("model"), str) or not isinstance(values, dict):
            raise DataError(f"row {index} needs 'model' and 'summary' (or 'metrics')", path)
        if row.get("date") is not None and not _is_iso_date(row["date"]):
            raise DataError(f"row {index} ({row['model']}): 'date' must be an ISO date YYYY-MM-DD, "
                            f"got {json.dumps(row['date'])}", path)
        if not isinstance(row.get("apart_reason", ""), str):
            raise DataError(f"row {index} ({row['model']}): 'apart_reason' must be a text (empty: ranked)", path)
        if row.get("request_mode") not in PUBLISHED_REQUEST_MODES:
            raise DataError(f"row {index} ({row['model']}): 'request_mode' must be one of "
                            f"{_choices(PUBLISHED_REQUEST_MODES)}, got {json.dumps(row['request_mode'])}", path)
    if table.get("request_mode") not in PUBLISHED_REQUEST_MODES:
        raise DataError(f"'request_mode' must be one of {_choices(PUBLISHED_REQUEST_MODES)}, "
                        f"got {json.dumps(table['request_mode'])}", path)
    date = (table.get("source") or {}).get("date")
    if date is not None and not _is_iso_date(date):
        raise DataError(f"'source.date' must be an ISO date YYYY-MM-DD, got {json.dumps(date)}", path)
    return table


def _is_iso_date(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) is not None


def _choices(values: tuple[Any, ...]) -> str:
    return ", ".join(json.dumps(value) for value in values)


MODELS_FILE = "models.json"
# Each field of a models.json entry: the types it may hold (null where the fact is not known).
FACT_FIELDS: dict[str, tuple[type, ...]] = {
    "name": (str,), "aliases": (list,), "organisation": (str, type(None)), "params_b": (int, float, type(None)),
    "licence": (str, type(None)), "open_weights": (bool, type(None)), "link": (str, type(None)), "source": (str,),
}
# snapshots: dated versions that share the facts but are different models to compare (gpt-4o-2024-08-06)
# flag: why the figures of this model's rows cannot be tied to one released model (the board's "flagged" rows)
OPTIONAL_FACT_FIELDS: dict[str, tuple[type, ...]] = {"notes": (str,), "snapshots": (list,), "flag": (str,)}
# Prefixes that name where a model is served or published, not a different model: "openai/gpt-4o",
# "Qwen/Qwen2.5-7B-Instruct". Any other "org/" may be someone's fine-tune of the model, so it stays.
PROVIDER_PREFIXES = re.compile(
    r"^(?:accounts/[^\s/]+/models/|(?:openai|anthropic|google|gemini|models|azure|bedrock|vertex_ai|openrouter|"
    r"together|fireworks|groq|qwen|meta-llama|deepseek-ai|mistralai|moonshotai|microsoft|salesforce|team-ace|"
    r"madeagents|thudm|zai-org|stepfun-ai|internlm|openbmb|watt-ai|huggingface)/)+")
_TYPE_NAMES = {str: "a string", list: "a list of strings", int: "a number", float: "a number", bool: "true or false",
               type(None): "null"}


@dataclass(frozen=True)
class ModelFacts:
    """What is publicly known of one model (our own table, each entry with its source)."""

    name: str
    aliases: tuple[str, ...]  # other spellings of this very model
    organisation: str
    params_b: float | None
    licence: str | None
    open_weights: bool | None
    link: str | None
    source: str
    snapshots: tuple[str, ...] = ()  # dated versions: the same facts, each its own model on the boards
    flag: str | None = None  # why its figures cannot be tied to one released model (the entry's source says so)


def load_model_facts(folder: Path = LEADERBOARD_DIR) -> tuple[ModelFacts, ...]:
    """The models.json table of `folder`, checked: every entry has every field with the right type, and
    no spelling belongs to two entries. Cached per folder (the file ships with the code)."""
    return _load_model_facts(Path(folder).resolve())


@lru_cache(maxsize=8)
def _load_model_facts(folder: Path) -> tuple[ModelFacts, ...]:
    path = folder / MODELS_FILE
    data = _read_json(path, "no model facts table")
    entries = data.get("models") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise DataError("expected a list of models (or {\"models\": [...]})", path)
    facts = tuple(_model_facts(entry, index, path) for index, entry in enumerate(entries))
    _check_unique_spellings(facts, path)
    return facts


def _model_facts(entry: Any, index: int, path: Path) -> ModelFacts:
    label = f"entry {index}" + (f" ({entry['name']!r})" if isinstance(entry, dict) and isinstance(entry.get("name"), str) else "")
    if not isinstance(entry, dict):
        raise DataError(f"{label}: expected an object with fields {', '.join(FACT_FIELDS)}", path)
    unknown = sorted(set(entry) - set(FACT_FIELDS) - set(OPTIONAL_FACT_FIELDS))
    if unknown:
        raise DataError(f"{label}: unknown field {unknown[0]!r} (fields: "
                        f"{', '.join([*FACT_FIELDS, *OPTIONAL_FACT_FIELDS])})", path)
    for field_name, types in {**FACT_FIELDS, **OPTIONAL_FACT_FIELDS}.items():
        if field_name not in entry:
            if field_name in OPTIONAL_FACT_FIELDS:
                continue
            raise DataError(f"{label}: field {field_name!r} is missing (null where the fact is not known)", path)
        value = entry[field_name]
        # bool is an int in Python: a number field must not take true/false
        if not isinstance(value, types) or isinstance(value, bool) and bool not in types:
            expected = " or ".join(dict.fromkeys(_TYPE_NAMES[t] for t in types))
            raise DataError(f"{label}: field {field_name!r} must be {expected}, got {json.dumps(value)}", path)
    for field_name in ("name", "organisation", "licence", "link", "source"):
        if isinstance(entry[field_name], str) and not entry[field_name].strip():
            raise DataError(f"{label}: field {field_name!r} must not be empty (null where the fact is not known)", path)
    for field_name in ("link", "source"):
        if isinstance(entry[field_name], str) and not entry[field_name].startswith("https://"):
            raise DataError(f"{label}: field {field_name!r} must be an https:// address, got {entry[field_name]!r}", path)
    for field_name in ("aliases", "snapshots"):
        if not all(isinstance(alias, str) and alias.strip() for alias in entry.get(field_name, [])):
            raise DataError(f"{label}: field {field_name!r} must be a list of non-empty strings", path)
    if entry["params_b"] is not None and entry["params_b"] <= 0:
        raise DataError(f"{label}: field 'params_b' must be a positive number of billions, got {entry['params_b']}", path)
    return ModelFacts(name=entry["name"], aliases=tuple(entry["aliases"]), organisation=entry["organisation"],
                      params_b=None if entry["params_b"] is None else float(entry["params_b"]),
                      licence=entry["licence"], open_weights=entry["open_weights"], link=entry["link"],
                      source=entry["source"], snapshots=tuple(entry.get("snapshots", [])),
                      flag=entry.get("flag") or None)


def normalised_model_name(name: str) -> str:
    """A model name without case, a known provider prefix (PROVIDER_PREFIXES: `openai/`, `Qwen/`) or runs of
    spaces/underscores (each becomes `-`): "openai/GPT_4o mini" -> "gpt-4o-mini"; "myorg/Qwen2.5-7B" keeps
    its prefix (someone's fine-tune is not the model)."""
    bare = PROVIDER_PREFIXES.sub("", name.strip().lower())
    return re.sub(r"[\s_]+", "-", bare.strip())


def _check_unique_spellings(facts: tuple[ModelFacts, ...], path: Path) -> None:
    """One spelling (case-insensitive, also once normalised) names one model, or the board could not
    tell which facts apply."""
    owner: dict[str, str] = {}
    for model in facts:
        spellings = [s.strip().lower() for s in (model.name, *model.aliases, *model.snapshots)]
        for spelling in dict.fromkeys([*spellings, *map(normalised_model_name, spellings)]):
            if owner.get(spelling, model.name) != model.name:
                raise DataError(f"entry {model.name!r}: spelling {spelling!r} is also used by entry {owner[spelling]!r}", path)
            owner[spelling] = model.name
