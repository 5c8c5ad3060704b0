"""The published τ²-bench rows (leaderboard_data/tau2.json), built from the official repository's leaderboard
submissions at the pinned commit (`web/leaderboard/public/submissions/*/submission.json`, read from the reference
archive at build time): the text-track submissions with airline, retail or telecom results, one row per
(submission, view), figures as fractions (the files hold percents), with who submitted them, with which user
simulator, tau2 version and scaffold type, and where each came from.

Run: `python -m evaluators.benchmarks.tau2.published ARCHIVE.tar.gz [OUT.json]` (OUT: leaderboard_data/tau2.json).
The committed JSON is what this writes; tests/test_tau2_board.py compares it with the archive's files."""

from __future__ import annotations

import json
import sys
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluators.benchmarks.tau2 import board
from evaluators.benchmarks.tau2.source import COMMIT, REPOSITORY
from evaluators.core.leaderboard import LEADERBOARD_DIR

SUBMISSIONS_DIR = "web/leaderboard/public/submissions"
SUBMISSION_FILE = "submission.json"
# Submissions shipped as templates, not results.
EXAMPLE_PREFIX = "A_EXAMPLE_"
# The official schema's default when a submission omits `modality` (scripts/leaderboard/submission.py).
DEFAULT_MODALITY = "text"
# The page that shows these rows, and its track of text agents on the three domains (its `?benchmark=` key).
BOARD_URL = "https://taubench.com/leaderboard?benchmark=core"
REPOSITORY_URL = f"https://github.com/{REPOSITORY}"
# The commit's date (the reference archive's README): the table's date; each row keeps its own submission date.
COMMIT_DATE = "2026-08-18"
PASS_KEYS = tuple(f"pass_{k}" for k in range(1, 5))
FRACTION_PLACES = 15


def read_archive(archive: Path) -> dict[str, dict[str, Any]]:
    """Every `submission.json` under the submissions folder of the reference archive, by its folder name."""
    found: dict[str, dict[str, Any]] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            parts = member.name.split("/")
            # <top>/web/leaderboard/public/submissions/<folder>/submission.json
            if member.isfile() and len(parts) == 7 and "/".join(parts[1:5]) == SUBMISSIONS_DIR and parts[6] == SUBMISSION_FILE:
                handle = tar.extractfile(member)
                if handle is not None:
                    found[parts[5]] = json.loads(handle.read().decode("utf-8"))
    return found


def is_core_text(folder: str, submission: Mapping[str, Any]) -> bool:
    """A text-track submission (the schema's default modality) with results for a domain of this benchmark."""
    results = submission.get("results") or {}
    return (not folder.startswith(EXAMPLE_PREFIX)
            and (submission.get("modality") or DEFAULT_MODALITY) == DEFAULT_MODALITY
            and any(_domain_figures(results.get(domain)) for domain in board.DOMAINS))


def _domain_figures(result: Any) -> dict[str, float]:
    """A domain's published figures as fractions (pass^k: percent / 100; cost: USD per trajectory, as given);
    the ones a submission leaves out (absent or null) are left out."""
    if not isinstance(result, Mapping):
        return {}
    figures = {key: as_fraction(result[key]) for key in PASS_KEYS if isinstance(result.get(key), int | float)}
    # A cost of 0 is litellm lacking a price for the model, not a free model: the site reads it as none (`|| null`).
    if isinstance(result.get("cost"), int | float) and result["cost"] > 0:
        figures[board.COST] = result["cost"]
    return figures


def as_fraction(percent: float) -> float:
    """A published percent as a fraction, rounded to 15 places so that 82.4 reads 0.824, not 0.8240000000000001
    (what is dropped is below a double's precision at these sizes)."""
    return round(percent / 100, FRACTION_PLACES)


def overall_figures(by_domain: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The overall view as taubench.com computes it: only for a submission with pass^1 in all three domains; then
    each pass^k is the mean of the domains that report it (cost is not averaged: the site shows none)."""
    if not all(PASS_KEYS[0] in by_domain.get(domain, {}) for domain in board.DOMAINS):
        return {}
    overall = {}
    for key in PASS_KEYS:
        values = [by_domain[domain][key] for domain in board.DOMAINS if key in by_domain[domain]]
        if values:
            overall[key] = round(sum(values) / len(values), FRACTION_PLACES)
    return overall


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def submission_rows(folder: str, submission: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per view the submission has figures for (its domains, and overall when all three are there)."""
    methodology = submission.get("methodology") or {}
    by_domain = {domain: figures for domain in board.DOMAINS
                 if (figures := _domain_figures((submission.get("results") or {}).get(domain)))}
    path = f"{SUBMISSIONS_DIR}/{folder}/{SUBMISSION_FILE}"
    labels = {
        board.USER_MODEL: _text(methodology.get("user_simulator")),
        board.REASONING_EFFORT: _text(submission.get("reasoning_effort")),
        board.TAU2_VERSION: _text(methodology.get("tau2_bench_version")),
        board.SUBMISSION_TYPE: _text(submission.get("submission_type")),
    }
    facts = {
        "submission": folder,
        "submitting_organisation": _text(submission.get("submitting_organization")),
        "model_organisation": _text(submission.get("model_organization")),
        "date": _text(submission.get("submission_date")),
        "evaluation_date": _text(methodology.get("evaluation_date")),
        "trajectories_available": bool(submission.get("trajectories_available")),
        # the official agent sends the tools as function definitions; a custom scaffold's requests are not known
        "request_mode": "native tools" if (labels[board.SUBMISSION_TYPE] or "standard") == "standard" else None,
        "link": BOARD_URL,
        "source_path": path,
        "source_url": f"{REPOSITORY_URL}/blob/{COMMIT}/{path}",
    }
    views = {**({board.OVERALL: overall} if (overall := overall_figures(by_domain)) else {}), **by_domain}
    reasons = board.published_apart_reasons(labels, sorted(by_domain))
    return [{"model": submission["model_name"], "view": view, "summary": dict(figures), **labels,
             board.APART_REASON: "; ".join(reasons), **facts}
            for view, figures in sorted(views.items(), key=lambda item: board.VIEWS.index(item[0]))]


def published_table(submissions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """leaderboard_data/tau2.json: the source, how the figures read, the caveats, and the rows in folder order."""
    chosen = sorted(folder for folder, submission in submissions.items() if is_core_text(folder, submission))
    rows = [row for folder in chosen for row in submission_rows(folder, submissions[folder])]
    return {
        "benchmark": board.BENCHMARK_NAME,
        "kind": "published",
        "source": {
            "title": "τ²-bench leaderboard (taubench.com): the submissions' files in the official repository",
            "url": BOARD_URL,
            "repository": REPOSITORY_URL,
            "path": f"{SUBMISSIONS_DIR}/*/{SUBMISSION_FILE}",
            "commit": COMMIT,
            "date": COMMIT_DATE,
            "note": (f"{len(chosen)} text-track submissions with airline, retail or telecom results (of "
                     f"{len(submissions)} submission folders at the commit: the rest are voice, banking_knowledge "
                     "only, or the example). A row's `date` is its submission_date."),
        },
        "units": ("fraction: pass_1..pass_4 are the files' percents divided by 100 (to 15 places); cost is USD per "
                  "trajectory (the agent's side only, from litellm's price table; lower is better), as given, except 0 "
                  "(no price known), left out as the site leaves it out"),
        "scoring": "the official evaluator (mode official), run by each submitter",
        "request_mode": None,
        "columns": board.PUBLISHED_COLUMNS,
        "overall": board.OVERALL_RULE,
        "ranked_experiment": board.RANKED_EXPERIMENT_TEXT,
        "caveats": list(board.PUBLISHED_CAVEATS),
        "rows": rows,
    }


def write_table(archive: Path, out: Path) -> dict[str, Any]:
    table = published_table(read_archive(archive))
    out.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return table


def main(argv: Iterable[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or len(args) > 2:
        print("usage: python -m evaluators.benchmarks.tau2.published ARCHIVE.tar.gz [OUT.json]", file=sys.stderr)
        return 2
    out = Path(args[1]) if len(args) > 1 else LEADERBOARD_DIR / f"{board.BENCHMARK_NAME}.json"
    table = write_table(Path(args[0]), out)
    print(f"{len(table['rows'])} rows written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
