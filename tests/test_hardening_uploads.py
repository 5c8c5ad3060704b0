"""Hostile predictions files: zip bombs (honest and lying headers), damaged zips, deep nesting, huge
numbers, empty input, lone surrogates, and uploads that must leave neither a temp file nor a server
path behind."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from gradio.utils import get_upload_folder

from evaluators.core import archive
from evaluators.core.errors import DataError, PredictionsError, ToolboardError
from evaluators.core.predictions import read_rows
from evaluators.engine.store import Store
from evaluators.service.submissions import check_submission, store_submission
from tests.acebench_fixtures import EXAMPLE_DIR
from tests.app_fixtures import write_predictions
from tests.conftest import PROJECT, run_cli

MB = 1 << 20
MAX_PEAK_MB = 300


def deflated_zeros(megabytes: int) -> bytes:
    """A raw deflate stream of `megabytes` MB of zeros, built from one compressed megabyte (a full
    flush makes every block independent), so a large bomb takes no time to write."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(bytes(MB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return block * megabytes + compressor.flush(zlib.Z_FINISH)


def zip_with_one_member(target: Path, name: str, data: bytes, method: int, declared_size: int, crc: int) -> Path:
    """A one-member zip whose headers say whatever we are told (a writer that lies)."""
    encoded = name.encode()
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, len(data), declared_size,
                        len(encoded), 0)
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, len(data), declared_size,
                          len(encoded), 0, 0, 0, 0, 0, 0)
    directory_offset = len(local) + len(encoded) + len(data)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(encoded), directory_offset, 0)
    target.write_bytes(local + encoded + data + central + encoded + end)
    return target


def zeros_crc(megabytes: int) -> int:
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(bytes(MB), crc)
    return crc


# The child's own peak: VmHWM belongs to the memory the child has after exec, whereas ru_maxrss
# (RUSAGE_SELF in the child or RUSAGE_CHILDREN here) also counts the pytest process it was forked from.
READ_IN_A_CHILD = """
import re, sys
from evaluators.core.errors import PredictionsError
from evaluators.core.predictions import read_rows
for path in sys.argv[1:]:
    try:
        read_rows(path)
        print("read", path)
    except PredictionsError as exc:
        print(exc)
with open("/proc/self/status") as status:
    print("peak_mb", int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read()).group(1)) / 1024)
"""


@pytest.mark.slow
def test_zip_bombs_and_huge_lines_are_refused_while_memory_stays_bounded(tmp_path: Path):
    megabytes = 320
    zeros = deflated_zeros(megabytes)
    liar = zip_with_one_member(tmp_path / "liar.zip", "preds.jsonl", zeros, zipfile.ZIP_DEFLATED, 48, zlib.crc32(bytes(48)))
    honest = zip_with_one_member(tmp_path / "honest.zip", "preds.jsonl", zeros, zipfile.ZIP_DEFLATED, megabytes * MB,
                                 zeros_crc(megabytes))
    one_long_line = tmp_path / "long.jsonl"
    with one_long_line.open("wb") as handle:
        handle.write(b'{"id": "a", "output": "' + b"a" * 9000)  # text past the first bytes the reader looks at
        handle.truncate(100 * MB)  # then sparse: 100 MB in all, no line end, no disk used
    all_zeros = tmp_path / "zeros.jsonl"
    with all_zeros.open("wb") as handle:
        handle.truncate(100 * MB)  # 100 MB of zeros: not text at all
    assert liar.stat().st_size < 2 * MB
    # The reading runs in a child so its own peak memory can be measured (and a failure cannot take pytest down).
    child = subprocess.run([sys.executable, "-c", READ_IN_A_CHILD, str(liar), str(honest), str(one_long_line),
                            str(all_zeros)],
                           cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    lines = child.stdout.splitlines()
    peak = float(lines[-1].split()[1])
    assert peak < MAX_PEAK_MB, f"peak memory {peak:.0f} MB"
    assert "liar.zip:preds.jsonl, line 1: invalid JSON" in lines[0]  # only the 48 declared bytes were unpacked
    assert "honest.zip: the zip unpacks to 320 MB; at most 128 MB is read" in lines[1]
    assert "long.jsonl, line 1: line longer than 8 MB" in lines[2]
    assert "zeros.jsonl: not a text file" in lines[3]  # told from its first bytes, before any line


@pytest.mark.slow
def test_json_that_would_take_far_more_memory_than_its_text_is_refused(tmp_path: Path):
    """`[{}, {}, …]` takes ~20 times its text once parsed: 64 MB of such lines (and one 8 MB line after
    them) is refused before its parsed rows outgrow the budget, with memory bounded."""
    line = json.dumps({"id": "x", "output": [{}] * 400_000}).encode()
    flood = tmp_path / "flood.jsonl"
    with flood.open("wb") as handle:
        for _ in range(40):
            handle.write(line + b"\n")
    late = tmp_path / "late.jsonl"
    with late.open("wb") as handle:
        for _ in range(4):
            handle.write(line + b"\n")
        handle.write(b'{"id": "y", "output": [' + b"{}," * (2_700_000) + b"{}]}\n")
    child = subprocess.run([sys.executable, "-c", READ_IN_A_CHILD, str(flood), str(late)], cwd=PROJECT,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    lines = child.stdout.splitlines()
    assert "flood.jsonl, line 6: the predictions read so far take more than 160 MB once parsed" in lines[0]
    assert "late.jsonl, line 5: the predictions read so far take more than 160 MB once parsed" in lines[1]
    peak = float(lines[-1].split()[1])
    assert peak < MAX_PEAK_MB, f"peak memory {peak:.0f} MB"


def test_a_member_past_the_ratio_cap_is_refused_before_reading(tmp_path: Path):
    zeros = deflated_zeros(40)  # 40 MB in ~40 KB: within the total budget, 1000:1
    bomb = zip_with_one_member(tmp_path / "bomb.zip", "a.jsonl", zeros, zipfile.ZIP_DEFLATED, 40 * MB, zeros_crc(40))
    with pytest.raises(PredictionsError, match=r"bomb\.zip:a\.jsonl: unpacks \d+x its compressed size \(at most 200x"):
        read_rows(bomb)


def test_a_bad_crc_a_corrupt_stream_and_unsupported_members_are_clear_errors(tmp_path: Path):
    line = b'{"id": "normal_atom_bool_0", "output": "[f()]"}\n'
    bad_crc = zip_with_one_member(tmp_path / "crc.zip", "p.jsonl", line, zipfile.ZIP_STORED, len(line), 12345)
    with pytest.raises(PredictionsError, match=r"crc\.zip:p\.jsonl: the zip is damaged \(Bad CRC-32"):
        read_rows(bad_crc)
    garbage = zip_with_one_member(tmp_path / "garbage.zip", "p.jsonl", b"\xff" * 64, zipfile.ZIP_DEFLATED, 100, 0)
    with pytest.raises(PredictionsError, match=r"garbage\.zip:p\.jsonl: the zip is damaged"):
        read_rows(garbage)
    bzip2 = tmp_path / "bzip2.zip"
    with zipfile.ZipFile(bzip2, "w", compression=zipfile.ZIP_BZIP2) as bundle:
        bundle.writestr("p.jsonl", line)
    with pytest.raises(PredictionsError, match=r"compression method 12 is not read"):
        read_rows(bzip2)
    encrypted = bytearray(zip_with_one_member(tmp_path / "enc.zip", "p.jsonl", line, zipfile.ZIP_STORED, len(line),
                                              zlib.crc32(line)).read_bytes())
    central = encrypted.rindex(b"PK\x01\x02")
    encrypted[central + 8] |= 0x1  # the "encrypted" flag bit, as the central directory says it
    (tmp_path / "enc.zip").write_bytes(encrypted)
    with pytest.raises(PredictionsError, match="encrypted"):
        read_rows(tmp_path / "enc.zip")


def test_the_counted_reader_stops_at_its_limit_and_at_the_shared_budget(tmp_path: Path):
    import io

    stream = archive.CountedReader(io.BytesIO(bytes(5000)), "x.jsonl", archive.ByteBudget(10_000), limit=3000)
    with pytest.raises(DataError, match="200x"):
        stream.read()
    budget = archive.ByteBudget(6000, PredictionsError)
    archive.CountedReader(io.BytesIO(bytes(4000)), "a.jsonl", budget).read()
    with pytest.raises(PredictionsError, match=r"b\.jsonl: unpacks to more than"):
        archive.CountedReader(io.BytesIO(bytes(4000)), "b.jsonl", budget).read()


def test_safe_extract_counts_bytes_and_refuses_bombs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import os

    large = tmp_path / "large.zip"
    with zipfile.ZipFile(large, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("repo/data/a.json", os.urandom(150_000))
        bundle.writestr("repo/data/b.json", os.urandom(150_000))
    monkeypatch.setattr(archive, "MAX_EXTRACTED_BYTES", 200_000)
    with pytest.raises(DataError, match=r"b\.json: unpacks to more than"):
        archive.safe_extract(large, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing half-unpacked is left
    bomb = zip_with_one_member(tmp_path / "bomb.zip", "repo/data/x.json", deflated_zeros(20), zipfile.ZIP_DEFLATED,
                               20 * MB, zeros_crc(20))
    with pytest.raises(DataError, match="its compressed size"):
        archive.safe_extract(bomb, tmp_path / "out")
    line = b"{}"
    bad_crc = zip_with_one_member(tmp_path / "crc.zip", "repo/data/x.json", line, zipfile.ZIP_STORED, len(line), 1)
    with pytest.raises(DataError, match="damaged"):
        archive.safe_extract(bad_crc, tmp_path / "out")


@pytest.mark.slow
@pytest.mark.parametrize("bad_line, expected", [
    ('{"id": "normal_atom_bool_1", "output": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"id": "normal_atom_bool_1", "output": ' + "9" * 5000 + "}", "a number has more than 4300 digits"),
], ids=["deep_nesting", "long_integer"])
def test_json_that_python_cannot_read_is_an_error_with_file_and_line(tmp_path: Path, bad_line: str, expected: str):
    path = write_predictions(tmp_path / "pred.jsonl", [{"id": "normal_atom_bool_0", "output": "[f()]"}, bad_line])
    with pytest.raises(PredictionsError, match=rf"pred\.jsonl, line 2: .*{expected}"):
        read_rows(path)
    array = tmp_path / "pred.json"
    array.write_text('[\n{"id": "normal_atom_bool_0", "output": "[f()]"},\n' + bad_line + "\n]", encoding="utf-8")
    with pytest.raises(PredictionsError, match=rf"pred\.json, line \d: .*{expected}"):
        read_rows(array)
    result = run_cli("score", "acebench", str(path), "--data-dir", str(EXAMPLE_DIR), "--language", "en")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "pred.jsonl, line 2: " in result.stderr and expected in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("content", ["", "\n\n   \n", "[]", "  [ ]  \n"], ids=["empty", "blank", "array", "spaced_array"])
def test_an_input_without_any_prediction_is_an_error_not_a_zero_score(tmp_path: Path, content: str):
    path = tmp_path / "pred.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PredictionsError, match="no prediction was read"):
        read_rows(path)
    result = run_cli("score", "acebench", str(path), "--data-dir", str(EXAMPLE_DIR), "--language", "en")
    assert result.returncode == 2 and "no prediction was read" in result.stderr and "Traceback" not in result.stderr
    empty_zip = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty_zip, "w") as bundle:
        bundle.writestr("data_normal_atom_bool_result.json", content)
    with pytest.raises(PredictionsError, match="no prediction was read"):
        read_rows(empty_zip)


def test_a_lone_surrogate_passes_the_check_and_reaches_the_prediction(tmp_path: Path):
    path = tmp_path / "surrogate.jsonl"
    path.write_text('{"id": "normal_atom_bool_0", "output": "[Clock.setAlarm(time=\'07:00\')] \\ud800"}\n', encoding="utf-8")
    submission = check_submission(path, "acebench", language="en", data_dir=EXAMPLE_DIR)
    assert submission.ok, submission.validation()
    assert "\ud800" in submission.predictions["normal_atom_bool_0"].output
    json.dumps(submission.validation())  # what the page shows is serialisable
    # ... and Add agrees with the check: the upload is stored, the surrogate kept as its escape.
    store = Store(tmp_path / "db.sqlite")
    run_id = store_submission(store, submission, "surrogate-model")
    assert store.load_predictions(run_id)["normal_atom_bool_0"].output.endswith(" \\ud800")
    assert store.load_report(run_id) is not None


def test_check_messages_name_the_file_by_its_base_name_only(tmp_path: Path):
    folder = tmp_path / "gradio" / "0123abcd"
    folder.mkdir(parents=True)
    bad = write_predictions(folder / "predictions.jsonl", [
        {"id": "normal_atom_bool_0", "output": "[f()]"}, {"id": "normal_atom_bool_0", "output": "[g()]"}])
    submission = check_submission(bad, "acebench", language="en", data_dir=EXAMPLE_DIR)
    assert submission.summary.errors[0].startswith("predictions.jsonl, line 2: duplicate id")
    assert str(tmp_path) not in json.dumps(submission.validation())
    broken = write_predictions(folder / "broken.jsonl", ['{"id": "normal_atom_bool_0"', "{}"])
    checked = check_submission(broken, "acebench", language="en", data_dir=EXAMPLE_DIR)
    assert not checked.ok and checked.summary.errors[0].startswith("broken.jsonl, line 1: invalid JSON")
    assert checked.summary.errors[1] == "broken.jsonl, line 2: field 'id' must be a non-empty string"
    assert str(tmp_path) not in json.dumps(checked.validation())
    huge = folder / "huge.jsonl"
    huge.write_bytes(b"x" * 2000)
    with pytest.raises(ToolboardError) as raised:
        check_submission(huge, "acebench", language="en", data_dir=EXAMPLE_DIR, max_bytes=1000)
    assert str(raised.value).startswith("huge.jsonl is 0.0 MB") and str(tmp_path) not in str(raised.value)


def test_an_upload_is_deleted_once_read_and_what_was_read_is_checked_again_with_other_data(tmp_path: Path):
    from evaluators.engine.store import Store
    from evaluators.service.uploads import HeldUploads
    from ui.context import AppContext
    from ui.submit_tab import NOT_HELD, add_to_board, check_file

    uploads = Path(get_upload_folder()) / "toolboard-test-upload"
    uploads.mkdir(parents=True, exist_ok=True)
    good = uploads / "good.jsonl"
    good.write_bytes((EXAMPLE_DIR / "predictions.jsonl").read_bytes())
    context = AppContext(store=Store(tmp_path / "t.db"))
    data = tmp_path / "data"
    data.mkdir()
    held_uploads = HeldUploads()
    try:
        validation, report, pending, message, held = check_file(context, str(good), "acebench", "en", "built-in example",
                                                                "", None, held_uploads)
        assert validation["ok"] and pending is not None and held is not None and len(held_uploads) == 1
        assert not good.exists() and not uploads.exists()  # gone, folder too, before anything is added
        # Another Data choice, the same file box: what was read is checked again, no new upload needed.
        _, _, again, message, held_again = check_file(context, str(good), "acebench", "en", "local folder", str(data),
                                                      held, held_uploads)
        assert again is None and held_again == held and "upload the file again" not in message
        assert "data" in message.lower()  # the empty folder is what is wrong, not the upload
        validation, _, again, message, held_again = check_file(context, str(good), "acebench", "en", "built-in example",
                                                               "", held, held_uploads)
        assert validation["ok"] and again is not None and held_again == held
        assert "Added as run" in add_to_board(context, pending, "Deleted upload model", "")
        # A file box the server no longer holds (another session's, or let go): said so, nothing held.
        _, _, none, message, gone = check_file(context, str(good), "acebench", "en", "built-in example", "", None,
                                               held_uploads)
        assert none is None and gone is None and message == NOT_HELD
        held_uploads.drop(held.key)
        _, _, none, message, gone = check_file(context, str(good), "acebench", "en", "built-in example", "", held,
                                               held_uploads)
        assert none is None and gone is None and message == NOT_HELD
        uploads.mkdir()
        bad = write_predictions(uploads / "bad.jsonl", ["{oops"])
        _, _, pending, message, _ = check_file(context, str(bad), "acebench", "en", "built-in example", "")
        assert pending is None and "bad" in message and "line 1" in message
        assert str(uploads).replace("_", "\\_") not in message and "toolboard" not in message
        assert str(uploads) not in message and "bad.jsonl, line 1" in message  # plain text: the API gets it as it is
        assert not bad.exists()
        own = write_predictions(tmp_path / "own.jsonl", ["{oops"])
        check_file(context, str(own), "acebench", "en", "built-in example", "")
        assert own.exists()  # not in the upload folder: never deleted
    finally:
        context.close()


def test_held_uploads_are_bounded_in_number_bytes_and_time(tmp_path: Path):
    from evaluators.service.submissions import read_upload
    from evaluators.service.uploads import HeldUploads

    now = [0.0]
    read = read_upload(EXAMPLE_DIR / "predictions.jsonl")
    assert read.held_bytes > 0
    held = HeldUploads(max_bytes=read.held_bytes * 2, max_uploads=3, seconds=60, clock=lambda: now[0])
    keys = [held.hold(read) for _ in range(3)]
    assert len(held) == 2 and held.get(keys[0]) is None  # over the bytes: the least recently used went first
    assert held.get(keys[1]) is read and held.held_bytes() <= read.held_bytes * 2
    now[0] = 59
    assert held.get(keys[2]) is read  # used: its time renewed
    now[0] = 100
    assert held.get(keys[1]) is None and held.get(keys[2]) is read  # keys[1] unused for 100 s: let go
    held.drop(keys[2])
    assert len(held) == 0 and held.get(None) is None


@pytest.mark.slow
def test_the_real_app_deletes_uploads_and_shows_no_server_path(tmp_path: Path):
    from gradio_client import Client, handle_file

    from tests.app_fixtures import running_app

    with running_app(tmp_path / "app") as app:
        client = Client(app.url, verbose=False)
        bad = write_predictions(tmp_path / "rejected-upload-7f3.jsonl", [
            {"id": "normal_atom_bool_0", "output": "[x()]"}, "{broken json"])
        validation, report, message = client.predict(handle_file(str(bad)), "acebench", "en", "built-in example", "",
                                                     api_name="/check_upload")
        shown = json.dumps([validation, report, message])
        assert "rejected" in shown and "line 2" in shown
        assert "gradio" not in shown and str(Path(get_upload_folder())) not in shown
        good = tmp_path / "accepted-upload-7f3.jsonl"
        good.write_bytes((EXAMPLE_DIR / "predictions.jsonl").read_bytes())
        validation, _, _ = client.predict(handle_file(str(good)), "acebench", "en", "built-in example", "",
                                          api_name="/check_upload")
        assert validation["ok"]
        left = [p for p in Path(get_upload_folder()).rglob("*-upload-7f3.jsonl")]
        assert left == []  # neither the rejected nor the accepted upload stays on the server
        assert "Added as run" in str(client.predict("Accepted upload", "", api_name="/add_upload"))


def test_plain_files_share_the_byte_budget_and_rows_and_arrays_are_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from evaluators.core import predictions as reader

    rows = [{"id": f"normal_atom_bool_{index}", "output": "[f()]"} for index in range(5)]
    lines = write_predictions(tmp_path / "five.jsonl", rows)
    array = tmp_path / "five.json"
    array.write_text(json.dumps(rows, indent=1), encoding="utf-8")  # short lines: only the whole is too large
    monkeypatch.setattr(reader, "MAX_ROWS", 3)
    with pytest.raises(PredictionsError, match=r"five\.jsonl, line 4: more than 3 predictions"):
        read_rows(lines)
    with pytest.raises(PredictionsError, match=r"five\.json, line 1: more than 3 predictions"):
        read_rows(array)
    monkeypatch.setattr(reader, "MAX_ROWS", 100)
    monkeypatch.setattr(reader, "MAX_JSON_VALUE_BYTES", 100)
    with pytest.raises(PredictionsError, match=r"five\.json: a JSON array file is read whole"):
        read_rows(array)
    assert len(read_rows(lines)) == 5  # each line is under the per-line cap
    monkeypatch.setattr(reader, "MAX_UNPACKED_BYTES", 200)
    with pytest.raises(PredictionsError, match=r"five\.jsonl: the file is .* MB; at most"):
        read_rows(lines)
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        write_predictions(folder / name, rows[:2])  # ~96 bytes each: either fits, both do not
    monkeypatch.setattr(reader, "MAX_UNPACKED_BYTES", 150)
    with pytest.raises(PredictionsError, match=r"b\.jsonl: the file is"):
        read_rows(folder)


@pytest.mark.slow
def test_uploads_never_checked_are_cleaned_from_the_server_temp_folder(tmp_path: Path):
    from ui.app import CACHE_CLEANUP, build_app
    from ui.context import AppContext

    context = AppContext(store=Store(tmp_path / "db.sqlite"))
    try:
        demo = build_app(context)
        assert demo.delete_cache == CACHE_CLEANUP and CACHE_CLEANUP[1] <= 3600
    finally:
        context.close()
