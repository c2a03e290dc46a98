"""The files SiliconBench keeps beside its results store and reads again (devices.json,
machine-names.json, the log, the app's gui-settings.ini), made hostile as faults and careless
hands make them: a FIFO (a read would wait for a writer for good), a link to /dev/zero (a read
would fill memory), a folder, wrong JSON, values of the wrong type, names longer than a run
record holds. A cache is ignored and rebuilt, a name or settings value falls back to nothing
or its default, the app starts, and a write that fails is said in a sentence."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from siliconbench.core import cli, devices  # noqa: E402
from siliconbench.core.frameworks import FRAMEWORKS, DeviceInfo, FrameworkInfo  # noqa: E402
from tests.helpers.cli_processes import ROOT, cli_in_process  # noqa: E402
from tests.helpers.dialogs import the_sheet  # noqa: E402
from tests.helpers.hostile_files import hostile  # noqa: E402
from tests.helpers.recorded import recorded  # noqa: E402

sb = cli_in_process


@contextlib.contextmanager
def no_stall(fifo: Path, seconds: float = 10):
    """The block must be done within `seconds`; one still waiting on `fifo` then is let go
    (the FIFO's other end opened and closed, again until the block ends) and the test fails.
    The block runs in the test's own thread: the command sets signal handlers."""
    done, stalled = threading.Event(), threading.Event()

    def watch() -> None:
        while not done.wait(seconds if not stalled.is_set() else 0.2):
            stalled.set()
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                try:
                    os.close(os.open(fifo, flags))
                except OSError:
                    pass
    watchdog = threading.Thread(target=watch, daemon=True)
    watchdog.start()
    try:
        yield
    finally:
        done.set()
        watchdog.join()
        if stalled.is_set():   # said first: what failed after the release is a consequence
            pytest.fail(f"stalled on the FIFO {fifo.name} for more than {seconds} s")


def assert_one_sentence(rc: int, err: str) -> None:
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and len(err) < 300, err[:500]
    assert "internal error" not in err and "Traceback" not in err, err[:500]


# ---------------------------------------------------------------- devices.json

@pytest.fixture
def asked(monkeypatch):
    """Every framework installed, each asked (a child process in real life) for one CPU: the
    names of the frameworks asked, in order."""
    names: list[str] = []

    def ask_child(name, fw):
        names.append(name)
        return [DeviceInfo(name, "cpu", f"{fw.title} CPU", "cpu", memory_bytes=1 << 30)]
    for kind in {type(fw) for fw in FRAMEWORKS.values()} | {FrameworkInfo}:
        monkeypatch.setattr(kind, "installed", lambda self: True)
    monkeypatch.setattr(devices, "_ask_child", ask_child)
    return names


def cache_path(home: Path) -> Path:
    return home / devices.DEVICE_CACHE


WRONG_CACHES = [
    "[]", "5", "null", '"text"', "{", "[" * 100_000,
    '{"key": KEY, "frameworks": []}',
    '{"key": KEY, "frameworks": {"torch": 5}}',
    '{"key": KEY, "frameworks": {"torch": [5]}}',
    '{"key": KEY, "frameworks": {"torch": [{"bogus": 1}]}}',
    '{"key": KEY, "frameworks": {"torch": [{"framework": "torch", "id": "cpu"}]}}',
    '{"key": KEY, "frameworks": {"torch": [{"framework": "torch", "id": 5, "name": "x", '
    '"kind": "cpu"}]}}',
    '{"key": KEY, "frameworks": {"torch": [{"framework": "torch", "id": "cpu", "name": "x", '
    '"kind": "cpu", "memory_bytes": "lots", "usable": "yes"}]}}',
    '{"key": KEY, "frameworks": {"torch": [{"framework": "mlx", "id": "cpu", "name": "x", '
    '"kind": "cpu"}]}}',
]


@pytest.mark.parametrize("text", WRONG_CACHES, ids=range(len(WRONG_CACHES)))
def test_a_wrong_device_cache_is_ignored_and_rebuilt(text, siliconbench_home, asked, capsys):
    """Was: "internal error: AttributeError" ([]) or TypeError (a wrong entry) on `devices`."""
    path = cache_path(siliconbench_home)
    path.parent.mkdir(parents=True)
    path.write_text(text.replace("KEY", json.dumps(devices._installation_key())))
    rc, out, err = sb(capsys, "devices", "--json")
    assert rc == 0, err
    assert [d["framework"] for d in json.loads(out)] == list(FRAMEWORKS)
    assert sorted(asked) == sorted(FRAMEWORKS)                       # every one asked again
    kept = json.loads(path.read_text())                               # and the cache rebuilt
    assert kept["frameworks"]["torch"][0]["name"] == "PyTorch CPU"


def test_a_device_cache_it_wrote_is_used_again(siliconbench_home, asked, capsys):
    """The checks accept what discover_devices writes: a second call asks nobody."""
    assert sb(capsys, "devices", "--json")[0] == 0
    assert len(asked) == len(FRAMEWORKS)
    rc, out, _ = sb(capsys, "devices", "--json")
    assert rc == 0 and len(asked) == len(json.loads(out)) == len(FRAMEWORKS)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_device_cache_that_is_no_file_is_never_read(kind, siliconbench_home, asked, capsys):
    """Was: a FIFO hung `devices` for good; a link to /dev/zero read gigabytes into a
    MemoryError."""
    path = hostile(cache_path(siliconbench_home), kind)
    with no_stall(path):
        rc, out, err = sb(capsys, "devices", "--json")
    assert rc == 0, err
    assert len(json.loads(out)) == len(asked) == len(FRAMEWORKS)
    if kind != "folder":    # replaced by a cache it wrote; a folder stays (os.replace refuses)
        assert stat.S_ISREG(os.lstat(path).st_mode)
        assert json.loads(path.read_text())["frameworks"]["mlx"][0]["id"] == "cpu"


# ---------------------------------------------------------------- machine-names.json

THIS_MACHINE = recorded("gemm-torch").machine     # a machine a real run described


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_names_file_that_is_no_file_names_nothing_and_is_not_written_over(kind,
                                                                            siliconbench_home):
    """Was: a FIFO hung every run (name_for) for good; a link to /dev/zero read gigabytes
    into a MemoryError. A name given then is refused in a sentence (the file is left)."""
    from siliconbench.core import machine_names
    from siliconbench.core.files import NotReadable
    path = hostile(siliconbench_home / machine_names.FILE, kind)
    with no_stall(path):
        assert machine_names.name_for(THIS_MACHINE) is None
        with pytest.raises(NotReadable, match="is not a regular file"):
            machine_names.set_name(THIS_MACHINE, "Lab box")
    kept = os.lstat(path).st_mode                                      # left as it was
    assert {"fifo": stat.S_ISFIFO, "dev-zero": stat.S_ISLNK, "folder": stat.S_ISDIR}[kind](kept)


def test_names_longer_than_a_record_holds_are_not_used(siliconbench_home):
    """A hand-edited names file cannot label a run with what import would refuse."""
    from siliconbench.core import machine_names
    key = machine_names.machine_key(THIS_MACHINE)
    siliconbench_home.mkdir()
    for name, used in (("x" * 201, None), ("x" * 200, "x" * 200)):
        (siliconbench_home / machine_names.FILE).write_text(json.dumps({key: name}))
        assert machine_names.name_for(THIS_MACHINE) == used
    with pytest.raises(ValueError, match="at most 200 characters"):
        machine_names.set_name(THIS_MACHINE, "y" * 201)
    assert machine_names.name_for(THIS_MACHINE) == "x" * 200


def test_the_label_limit_is_the_record_formats():
    from siliconbench.core.machine_names import LABEL_MAX
    schema = json.loads((ROOT / "siliconbench" / "resources" / "run_record.schema.json").read_text())
    assert schema["properties"]["label"]["maxLength"] == LABEL_MAX


# ---------------------------------------------------------------- --label

@pytest.mark.parametrize("command", [["run", "gemm", "--framework", "mlx", "--sizes", "16",
                                      "--dtypes", "float32", "--quick"], ["quick"]])
def test_a_label_longer_than_a_record_holds_is_refused_in_one_sentence(command, capsys,
                                                                      siliconbench_home):
    """Was: accepted, and the run's export then refused by import ("label is too long")."""
    rc, out, err = sb(capsys, *command, "--label", "é" * 201)
    assert_one_sentence(rc, err)
    assert "--label" in err and "at most 200 characters" in err and "é" not in err
    assert not (siliconbench_home / "results.sqlite3").exists()      # nothing ran
    assert cli.build_parser().parse_args([*command, "--label", "é" * 200]).label == "é" * 200


# ---------------------------------------------------------------- the log

@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_log_that_is_no_file_is_not_written_and_the_command_goes_on(kind, siliconbench_home,
                                                                      capsys):
    """Was: a FIFO as the log hung every command (and the app, once shown) for good."""
    from siliconbench.core.logs import log, log_file, setup_logging
    path = hostile(log_file(), kind)
    with no_stall(path):
        assert setup_logging() is None      # no log, as on a read-only home
        log.error("goes nowhere")
        rc, out, err = sb(capsys, "results")
    assert rc == 0 and "No runs yet" in out, err
    assert not stat.S_ISREG(os.stat(path).st_mode) if kind == "dev-zero" else \
        stat.S_ISFIFO(os.stat(path).st_mode)


# ---------------------------------------------------------------- gui-settings.ini

def start_app(home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SILICONBENCH_HOME=str(home),
               SILICONBENCH_GUI_EXIT_AFTER_SHOWN="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "siliconbench.gui"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)


def test_the_app_starts_over_a_settings_file_that_is_a_fifo(siliconbench_home):
    """Was: QSettings read the FIFO as it started, and the window never appeared."""
    path = hostile(siliconbench_home / "gui-settings.ini", "fifo")
    out = start_app(siliconbench_home)
    assert out.returncode == 0 and "SILICONBENCH_SHOWN" in out.stdout, out.stderr
    aside = [p for p in siliconbench_home.iterdir() if p.name.startswith(path.name + ".")]
    assert len(aside) == 1 and stat.S_ISFIFO(os.lstat(aside[0]).st_mode)
    assert path.is_file()                                    # the app's own, written anew


@pytest.mark.parametrize("kind", ["dev-zero", "too large"])
def test_a_settings_file_qsettings_must_not_read_is_moved_aside_and_said(kind, siliconbench_home,
                                                                        monkeypatch):
    from siliconbench.gui import settings as prefs
    monkeypatch.setattr(prefs, "notice", None, raising=False)
    path = siliconbench_home / "gui-settings.ini"
    if kind == "too large":
        siliconbench_home.mkdir()
        path.write_text("[run]\nworkload=gemm\n" + "#" * (2 << 20))
    else:
        hostile(path, kind)
    s = prefs.app_settings()
    assert s.allKeys() == [] and not path.exists()
    assert prefs.notice.startswith("SiliconBench started with its default settings: ")
    assert str(path) in prefs.notice and "moved to gui-settings.ini.unreadable-" in prefs.notice
    s.setValue("run/workload", "bandwidth")
    s.sync()
    assert path.is_file() and prefs.app_settings().value("run/workload") == "bandwidth"


def test_the_notice_is_said_once_in_the_status_bar_and_the_log(qtbot, store, siliconbench_home,
                                                               monkeypatch):
    from siliconbench.core.logs import log_file, setup_logging
    from siliconbench.gui import settings as prefs
    from siliconbench.gui.main_window import MainWindow
    monkeypatch.setattr(prefs, "notice", None, raising=False)
    # Too large (2 MB): in this process a FIFO would stall Qt, which holds the GIL meanwhile.
    siliconbench_home.mkdir(exist_ok=True)
    (siliconbench_home / "gui-settings.ini").write_bytes(b"#" * (2 << 20))
    setup_logging()
    window = MainWindow(store)                 # its settings: app_settings()
    window.ask_before_closing = False
    qtbot.addWidget(window)
    said = prefs.notice
    assert said and "more than any settings file" in said
    assert prefs.say_notice(window.statusBar()) == said
    assert window.statusBar().currentMessage() == said and said in log_file().read_text()
    assert prefs.say_notice(window.statusBar()) is None and prefs.notice is None     # once


def test_a_settings_file_that_cannot_be_moved_aside_leaves_the_defaults(siliconbench_home,
                                                                         monkeypatch):
    from siliconbench.gui import settings as prefs
    monkeypatch.setattr(prefs, "notice", None, raising=False)
    path = hostile(siliconbench_home / "gui-settings.ini", "dev-zero")

    def refuse(*_):
        raise PermissionError(errno.EACCES, "Permission denied")
    monkeypatch.setattr(prefs.os, "replace", refuse)
    s = prefs.app_settings()
    assert s.allKeys() == [] and Path(s.fileName()) != path
    assert "could not be moved aside" in prefs.notice and path.is_symlink()


HOSTILE_SETTINGS = """\
[params]
allreduce="[1, 2]"
gemm="{\\"sizes\\": \\"64,256\\", \\"dtypes\\": \\"float99\\", \\"tf32\\": 5}"
bandwidth=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\nNoSuchType\\0)
memory="{{{{{{{{{{"
mlp=@Variant(\\0\\0\\0\\b\\0\\0\\0\\x1\\0\\0\\0\\x2\\0\\x61\\0\\0\\0\\x2\\0\\0\\0\\x1)
train="{\\"batch_size\\": \\"LONG\\", \\"model\\": \\"no-such-model\\"}"
llm="{\\"prompts\\": [1, 2], \\"gen_tokens\\": \\"-5\\"}"

[run]
workload=gemm
devices=1, @Variant(\\0\\0\\0\\t\\0\\0\\0\\x1\\0\\0\\0\\x2\\0\\0\\0\\x2)
quick=maybe

[window]
geometry=not a geometry
main_split=5
sidebar=@Variant(\\0\\0\\0\\t\\0\\0\\0\\x1\\0\\0\\0\\x2\\0\\0\\0\\x1)

[files]
last_dir=/no/such/folder
"""


def test_every_settings_value_of_the_wrong_kind_falls_back_to_its_default(qtbot, store,
                                                                          tmp_path):
    """Was: params/allreduce="[1, 2]" raised an uncaught AttributeError and the All-reduce
    form never showed; run/devices holding numbers raised a TypeError as the window opened.
    The values that are right (gemm's sizes) still come back."""
    from PySide6.QtCore import QSettings

    from siliconbench.gui import settings as prefs
    from siliconbench.gui.main_window import MainWindow
    ini = tmp_path / "hostile.ini"
    ini.write_text(HOSTILE_SETTINGS.replace("LONG", "9" * 20_000))
    settings = QSettings(str(ini), QSettings.Format.IniFormat)
    assert settings.value("params/allreduce") == "[1, 2]"           # what the report tried
    window = MainWindow(store, settings)
    window.ask_before_closing = False
    qtbot.addWidget(window)
    window.show()
    assert window.catalogue.current().name == "gemm"
    gemm = window.forms["gemm"]
    assert gemm.fields["sizes"].text() == "64,256"                   # right: restored
    assert gemm.fields["dtypes"].text() == ",".join(gemm.fields["dtypes"].param.default)
    assert gemm.is_valid() and not window.quick_box.isChecked()
    for w in window.catalogue.workloads:
        window.catalogue.select(w.name)
        form = window.forms[w.name]
        assert window.form is form and form.is_valid(), (w.name, form.errors())
        assert all(len(f.text()) < 1000 for f in form.fields.values())
    assert prefs.last_dir(settings) == str(Path.home())
    window.close()                                                     # and it saves again
    assert json.loads(settings.value("params/allreduce"))["sizes"] == \
        window.forms["allreduce"].fields["sizes"].text()


# ---------------------------------------------------------------- Name Machine

@pytest.fixture
def run_shown(window, store):
    """A run that a real run recorded, in the window's Results, selected."""
    rec = recorded("gemm-torch")
    store.save(rec)
    window.results.reload()
    window.results.select_ids({rec.id})
    assert [r.id for r in window.results.selected_records()] == [rec.id]
    return rec


def name_machine(window, text: str):
    """Name Machine as a person does: the menu entry, the dialog, a name typed, OK."""
    from PySide6.QtWidgets import QInputDialog, QLineEdit
    window.menu_actions["rename"].trigger()
    dialog = the_sheet(window)
    assert isinstance(dialog, QInputDialog) and dialog.isVisible()
    dialog.findChild(QLineEdit).setText(text)
    dialog.accept()
    return dialog


@pytest.mark.parametrize("broken", ["folder", "fifo", "disk full"])
def test_name_machine_that_cannot_be_kept_says_so_and_renames_nothing(broken, window, store,
                                                                     run_shown,
                                                                     siliconbench_home,
                                                                     monkeypatch):
    """Was: an uncaught IsADirectoryError (a folder) or OSError (a full disk) in the app."""
    from PySide6.QtWidgets import QMessageBox

    from siliconbench.core import files, machine_names
    path = siliconbench_home / machine_names.FILE
    if broken == "disk full":
        def full(*_, **__):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        monkeypatch.setattr(files, "write_atomic", full)
    else:
        hostile(path, broken)
    name_machine(window, "Lab box")
    box = the_sheet(window)
    assert isinstance(box, QMessageBox) and box.isVisible()
    said = box.text()
    assert said.startswith("The machine was not named: ")
    assert str(path) in said and "\n" not in said
    assert ("No space left on device" if broken == "disk full" else "not a regular file") \
        in said
    assert store.get(run_shown.id).label == run_shown.label           # nothing renamed


def test_name_machine_takes_at_most_what_a_record_holds(window, store, run_shown, tmp_path,
                                                        capsys):
    """Was: a 300-character name was kept, and the run's export then refused by import
    ("label is too long"). The dialog takes 200; a longer one sent anyway is refused."""
    from PySide6.QtWidgets import QLineEdit

    from siliconbench.core.machine_names import LABEL_MAX
    from siliconbench.core.results import records_from_file
    dialog = name_machine(window, "é" * 300)
    assert dialog.findChild(QLineEdit).maxLength() == LABEL_MAX
    assert store.get(run_shown.id).label == "é" * LABEL_MAX
    out = tmp_path / "named.json"
    assert sb(capsys, "export", "-o", out, "--run", run_shown.id)[0] == 0
    assert [r.label for r in records_from_file(out)] == ["é" * LABEL_MAX]   # imports again

    window.menu_actions["rename"].trigger()
    the_sheet(window).textValueSelected.emit("x" * (LABEL_MAX + 1))  # past the line edit
    assert "at most 200 characters" in the_sheet(window).text()
    assert store.get(run_shown.id).label == "é" * LABEL_MAX
