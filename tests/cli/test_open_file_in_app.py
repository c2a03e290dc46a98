"""`siliconbench FILE` opens the result file in the app (as `siliconbench gui FILE` and a double
click do): argparse refused it as an unknown command. A file that is not there is one sentence
and exit 2, before any window. The app itself imports the files it is given
(siliconbench.gui.app.main; tests/gui/test_startup.py drives that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from siliconbench.core.cli import main
from siliconbench.core.export import RESULT_SUFFIX

RECORD = str(Path(__file__).resolve().parents[1] / "data" / "records" / "gemm-torch.json")


@pytest.fixture
def app_opened(monkeypatch):
    """The app's main, standing in for a window: what it was given."""
    given: list[list[str]] = []
    monkeypatch.setattr("siliconbench.core.display.has_display", lambda: True)
    monkeypatch.setattr("siliconbench.gui.app.main", lambda argv: given.append(argv) or 0)
    monkeypatch.setattr("siliconbench.core.cli.commands.signal.signal", lambda *a: None)
    return given


def test_a_file_as_the_only_word_opens_it_in_the_app(app_opened, tmp_path):
    sent = tmp_path / f"runs{RESULT_SUFFIX}"
    sent.write_bytes(Path(RECORD).read_bytes())
    assert main([RECORD, str(sent)]) == 0
    assert len(app_opened) == 1
    assert [p.rsplit("/", 1)[-1] for p in app_opened[0]] == ["gemm-torch.json", sent.name]
    assert all(p.startswith("/") for p in app_opened[0])    # the app's folder may differ
    assert main(["gui", RECORD]) == 0 and app_opened[1] == app_opened[0][:1]
    assert main([]) == 0 and app_opened[2] == []          # no file: the app as before


def test_a_missing_file_is_one_sentence_and_no_window(app_opened, tmp_path, capsys):
    assert main([str(tmp_path / "gone.sbresults")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "gone.sbresults is not a file" in err
    assert "Traceback" not in err and app_opened == []


def test_a_word_that_is_neither_command_nor_file_stays_a_usage_error(app_opened, capsys):
    assert main(["benchmark"]) == 2
    assert "invalid choice" in capsys.readouterr().err and app_opened == []
