"""Which machine, which run (issue 50): two Macs of one chip stay two, identical machines are
told apart by their host, a side's repeats all count, and only like is paired.

The Mac records are made from a real run: tests/data/records/gemm-torch.json (a float32 GEMM
with PyTorch on this Linux CPU) copied, its machine fields replaced by what a MacBook Pro
(Mac14,6) and a Mac Studio (Mac14,13), both Apple M2 Max with 12 cores (8 performance + 4
efficiency) and 32 GB, report through the probe's parsers (parse_system_profiler with a
platform_UUID, mac_models.json for the model's name), and its values scaled so the three
machines measure apart. The GPU records are the H100's and H200's real runs (tests/data)."""

from __future__ import annotations

import json
import uuid

import pytest

from siliconbench.core import cli
from siliconbench.core.compare_stats import SAME, Side, compare
from siliconbench.core.compare_words import compared, machine_names, sides_for, summary_text
from siliconbench.core.export import to_json
from siliconbench.core.machine import MachineInfo, parse_system_profiler
from siliconbench.core.report import to_csv, to_html
from siliconbench.core.results import RunRecord
from tests.helpers.mac_records import (
    DATA,
    MBP,
    STUDIO,
    gpu,
    mac_run,
    repeats_with_an_outlier,
    three_macs,
)
from tests.helpers.recorded import recorded

# ---------------------------------------------------------------- a machine is a host

def test_the_host_identity_is_a_hash_and_tells_identical_macs_apart():
    mine, studio, theirs = three_macs()
    a, b = MachineInfo.from_dict(mine.machine), MachineInfo.from_dict(theirs.machine)
    assert a.hardware_key() == b.hardware_key()           # model, chip, memory alike
    assert a.key() != b.key() and a.told_apart and b.told_apart
    raw = str(uuid.uuid5(uuid.NAMESPACE_DNS, "my-laptop")).upper()
    text = to_json([mine])
    assert a.host_id and raw not in text and raw.lower() not in text
    # A redacted UUID (as in tests/data/macos's captures) is no identity.
    assert parse_system_profiler(
        (DATA / "macos" / "m1_macbookair_SPHardwareDataType.json").read_text())["host_id"] \
        is None
    # An older record keeps the hardware's fingerprint.
    old = mac_run(MBP, None, 1.0)
    info = MachineInfo.from_dict(old.machine)
    assert not info.told_apart and info.key() == info.hardware_key()


def test_three_macs_of_one_chip_are_three_sides_named_by_machine():
    mine, studio, theirs = three_macs()
    sides = sides_for([mine, studio, theirs])
    labels = [s.label for s in sides]
    tag = MachineInfo.from_dict(mine.machine).host_tag()
    other = MachineInfo.from_dict(theirs.machine).host_tag()
    assert labels == [f"MacBook Pro (16-inch, 2023) · {tag}", "Mac Studio (2023)",
                      f"MacBook Pro (16-inch, 2023) · {other}"]
    cmp = compared(sides)
    assert all(len(r.cells) == 3 and all(r.cells) for r in cmp.rows)
    text = summary_text(cmp, [mine, studio, theirs], [])
    assert "A = MacBook Pro (16-inch, 2023) · host" in text and "B = Mac Studio (2023)" in text
    # The report and the CSV name the same sides.
    page, table = to_html(cmp), to_csv(cmp)
    for label in labels:
        assert label in page and label in table
    # The Results' Machine column tells the two MacBook Pros apart by their hosts.
    names = machine_names([mine, studio, theirs])
    assert names[mine.id] != names[theirs.id] and names[studio.id] == "Mac Studio (2023)"


def test_the_compare_command_names_the_three_macs(tmp_path, capsys):
    files = []
    for i, rec in enumerate(three_macs()):
        path = tmp_path / f"mac{i}.json"
        path.write_text(to_json([rec]), encoding="utf-8")
        files.append(str(path))
    assert cli.main(["compare", *files]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "Mac Studio (2023)" in out and out.count("MacBook Pro (16-inch, 2023) · host") >= 2
    assert "Apple M2 Max [" not in out


def test_name_machine_names_that_host_and_asks_before_an_imported_name():
    from siliconbench.core.machine_names import runs_to_name
    mine, studio, theirs = three_macs()
    again = mac_run(MBP, "my-laptop", 1.02, n=1)
    imported = mac_run(MBP, "my-laptop", 0.98, n=2, label="Lab Mac")
    ids, other = runs_to_name([mine, studio, theirs, again, imported], [mine], "My MBP")
    # The colleague's identical MacBook Pro and the Studio are other machines.
    assert set(ids) == {mine.id, again.id, imported.id}
    assert [r.id for r in other] == [imported.id]


# ---------------------------------------------------------------- repeats count


def test_three_repeats_with_one_outlier_give_a_figure_near_the_agreeing_runs():
    runs = repeats_with_an_outlier()
    laptop = mac_run(MBP, "my-laptop", 0.5)
    sides = sides_for([*runs, laptop])
    assert sides[0].label == "Mac Studio (2023) · 3 runs" and len(sides[0].records) == 3
    cmp = compared(sides)
    for row in cmp.rows:
        studio = row.cells[0]
        agreeing = sorted(r.value for rec in runs[1:] for r in rec.rows
                          if r.params == row.params and r.metric == row.metric)
        assert studio.runs == 3
        assert agreeing[0] <= studio.value <= agreeing[-1]
        lo, hi = studio.spread
        assert hi / lo > 10                      # the spread shows the outlier
    from siliconbench.core.report import cell_text
    assert "3 runs" in cell_text(cmp.rows[0].cells[0], cmp.rows[0].unit)


def test_the_run_to_run_spread_is_used_by_the_verdict():
    """A side whose repeats disagree as much as the sides do gets no 'faster'."""
    from siliconbench.core.compare_stats import RUNS_OVERLAP
    runs = repeats_with_an_outlier()
    one = mac_run(MBP, "my-laptop", 3.0)     # inside the Studio's spread
    cmp = compare([Side("Studio", runs), Side("Laptop", [one])])
    assert all(r.cells[1].verdict in (RUNS_OVERLAP, SAME) for r in cmp.rows)
    far = mac_run(MBP, "my-laptop", 40.0)    # beyond every run of it
    cmp = compare([Side("Studio", runs), Side("Laptop", [far])])
    assert all(r.cells[1].verdict == "faster" for r in cmp.rows)


# ---------------------------------------------------------------- only like is paired

def test_tf32_beside_a_cpu_float32_is_named_and_not_paired_best_vs_best(capsys):
    tf32, cpu = gpu("h200-gemmtf32"), recorded("gemm-torch")
    # The command says why there is nothing to compare, naming TF32.
    code = cli.main(["compare", str(DATA / "h200" / "h200-gemmtf32.json"),
                     str(DATA / "records" / "gemm-torch.json")])
    err = capsys.readouterr().err
    assert code == 2 and "float32 · TF32" in err and "unlike kinds" in err
    cmp = compared(sides_for([tf32, cpu]))
    assert not [b for b in cmp.best if b.workload == "gemm"]
    text = summary_text(cmp, [tf32, cpu], [])
    assert "float32 · TF32" in text and "not compared best vs best" in text.lower()
    # With the H200's plain float32 run there, that one is the CPU's pair, named as such.
    plain = gpu("h200-gemm")
    cmp = compared(sides_for([plain, tf32, cpu]))
    (best,) = [b for b in cmp.best if b.workload == "gemm"]
    assert best.kind == "" and best.cells[1] is None and best.cells[2] is not None


def test_two_models_never_merge_into_one_side():
    one_b, eight_b = gpu("h100-llm1b"), gpu("h100-llm8b-quick")
    sides = sides_for([one_b, eight_b, gpu("h200-llm8b")])
    assert len(sides) == 3
    assert all(len({r.rows[0].params["preset"] for r in s.records}) == 1 for s in sides)


def test_the_h100_h200_8b_comparison_warns_about_the_decode_loop():
    h100, h200 = gpu("h100-llm8b-quick"), gpu("h200-llm8b")
    cmp = compared(sides_for([h100, h200]))
    said = " ".join(cmp.warnings)
    assert "not known to be alike" in said and "decode loop unknown for NVIDIA H200 " \
        "(older record)" in said
    (best,) = [b for b in cmp.best if b.workload == "llm"]
    assert "decode loop unknown for B (older record)" in best.cells[1].unknown


@pytest.mark.parametrize("missing", ["decode_loop"])
def test_a_setting_one_record_lacks_is_unknown_not_agreed(missing):
    """The same run twice, one copy as an older record without the setting: paired, and
    the cell says the pair is not known to be alike."""
    new = gpu("h100-llm8b-quick")
    old = gpu("h100-llm8b-quick")
    old.id = "0ld" + old.id[3:]
    old.settings.pop(missing)
    old.params.pop(missing)
    old.machine = {**old.machine, "cpu_cores": 8}      # another machine
    cmp = compare([Side("new", [new]), Side("old", [old])])
    assert cmp.rows and all(r.cells[1].unknown == "decode loop unknown for B (older record)"
                            for r in cmp.rows)
    from siliconbench.core.compare_stats import cell_words
    assert "not known to be alike: decode loop unknown for B" in cell_words(
        cmp.rows[0].cells[1], "higher")


def test_linux_host_identity_is_the_hashed_machine_id(monkeypatch):
    """The EPYC captures of tests/data/machine with a machine-id beside them (systemd's
    format: 32 hex digits), and an NVML that gives a GPU UUID: both kept only hashed."""
    from siliconbench.core.machine import commands, linux, power
    from siliconbench.core.machine.record import host_hash
    epyc = DATA / "machine" / "linux_epyc"
    machine_id = "4f1c2b9d8e7a6c5b4a3f2e1d0c9b8a7f"
    files = {"/proc/cpuinfo": "cpuinfo.txt", "/proc/meminfo": "meminfo.txt",
             "/etc/os-release": "os-release.txt"}

    def read(path):
        if str(path) == "/etc/machine-id":
            return machine_id + "\n"
        return (epyc / files[str(path)]).read_text(encoding="utf-8")
    monkeypatch.setattr(commands, "read_text", read)
    monkeypatch.setattr(commands, "run_command",
                        lambda args: (epyc / "lscpu.txt").read_text(encoding="utf-8"))
    monkeypatch.setattr(linux, "nvidia_gpu", lambda: None)
    monkeypatch.setattr(power, "POWER_SUPPLY_DIR", DATA / "absent")
    info = linux.probe_linux()
    assert info.host_id == host_hash(machine_id) and machine_id not in json.dumps(
        info.to_dict())
    # Another host of the same hardware is another machine; the same id, the same one.
    twin = MachineInfo.from_dict({**info.to_dict(), "host_id": host_hash("f" * 32)})
    assert twin.hardware_key() == info.hardware_key() and twin.key() != info.key()
    assert linux.probe_linux().key() == info.key()

    import sys
    import types
    uuid_text = "GPU-5a0b1c2d-3e4f-5a6b-7c8d-9e0f1a2b3c4d"
    fake = types.SimpleNamespace(
        nvmlInit=lambda: None, nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda index: "handle",
        nvmlDeviceGetName=lambda handle: b"NVIDIA H100 80GB HBM3",
        nvmlDeviceGetMemoryInfo=lambda handle: types.SimpleNamespace(total=85520809984),
        nvmlDeviceGetUUID=lambda handle: uuid_text)
    monkeypatch.undo()       # the real nvidia_gpu, through the fake NVML
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    gpu_facts = linux.nvidia_gpu()
    assert gpu_facts["gpu_id"] == host_hash(uuid_text) and uuid_text not in str(gpu_facts)


# ---------------------------------------------------------------- read whole

def ten_sides() -> list[RunRecord]:
    """Ten run identities of the real records (as tests/gui/test_gpu_beside_cpu.py's)."""
    stems = ["gemm-torch", "infer-torch", "infer-torch-reference", "gemm-tensorflow",
             "gemm-mlx", "gemm_cpu_tiny", "llm-llamacpp"]
    suite = json.loads((DATA / "h100" / "h100-quick-suite.json").read_text("utf-8"))
    runs = suite["runs"] if isinstance(suite, dict) else suite
    xeon = next(RunRecord.from_dict(r) for r in runs
                if r["workload"] == "gemm" and r["device"] == "cpu")
    return [gpu("h200-gemm"), gpu("h200-gemmtf32"), *(recorded(s) for s in stems), xeon,
            gpu("h100-gemm")]


def test_the_html_report_fits_ten_sides_and_shows_no_raw_keys():
    import re
    cmp = compared(sides_for(ten_sides()))
    assert len(cmp.sides) == 10
    page = to_html(cmp)
    for table in re.findall(r'<table class="comparison".*?</table>', page, re.S):
        heads = re.findall(r"<th[^>]*>([^<]*)</th>", table.split("</thead>")[0])
        # A letter per side and one 'B vs A' column per other side: never a side's whole
        # name (or 'ratio' and 'verdict' columns) per side across the page.
        assert len(heads) <= 6 + 10 + 9 and all(len(h) <= 16 for h in heads), heads
    assert "A = " in page and "J = " in page     # the machines table names the letters
    for raw in ("power_capped", "energy_counter", "context_sweep None"):
        assert raw not in page


def test_best_vs_best_follows_the_five_percent_rule():
    """Two runs of one GEMM a few % apart: the report's best vs best says no difference,
    as its point-by-point verdicts do, not '1.03× faster'."""
    from siliconbench.core.report import best_words
    a = mac_run(STUDIO, "the-studio", 1.0)
    b = mac_run(MBP, "my-laptop", 1.03)
    cmp = compared(sides_for([a, b]))
    (best,) = [x for x in cmp.best if x.workload == "gemm"]
    assert best.cells[1].ratio == pytest.approx(1.03, rel=1e-6)
    words = best_words(best, 1)
    assert words.startswith("no significant difference (1.03×") and "faster" not in words


def test_warnings_read_as_sentences():
    """'context_sweep None vs 2048' and "NVIDIA H100 · 2 runs's" (issue 50's minors): a
    parameter left unset says so in words, and no side's label takes a possessive."""
    a = recorded("llm-torch")
    a.params["context_sweep"] = None
    b = recorded("llm-torch")
    b.id = "b" + b.id[1:]
    b.params["context_sweep"] = 2048
    b.machine = {**b.machine, "cpu_cores": 16}
    cmp = compare([Side("A · 2 runs", [a]), Side("B", [b])])
    said = " ".join(cmp.warnings)
    assert "context sweep not set vs 2048" in said and "None" not in said
    assert "context_sweep" not in said
    # The H200's GEMM record holds power rows no energy counter measured: said of the side.
    cmp = compare([Side("NVIDIA H200 · 2 runs", [gpu("h200-gemm")]),
                   Side("NVIDIA H100", [gpu("h100-gemm")])])
    power = [w for w in cmp.warnings if "power and efficiency" in w]
    assert power and not any("runs's" in w for w in cmp.warnings)


def test_the_csv_carries_each_sides_runs_and_spread():
    import csv
    import io
    runs = repeats_with_an_outlier()
    cmp = compared(sides_for([*runs, mac_run(MBP, "my-laptop", 0.5)]))
    lines = list(csv.DictReader(io.StringIO(to_csv(cmp))))
    studio = [x for x in lines if x["machine"] == "Mac Studio (2023) · 3 runs"
              and x["compared"] == "point by point"]
    assert studio and all(x["runs"] == "3" for x in studio)
    for line in studio:
        assert float(line["runs_low"]) <= float(line["value"]) <= float(line["runs_high"])
        assert float(line["runs_high"]) / float(line["runs_low"]) > 10


@pytest.mark.parametrize("hostile", [123, "not hex", "ab" * 40, ["x"], {"a": 1}])
def test_a_received_files_host_id_of_another_shape_is_no_identity(tmp_path, capsys, hostile):
    """A result file is a received file: one whose host_id is no hash's hex digits is
    refused in one sentence; a record that carries one anyway names no host by it."""
    mine, studio, _ = three_macs()
    mine.machine["host_id"] = hostile
    files = []
    for i, rec in enumerate((mine, studio)):
        path = tmp_path / f"r{i}.json"
        path.write_text(to_json([rec]), encoding="utf-8")
        files.append(str(path))
    code = cli.main(["compare", *files])
    out, err = capsys.readouterr()
    # The schema refuses it: one sentence, exit 2, no traceback.
    assert code == 2 and "not a SiliconBench result file" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    # A record read past the schema (a store's) names no host by it either.
    assert not MachineInfo.from_dict(mine.machine).told_apart


def test_identical_older_records_say_they_are_not_told_apart():
    """Two MacBook Pro records written before hosts were told apart, one named: the Results'
    Machine column and the sides say which is not told apart, never a made-up host."""
    old = mac_run(MBP, None, 1.0)
    new = mac_run(MBP, "my-laptop", 1.2, n=1)
    names = machine_names([old, new])
    assert "machine not told apart (older record)" in names[old.id]
    assert "host " in names[new.id]
    sides = sides_for([old, mac_run(MBP, None, 1.01, n=2), new])
    assert any("machine not told apart (older record)" in s.label for s in sides)
    cmp = compared(sides)
    assert any(n.startswith("machine not told apart (older record): ") for n in cmp.notes)
