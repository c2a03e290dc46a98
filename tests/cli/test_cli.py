"""The siliconbench command end to end: run -> results -> export json -> import into a fresh
store -> the same rows; bad input gets one sentence and exit 2, never a traceback."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers.cli_processes import cli, sb, shared
from tests.helpers.fake_workloads import FRAMEWORK

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gemm_run(tmp_path_factory):
    """One real tiny torch GEMM run by the command, in a store of its own, once per session
    (cli_processes.shared): the store it leaves for results, export and import, and the
    record it printed."""
    def make(home: Path) -> dict:
        r = sb("run", "gemm", "--framework", "torch", "--device", "cpu", "--sizes", "64,128",
               "--dtypes", "float32,bfloat16", "--quick", "--json", "--label",
               "MacBook Pro 14", home=home)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    return shared(tmp_path_factory, "cli-gemm", make)


def test_run_results_export_import_round_trip(tmp_path, gemm_run, capsys, monkeypatch):
    home_a, rec = gemm_run
    home_b = tmp_path / "b"
    assert rec["status"] == "ok" and rec["label"] == "MacBook Pro 14"
    assert len(rec["rows"]) == 4
    row = rec["rows"][0]
    assert set(row) >= {"metric", "value", "unit", "params", "stats", "flags"}
    assert set(row["stats"]) >= {"median", "p25", "p75", "ci_low", "ci_high", "n"}
    assert rec["settings"]["tf32"] is False

    listed = json.loads(cli(capsys, monkeypatch, "results", "--json", "--limit", "5",
                            home=home_a)[1])
    assert [x["id"] for x in listed] == [rec["id"]]
    table = cli(capsys, monkeypatch, "results", home=home_a)[1]
    assert rec["id"][:8] in table and "MacBook Pro 14" in table

    out = tmp_path / "export.json"
    rc, said, _ = cli(capsys, monkeypatch, "export", "--format", "json", "-o", out, "--run",
                      rec["id"][:8], home=home_a)
    assert rc == 0 and "Wrote 1 run" in said
    rc, said, _ = cli(capsys, monkeypatch, "import", out, home=home_b)
    assert rc == 0 and "Imported 1 run" in said
    again = cli(capsys, monkeypatch, "import", out, home=home_b)[1]
    assert "1 was already in the store" in again
    imported = json.loads(cli(capsys, monkeypatch, "results", "--json", home=home_b)[1])
    assert imported[0]["rows"] == rec["rows"]

    csv_out = tmp_path / "export.csv"
    assert cli(capsys, monkeypatch, "export", "-o", csv_out, home=home_a)[0] == 0
    lines = csv_out.read_text().splitlines()
    assert lines[0].startswith("run_id,") and len(lines) == 5


def test_human_output_has_table_and_spread(gemm_run, capsys, monkeypatch):
    # The table `run` prints without --json (print_record), here for the run above.
    home, rec = gemm_run
    rc, out, err = cli(capsys, monkeypatch, "results", "--show", rec["id"][:8], home=home)
    assert rc == 0, err
    assert "TFLOPS" in out and "p25–p75" in out and "unknown" in out


@pytest.mark.parametrize("args, says", [
    (["run", "gemm", "--sizes", "0"], "--sizes must be at least 1, not 0."),
    (["run", "gemm", "--dtypes", "float8"], "--dtypes must be one of"),
    (["run", "gemm", "--device", "tpu", "--sizes", "64"], "PyTorch has no device 'tpu' here"),
    (["run", "gemm", "--framework", "jax"], "Unknown framework 'jax'"),
    (["run", "nosuch"], "invalid choice: 'nosuch'"),
    (["import", "/nonexistent/file.json"], "no such file"),
    (["export", "-o", "x.txt"], "--format csv or --format json"),
    (["results", "--show", "ffffffff"], "No run with id"),
    (["frobnicate"], "invalid choice"),
    (["results", "--limit", "99999999999999999999999"], "--limit must be between 1 and"),
    (["run", "gemm", "--time-limit", "nan"], "--time-limit takes a finite number, not 'nan'."),
    (["run", "gemm", "--time-limit", "inf"], "--time-limit takes a finite number, not 'inf'."),
    (["export", "-o", "/tmp"], "/tmp is a folder; name a file in it"),
    (["import", "/tmp"], "/tmp is a folder, not a result file; nothing was imported."),
    (["run", "infer", "--model", "nosuchmodel", "--images", "1", "--batch-size", "1"],
     "--model does not know 'nosuchmodel'; see siliconbench workloads for all"),
    (["run", "infer", "--model", "resnt50", "--images", "1", "--batch-size", "1"],
     "did you mean resnet50"),
    # `--flag=--` reaches the command as [] (argparse's end of options): it was an internal
    # error (AttributeError) for every parameter and --time-limit
    (["run", "allreduce", "--hosts=--"], "--hosts needs a value."),
    (["run", "gemm", "--sizes=--"], "--sizes needs a value."),
    (["run", "allreduce", "--port=--"], "--port needs a value."),
    (["run", "gemm", "--time-limit=--"], "--time-limit needs a value."),
])
def test_bad_input_is_one_sentence_and_exit_2(tmp_path, args, says, capsys, monkeypatch):
    rc, out, err = cli(capsys, monkeypatch, *args, home=tmp_path)
    assert rc == 2, (out, err)
    assert says in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert len(err) < 200
    stored = cli(capsys, monkeypatch, "results", "--json", home=tmp_path)[1]
    assert json.loads(stored) == []   # nothing stored


def test_a_foreign_file_is_refused_by_name_and_the_good_one_imported(tmp_path, gemm_run,
                                                                    capsys, monkeypatch):
    good = tmp_path / "good.json"
    bad = tmp_path / "bad.json"
    bad.write_text('{"some": "other program\'s file"}')
    assert cli(capsys, monkeypatch, "export", "-o", good, home=gemm_run[0])[0] == 0
    r = sb("import", str(bad), home=tmp_path / "b")
    assert r.returncode == 2
    assert "bad.json is not a SiliconBench result file" in r.stderr
    assert "nothing was imported" in r.stderr
    assert json.loads(cli(capsys, monkeypatch, "results", "--json", home=tmp_path / "b")[1]) == []
    r = sb("import", str(good), str(bad), home=tmp_path / "b")
    assert r.returncode == 2    # a file was refused
    assert r.stderr.strip().endswith("bad.json is not a SiliconBench result file: it is not a "
                                     "SiliconBench run record; it was left out.")
    assert r.stdout.strip() == "Imported 1 run; 1 file was refused (named above)."
    stored = json.loads(cli(capsys, monkeypatch, "results", "--json", home=tmp_path / "b")[1])
    assert [run["id"] for run in stored] == [gemm_run[1]["id"]]


def test_failed_run_exits_1_and_is_kept(tmp_path, capsys, monkeypatch):
    r = sb("run", "fake-raises", "--steps", "1", "--framework", FRAMEWORK, home=tmp_path,
           env_extra={"SILICONBENCH_EXTRA_WORKLOADS": "tests.helpers.fake_workloads"})
    assert r.returncode == 1
    assert "The run failed: RuntimeError: the workload broke. 1 result rows were kept." \
        in " ".join(r.stdout.split())
    listed = json.loads(cli(capsys, monkeypatch, "results", "--json", home=tmp_path)[1])
    assert listed[0]["status"] == "failed" and len(listed[0]["rows"]) == 1


@pytest.fixture(scope="module")
def device_listing(tmp_path_factory):
    """`siliconbench devices --json` in a fresh store, where it asks every framework (each in
    a child process): its exit code, the JSON it printed, the heavy modules it imported
    itself, and the store's folder with the device listing it keeps. Once per session
    (cli_processes.shared)."""
    code = ("import sys; from siliconbench.core.cli import main; rc = main(['devices', '--json']);"
            "bad = [m for m in ('tensorflow', 'PySide6', 'pyqtgraph', 'torch', 'mlx') "
            "if m in sys.modules]; sys.stderr.write(repr((rc, bad)))")

    def make(home: Path) -> dict:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, env=dict(os.environ, SILICONBENCH_HOME=str(home)))
        return {"stdout": r.stdout, "stderr": r.stderr}
    home, said = shared(tmp_path_factory, "devices", make)
    return SimpleNamespace(**said), home


def test_devices_lists_cpu_and_imports_no_tensorflow_or_qt(device_listing):
    r, _ = device_listing
    assert r.stderr.strip().endswith("(0, [])"), r.stderr   # asked in child processes only
    found = json.loads(r.stdout)
    cpus = {d["framework"] for d in found if d["id"] == "cpu" and d["usable"]}
    # Each installed framework answered, each from a process of its own.
    from siliconbench.core.frameworks import FRAMEWORKS
    assert cpus == {name for name, f in FRAMEWORKS.items() if f.installed()}, found
    assert "torch" in cpus


def only_torch_is_listed(home: Path, listed: Path) -> None:
    """Keep, in `home`, PyTorch's real device listing (the one `devices` kept in `listed`) and
    none for TensorFlow and MLX, so the quick suite runs on torch:cpu alone: the headless
    path is the same for every framework, whose runs have their own tests, and each one more
    costs a framework import and several runs."""
    from siliconbench.core.runner import DEVICE_CACHE, discover_devices
    cache = json.loads((listed / DEVICE_CACHE).read_text())
    assert cache["frameworks"]["torch"]
    cache["frameworks"].update({name: [] for name in cache["frameworks"] if name != "torch"})
    home.mkdir(parents=True, exist_ok=True)
    (home / DEVICE_CACHE).write_text(json.dumps(cache))
    assert [(d.framework, d.id) for d in discover_devices(fresh=False) if d.usable] == \
        [("torch", "cpu")]


# The quick suite's workloads but ResNet inference, at tiny sizes: its bfloat16 1024 products
# alone take a minute on a small CPU, and the sizes are data, not the headless path under
# test. Each entry is a run (a child process importing torch); the summary's line per
# workload is the same code for each, so the inference entry (its own tests in test_infer)
# and the second product add a run each and check nothing more here.
TINY_QUICK = {"gemm": {"sizes": [64], "dtypes": ["float32"]},
              "bandwidth": {"sizes_mb": [4], "ops": ["triad"]},
              "llm": {"preset": "tiny", "dtype": "float32", "prompts": [4], "depths": [0],
                      "gen_tokens": 4}}


@pytest.mark.skipif(sys.platform != "linux", reason="a Mac or Windows always has a display")
def test_no_display_runs_the_quick_suite_headless(tmp_path, monkeypatch, capsys,
                                                  device_listing, short_protocol):
    # In this process (each run is still a child process) so the suite can be made tiny.
    from siliconbench.core import cli, suites
    from siliconbench.core.runner import discover_devices
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    only_torch_is_listed(tmp_path, device_listing[1])
    quick = suites.load_suites()["quick"]
    # The shipped suite, expanded for this device: what the headless command would run.
    specs = suites.expand("quick", discover_devices(fresh=False))
    # (the 8192 float32 product of the published M1 Max sweep is for GPUs only)
    assert [(s.workload, s.framework, s.device, s.quick) for s in specs] == \
        [(w, "torch", "cpu", True) for w in ("gemm", "infer", "bandwidth", "llm")]
    assert specs[0].params["dtypes"] == ["float32", "bfloat16"] and specs[0].params["grow"]
    # (without the llm entry's fit, which would pick Llama-3.2-1B for 4 tokens on this CPU)
    tiny = {**quick, "runs": [{**{k: v for k, v in e.items() if k != "fit"},
                               "params": TINY_QUICK[e["workload"]]}
                              for e in quick["runs"][:4] if e["workload"] != "infer"]}
    assert [e["workload"] for e in tiny["runs"]] == ["gemm", "bandwidth", "llm"]
    monkeypatch.setattr(suites, "load_suites", lambda: {"quick": tiny})

    assert cli.main([]) == 0
    out, err = capsys.readouterr()
    assert "No display found: running the quick suite headless." in err
    # It ends in a short summary per device (each workload's headline with its unit), and
    # says where the store and the CSV went.
    summary = out.split("Quick suite: the best point of each workload")[1]
    assert "(torch cpu)\n  Matrix multiply (TFLOPS): " in summary
    assert " TFLOPS (size 64, dtype float32; " in summary
    assert re.search(r"\n  Memory bandwidth \(GB/s\): [\d,.]+ GB/s \(", summary), summary
    # The tiny LLM's decode against the memory bound of the triad measured just before it.
    assert re.search(r"\n  LLM inference \(tokens/s\): [\d,.]+ tok/s \(.*depth 0.*; "
                     r"\d+% of memory bound\)( — (not to be trusted|read with care): [^\n]*)?"
                     r"\n", summary), summary
    assert "preset tiny" in summary
    assert "All rows are kept in the store" in summary and "p25" not in summary
    assert out.count("(torch:cpu)") == 3  # the tiny suite's three runs, on torch alone
    [csv] = tmp_path.glob("quick-suite-*.csv")
    from siliconbench.core.store import Store
    store = Store()
    runs = store.runs()
    store.close()
    assert sorted(r.workload for r in runs) == ["bandwidth", "gemm", "llm"]
    assert all(r.status == "ok" for r in runs)
    assert all(r.id in csv.read_text() for r in runs) and str(csv) in out


def test_published_references_are_not_imported_as_runs(tmp_path, capsys, monkeypatch):
    refs = tmp_path / "refs.json"
    refs.write_text(cli(capsys, monkeypatch, "reference", "--json", home=tmp_path)[1])
    rc, out, _ = cli(capsys, monkeypatch, "import", refs, home=tmp_path)
    assert rc == 0 and "Left out" in out and "Imported 0 runs." in out
    assert json.loads(cli(capsys, monkeypatch, "results", "--json", home=tmp_path)[1]) == []


def test_every_help_prints_and_exits_0(capsys):
    """`--help` of the command, of each subcommand and of `run` for each listed workload.
    `run infer --help` was an internal error: a bare % in a parameter's help ("stops rising
    by 3%"), which argparse reads as a format. (Listed here, not at import: other tests'
    workers import this module while the catalogue loads.)"""
    from siliconbench.core.catalogue import listed
    from siliconbench.core.cli.parser import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    helps = [["--help"], *([name, "--help"] for name in sub.choices),
             *(["run", w.name, "--help"] for w in listed())]
    assert len(helps) > 15
    for argv in helps:
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args(argv)
        assert done.value.code == 0, argv
        out = capsys.readouterr().out
        assert out.startswith("usage:") and "%%" not in out, argv


def test_run_help_names_the_frameworks_the_registry_says_run_it(capsys, monkeypatch):
    """`--framework` of each workload lists the frameworks that declare it, from the registry:
    llama.cpp under llm, not under gemm; a framework added by its folder appears with no list
    to edit (the help said "torch, tensorflow, mlx" everywhere, llama.cpp and Core ML
    missing)."""
    from siliconbench.core import frameworks
    from siliconbench.core.cli.parser import build_parser

    def framework_help(workload: str) -> str:
        with pytest.raises(SystemExit):
            build_parser().parse_args(["run", workload, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        return text.split("--framework FRAMEWORK ", 1)[1].split(" --device", 1)[0]

    assert framework_help("gemm") == "torch, tensorflow, mlx (default: torch)"
    assert framework_help("llm") == "torch, mlx, llamacpp (default: torch)"
    assert framework_help("infer") == "torch, coreml (default: torch)"
    added = frameworks.FrameworkInfo("numpyfw", "NumPy", "numpy",
                                     "siliconbench.core.frameworks.numpyfw.adapter", "numpyfw",
                                     workloads=("gemm",))
    monkeypatch.setitem(frameworks.FRAMEWORKS, "numpyfw", added)
    assert framework_help("gemm") == "torch, tensorflow, mlx, numpyfw (default: torch)"
