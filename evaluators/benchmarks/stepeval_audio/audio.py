"""The dialogues' wav files, only for audio mode: `wav/` beside the data files, or `wav.tar`
(local, or from the HF dataset) unpacked once under TOOLBOARD_HOME, refusing unsafe members."""

from __future__ import annotations

import hashlib
import shutil
import tarfile
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from evaluators.benchmarks.stepeval_audio.data import HF_DATASET, REVISION
from evaluators.core.archive import staged_folder
from evaluators.core.downloads import download_failed
from evaluators.core.environment import hub_endpoint
from evaluators.core.errors import DataError
from evaluators.core.paths import datasets_dir

AUDIO_ARCHIVE = "wav.tar"
_LOCK = threading.Lock()
_ROOTS: dict[str, Path] = {}


def _checked_member_path(member: tarfile.TarInfo, archive: Path) -> PurePosixPath:
    """The member's relative path; a path that would leave the target folder, or a link or device, is refused."""
    name = member.name
    parts = PurePosixPath(name).parts
    if name.startswith("/") or "\\" in name or ".." in parts or (parts and ":" in parts[0]):
        raise DataError(f"unsafe path in archive: {name!r}", archive)
    if not (member.isfile() or member.isdir()):
        raise DataError(f"unsupported member in archive (link or device): {name!r}", archive)
    return PurePosixPath(*[p for p in parts if p not in ("", ".")])


def safe_extract_tar(archive: Path, destination: Path) -> Path:
    """Unpack a tar into `destination`, which appears only when complete. Every member is checked
    before anything is written."""
    try:
        bundle = tarfile.open(archive)
    except (tarfile.TarError, OSError) as exc:
        raise DataError(f"not a readable tar archive ({exc})", archive) from None
    with staged_folder(destination) as staging, bundle:
        members = [(member, _checked_member_path(member, archive)) for member in bundle.getmembers()]
        for member, relative in members:
            if not relative.parts:
                continue
            target = staging.joinpath(*relative.parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = bundle.extractfile(member)
            if source is None:
                continue
            with source, target.open("wb") as out:
                shutil.copyfileobj(source, out)
    return destination


def _unpacked(archive: Path) -> Path:
    """Where an archive is unpacked under TOOLBOARD_HOME, keyed by its path and size (unpacked once)."""
    identity = f"{archive.resolve()}|{archive.stat().st_size}"
    target = datasets_dir() / "stepeval_audio_toolcall" / f"audio-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
    return target if target.is_dir() else safe_extract_tar(archive, target)


def download_archive() -> Path:
    """wav.tar from the HF dataset (about 1.2 GB, cached)."""
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.utils import HfHubHTTPError

    endpoint = hub_endpoint()
    try:
        return Path(
            hf_hub_download(
                HF_DATASET, AUDIO_ARCHIVE, repo_type="dataset", revision=REVISION.read(),
                endpoint=endpoint, cache_dir=str(datasets_dir() / "huggingface"),
            )
        )
    except (HfHubHTTPError, OSError) as exc:
        raise download_failed(exc, f"the audio of audio mode, {AUDIO_ARCHIVE}, from the hub dataset {HF_DATASET}",
                              endpoint or constants.ENDPOINT,
                              f"{AUDIO_ARCHIVE} can also be unpacked beside the data files (wav/) of a local data folder") from None


def _find_audio_root(meta: dict[str, Any]) -> Path:
    root = Path(meta["root"])
    if meta.get("source") == "local":
        if (root / "wav").is_dir():
            return root
        if (root / AUDIO_ARCHIVE).is_file():
            return _unpacked(root / AUDIO_ARCHIVE)
        raise DataError(f"audio mode needs the wav files: neither wav/ nor {AUDIO_ARCHIVE} found", root)
    return _unpacked(download_archive())


def audio_root(meta: dict[str, Any]) -> Path:
    """The folder the samples' `wav/…` paths are relative to; fetched and unpacked at most once."""
    key = f"{meta.get('source')}|{meta['root']}"
    if key in _ROOTS:
        return _ROOTS[key]
    with _LOCK:  # concurrent workers wait for one download and unpack
        if key not in _ROOTS:
            _ROOTS[key] = _find_audio_root(meta)
        return _ROOTS[key]


def wav_path(root: Path, relative: str) -> Path:
    """A turn's wav: `root/wav/…` as the data names it, or directly in root when the archive had no
    `wav/` folder."""
    for candidate in (root / relative, root / PurePosixPath(relative).name):
        if candidate.is_file():
            return candidate
    raise DataError(f"wav file not found: {relative}", root)
