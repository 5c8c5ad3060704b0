"""Reading ACEBench in its official layout, from a local folder or the pinned official archive."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evaluators.benchmarks.acebench.categories import CATEGORIES, LANGUAGES, is_agent, is_multi_turn
from evaluators.benchmarks.acebench.official_source import find_code_dir
from evaluators.core import source_files
from evaluators.core.archive import download, safe_extract
from evaluators.core.environment import declare
from evaluators.core.errors import DataError
from evaluators.core.jsonl import read_json_lines
from evaluators.core.paths import data_dir_from_env, datasets_dir
from evaluators.core.types import Sample

# The first author's repository, which hosts the leaderboard and the corrected answers (2025-10-29).
OFFICIAL_REPO = "chenchen0103/ACEBench"
OFFICIAL_COMMIT = "56dd66cf6439b0d9655ee1b353e4cd745c6f664e"
ARCHIVE_URL = declare("acebench_archive_url", "the official repository's archive at the pinned commit",
                      "where ACEBench's data is downloaded from")
ARCHIVE_URL_ENV = ARCHIVE_URL.name
DATA_VERSION = f"{OFFICIAL_REPO}@{OFFICIAL_COMMIT[:7]}"


def official_archive_url() -> str:
    return ARCHIVE_URL.read() or (
        f"https://github.com/{OFFICIAL_REPO}/archive/{OFFICIAL_COMMIT}.zip"
    )


def find_language_dir(root: Path, language: str) -> Path | None:
    """Accept the data folder itself, the repository root, or a folder holding `acebench/`."""
    for candidate in (root, root / "data_all", root / "acebench", root / "acebench" / "data_all"):
        folder = candidate / f"data_{language}"
        if source_files.is_dir(folder):
            return folder
    return None


def _official_archive(what: str) -> Path:
    """The official repository archive at the pinned commit, downloaded once (callers delete it); `what` the
    caller needs of it, as a failed download names it."""
    archive = datasets_dir() / f"acebench-{OFFICIAL_COMMIT[:12]}.zip"
    if not archive.is_file():
        download(official_archive_url(), archive, "ACEBench data", what=what)
    return archive


def _extract(archive: Path, target: Path, prefix: str) -> None:
    try:
        safe_extract(archive, target, keep_prefix=prefix)
    except DataError:
        archive.unlink(missing_ok=True)
        raise
    if not (target / prefix).is_dir():
        raise DataError(f"the downloaded archive has no {prefix} folder", archive)


def download_official_data() -> Path:
    """Fetch the official repository archive at the pinned commit into the cache (once)."""
    target = datasets_dir() / f"acebench-{OFFICIAL_COMMIT[:12]}"
    if source_files.is_dir(target / "data_all"):
        return target
    archive = _official_archive("the ACEBench data")
    _extract(archive, target, "data_all")
    if not _has_code(official_code_target()):
        try:  # from the same archive while we have it; official requests and agent rollouts read it
            _extract(archive, official_code_target(), OFFICIAL_CODE)
        except DataError:
            pass  # download_official_code() reports it when it is needed
    archive.unlink(missing_ok=True)
    return target


# The official request code (prompt texts, agent scenario classes): read as data, never run.
OFFICIAL_CODE = "model_inference"


def official_code_target() -> Path:
    return datasets_dir() / f"acebench-{OFFICIAL_COMMIT[:12]}-code"


def _has_code(target: Path) -> bool:
    return find_code_dir(target / "data_all") is not None


def download_official_code() -> Path:
    """The official `model_inference/` folder from the pinned archive (Python files, read but never run)."""
    target = official_code_target()
    if not _has_code(target):
        archive = _official_archive("ACEBench's official request code (model_inference/)")
        _extract(archive, target, OFFICIAL_CODE)
        archive.unlink(missing_ok=True)
    return target


def is_downloaded(language_dir: Path) -> bool:
    """Whether this data folder is the cache's copy of the official archive."""
    try:
        return language_dir.resolve().is_relative_to(datasets_dir().resolve())
    except OSError:
        return False


def official_code_dir(language_dir: Path) -> Path | None:
    """The official `model_inference/` folder for the data in `language_dir`: beside it (or one level
    up from `data_all/`), else, for downloaded data, from the pinned archive; None when absent."""
    found = find_code_dir(language_dir)
    if found is None and is_downloaded(language_dir):
        found = download_official_code() / OFFICIAL_CODE
    return found


def checked_language(language: str | None) -> str:
    if language is None or language not in LANGUAGES:
        raise DataError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
    return language


def resolve_language_dir(data_dir: str | Path | None, language: str) -> Path:
    language = checked_language(language)
    root = Path(data_dir) if data_dir else data_dir_from_env()
    if root is None:
        root = download_official_data()
    elif not source_files.is_dir(root):
        raise DataError("data folder not found", root)
    folder = find_language_dir(root, language)
    if folder is None:
        raise DataError(
            f"no data_{language} folder here (expected the official layout: "
            f"data_{language}/data_<category>.json and data_{language}/possible_answer/)",
            root,
        )
    return folder


def _require(row: Any, fields: tuple[str, ...], path: Path, line: int) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DataError(f"expected a JSON object, got {type(row).__name__}", path, line)
    for name in fields:
        if name not in row:
            raise DataError(f"missing field {name!r}", path, line)
    return row


def _conversation_of(sample_id: str) -> str:
    """The official grouping key of a multi-turn row: the second-to-last `_` field of its id."""
    return sample_id.split("_")[-2]


def load_category(folder: Path, category: str, language: str = "en") -> list[Sample]:
    prompt_path = folder / f"data_{category}.json"
    answer_path = folder / "possible_answer" / f"data_{category}.json"
    prompts = read_json_lines(prompt_path)
    answers = read_json_lines(answer_path)
    if len(prompts) != len(answers):
        raise DataError(
            f"{len(prompts)} questions in {prompt_path.name} but {len(answers)} answers "
            "(they are joined by position and must be equally many)",
            answer_path,
        )
    agent = is_agent(category)
    prompt_fields = ("id", "question", "function") + (("initial_config", "involved_classes") if agent else ())
    answer_fields = ("id", "ground_truth") + (("mile_stone",) if agent else ())
    samples = []
    for (p_line, prompt), (a_line, answer) in zip(prompts, answers):
        _require(prompt, prompt_fields, prompt_path, p_line)
        _require(answer, answer_fields, answer_path, a_line)
        if prompt["id"] != answer["id"]:
            raise DataError(
                f"answer id {answer['id']!r} does not match question id {prompt['id']!r} "
                f"({prompt_path.name} line {p_line})",
                answer_path,
                a_line,
            )
        if not isinstance(prompt["function"], list):
            raise DataError("field 'function' must be a list of tool specs", prompt_path, p_line)
        sample_input = {
            "question": prompt["question"],
            "functions": prompt["function"],
            "time": prompt.get("time", ""),
            "profile": prompt.get("profile", ""),
        }
        # data_dir: official requests and the agent environment's default state are found from here.
        meta: dict[str, Any] = {"line": p_line, "language": language, "data_dir": str(folder)}
        if agent:
            sample_input["initial_config"] = prompt["initial_config"]
            sample_input["involved_classes"] = prompt["involved_classes"]
            meta["mile_stone"] = answer["mile_stone"]
        if is_multi_turn(category):
            meta["conversation"] = _conversation_of(prompt["id"])
        samples.append(
            Sample(id=prompt["id"], subset=category, input=sample_input, gold=answer["ground_truth"], meta=meta)
        )
    return samples


def load(
    data_dir: str | Path | None = None,
    language: str | None = "en",
    subsets: list[str] | None = None,
    limit: int | None = None,
    options: Mapping[str, str] | None = None,  # none selects samples here
) -> list[Sample]:
    """Samples of the chosen categories in official order; `limit` caps each category."""
    language = checked_language(language)
    folder = resolve_language_dir(data_dir, language)
    samples: list[Sample] = []
    for category in subsets or CATEGORIES:
        rows = load_category(folder, category, language)
        samples.extend(_first(rows, limit, category) if limit else rows)
    return samples


def _first(rows: list[Sample], limit: int, category: str) -> list[Sample]:
    """The first `limit` items; for multi-turn categories the first `limit` whole conversations."""
    if not is_multi_turn(category):
        return rows[:limit]
    kept: list[Sample] = []
    conversations = 0
    for index, row in enumerate(rows):
        if index == 0 or row.meta["conversation"] != rows[index - 1].meta["conversation"]:
            conversations += 1
            if conversations > limit:
                break
        kept.append(row)
    return kept
