"""The folder SiliconBench writes its model files into is a real folder of its own (a link
there would have them written wherever it points; a FIFO failed every run), a checksum record
that is a folder is repaired, and a result file whose dates do not exist is refused."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from siliconbench.core.frameworks.llamacpp import models
from siliconbench.core.results import read_result_files, records_to_json
from tests.helpers.recorded import recorded

GGUF = b"GGUF" + bytes(60)


def _make(tmp: Path) -> None:
    """What gguf-py or llama.cpp's quantiser would write at the fresh name: a GGUF file."""
    tmp.write_bytes(GGUF)


def _build(name: str = "tiny-test-F16.gguf") -> Path:
    dest = models.folder() / name
    models._room(dest, len(GGUF))
    models._build(dest, _make)
    return dest


@pytest.mark.parametrize("case", ["link", "fifo", "file", "models link"])
def test_model_files_are_written_into_a_real_folder_of_the_data_folder(case, siliconbench_home,
                                                                       tmp_path):
    """Was: models/gguf as a link had the model files written outside; as a FIFO every run
    failed (FileExistsError)."""
    gguf = models.folder()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    gguf.parent.mkdir(parents=True)
    if case == "link":
        gguf.symlink_to(elsewhere)
    elif case == "fifo":
        os.mkfifo(gguf)
    elif case == "file":
        gguf.write_bytes(b"not a folder")
    else:
        gguf.parent.rmdir()
        gguf.parent.symlink_to(elsewhere)
    dest = _build()
    assert dest.read_bytes() == GGUF and models.damage(dest) is None
    for folder in (gguf.parent, gguf):
        assert stat.S_ISDIR(os.lstat(folder).st_mode), folder
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("model", ["whole", "absent"])
def test_a_checksum_record_that_is_a_folder_is_repaired(model, siliconbench_home):
    """Was: never repaired: unlink() of the folder raised, or write_atomic refused it, on every
    run."""
    dest = _build()
    record = models.checksum_path(dest)
    record.unlink()
    record.mkdir()
    (record / "something").write_text("x")
    if model == "absent":
        dest.unlink()
    damaged: list[str] = []
    assert models._cached(dest, damaged) is False
    assert damaged == ([] if model == "absent" else
                       [f"the cached model {dest.name} was damaged (its checksum record is "
                        "missing or unreadable); rebuilt"])
    _build()
    assert record.is_file() and json.loads(record.read_text())[""]["size"] == len(GGUF)
    assert models._cached(dest, []) is True


@pytest.mark.parametrize("field, value", [
    ("created_at", "2026-02-30T10:00:00+00:00"),
    ("created_at", "2026-13-01T10:00:00"),
    ("created_at", "2026-01-01T25:61:00"),
    ("finished_at", "2025-04-31T00:00:00"),
])
def test_a_result_file_whose_dates_do_not_exist_is_refused(field, value, tmp_path):
    """Was: imported; its time then shown as the raw text and sorted among real ones."""
    d = json.loads(records_to_json([recorded("gemm-torch")]))
    d["runs"][0][field] = value
    path = tmp_path / "impossible.json"
    path.write_text(json.dumps(d))
    records, refused = read_result_files([path])
    assert records == [] and len(refused) == 1
    assert f"its {field} '{value}' is not a date that exists" in refused[0]
