"""Every file SiliconBench reads or writes, with something else in its place: a FIFO, a link
to /dev/zero, a folder, a link to a file of the user's outside SiliconBench's folders. Each
is read or written through siliconbench.core.files, so each is one sentence (or, for a cache
SiliconBench builds, a rebuild it says), never a hang, a raw exception or a write through the
link. Whatever could hang on the code before runs in a child process; its timeout only keeps
a hang from stalling the suite (the assertions say what must happen, never how fast)."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.cli_processes import ROOT, run_cli
from tests.core.test_files_beside_store import hostile
from tests.framework_runs import cpu_read, store_a_triad  # noqa: F401  (a fixture)

GUARD_S = 120     # a hang-guard for the harness, not a measurement
CASES = ("fifo", "dev_zero_link", "folder", "link_outside")
SAID = {"fifo": "a FIFO", "dev_zero_link": "a device", "folder": "a folder",
        "dangling_link": "a link to nothing"}
OUTSIDE_TEXT = b"the user's own file, which SiliconBench must never change\n"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file of the user's outside every folder SiliconBench writes to."""
    path = tmp_path / "elsewhere" / "notes.txt"
    path.parent.mkdir()
    path.write_bytes(OUTSIDE_TEXT)
    return path


def plant(path: Path, case: str, outside: Path | None = None) -> None:
    """`case` in the place of `path`."""
    if case == "link_outside":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(outside)
    elif case == "dangling_link":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(path.parent / "nothing-here")
    else:
        hostile(path, {"dev_zero_link": "dev-zero"}.get(case, case))


def in_child(code: str, *extra_env: tuple[str, str], args: list[str] = ()
             ) -> subprocess.CompletedProcess:
    """`code` in a Python process of its own (this checkout, this test's SILICONBENCH_HOME),
    `args` its sys.argv[1:]."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **dict(extra_env)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=GUARD_S, env=env, cwd=ROOT)


def answer(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    assert "internal error" not in err and "Traceback" not in err, err[-3000:]
    return lines[0]


# ---------------------------------------------------------------- the results store

@pytest.mark.parametrize("case", ["fifo", "dev_zero_link", "folder", "dangling_link"])
@pytest.mark.parametrize("command", [["results"], ["export", "-o", "out.csv"]])
def test_an_unusable_store_file_is_one_sentence_for_every_command(case, command, tmp_path,
                                                                  siliconbench_home):
    store = siliconbench_home / "results.sqlite3"
    plant(store, case)
    done = run_cli(*command, cwd=tmp_path, timeout=GUARD_S)
    assert done.returncode == 2, done.stderr[-3000:]
    line = one_sentence(done.stderr)
    assert f"results store {store} is {SAID[case]}" in line and "move it aside" in line
    assert not (siliconbench_home / "nothing-here").exists()   # nothing created through it


@pytest.mark.parametrize("case", ["fifo", "dangling_link"])
def test_a_run_beside_an_unusable_store_is_kept_in_a_result_file(case, tmp_path,
                                                                 siliconbench_home):
    store = siliconbench_home / "results.sqlite3"
    plant(store, case)
    done = subprocess.run(
        [sys.executable, "-m", "siliconbench.core.cli", "run", "fake-ok", "--steps", "1",
         "--framework", "torch"], capture_output=True, text=True, timeout=GUARD_S, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT),
             "SILICONBENCH_EXTRA_WORKLOADS": "tests.fake_workloads"})
    assert done.returncode == 1, done.stderr[-3000:]
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert f"results store {store} is {SAID[case]}" in done.stderr
    assert list(siliconbench_home.glob("siliconbench-unsaved-run-*.json"))
    assert not (siliconbench_home / "nothing-here").exists()


@pytest.mark.parametrize("case", ["fifo", "dangling_link", "dev_zero_link"])
def test_the_app_shows_its_cannot_start_dialog(case, tmp_path, siliconbench_home):
    plant(siliconbench_home / "results.sqlite3", case)
    done = in_child("""
        import sys
        from PySide6.QtWidgets import QMessageBox
        QMessageBox.critical = staticmethod(
            lambda parent, title, text: print("DIALOG", title, "|", text, flush=True))
        from siliconbench.gui import app
        sys.exit(app.main([]))
        """, ("HOME", str(tmp_path)), ("XDG_CONFIG_HOME", str(tmp_path / "config")),
        ("QT_QPA_PLATFORM", "offscreen"))
    assert done.returncode == 1, done.stderr[-3000:]
    assert "DIALOG SiliconBench cannot start | The results store" in done.stdout
    assert f"is {SAID[case]}" in done.stdout
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- CIFAR-10

def test_the_published_archive_is_still_found_at_its_default_place(monkeypatch):
    import hashlib

    from siliconbench.core import cifar
    from tests.core.test_cifar import make_archive
    cifar.data_dir().mkdir(parents=True)
    make_archive(cifar.data_dir() / cifar.ARCHIVE_NAME)
    monkeypatch.setattr(cifar, "MD5", hashlib.md5(
        (cifar.data_dir() / cifar.ARCHIVE_NAME).read_bytes()).hexdigest())
    monkeypatch.setattr(cifar, "ARCHIVE_BYTES", (cifar.data_dir() / cifar.ARCHIVE_NAME)
                        .stat().st_size)      # the published archive is known by its size too
    data, why = cifar.find(None, allow_download=False)
    assert why == "" and data.official and len(data.labels) == 200


@pytest.mark.parametrize("case", CASES)
def test_the_cifar_archive_at_its_default_place(case, outside):
    from siliconbench.core import cifar
    plant(cifar.data_dir() / cifar.ARCHIVE_NAME, case, outside)
    why = answer(in_child("""
        import json
        from siliconbench.core import cifar
        data, why = cifar.find(None, allow_download=False)
        print(json.dumps({"data": data is not None, "why": why}))
        """))
    assert not why["data"]
    if case == "link_outside":       # read through (a read changes nothing), not the archive
        assert "checksum differs" in why["why"]
    else:
        assert f"{cifar.ARCHIVE_NAME} is {SAID[case]}, not the CIFAR-10 archive" in why["why"]
    assert outside.read_bytes() == OUTSIDE_TEXT


@pytest.mark.parametrize("case", CASES)
def test_a_download_replaces_what_is_at_the_default_place_never_writes_through(case, outside,
                                                                             tmp_path):
    from siliconbench.core import cifar
    from tests.core.test_cifar import make_archive
    served = make_archive(tmp_path / "served.tar.gz")
    target = cifar.data_dir() / cifar.ARCHIVE_NAME
    plant(target, case, outside)
    got = answer(in_child(f"""
        import hashlib, json
        from siliconbench.core import cifar
        cifar.URL = {served.as_uri()!r}
        cifar.MD5 = hashlib.md5(open({str(served)!r}, "rb").read()).hexdigest()
        data, why = cifar.find(None, allow_download=True)
        print(json.dumps({{"n": None if data is None else len(data.labels), "why": why}}))
        """))
    if case == "folder":             # a folder there is not SiliconBench's to remove
        assert got["n"] is None and f"{target} is a folder" in got["why"]
    else:
        assert got == {"n": 200, "why": ""}
        assert not target.is_symlink() and target.read_bytes() == served.read_bytes()
    assert outside.read_bytes() == OUTSIDE_TEXT


@pytest.mark.parametrize("case", CASES)
def test_cifar_given_on_the_command_line(case, outside, tmp_path):
    given = tmp_path / "given"
    plant(given, case, outside)
    done = run_cli("run", "mlp", "--cifar", str(given), timeout=GUARD_S)
    assert done.returncode == 2, done.stderr[-3000:]
    line = one_sentence(done.stderr)
    assert {"fifo": "is not a regular file", "dev_zero_link": "is not a regular file",
            "folder": "has no data_batch_1",
            "link_outside": "is not a readable .tar.gz archive"}[case] in line
    assert outside.read_bytes() == OUTSIDE_TEXT


@pytest.mark.parametrize("case", ["fifo", "dev_zero_link", "folder"])
def test_a_batch_of_an_extracted_folder(case, tmp_path):
    import tarfile

    from siliconbench.core import cifar
    from tests.core.test_cifar import make_archive
    with tarfile.open(make_archive(tmp_path / "tiny.tar.gz")) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    batch = tmp_path / "x" / cifar.FOLDER / "data_batch_3"
    batch.unlink()
    plant(batch, case)
    got = answer(in_child(f"""
        import json
        from siliconbench.core import cifar
        try:
            cifar.load({str(tmp_path / "x")!r})
        except cifar.CifarError as e:
            print(json.dumps(str(e)))
        """))
    assert got == f"{batch} is not a regular file, so SiliconBench does not read it as a " \
                  "CIFAR-10 batch."


# ---------------------------------------------------------------- the help page

HELP_CHILD = """
    import json, os, stat
    from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
    app = QApplication([])
    from siliconbench.gui import help
    opened = []
    help.open_url = lambda url: opened.append(url.toLocalFile()) or True
    window = QWidget()
    shown = help.open_help(window)
    page = os.path.join(os.environ["SILICONBENCH_HOME"], "help.html")
    said = [b.text() for b in window.findChildren(QMessageBox)]
    regular = stat.S_ISREG(os.lstat(page).st_mode)
    print(json.dumps({"shown": shown, "opened": opened, "said": said, "regular": regular,
                      "html": regular and "<html" in open(page).read().lower()}))
    """


@pytest.mark.parametrize("case", CASES)
def test_the_help_page_in_the_data_folder(case, outside, siliconbench_home):
    page = siliconbench_home / "help.html"
    plant(page, case, outside)
    got = answer(in_child(HELP_CHILD, ("QT_QPA_PLATFORM", "offscreen")))
    if case == "folder":
        assert got["shown"] is False and got["opened"] == []
        assert got["said"] == [f"{page} is a folder, so SiliconBench does not write a file "
                               "there; move it aside or choose another name."]
    else:   # replaced by the page itself: a link's target is never written
        assert got["shown"] and got["opened"] == [str(page)] and got["said"] == []
        assert got["regular"] and got["html"]
    assert outside.read_bytes() == OUTSIDE_TEXT


# ---------------------------------------------------------------- llama.cpp's model cache

needs_llamacpp = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                    reason="llama-cpp-python is not installed")
GGUF_CHILD = """
    import json, os, stat, sys
    from siliconbench.core.frameworks.llamacpp import models
    from siliconbench.core.workloads import llm
    shape, case, outside = llm.PRESETS["tiny"], sys.argv[1], sys.argv[2]
    path = models.model_file(shape, "tiny", "q4_0", 1)
    whole = path.read_bytes()
    sums = models.checksum_path(path).read_text()
    path.unlink()
    if case == "fifo": os.mkfifo(path)
    elif case == "dev_zero_link": path.symlink_to("/dev/zero")
    elif case == "folder": path.mkdir()
    elif case == "link_outside": path.symlink_to(outside)
    elif case == "random": path.write_bytes(os.urandom(len(whole)))
    elif case == "truncated": path.write_bytes(whole[:len(whole) // 2])
    elif case == "no_checksum":
        path.write_bytes(whole)
        models.checksum_path(path).unlink()
    said = []
    again = models.model_file(shape, "tiny", "q4_0", 1, say=said.append)
    reused = models.model_file(shape, "tiny", "q4_0", 1, say=said.append)
    print(json.dumps({"said": said, "same": again == path == reused,
                      "regular": stat.S_ISREG(os.lstat(path).st_mode),
                      "tensors": len(models.tensor_bytes(path)),
                      "damage": models.damage(path)}))
    """


@needs_llamacpp
@pytest.mark.parametrize("case", [*CASES, "random", "truncated", "no_checksum"])
def test_a_damaged_cached_gguf_model_is_rebuilt_and_said(case, outside):
    got = answer(in_child(GGUF_CHILD, args=[case, str(outside)]))
    reason = {"fifo": "it is a FIFO", "dev_zero_link": "it is a link",
              "folder": "it is a folder", "link_outside": "it is a link",
              "random": "checksum of it is not the one it was built with",
              "truncated": "bytes, not the", "no_checksum": "checksum record is missing"}[case]
    # Said once, for the rebuild; the second call reuses the rebuilt file.
    assert len(got["said"]) == 2 and got["said"][-1].startswith("the cached model tiny-")
    assert reason in got["said"][-1] and got["said"][-1].endswith("; rebuilt")
    assert got["same"] and got["regular"] and got["tensors"] > 0 and got["damage"] is None
    assert outside.read_bytes() == OUTSIDE_TEXT


@needs_llamacpp
@pytest.mark.usefixtures("short_protocol")
def test_a_run_over_a_fifo_in_the_model_cache_rebuilds_it_and_warns(tmp_path, cpu_read,
                                                                    siliconbench_home):
    store_a_triad(siliconbench_home, cpu_read)   # the run then measures no bound of its own
    built = answer(in_child("""
        import json
        from siliconbench.core.frameworks.llamacpp import models
        from siliconbench.core.workloads import llm
        print(json.dumps(str(models.model_file(llm.PRESETS["tiny"], "tiny", "q4_0", 1))))
        """))
    path = Path(built)
    path.unlink()
    os.mkfifo(path)
    done = run_cli("run", "llm", "--framework", "llamacpp", "--device", "cpu", "--preset",
                   "tiny", "--dtype", "q4_0", "--prompts", "8", "--depths", "0",
                   "--gen-tokens", "4", "--quick", cwd=tmp_path, timeout=GUARD_S)
    assert done.returncode == 0, done.stderr[-3000:]
    said = (f"the cached model {path.name} was damaged (it is a FIFO, not a regular file); "
            "rebuilt")
    assert f"warning: {said}" in done.stdout
    from siliconbench.core.store import Store
    store = Store()
    try:
        [rec] = store.runs(workload="llm")
    finally:
        store.close()
    assert rec.status == "ok" and said in rec.warnings


# ---------------------------------------------------------------- Core ML's package cache

def _make_package(path: Path) -> dict:
    """A package as coremltools saves one (Manifest.json, Data/com.apple.CoreML/...) and the
    record convert.py writes beside it."""
    from siliconbench.core.files import fingerprint, write_atomic
    data = path / "Data" / "com.apple.CoreML"
    (data / "weights").mkdir(parents=True)
    (path / "Manifest.json").write_text('{"fileFormatVersion": "1.0.0"}')
    (data / "model.mlmodel").write_bytes(b"\x08\x09" * 100)
    (data / "weights" / "weight.bin").write_bytes(os.urandom(4096))
    made = {"flops": 1e9, "convert_s": 3.0, "files": fingerprint(path)}
    write_atomic(path.with_suffix(".json"), json.dumps(made))
    return made


@pytest.mark.parametrize("where", ["weights/weight.bin", "model.mlmodel", "package",
                                   "record"])
@pytest.mark.parametrize("case", CASES)
def test_a_damaged_core_ml_package_is_converted_again(where, case, outside, monkeypatch):
    from siliconbench.core.frameworks.coreml import infer
    path = infer.package_path("mobilenet_v2", 32, 2, "float16")
    made = _make_package(path)
    target = {"package": path, "record": path.with_suffix(".json")}.get(
        where, path / "Data" / "com.apple.CoreML" / where)
    if target.is_dir():
        import shutil
        shutil.rmtree(target)
    else:
        target.unlink()
    plant(target, case, outside)
    calls = []

    def converter(*args, stdin=""):
        calls.append(args)
        assert not os.path.lexists(path)       # the damaged package was removed first
        return _make_package(Path(json.loads(stdin)["out"]))
    monkeypatch.setattr(infer, "run_converter", converter)
    got_path, got = infer.cached_package("mobilenet_v2", 32, 2, "float16")
    assert got_path == path and got["fresh"] and len(calls) == 1
    assert got["rebuilt"].startswith(f"the cached model {path.name} was damaged (")
    assert got["rebuilt"].endswith("; rebuilt")
    again_path, again = infer.cached_package("mobilenet_v2", 32, 2, "float16")
    assert not again["fresh"] and len(calls) == 1 and again["flops"] == made["flops"]
    assert outside.read_bytes() == OUTSIDE_TEXT


def test_a_whole_core_ml_package_is_reused_and_one_cut_short_converted_again(monkeypatch):
    from siliconbench.core.frameworks.coreml import infer
    path = infer.package_path("mobilenet_v2", 32, 2, "float16")
    made = _make_package(path)
    monkeypatch.setattr(infer, "run_converter", lambda *a, **k: pytest.fail("converted"))
    assert infer.cached_package("mobilenet_v2", 32, 2, "float16")[1] == {**made, "fresh": False}
    path.with_suffix(".json").unlink()     # a conversion cut short before its record
    monkeypatch.setattr(infer, "run_converter", lambda *a, stdin="": _make_package(
        Path(json.loads(stdin)["out"])))
    got = infer.cached_package("mobilenet_v2", 32, 2, "float16")[1]
    assert got["fresh"] and "rebuilt" not in got


# ---------------------------------------------------------------- exports and probes

@pytest.mark.parametrize("case", CASES)
def test_an_export_never_writes_through_what_is_in_its_place(case, outside, tmp_path, store):
    """A link to a file is replaced (its target untouched); a FIFO nothing reads and a link
    to a device other than the null device are refused in one sentence and left as they are
    (issue 51: an export never replaces a device node or a FIFO, nor a link to one)."""
    from tests.core.test_hostile_files import fixture
    given = tmp_path / "given.json"
    given.write_text(json.dumps(fixture()))
    assert run_cli("import", str(given), timeout=GUARD_S).returncode == 0
    out = tmp_path / "export.csv"
    plant(out, case, outside)
    done = run_cli("export", "-o", str(out), timeout=GUARD_S)
    if case == "folder":
        assert done.returncode == 2 and "is a folder" in one_sentence(done.stderr)
    elif case == "fifo":
        assert done.returncode == 2 and "is a FIFO that nothing reads" in one_sentence(
            done.stderr)
        assert stat.S_ISFIFO(os.lstat(out).st_mode)
    elif case == "dev_zero_link":
        assert done.returncode == 2 and "is a device" in one_sentence(done.stderr)
        assert out.is_symlink() and os.readlink(out) == "/dev/zero"
    else:
        assert done.returncode == 0, done.stderr[-3000:]
        assert not out.is_symlink() and out.is_file() and out.read_text().count("\n") >= 2
    assert outside.read_bytes() == OUTSIDE_TEXT


@pytest.mark.parametrize("case", ["fifo", "folder"])
def test_a_probe_file_that_is_not_a_file_is_an_oserror(case, tmp_path):
    probe = tmp_path / "cpuinfo"
    plant(probe, case)
    got = answer(in_child(f"""
        import json
        from siliconbench.core.machine import commands
        try:
            commands.read_text({str(probe)!r})
        except OSError as e:
            print(json.dumps(type(e).__name__))
        """))
    assert got == "NotReadable"


@pytest.mark.parametrize("case", CASES)
def test_the_log_is_written_only_to_a_regular_file_of_its_own(case, outside, tmp_path,
                                                             siliconbench_home):
    from siliconbench.core.logs import log_file
    plant(log_file(), case, outside)
    done = run_cli("results", cwd=tmp_path, timeout=GUARD_S)  # sets the log up, then reads
    assert done.returncode == 0 and done.stderr == "", done.stderr[-3000:]
    got = answer(in_child("""
        import json
        from siliconbench.core.logs import log, setup_logging
        path = setup_logging()
        log.error("an error with nowhere to go")
        print(json.dumps(None if path is None else str(path)))
        """))
    assert got is None        # no log, said nowhere: the command went on
    assert outside.read_bytes() == OUTSIDE_TEXT
