"""Gradio's front-end files served from memory (ui/asset_cache.py), through the real app over real HTTP."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.app_fixtures import running_app
from ui.asset_cache import FOLDERS, FOREVER, REVALIDATE, file_under


def first_script(page: str) -> str:
    found = re.search(r'src="(?:\./)?(assets/[^"]+\.js)"', page)
    assert found, "the page names no script under assets/"
    return "/" + found.group(1)


@pytest.mark.slow
def test_the_page_s_scripts_come_compressed_once_and_are_kept_by_browsers(tmp_path: Path):
    with running_app(tmp_path) as app, httpx.Client(base_url=app.url.rstrip("/"), timeout=30) as http:
        script = first_script(http.get("/").text)
        on_disk = (FOLDERS["/assets/"] / script.removeprefix("/assets/")).read_bytes()
        compressed = http.get(script, headers={"accept-encoding": "br"})
        assert compressed.status_code == 200 and compressed.headers["content-encoding"] == "br"
        assert compressed.headers["cache-control"] == FOREVER  # a hashed name: its content never changes
        assert compressed.headers["content-type"].startswith("application/javascript")
        assert compressed.content == on_disk and compressed.num_bytes_downloaded < len(on_disk)  # httpx decodes br
        plain = http.get(script, headers={"accept-encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.content == on_disk
        again = http.get(script, headers={"if-none-match": plain.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        head = http.head(script, headers={"accept-encoding": "identity"})
        assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) == len(on_disk)


@pytest.mark.slow
def test_names_outside_the_front_end_folders_are_left_to_gradio(tmp_path: Path):
    with running_app(tmp_path) as app, httpx.Client(base_url=app.url.rstrip("/"), timeout=30) as http:
        for path in ("/assets/../../__init__.py", "/assets/%2e%2e/%2e%2e/__init__.py", "/assets/no-such-file.js",
                     "/static/../../../../etc/passwd", "/assets/"):
            answer = http.get(path)
            assert answer.status_code in (400, 403, 404), (path, answer.status_code)
            assert "gradio" not in answer.headers.get("content-type", "") or answer.status_code != 200
        # a file with no content hash in its name is checked again by browsers each visit
        static = next(p for p in FOLDERS["/static/"].rglob("*.js") if p.is_file())
        answer = http.get("/static/" + static.relative_to(FOLDERS["/static/"]).as_posix())
        assert answer.status_code == 200 and answer.headers["cache-control"] == REVALIDATE


def test_a_name_resolves_only_to_a_regular_file_inside_its_folder(tmp_path: Path):
    folder = tmp_path / "assets"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.js").write_text("x")
    (tmp_path / "secret.txt").write_text("no")
    (folder / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert file_under(folder, "sub/a.js") == (folder / "sub" / "a.js").resolve()
    for name in ("../secret.txt", "link.txt", "sub", "", "/etc/passwd", "sub/../../secret.txt", "a\x00.js"):
        assert file_under(folder, name) is None, name
