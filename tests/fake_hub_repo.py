"""A Hugging Face Hub stand-in on 127.0.0.1 with writable dataset repos: just the endpoints
huggingface_hub uses for create_repo, upload_file and create_commit (preupload, then a commit with inline
base64 content and deleted files), repo_info, the recursive tree listing and file download (what
snapshot_download needs).

Every request is logged (method, path with query, body) so tests can check what was sent. Requests
must carry `Authorization: Bearer <token>` when the hub was given a token."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from tests.loopback_app import LoopbackApp

REPO = "/{kind}/{org}/{name}"
# huggingface_hub fetches its AI-agent registry (for the User-Agent header) without a token.
PUBLIC_PATHS = ("/api/agent-harnesses",)


@dataclass
class LoggedRequest:
    method: str
    path: str
    body: str
    authorization: str | None


@dataclass
class FakeRepo:
    private: bool
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)  # sha -> {path: content}
    head: str = ""
    # create_commit(create_pr=True): each pull request's commit (its files), the head left as it was
    pull_requests: list[tuple[str, str]] = field(default_factory=list)  # (commit sha, title)

    def files_at(self, revision: str) -> dict[str, bytes] | None:
        return self.commits.get(self.head if revision == "main" else revision)


def git_blob_id(content: bytes) -> str:
    """The id git gives a file's content; the Hub reports it as the file's oid and ETag."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


class FakeHubRepo(LoopbackApp):
    def __init__(self, token: str | None = None):
        self.token = token
        self.repos: dict[str, FakeRepo] = {}  # "datasets/org/name" -> repo
        self.requests: list[LoggedRequest] = []
        # GET /api/datasets/<org>/<name>/leaderboard: the entries as the Hub's API gives them ("org/name" -> list)
        self.leaderboards: dict[str, list[dict[str, Any]]] = {}
        # While set and not yet released, every request waits (a Hub that does not answer).
        self.hold: threading.Event | None = None
        super().__init__()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.middlewares.append(self._log_and_authorize)
        app.router.add_get("/api/agent-harnesses", self._agent_harnesses)
        app.router.add_get("/api/datasets/{org}/{name}/leaderboard", self._leaderboard)
        app.router.add_post("/api/repos/create", self._create_repo)
        app.router.add_post("/api/validate-yaml", self._validate_yaml)
        app.router.add_get("/api" + REPO, self._repo_info)
        app.router.add_get("/api" + REPO + "/revision/{revision}", self._repo_info)
        app.router.add_get("/api" + REPO + "/tree/{revision}", self._tree)
        app.router.add_post("/api" + REPO + "/preupload/{revision}", self._preupload)
        app.router.add_post("/api" + REPO + "/commit/{revision}", self._commit)
        for method in ("HEAD", "GET"):
            app.router.add_route(method, REPO + "/resolve/{revision}/{path:.+}", self._resolve)
            # a model repo's files have no kind in their address
            app.router.add_route(method, "/{org}/{name}/resolve/{revision}/{path:.+}", self._resolve)

    def files(self, repo_id: str, kind: str = "datasets") -> dict[str, bytes]:
        repo = self.repos[f"{kind}/{repo_id}"]
        return repo.commits[repo.head]

    # ---- plumbing -------------------------------------------------------------------------

    @web.middleware
    async def _log_and_authorize(self, request: web.Request, handler: Any) -> web.StreamResponse:
        while self.hold is not None and not self.hold.is_set():
            await asyncio.sleep(0.02)
        body = await request.read()
        authorization = request.headers.get("Authorization")
        self.requests.append(LoggedRequest(request.method, request.path_qs, body.decode("utf-8", "replace"), authorization))
        if self.token is not None and request.path not in PUBLIC_PATHS and authorization != f"Bearer {self.token}":
            return _error(401, "Invalid credentials in Authorization header", code=None)
        return await handler(request)

    def _repo(self, request: web.Request) -> FakeRepo | None:
        info = request.match_info
        return self.repos.get(f"{info.get('kind', 'models')}/{info['org']}/{info['name']}")

    def _repo_and_files(self, request: web.Request) -> tuple[FakeRepo, dict[str, bytes]] | web.Response:
        repo = self._repo(request)
        if repo is None:
            return _error(404, "Repository not found", code="RepoNotFound")
        files = repo.files_at(request.match_info["revision"])
        if files is None:
            return _error(404, "Invalid rev id", code="RevisionNotFound")
        return repo, files

    # ---- endpoints ------------------------------------------------------------------------

    async def _leaderboard(self, request: web.Request) -> web.Response:
        entries = self.leaderboards.get(f"{request.match_info['org']}/{request.match_info['name']}")
        if entries is None:
            return _error(404, "This dataset has no leaderboard", code=None)
        return web.json_response(entries)

    async def _agent_harnesses(self, request: web.Request) -> web.Response:
        return web.json_response({"standardEnvVars": [], "harnesses": {}})

    async def _validate_yaml(self, request: web.Request) -> web.Response:
        """A README's metadata header must be YAML (the Hub checks it before a commit that changes README.md)."""
        content = (await request.json())["content"]
        header = content.split("---")[1] if content.startswith("---") else ""
        try:
            yaml.safe_load(header)
        except yaml.YAMLError as problem:
            return _error(400, f"invalid YAML in README.md: {problem}", code=None)
        return web.json_response({"errors": [], "warnings": []})

    async def _create_repo(self, request: web.Request) -> web.Response:
        payload = await request.json()
        kind = payload.get("type") or "model"
        key = f"{kind}s/{payload['organization']}/{payload['name']}"
        if key in self.repos:  # the Hub names the existing repo: create_repo(exist_ok=True) returns its url
            message = "You already created this dataset repo"
            return web.json_response({"error": message, "url": f"{self.endpoint}/{key}"}, status=409,
                                     headers={"X-Error-Message": message})
        repo = FakeRepo(private=payload.get("visibility") == "private")
        repo.head = _commit_id("", {})
        repo.commits[repo.head] = {}
        self.repos[key] = repo
        return web.json_response({"url": f"{self.endpoint}/{key}"})

    async def _repo_info(self, request: web.Request) -> web.Response:
        found = self._repo_and_files(request) if "revision" in request.match_info else self._head_files(request)
        if isinstance(found, web.Response):
            return found
        repo, files = found
        sha = request.match_info.get("revision", repo.head)
        sha = repo.head if sha == "main" else sha
        info = request.match_info
        return web.json_response({"id": f"{info['org']}/{info['name']}", "sha": sha, "private": repo.private,
                                  "siblings": [{"rfilename": path} for path in sorted(files)]})

    def _head_files(self, request: web.Request) -> tuple[FakeRepo, dict[str, bytes]] | web.Response:
        repo = self._repo(request)
        if repo is None:
            return _error(404, "Repository not found", code="RepoNotFound")
        return repo, repo.commits[repo.head]

    async def _tree(self, request: web.Request) -> web.Response:
        found = self._repo_and_files(request)
        if isinstance(found, web.Response):
            return found
        _, files = found
        folders = sorted({"/".join(path.split("/")[:depth]) for path in files for depth in range(1, path.count("/") + 1)})
        entries = [{"type": "directory", "path": folder, "oid": "0" * 40} for folder in folders]
        entries += [{"type": "file", "path": path, "size": len(content), "oid": git_blob_id(content)}
                    for path, content in sorted(files.items())]
        return web.json_response(entries)

    async def _preupload(self, request: web.Request) -> web.Response:
        found = self._repo_and_files(request)
        if isinstance(found, web.Response):
            return found
        _, files = found
        payload = await request.json()
        return web.json_response({"files": [
            {"path": item["path"], "uploadMode": "regular", "shouldIgnore": False,
             "oid": git_blob_id(files[item["path"]]) if item["path"] in files else None}
            for item in payload["files"]
        ]})

    async def _commit(self, request: web.Request) -> web.Response:
        found = self._repo_and_files(request)
        if isinstance(found, web.Response):
            return found
        repo, files = found
        changed = dict(files)
        for line in (await request.read()).decode().splitlines():
            item = json.loads(line)
            if item["key"] == "file":
                value = item["value"]
                if value.get("encoding") != "base64":
                    return _error(400, "only base64 inline files are supported here", code=None)
                changed[value["path"]] = base64.b64decode(value["content"])
            elif item["key"] == "deletedFile":  # CommitOperationDelete of one file
                if changed.pop(item["value"]["path"], None) is None:
                    return _error(404, f"cannot delete {item['value']['path']}: no such file", code="EntryNotFound")
            elif item["key"] != "header":
                return _error(400, f"operation {item['key']!r} is not supported here", code=None)
        commit = _commit_id(repo.head, changed)
        repo.commits[commit] = changed
        info = request.match_info
        where = f"{self.endpoint}/{info['kind']}/{info['org']}/{info['name']}"
        if request.query.get("create_pr") in ("1", "true", "True"):  # a pull request: the head stays
            header = json.loads((await request.read()).decode().splitlines()[0])["value"]
            repo.pull_requests.append((commit, header.get("summary", "")))
            return web.json_response({"commitUrl": f"{where}/commit/{commit}", "commitOid": commit,
                                      "pullRequestUrl": f"{where}/discussions/{len(repo.pull_requests)}"})
        repo.head = commit
        return web.json_response({"commitUrl": f"{where}/commit/{commit}", "commitOid": commit,
                                  "pullRequestUrl": None})

    async def _resolve(self, request: web.Request) -> web.Response:
        found = self._repo_and_files(request)
        if isinstance(found, web.Response):
            return found
        repo, files = found
        path = request.match_info["path"]
        if path not in files:
            return _error(404, "Entry not found", code="EntryNotFound")
        revision = request.match_info["revision"]
        content = files[path]
        headers = {"X-Repo-Commit": repo.head if revision == "main" else revision, "ETag": f'"{git_blob_id(content)}"'}
        if request.method == "HEAD":
            return web.Response(headers={**headers, "Content-Length": str(len(content))})
        return web.Response(body=content, headers=headers)


def _commit_id(parent: str, files: dict[str, bytes]) -> str:
    digest = hashlib.sha1(parent.encode())
    for path, content in sorted(files.items()):
        digest.update(path.encode() + b"\0" + content)
    return digest.hexdigest()


def _error(status: int, message: str, code: str | None) -> web.Response:
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return web.json_response({"error": message}, status=status, headers=headers)


@contextmanager
def pointed_hub(tmp_path: Path, monkeypatch: Any, token: str) -> Iterator[FakeHubRepo]:
    """A fake Hub that only accepts `token`, with HF_ENDPOINT pointing at it.

    huggingface_hub reads HF_ENDPOINT once, at import, into `constants.ENDPOINT` and the download URL
    template. HubSync reads the variable itself and passes it on; the two constants are patched too
    (together: hf_hub_url only swaps in an explicit endpoint when the template starts with ENDPOINT), for
    what the library fetches on its own: its agent registry, cached under HF_HOME, redirected to tmp_path."""
    import huggingface_hub.constants

    with FakeHubRepo(token=token) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", server.endpoint)
        monkeypatch.setattr(huggingface_hub.constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                            server.endpoint + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setattr(huggingface_hub.constants, "AGENT_HARNESSES_PATH", str(tmp_path / "agent_harnesses.json"))
        yield server
