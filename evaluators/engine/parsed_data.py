"""A benchmark's samples read and checked once, then kept parsed: the next run (a rerun, a resume, scoring a
stored run) reads them back in a fraction of the time (1,547 steps of 14 MB of JSON Lines: ~90 ms to parse and
check, ~20 ms to read back).

A kept copy is keyed by what the load was asked (benchmark, language, subsets, limit, data folder, the options
that select samples), the
settings a loader reads (TOOLBOARD_* and HF_* variables, by hash) and the loader's code (its files' sizes and
times), and holds what the load was made from: each file read, with its SHA-256, and each path looked for,
with what was there. It is used only while every one of them is as it was: a file whose size, modification and
change times and inode are those it had when it was hashed is taken as unchanged, as git's index takes a file
(any write changes its change time, which `touch` cannot set back), provided it was hashed at least RACY_SECONDS
after its last change (a write in the same tick of the file system's clock could leave its times as they were);
any other file is hashed again (~10 ms for 14 MB, against ~90 ms to parse and check it). A different hash or
size, or a path that appeared or went, means the data is read anew.

The copy is `marshal` data (plain values only: reading it back runs no code); samples holding anything else
are simply not kept. Writing one is best effort: a copy that cannot be written or read is never an error."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import marshal
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluators import __version__
from evaluators.core import source_files
from evaluators.core.paths import toolboard_home
from evaluators.core.registry import PACKAGES_DIR, Benchmark
from evaluators.core.types import Sample

FORMAT = 3
# A file hashed sooner than this after its last change is hashed again each time (see above): above the coarsest
# file time in use (FAT's 2 s).
RACY_SECONDS = 2.5
KEPT_COPIES = 16  # the most recent loads kept (one per benchmark, subsets and limit asked)
_SETTING_PREFIXES = ("TOOLBOARD_", "HF_")
# Settings no loader reads that change from run to run, and secrets (even hashed, they stay out of file names).
_SETTING_SKIPPED = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PHASE_LOG")
_SAMPLE_FIELDS = tuple(field.name for field in dataclasses.fields(Sample))
_CORE_DIR = Path(source_files.__file__).parent


def parsed_data_dir() -> Path:
    return toolboard_home() / "parsed-data"


def load_samples(benchmark: Benchmark, data_dir: str | None, language: str | None, subsets: Sequence[str] | None,
                 limit: int | None, options: Mapping[str, str] | None = None) -> list[Sample]:
    """`benchmark.load(...)`'s samples, from the kept copy when its sources are unchanged. `options`: the run's
    option values (those that select samples reach `load`)."""
    kept = kept_samples(benchmark, data_dir, language, subsets, limit, options)
    return kept if kept is not None else fresh_samples(benchmark, data_dir, language, subsets, limit, options)


def fresh_samples(benchmark: Benchmark, data_dir: str | None, language: str | None, subsets: Sequence[str] | None,
                  limit: int | None, options: Mapping[str, str] | None = None) -> list[Sample]:
    """`benchmark.load(...)`'s samples read from their sources, and kept for the next load."""
    selecting = benchmark.sample_options(options or {})
    with source_files.noting() as notes:
        samples = benchmark.load(data_dir, language=language, subsets=list(subsets) if subsets is not None else None,
                                 limit=limit, options=selecting)
    _keep(_copy_path(benchmark, data_dir, language, subsets, limit, selecting), notes, samples)
    return samples


def kept_samples(benchmark: Benchmark, data_dir: str | None, language: str | None, subsets: Sequence[str] | None,
                 limit: int | None, options: Mapping[str, str] | None = None) -> list[Sample] | None:
    """The kept copy's samples when there is one and its sources are unchanged, else None; never an error, and
    nothing read from the sources but their times (and the hashes of files whose times cannot be trusted)."""
    path = _copy_path(benchmark, data_dir, language, subsets, limit, benchmark.sample_options(options or {}))
    rows = _kept_rows(path)
    if rows is None:
        return None
    try:
        samples = [Sample(**dict(zip(_SAMPLE_FIELDS, row, strict=True))) for row in rows]
    except (TypeError, ValueError):
        return None  # rows of another shape: read anew
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    return samples


def _copy_path(benchmark: Benchmark, data_dir: str | None, language: str | None, subsets: Sequence[str] | None,
               limit: int | None, selecting: Mapping[str, str] | None) -> Path:
    key = _key(benchmark, data_dir, language, subsets, limit, selecting)
    return parsed_data_dir() / f"{benchmark.name}-{key}.marshal"


def _key(benchmark: Benchmark, data_dir: str | None, language: str | None, subsets: Sequence[str] | None,
         limit: int | None, selecting: Mapping[str, str] | None) -> str:
    settings = sorted((name, value) for name, value in os.environ.items()
                      if name.startswith(_SETTING_PREFIXES) and not any(word in name for word in _SETTING_SKIPPED))
    asked = [FORMAT, __version__, benchmark.name, benchmark.data_version, str(Path(data_dir).absolute()) if data_dir
             else None, language, list(subsets or []), limit, settings, _code_signature(benchmark)]
    if selecting:  # (absent for the benchmarks without such options: their copies keep their keys)
        asked.append(sorted(selecting.items()))
    return hashlib.sha256(repr(asked).encode()).hexdigest()[:24]


def _code_signature(benchmark: Benchmark) -> list[tuple[str, int, int]]:
    """The loader's code as files on disk (its benchmark's package, or its own module, and the core), by size
    and time."""
    module = sys.modules.get(getattr(benchmark.load, "__module__", ""))
    paths = sorted(_CORE_DIR.rglob("*.py"))
    module_file = Path(getattr(module, "__file__", None) or "")
    if module_file.is_file():
        package = _benchmark_package(module_file)
        paths += sorted(package.rglob("*.py")) if package is not None else [module_file]
    signature = []
    for path in paths:
        stat = path.stat()
        signature.append((str(path), stat.st_size, stat.st_mtime_ns))
    return signature


def _benchmark_package(module_file: Path) -> Path | None:
    """The benchmark package folder (right under evaluators/benchmarks/) holding the module, if it is in one."""
    try:
        relative = module_file.resolve().relative_to(PACKAGES_DIR.resolve())
    except ValueError:
        return None
    return PACKAGES_DIR / relative.parts[0] if len(relative.parts) > 1 else None


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _times(stat: os.stat_result) -> tuple[int, int, int]:
    """What any write to a file changes: its modification and change times; and its inode (replaced by a new file)."""
    return stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino


def _sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _kept_rows(path: Path) -> list[Any] | None:
    """The kept samples' rows, if a copy is there, readable, and made from sources still as they are."""
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(kept, dict) or kept.get("format") != FORMAT:
        return None
    try:
        for name, size, sha256, times in kept["read"]:
            stat = _stat(name)
            if stat is None or stat.st_size != size:
                return None
            if (times is None or _times(stat) != tuple(times)) and _sha256(name) != sha256:
                return None
        for name, kind in kept["looked_for"]:
            if source_files.path_kind(Path(name)) != kind:
                return None
        rows = kept["rows"]
    except (KeyError, TypeError, ValueError):
        return None
    return rows if isinstance(rows, list) else None


def _keep(path: Path, notes: source_files.SourceNotes, samples: list[Sample]) -> None:
    read = []
    hashed_after = time.time_ns() - int(RACY_SECONDS * 1e9)
    for name in sorted(notes.read):
        stat = _stat(name)
        sha256 = _sha256(name)
        if stat is None or sha256 is None:
            return  # a source went while it was read: nothing kept
        times = _times(stat)
        # Times of a file changed just before its hash are not trusted: it is hashed again on every use.
        read.append((name, stat.st_size, sha256, times if max(times[0], times[1]) < hashed_after else None))
    rows = [tuple(getattr(sample, name) for name in _SAMPLE_FIELDS) for sample in samples]
    with contextlib.suppress(RecursionError):
        rows = _one_object_per_string(rows, {}, {})
    kept = {"format": FORMAT, "read": read, "looked_for": sorted(notes.looked_for.items()), "rows": rows}
    try:
        blob = marshal.dumps(kept)
    except ValueError:
        return  # samples holding values other than plain data: not kept
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(blob)
        partial.replace(path)
        _prune(path.parent)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()


def _one_object_per_string(value: Any, strings: dict[str, str], containers: dict[int, tuple[Any, Any]]) -> Any:
    """`value` with every string equal to one seen before replaced by that one: `marshal` writes a repeated
    object once and refers back to it, so the keys and values the samples repeat (field names, types) are read
    back once each (~1,000 samples with their tools: a copy 25% smaller, read back ~15% faster; 1,547 steps
    sharing long tool lists: 72% smaller, read back twice as fast). A list, dict or tuple reached more than once
    (one tool list shared by many samples) stays one object, written once; subclasses of these and of str are
    left as they are (marshal refuses them: such samples are not kept)."""
    kind = type(value)
    if kind is str:
        return strings.setdefault(value, value)
    if kind is not dict and kind is not list and kind is not tuple:
        return value
    made = containers.get(id(value))
    if made is not None:
        return made[1]
    if kind is dict:
        copy: Any = {_one_object_per_string(key, strings, containers): _one_object_per_string(item, strings, containers)
                     for key, item in value.items()}
    else:
        copy = kind(_one_object_per_string(item, strings, containers) for item in value)
    containers[id(value)] = (value, copy)  # the original kept alive, so its id is not reused meanwhile
    return copy


def _prune(folder: Path) -> None:
    copies = sorted(folder.glob("*.marshal"), key=lambda copy: copy.stat().st_mtime_ns, reverse=True)
    for stale in copies[KEPT_COPIES:]:
        with contextlib.suppress(OSError):
            stale.unlink()
