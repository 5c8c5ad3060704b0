"""StepEval data: ids, validation errors naming file + line + field, the real slices, the hub
(text mode never fetches wav.tar) and safe unpacking of the audio archive."""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
from pathlib import Path

import pytest

from evaluators.benchmarks.stepeval_audio import audio as stepeval_audio
from evaluators.benchmarks.stepeval_audio import data as stepeval_data
from evaluators.core.errors import DataError
from evaluators.core.registry import get_benchmark
from tests import stepeval_fixtures
from tests.stepeval_fixtures import write_stepeval, write_wavs

real_stepeval_dir = stepeval_fixtures.real_stepeval_dir  # the real slices, skipped when absent


@pytest.fixture
def fixture_dir(tmp_path: Path) -> Path:
    return write_stepeval(tmp_path / "stepeval")


def test_ids_subsets_history_and_gold(fixture_dir: Path):
    samples = stepeval_data.load(fixture_dir)
    assert len(samples) == 16
    by_id = {s.id: s for s in samples}
    sample = by_id["timbre_positive_0"]
    assert sample.subset == "timbre_rag" and sample.input["polarity"] == "positive"
    assert [t["kind"] for t in sample.input["history"]] == ["user", "call", "tool_result", "assistant", "user"]
    assert sample.gold["call"] == {"name": "timbre_rag", "arguments": {"query": "默认男音色"}}
    assert sample.meta["file"] == "timbre_positive.jsonl" and sample.meta["line"] == 1
    assert by_id["get_weather_negative_0"].gold["call"]["name"] == "calculate"
    assert by_id["get_weather_negative_1"].gold == {"call": None, "text": "好呀，有一只企鹅走进了冰箱……"}
    assert [s.subset for s in stepeval_data.load(fixture_dir, subsets=["web_search"], limit=1)] == ["web_search"] * 2


def _rewrite(path: Path, line: int, change) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[line])
    change(record)
    lines[line] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("file", "change", "message"), [
    ("get_weather_positive", lambda r: r[-1].update({"from": "Input"}),
     r"get_weather_positive\.jsonl, line 2: turn 3: the last turn \(the gold answer\) must be from 'Assistant'"),
    ("get_weather_positive", lambda r: r[0].update({"from": "User"}), r"line 2: turn 0: field 'from' must be one of Human"),
    ("get_weather_positive", lambda r: r[0].update({"value": "no wav"}), r"line 2: turn 0: a Human turn needs a wav reference"),
    ("get_weather_positive", lambda r: r[2].pop("text"), r"line 2: turn 2: field 'text' must be a string"),
    ("get_weather_positive", lambda r: r[-1].update({"value": "好的"}), r"line 2: turn 3: a get_weather positive must end in a call"),
    ("get_weather_positive", lambda r: r[-1].update({"value": "<tool_call>get_weather</tool_call>"}),
     r"line 2: turn 3: field 'value' holds an unreadable tool call"),
    ("get_weather_positive", lambda r: r[-1].update({"value": "<tool_call>function\nget_weather\n{x}</tool_call>"}),
     r"line 2: turn 3: the tool call's arguments in field 'value' are not a JSON object"),
    ("web_search_negative", lambda r: r[-1].update({"value": "<tool_call>function\nsearch\n{\"query\": \"q\"}</tool_call>"}),
     r"web_search_negative\.jsonl, line 2: turn 1: a web_search negative must not end in a call to web_search"),
    ("timbre_positive", lambda r: r.pop(1), r"timbre_positive\.jsonl, line 1: turn 1: an 'Input' turn \(tool result\) must follow"),
    ("timbre_negative", lambda r: r.__setitem__(slice(None), r[:1]), r"timbre_negative\.jsonl, line 1: expected a JSON array of at least two turns"),
])
def test_bad_records_name_file_line_and_field(fixture_dir: Path, file: str, change, message: str):
    line = 0 if file in ("timbre_positive", "timbre_negative") else 1
    _rewrite(fixture_dir / f"{file}.jsonl", line, change)
    with pytest.raises(DataError, match=message):
        stepeval_data.load(fixture_dir)


def test_bad_json_and_missing_half(fixture_dir: Path):
    (fixture_dir / "get_weather_negative.jsonl").write_text('[{"from": "Human"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"get_weather_negative\.jsonl, line 1: invalid JSON"):
        stepeval_data.load(fixture_dir)
    (fixture_dir / "get_weather_negative.jsonl").unlink()
    with pytest.raises(DataError, match="get_weather_negative.jsonl is missing beside get_weather_positive.jsonl"):
        stepeval_data.load(fixture_dir)
    with pytest.raises(DataError, match="data folder not found"):
        stepeval_data.load(fixture_dir / "nope")


def test_real_slices_load(real_stepeval_dir: Path):
    head = stepeval_data.load(real_stepeval_dir / "head")
    assert len(head) == 143
    counts = {}
    for sample in head:
        counts[sample.meta["file"]] = counts.get(sample.meta["file"], 0) + 1
    assert counts["timbre_negative.jsonl"] == 28 and counts["timbre_positive.jsonl"] == 11
    first = next(s for s in head if s.id == "get_weather_positive_0")
    assert first.gold["call"] == {"name": "get_weather", "arguments": {"location": "chengdu"}}
    assert first.input["history"][0]["wav"] == "wav/get_weather_positive.jsonl-0-0.wav"  # id index == wav index
    samples = stepeval_data.load(real_stepeval_dir / "samples")
    assert len(samples) == 13
    assert {s.gold["call"]["name"] for s in samples if s.gold["call"] and s.input["polarity"] == "negative"} == {"web_search"}


def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w") as bundle:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return path


def test_safe_extract_refuses_paths_outside_the_target(tmp_path: Path):
    archive = _tar(tmp_path / "evil.tar", {"wav/ok.wav": b"RIFF", "../escaped.txt": b"x"})
    with pytest.raises(DataError, match=r"unsafe path in archive: '\.\./escaped\.txt'"):
        stepeval_audio.safe_extract_tar(archive, tmp_path / "out" / "audio")
    assert not (tmp_path / "out" / "escaped.txt").exists() and not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "out" / "audio").exists() and list((tmp_path / "out").iterdir()) == []
    with pytest.raises(DataError, match="unsafe path"):
        stepeval_audio.safe_extract_tar(_tar(tmp_path / "abs.tar", {"/etc/x": b"x"}), tmp_path / "out2")
    link = tmp_path / "link.tar"
    with tarfile.open(link, "w") as bundle:
        info = tarfile.TarInfo("wav/l")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        bundle.addfile(info)
    with pytest.raises(DataError, match="link or device"):
        stepeval_audio.safe_extract_tar(link, tmp_path / "out3")


def _hub_files(tmp_path: Path, with_audio: bool) -> dict[str, Path]:
    source = write_stepeval(tmp_path / "hubfiles")
    files = {p.name: p for p in source.glob("*.jsonl")}
    if with_audio:
        wavs = write_wavs(source)
        files["wav.tar"] = _tar(tmp_path / "wav.tar", {str(w.relative_to(source)): w.read_bytes() for w in wavs})
    return files


def test_hub_text_mode_never_fetches_the_audio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from evaluators.benchmarks.stepeval_audio.solve import solve
    from tests.fake_hub import FakeHub

    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with FakeHub(_hub_files(tmp_path, with_audio=True)) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        samples = get_benchmark("stepeval_audio").load(None)
        assert len(samples) == 16 and samples[0].meta["source"] == "hub"

        class TextChat:
            settings = None

            async def complete(self, request):
                from evaluators.engine.client import ChatResult

                return ChatResult("好的", None, {}, 0.0, 1, False, "k", {})

        prediction = asyncio.run(solve(samples[0], {"model": TextChat()}, {"request_mode": "tools"}))
        assert prediction.extra == {"modality": "text"}
        assert not any("wav.tar" in request for request in hub.requests)
        assert "GET get_weather_positive.jsonl" in hub.requests
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert len(get_benchmark("stepeval_audio").load(None, subsets=["get_weather"])) == 4  # from the cache


def test_hub_audio_mode_fetches_and_unpacks_wav_tar_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from tests.fake_hub import FakeHub

    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with FakeHub(_hub_files(tmp_path, with_audio=True)) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        sample = next(s for s in stepeval_data.load(None) if s.id == "get_weather_positive_0")
        root = stepeval_audio.audio_root(sample.meta)
        assert stepeval_audio.wav_path(root, "wav/get_weather_positive.jsonl-0-0.wav").read_bytes()[:4] == b"RIFF"
        assert stepeval_audio.audio_root(sample.meta) == root
        assert sum("GET wav.tar" == r for r in hub.requests) == 1


def test_hub_audio_archive_with_unsafe_member_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from tests.fake_hub import FakeHub

    files = _hub_files(tmp_path, with_audio=False)
    files["wav.tar"] = _tar(tmp_path / "evil.tar", {"../../outside.wav": b"x"})
    monkeypatch.delenv("TOOLBOARD_DATA_DIR", raising=False)
    with FakeHub(files) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        sample = stepeval_data.load(None)[0]
        with pytest.raises(DataError, match="unsafe path in archive"):
            stepeval_audio.audio_root(sample.meta)


def test_local_audio_from_wav_folder_or_tar(tmp_path: Path):
    root = write_stepeval(tmp_path / "local")
    sample = stepeval_data.load(root)[0]
    with pytest.raises(DataError, match="audio mode needs the wav files: neither wav/ nor wav.tar found"):
        stepeval_audio.audio_root(sample.meta)
    wavs = write_wavs(root)
    assert stepeval_audio.audio_root({**sample.meta, "root": str(root)}) == root
    packed = write_stepeval(tmp_path / "packed")
    _tar(packed / "wav.tar", {w.name: w.read_bytes() for w in wavs})  # an archive without the wav/ folder
    unpacked = stepeval_audio.audio_root(stepeval_data.load(packed)[0].meta)
    assert stepeval_audio.wav_path(unpacked, "wav/" + wavs[0].name).read_bytes() == wavs[0].read_bytes()
