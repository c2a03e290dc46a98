"""Sustained mode for every workload: the one loop (RunContext.measure_sustained), the figure per
interval on the telemetry's time axis, burst / sustained / ratio, the first lasting drop and
what coincided with it. A real run on this CPU, and the arithmetic on real NVIDIA telemetry
(tests/data/h100, h200)."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import median

import pytest

from siliconbench.core import telemetry
from siliconbench.core.runner import RunSpec, execute
from siliconbench.core.store import Store
from siliconbench.core.telemetry import burst as sus
from siliconbench.core.telemetry.linux import (
    LinuxCpuSource,
    cpuinfo_mhz,
    hottest_zone,
    rapl_watts,
)

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """A real 12 s sustained GEMM on this CPU (MLX: it imports in a tenth of a second)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SILICONBENCH_HOME", str(tmp_path_factory.mktemp("home")))
    mp.setattr(telemetry.sampler, "DEFAULT_INTERVAL_S", 0.5)
    try:
        rec = execute(RunSpec("gemm", "mlx", params={"sizes": [256], "dtypes": ["float32"],
                                                     "duration": 0.2}), Store())
    finally:
        mp.undo()
    assert rec.status == "ok", rec.reason
    return rec


def test_a_sustained_gemm_keeps_its_blocks_on_the_telemetry_axis(cpu_run):
    rec = cpu_run
    [entry] = rec.telemetry["sustained"]
    tflops = next(r for r in rec.rows if r.metric == "tflops")
    ends = entry["block_end_s"]
    assert len(ends) == len(tflops.samples) >= 20          # one figure per timed block
    assert ends == sorted(ends) and 12.0 <= ends[-1] < 12.5
    assert entry["unit"] == "TFLOPS" and entry["metric"] == "tflops"
    # The blocks start after the child started (imports done) and end before the run did.
    assert rec.telemetry["summary"]["duration_s"] > entry["start_s"] >= 0
    assert entry["start_s"] + ends[-1] <= rec.telemetry["summary"]["duration_s"]
    assert rec.settings["duration_min"] == 0.2


def test_burst_and_sustained_are_the_medians_of_their_windows(cpu_run):
    rec = cpu_run
    [entry] = rec.telemetry["sustained"]
    rates = next(r for r in rec.rows if r.metric == "tflops").samples
    ends = entry["block_end_s"]
    # A 12 s run: the burst is every block (its first 30 s), the sustained window its last
    # minute, also every block: both the median of all blocks, the ratio exactly 1.
    assert entry["burst"] == pytest.approx(median(rates))
    assert entry["sustained"] == pytest.approx(median(rates))
    assert entry["ratio"] == pytest.approx(1.0)
    # Per 5 s interval: the median of the blocks that end inside it; the last 2 s (10-12 s,
    # under half an interval) join the interval before, which ends the list.
    last = entry["intervals"][-1][0]
    assert last == 5.0
    for t, value in entry["intervals"]:
        inside = [r for e, r in zip(ends, rates)
                  if (t < e <= t + 5 or (t == 0 and e <= 5)) or (t == last and e > t)]
        assert value == pytest.approx(median(inside))
    rows = {r.metric: r for r in rec.rows if r.metric in ("burst", "sustained",
                                                         "sustained_ratio")}
    assert rows["burst"].value == entry["burst"] and rows["burst"].unit == "TFLOPS"
    assert "no lasting drop" in rows["sustained_ratio"].note
    intervals = [r for r in rec.rows if r.metric == "interval"]
    assert [r.params["t_s"] for r in intervals] == [t for t, _ in entry["intervals"]]
    assert all(r.params["size"] == 256 for r in intervals)


def test_the_clock_is_beside_each_interval_on_linux(cpu_run):
    series = cpu_run.telemetry["series"]
    assert series["cpu_clock_mhz"]["unit"] == "MHz"   # cpufreq, or /proc/cpuinfo here
    [entry] = cpu_run.telemetry["sustained"]
    assert all("cpu_clock_mhz" in seen for seen in entry["beside"])
    assert all("MHz" in r.note for r in cpu_run.rows if r.metric == "interval")


def test_the_power_state_is_kept_at_the_start_and_end(cpu_run):
    state = cpu_run.telemetry["power_state"]
    assert set(state) == {"start", "end"}
    assert set(state["start"]) >= {"power_source", "battery_percent", "power_mode",
                                   "lid_closed"}


# ---------------------------------------------------------------- arithmetic on real telemetry

def _record(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def _steps(before: float, after: float, at: float, span: float, block: float = 0.25):
    ends = [round(block * (i + 1), 4) for i in range(int(span / block))]
    return ends, [before if e <= at else after for e in ends]


def test_a_drop_when_the_h200_clock_fell(monkeypatch):
    """The H200 GEMM record's own SM clock (1,950-1,980 MHz, then 1,425-1,545 MHz from 7 s as
    the board held 700 W; this throughput is made up, the telemetry is the record's), against a throughput that steps down when it did: the drop is
    found at that time and the clock named, from its burst median to its median after."""
    series = _record("h200/h200-gemm.json")["telemetry"]["series"]
    monkeypatch.setattr(sus, "BURST_S", 2.0)
    monkeypatch.setattr(sus, "SUSTAINED_MIN_S", 1.0)      # seconds here, not minutes
    monkeypatch.setattr(sus, "LASTING_S", 2.0)
    monkeypatch.setattr(sus, "INTERVAL_S", 1.0)
    ends, rates = _steps(680.0, 560.0, at=3.0, span=5.5)
    a = sus.analyse(ends, rates, "TFLOPS", series, start_s=4.0)
    assert a.drop_at_s == 3.0
    assert a.burst == 680.0 and a.sustained == 560.0
    assert a.ratio == pytest.approx(560 / 680)
    # Burst: the samples at 4.0 and 5.0 s (1,980, 1,950); after: 7.0 and 8.0 s (1,545, 1,425).
    assert a.coincided == ["GPU SM clock fell from 1,965 to 1,485 MHz", "53 °C"]
    assert "at 3 s" in sus.drop_sentence(a)


def test_a_power_cap_from_nvml_reasons(monkeypatch):
    """The H100 GEMM record: NVML said power_capped at every point from 5.2 s; as the reason
    series the sampler now keeps (0x4: SW power cap), it is named beside the drop."""
    t = _record("h100/h100-gemm.json")["telemetry"]
    series = dict(t["series"])
    capped = [e for e in t["energy"] if "power_capped" in e["state"]["throttle"]]
    series["gpu_throttle_reasons"] = {"unit": "mask", "t": [e["t"] for e in capped],
                                      "v": [4.0] * len(capped)}
    monkeypatch.setattr(sus, "BURST_S", 1.0)
    monkeypatch.setattr(sus, "LASTING_S", 2.0)
    monkeypatch.setattr(sus, "INTERVAL_S", 1.0)
    ends, rates = _steps(700.0, 600.0, at=1.0, span=6.0)
    a = sus.analyse(ends, rates, "TFLOPS", series, start_s=4.0)
    assert a.drop_at_s == 1.0
    # Its burst second read 1,980 MHz; the two seconds after the drop 1,140 and 1,200.
    assert "GPU SM clock fell from 1,980 to 1,170 MHz" in a.coincided
    assert "power capped (NVML: power cap)" in a.coincided


def test_a_dip_that_recovers_is_no_drop_and_nothing_seen_is_said(monkeypatch):
    monkeypatch.setattr(sus, "INTERVAL_S", 5.0)
    ends = [0.5 * (i + 1) for i in range(240)]                  # 2 minutes
    rates = [100.0 if not 40 < e <= 50 else 80.0 for e in ends]  # 10 s dip, then back
    a = sus.analyse(ends, rates, "tok/s", {}, start_s=0.0)
    assert a.drop_at_s is None and a.coincided == []
    # The sustained window: the last minute of two (more than a third).
    assert a.sustained_from_s == 60.0 and a.sustained == 100.0
    # A low last interval alone (the run's last 5 s, as a shared machine's load can make it)
    # is not yet lasting: this 1-minute run on this CPU read 0.0152 TFLOPS in its last
    # interval against a 0.0243 burst, and nothing before or after said it would last.
    last_only = [100.0 if e <= 115 else 80.0 for e in ends]
    assert sus.analyse(ends, last_only, "tok/s", {}, start_s=0.0).drop_at_s is None
    lasting = [100.0 if e <= 70 else 90.0 for e in ends]
    a = sus.analyse(ends, lasting, "tok/s", {}, start_s=0.0)
    assert a.drop_at_s == 70.0 and a.coincided == ["none seen"]
    assert a.ratio == pytest.approx(0.9)


def test_too_few_blocks_is_said():
    with pytest.raises(ValueError, match="at least two timed blocks"):
        sus.burst_and_sustained([1.0], [3.0])


# ---------------------------------------------------------------- Linux's CPU readings

def test_linux_cpu_readings_from_sysfs(tmp_path):
    """cpufreq, RAPL and thermal zones in the files' own units (kHz, µJ, m°C), as the kernel
    lays them out; this machine (a VM) has none of them, so the tree is built here."""
    cpu = tmp_path / "cpu"
    for i, khz in enumerate((3_000_000, 2_400_000)):
        (cpu / f"cpu{i}" / "cpufreq").mkdir(parents=True)
        (cpu / f"cpu{i}" / "cpufreq" / "scaling_cur_freq").write_text(f"{khz}\n")
    cap = tmp_path / "powercap"
    (cap / "intel-rapl:0").mkdir(parents=True)
    (cap / "intel-rapl:0:0").mkdir()                      # a subdomain: not counted again
    (cap / "intel-rapl:0" / "max_energy_range_uj").write_text("262143328850\n")
    thermal = tmp_path / "thermal"
    for name, kind, milli in (("thermal_zone0", "acpitz", 27800), ("thermal_zone1",
                                                                   "x86_pkg_temp", 71000)):
        (thermal / name).mkdir(parents=True)
        (thermal / name / "type").write_text(kind + "\n")
        (thermal / name / "temp").write_text(f"{milli}\n")
    now = [100.0]
    source = LinuxCpuSource(cpu, cap, thermal, tmp_path / "none", clock=lambda: now[0])
    source.open(lambda values: None)
    (cap / "intel-rapl:0" / "energy_uj").write_text("262143000000\n")
    first = source.poll()
    assert first["cpu_clock_mhz"] == ("MHz", 2700.0)
    assert first["thermal_zone_c"] == ("°C", 71.0)
    assert "rapl_power_w" not in first                   # one reading is no power yet
    now[0] += 2.0
    (cap / "intel-rapl:0" / "energy_uj").write_text("89671150\n")   # wrapped
    assert source.poll()["rapl_power_w"][1] == pytest.approx(45.0, rel=1e-3)
    assert hottest_zone(thermal) == ("x86_pkg_temp", 71.0)
    assert rapl_watts(10.0, 5.0, 1.0, None) is None


def test_this_machines_proc_cpuinfo_and_missing_sensors_are_said(tmp_path):
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    clocks = cpuinfo_mhz(text)
    if text and "cpu MHz" in text:
        assert clocks and all(c > 100 for c in clocks)
    source = LinuxCpuSource(tmp_path / "a", tmp_path / "b", tmp_path / "c", tmp_path / "d")
    source.open(lambda values: None)
    assert source.poll() == {}
    assert source.notes == ["Not readable on this machine: a CPU clock; RAPL power (no "
                            "readable powercap energy_uj); a thermal zone."]


# ---------------------------------------------------------------- Compare's sentence

def test_compares_burst_and_sustained_of_two_real_runs(cpu_run, monkeypatch):
    """The sentence from two runs' sustained measurements of one point: the real CPU run, and
    the same run read as if its machine had slowed to 0.7 of its burst after 4 min 20 s."""
    import copy
    slower = copy.deepcopy(cpu_run)
    [entry] = slower.telemetry["sustained"]
    entry.update(burst=entry["burst"] * 0.99, sustained=entry["sustained"] * 0.71,
                 drop_at_s=260.0, coincided=["GPU clock fell from 1,398 to 1,030 MHz",
                                             "thermal pressure Heavy", "98 °C"])
    said = sus.burst_sustained_sentence("MacBook Pro", slower, "Mac Studio", cpu_run)
    assert said == ("MacBook Pro: burst 0.99×, sustained 0.71× of the Mac Studio; its GPU "
                    "clock fell from 1,398 to 1,030 MHz at 4 min 20 s, thermal pressure Heavy")
    back = sus.burst_sustained_sentence("Mac Studio", cpu_run, "MacBook Pro", slower)
    assert back.startswith("Mac Studio: burst 1.01×, sustained 1.41× of the MacBook Pro")
    other = copy.deepcopy(cpu_run)
    other.telemetry["sustained"][0]["point"] = {"size": 512, "dtype": "float32"}
    assert sus.burst_sustained_sentence("a", other, "b", cpu_run) is None   # not one point


# ---------------------------------------------------------------- a Mac's clocks

def test_cluster_clocks_and_gpu_residency_from_the_real_m4_max_sample():
    """tests/data/powermetrics/m4max_pausemonitor.plist, a real sample (its README): each CPU
    cluster's clock (Hz in the plist), the GPU's clock (MHz though the key says Hz) and its
    residency in its top frequency state (1,578 MHz: none of this idle interval)."""
    stream = telemetry.PlistStream()
    path = DATA / "powermetrics" / "m4max_pausemonitor.plist"
    [doc] = stream.feed(path.read_bytes()) + stream.flush()
    values = telemetry.powermetrics_values(doc)
    assert values["cpu_e_clock_mhz"] == ("MHz", pytest.approx(1154.44))
    assert values["cpu_p0_clock_mhz"] == ("MHz", pytest.approx(3560.87))
    assert values["cpu_p1_clock_mhz"] == ("MHz", pytest.approx(1260.02))
    assert values["gpu_clock_mhz"] == ("MHz", 338.0)
    assert values["gpu_top_state_percent"] == ("%", 0.0)
    assert values["gpu_active_percent"][1] == pytest.approx(12.2657)
    # The P-cluster clock is what the sentence names on a Mac's CPU run.
    assert sus._first({"cpu_p0_clock_mhz": {"t": [0.0], "v": [3560.87]}},
                      [n for n, _ in sus.CLOCKS]) == "cpu_p0_clock_mhz"


def test_duration_with_a_sweep_is_one_sentence_before_the_run():
    from siliconbench.core.child import UsageError, prepare
    with pytest.raises(UsageError, match=r"^--duration measures each point for minutes; "
                                         r"--grow sweeps sizes against time"):
        prepare(RunSpec("gemm", "torch", "cpu", {"duration": 1, "grow": True}))
    spec = prepare(RunSpec("bandwidth", "torch", "cpu", {"duration": 0.5}))
    assert spec.params["duration"] == 0.5


def test_a_start_off_the_run_falls_back_to_the_events_arrival():
    """A clock that does not match (another host's): the blocks are placed to end when their
    event arrived, not at a made-up time."""
    ends = [1.0, 2.0, 3.0]
    event = {"block_end_s": ends, "per_call_s": [0.1] * 3, "start_monotonic": 10**9,
             "arrived_s": 7.5}
    _, [entry] = sus.sustained_rows([], [], [(0, event)], {"series": {}}, t0_monotonic=5.0)
    assert entry["start_s"] == 4.5 and entry["unit"] == "calls/s"
    assert entry["burst"] == pytest.approx(10.0)


def test_the_intervals_are_those_of_the_block_ends_the_record_keeps():
    """A block that ended 40 us past an interval's end is kept as ending on it (4 decimals):
    the intervals come from the ends as kept, so the record can be checked against itself
    (they were bucketed before rounding, and a whole-suite run once found 5.00004 s in the
    second interval and 5.0 in the first)."""
    ends = [1.0, 5.00004, 6.0, 9.0, 12.0]
    per_call = [0.1, 0.25, 0.1, 0.1, 0.1]
    event = {"block_end_s": ends, "per_call_s": per_call, "start_monotonic": 5.0,
             "arrived_s": 20.0}
    _, [entry] = sus.sustained_rows([], [], [(0, event)], {"series": {}}, t0_monotonic=5.0)
    assert entry["block_end_s"][1] == 5.0
    assert entry["intervals"][0] == [0.0, pytest.approx(median([10.0, 4.0]))]


def test_the_estimate_holds_each_sustained_point_for_its_minutes():
    from siliconbench.core.estimate import estimate
    from siliconbench.core.frameworks import DeviceInfo
    gpu = DeviceInfo("torch", "cuda:0", "NVIDIA H200", "gpu", 141 * 10**9)
    assert estimate("gemm", {"duration": 10}, gpu).seconds == 600       # one point
    two = estimate("gemm", {"duration": 1, "sizes": [1024, 2048]}, gpu)   # float32 alone
    assert (two.points, two.seconds) == (2, 120)
    assert estimate("bandwidth", {"duration": 2}, gpu).seconds in (120, None)
    llm = estimate("llm", {"duration": 5, "prompts": [128], "depths": [0]}, gpu)
    assert llm.seconds is None or llm.seconds >= 300


def test_compare_notes_put_burst_and_sustained_side_by_side():
    """Two real sustained runs (the 1-minute GEMM kept in tests/data/sustained, as two
    machines): Compare's notes carry the sentence, with the record's own figures."""
    from siliconbench.core.compare_words import compared, sides_for
    from siliconbench.core.results import RunRecord
    doc = json.loads((DATA / "sustained" / "gemm-cpu-1min.json").read_text("utf-8"))
    studio, laptop = RunRecord.from_dict(doc), RunRecord.from_dict(doc)
    studio.label, laptop.label, laptop.id = "Mac Studio", "MacBook Pro", "b" * 32
    cmp = compared(sides_for([studio, laptop]))
    first, second = (s.label for s in cmp.sides)
    assert f"{second}: burst 1.00×, sustained 1.00× of the {first}; no lasting drop" \
        in cmp.notes


def test_each_measurement_finds_its_own_throughput_row():
    """An LLM's decode rows wait for the memory bound and come after later points were
    measured: two events, then a time row and each point's tok/s row. Each event takes the
    throughput row of its own blocks (figure x seconds constant), never the other's."""
    from siliconbench.core.results import Row
    first, second = [0.2, 0.25, 0.2], [0.4, 0.5, 0.4]
    rows = [Row("ttft_ms", 200.0, "ms", {"depth": 0}, samples=[200.0, 250.0, 200.0]),
            Row("decode_tokens_per_s", 160.0, "tok/s", {"depth": 0},
                samples=[32 / s for s in first]),
            Row("decode_tokens_per_s", 80.0, "tok/s", {"depth": 512},
                samples=[32 / s for s in second])]
    events = [(0, {"block_end_s": [0.2, 0.45, 0.65], "per_call_s": first}),
              (0, {"block_end_s": [0.4, 0.9, 1.3], "per_call_s": second})]
    more, entries = sus.sustained_rows(rows, [], events, {"series": {}}, 0.0)
    assert [(e["metric"], e["point"]) for e in entries] == [
        ("decode_tokens_per_s", {"depth": 0}), ("decode_tokens_per_s", {"depth": 512})]
    assert [e["burst"] for e in entries] == [pytest.approx(160.0), pytest.approx(80.0)]


def test_a_macs_clocks_beside_ioreport_power_in_a_sustained_run(monkeypatch):
    """With IOReport giving the power (no clocks), a sustained run also reads powermetrics for
    the clocks alone: here the real M4 Max sample stands for its output."""
    from siliconbench.core.telemetry import sampler
    from siliconbench.core.telemetry.powermetrics import PowermetricsClocks

    class Monitor:
        def get_cumulative_energy(self):
            return None
    monkeypatch.setattr(sampler.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(sampler.platform, "machine", lambda: "arm64")
    monkeypatch.setattr(sampler, "mac_power_source",
                        lambda arch, interval_s: telemetry.IOReportSource(Monitor()))
    names = [type(s).__name__ for s in sampler.default_sources("gpu", 1.0, clocks=True)]
    assert names[-2:] == ["IOReportSource", "PowermetricsClocks"]
    assert "PowermetricsClocks" not in [type(s).__name__ for s in
                                        sampler.default_sources("gpu", 1.0)]
    got = []
    plist = DATA / "powermetrics" / "m4max_pausemonitor.plist"
    source = PowermetricsClocks(["cat", str(plist)])
    source.open(got.append)
    source._proc.wait(10)      # the stand-in ends at the end of its file: all of it read
    source.close()
    assert got and set(got[0]) == {"cpu_e_clock_mhz", "cpu_p0_clock_mhz", "cpu_p1_clock_mhz",
                                   "gpu_clock_mhz", "gpu_active_percent",
                                   "gpu_top_state_percent"}
    refused = PowermetricsClocks(["sh", "-c", "echo 'sudo: a password is required' >&2"])
    refused.open(got.append)
    refused._proc.wait(10)
    refused.close()
    assert refused.notes[0].startswith("GPU and CPU clocks unavailable: sudo: a password is "
                                       "required.")


def test_compare_warns_when_two_sides_power_states_differ():
    """Through Compare itself (compare.comparability_warnings): the real 1-minute run, and the
    same run as a laptop that was on battery in Low Power mode."""
    from siliconbench.core.compare_words import compared, sides_for
    from siliconbench.core.results import RunRecord
    text = (DATA / "sustained" / "gemm-cpu-1min.json").read_text("utf-8")
    # Two parses: a record made from a dict shares its telemetry with it.
    desk, laptop = (RunRecord.from_dict(json.loads(text)) for _ in range(2))
    desk.label, laptop.label, laptop.id = "desk", "laptop", "c" * 32
    for rec, source, mode in ((desk, "ac", "Automatic"), (laptop, "battery", "Low Power")):
        state = {"power_source": source, "battery_percent": None, "power_mode": mode,
                 "lid_closed": None}
        rec.telemetry["power_state"] = {"start": state, "end": state}
    cmp = compared(sides_for([desk, laptop]))
    first, second = (s.label for s in cmp.sides)
    said = {first: ("on AC", "Automatic"), second: ("on battery", "Low Power")} \
        if first == "desk" else {first: ("on battery", "Low Power"), second: ("on AC",
                                                                            "Automatic")}
    assert (f"different power: {first} ran {said[first][0]}, {second} {said[second][0]}"
            in cmp.warnings)
    assert (f"different power mode: {first} ran in {said[first][1]} mode, {second} in "
            f"{said[second][1]} mode" in cmp.warnings)
