"""Where the official harnesses are, for benchmarks/official_side_by_side.py: found (and prepared once) outside
the project, under the test cache folder (`$TOOLBOARD_TEST_CACHE`, default `~/.cache/toolboard-tests`). Nothing
of them is imported here or kept in the project: they run as processes of their own venvs.

- BFCL: the venv of the pinned `bfcl-eval` 2026.3.23 that tests/bfcl_official_venv.py builds (reused, never
  rebuilt here), plus `bfcl-official-cli-extras/`: the official CLI's `typer` and `tabulate` (and their
  dependencies), pinned, installed with `pip --target` (the test venv leaves them out; the venv is not changed).
- ACEBench: `acebench-official-<commit>/`: `src/` the official repository at the commit
  evaluators/benchmarks/acebench/data.py pins (taken with `git archive` from a local clone or mirror of
  chenchen0103/ACEBench, the only repository holding that commit), `venv/` its requirements.txt from PyPI, pinned
  (all but vllm, google-generativeai and protobuf, which only local and Gemini models use), `stand_ins/` stand-in
  modules for `vllm` and `google.generativeai`, which model_inference/model_infer.py imports at module level.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaluators.benchmarks.acebench.data import OFFICIAL_COMMIT  # noqa: E402
from tests.bfcl_official_venv import MARKER as BFCL_MARKER  # noqa: E402
from tests.bfcl_official_venv import STAND_IN_SOURCE, VENV_NAME, OfficialVenv, cache_root  # noqa: E402

BFCL_CLI_EXTRAS = "bfcl-official-cli-extras"
# The CLI's own imports the lean test venv leaves out (bfcl-eval requires typer>=0.12.5, tabulate>=0.9.0).
BFCL_CLI_REQUIREMENTS = ("typer==0.12.5", "click==8.1.8", "tabulate==0.9.0", "rich==13.9.4", "shellingham==1.5.4",
                         "markdown-it-py==3.0.0", "mdurl==0.1.2", "pygments==2.18.0")
ACEBENCH_REPOSITORY = "chenchen0103/ACEBench"
ACEBENCH_FOLDER = f"acebench-official-{OFFICIAL_COMMIT[:7]}"
# requirements.txt of the pinned commit less vllm, google-generativeai and protobuf; the rest as resolved once.
ACEBENCH_REQUIREMENTS = (
    "openai==1.64.0", "openpyxl==3.1.5", "pandas==2.2.3", "python-dotenv==1.0.1", "tqdm==4.67.1", "urllib3==2.3.0",
    "wcwidth==0.2.13", "httpx==0.28.1", "httpcore==1.0.9", "numpy==2.4.6", "pydantic==2.14.4", "pydantic_core==2.50.5",
    "anyio==4.16.0", "jiter==0.19.0", "distro==1.9.0", "et_xmlfile==2.0.0", "python-dateutil==4.0.0",
)
ACEBENCH_STAND_INS = ("vllm", "google", "google.generativeai")
ACEBENCH_MARKER = "complete.json"
DEFAULT_ACEBENCH_MIRROR = Path("/work/.mirror/chenchen0103+ACEBench/repo")
PIP_FLAGS = ("--no-input", "--disable-pip-version-check", "--timeout", "60", "--retries", "3")


class HarnessMissing(Exception):
    """An official harness is not there and cannot be prepared here; the message says how to get it."""


@dataclass(frozen=True)
class BfclHarness:
    venv: OfficialVenv
    extras: Path

    @property
    def python(self) -> Path:
        return self.venv.python

    @property
    def data_folder(self) -> Path:
        """The installed package's data (BFCL_v4_<category>.json), for the ids of a --limit run."""
        (site,) = (self.venv.folder / "venv" / "lib").glob("python3*/site-packages")
        return site / "bfcl_eval" / "data"


@dataclass(frozen=True)
class AcebenchHarness(OfficialVenv):
    """The official ACEBench code's venv, laid out as the BFCL test venv is (venv/, stand_ins/), with the checkout."""

    @property
    def checkout(self) -> Path:
        return self.folder / "src"


def _run(step: str, command: list[str], timeout: float = 1200, **kwargs) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HarnessMissing(f"{step}: {error}") from None
    if done.returncode != 0:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-6:])
        raise HarnessMissing(f"{step} failed: {tail}")


def bfcl_harness() -> BfclHarness:
    """The test venv as it is (never built here) and the CLI extras (installed once beside it)."""
    venv = OfficialVenv(cache_root() / VENV_NAME)
    if not (venv.folder / BFCL_MARKER).is_file() or not venv.python.exists():
        raise HarnessMissing(
            f"the official BFCL venv is not at {venv.folder}. Build it once (pip from PyPI, a few minutes, ~260 MB):\n"
            "  python -c 'from tests.bfcl_official_venv import official_venv; official_venv()'\n"
            "(or run the BFCL parity tests, which build it: python -m pytest -n 0 tests/test_bfcl_official_parity.py)")
    extras = cache_root() / BFCL_CLI_EXTRAS
    marker = extras / "requirements.json"
    if not _marker_holds(marker, list(BFCL_CLI_REQUIREMENTS)):
        _run("installing the bfcl CLI's typer and tabulate", [str(venv.python), "-m", "pip", "install", *PIP_FLAGS,
             "--no-deps", "--upgrade", "--target", str(extras), *BFCL_CLI_REQUIREMENTS])
        marker.write_text(json.dumps(list(BFCL_CLI_REQUIREMENTS)), encoding="utf-8")
    return BfclHarness(venv, extras)


def _marker_holds(marker: Path, expected: object) -> bool:
    try:
        return json.loads(marker.read_text(encoding="utf-8")) == expected
    except (OSError, ValueError):
        return False


def acebench_harness(given: Path | None, mirror: Path | None) -> AcebenchHarness:
    """A prepared folder (`given`, else the default one under the cache, built first from `mirror` when absent)."""
    if given is not None:
        harness = AcebenchHarness(given)
        if not (harness.checkout / "generate.py").is_file() or not harness.python.exists():
            raise HarnessMissing(f"{given} is not a prepared ACEBench folder (src/generate.py and venv/bin/python)")
        return harness
    harness = AcebenchHarness(cache_root() / ACEBENCH_FOLDER)
    if _marker_holds(harness.folder / ACEBENCH_MARKER, _acebench_marker()):
        return harness
    _build_acebench(harness, mirror or DEFAULT_ACEBENCH_MIRROR)
    return harness


def _acebench_marker() -> dict[str, object]:
    return {"commit": OFFICIAL_COMMIT, "requirements": list(ACEBENCH_REQUIREMENTS), "stand_ins": list(ACEBENCH_STAND_INS),
            "python": f"{sys.version_info.major}.{sys.version_info.minor}"}


def _build_acebench(harness: AcebenchHarness, mirror: Path) -> None:
    if not _has_commit(mirror):
        raise HarnessMissing(
            f"the official ACEBench code at {OFFICIAL_COMMIT} is not prepared ({harness.folder}) and {mirror} holds no "
            f"git repository with that commit. Get the repository {ACEBENCH_REPOSITORY} (the commit is not in "
            "ACEBench/ACEBench): `git clone https://github.com/chenchen0103/ACEBench DIR` (or the session's fetch tool: "
            "github:chenchen0103/ACEBench) and pass --acebench-mirror DIR/.git (or the mirror's git folder)")
    harness.folder.mkdir(parents=True, exist_ok=True)
    (harness.folder / ACEBENCH_MARKER).unlink(missing_ok=True)
    _extract_commit(mirror, harness.checkout)
    if not harness.python.exists():
        _run("creating the ACEBench venv", [sys.executable, "-m", "venv", str(harness.folder / "venv")], timeout=300)
    _run("installing ACEBench's requirements", [str(harness.python), "-m", "pip", "install", *PIP_FLAGS,
                                                 *ACEBENCH_REQUIREMENTS])
    _write_stand_ins(harness.stand_ins)
    (harness.folder / ACEBENCH_MARKER).write_text(json.dumps(_acebench_marker()), encoding="utf-8")


def _has_commit(mirror: Path) -> bool:
    done = subprocess.run(["git", "--git-dir", str(mirror), "cat-file", "-e", f"{OFFICIAL_COMMIT}^{{commit}}"],
                          capture_output=True)
    return done.returncode == 0


def _extract_commit(mirror: Path, target: Path) -> None:
    import shutil

    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "acebench.tar"
        _run("git archive of the pinned ACEBench commit",
             ["git", "--git-dir", str(mirror), "archive", "--output", str(archive), OFFICIAL_COMMIT], timeout=300)
        with tarfile.open(archive) as bundle:
            bundle.extractall(target, filter="data")


def _write_stand_ins(folder: Path) -> None:
    for module in ACEBENCH_STAND_INS:
        package = folder.joinpath(*module.split("."))
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(STAND_IN_SOURCE, encoding="utf-8")


def official_env(extra: dict[str, str]) -> dict[str, str]:
    """The environment an official process gets: this one less PYTHONPATH/PYTHONHOME, plus `extra`."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONNOUSERSITE="1", **extra)
    return env
