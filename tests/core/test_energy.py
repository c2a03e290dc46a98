"""Energy per point from the hardware's counters, read in the worker around each point's timed
blocks: RAPL through a powercap folder made here (this VM has no /sys/class/powercap), NVML
through a stand-in pynvml answering with the H200 records' counter readings, the too-short rule
for sampled power, the idle flag, NVIDIA's throttle reasons on the row, and the H200 records'
one-sample powers judged untrustworthy."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from siliconbench.core import telemetry
from siliconbench.core.measure import MeasureSettings, measure
from siliconbench.core.results import Row, RunRecord
from siliconbench.core.telemetry import (
    NvmlCounter,
    PointMeter,
    derived_rows,
    energy_counter,
    power_trusted,
    rapl_counter,
    rapl_delta,
)
from tests.helpers.h200_records import FOLDER as H200  # tests/data/h200

MAX_RANGE = 262_143_328_850          # an Intel package's max_energy_range_uj


def powercap(root: Path, zones: dict[str, tuple[str, int, int]]) -> Path:
    """A powercap folder: {folder: (name, energy_uj, max_energy_range_uj)}."""
    for folder, (name, energy, wrap) in zones.items():
        d = root / folder
        d.mkdir(parents=True)
        (d / "name").write_text(name + "\n")
        (d / "energy_uj").write_text(f"{energy}\n")
        (d / "max_energy_range_uj").write_text(f"{wrap}\n")
    return root


def write_uj(path: Path, value: int) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"{value}\n")
    os.replace(tmp, path)      # a reader sees the old value or the new one, never half


# ---------------------------------------------------------------- RAPL

def test_rapl_sums_packages_and_dram_across_a_wrap(tmp_path):
    root = powercap(tmp_path, {
        "intel-rapl:0": ("package-0", MAX_RANGE - 2_000_000, MAX_RANGE),   # 2 J before it wraps
        "intel-rapl:0:0": ("core", 5, MAX_RANGE),                          # inside the package
        "intel-rapl:0:1": ("dram", 10_000_000, 65_712_999_613),
        "intel-rapl:1": ("psys", 1, MAX_RANGE)})                           # the whole platform
    counter, why = rapl_counter(str(root))
    assert why is None and counter.label == "CPU package-0 + dram (RAPL)"
    assert counter.read_j() == 0.0
    write_uj(root / "intel-rapl:0" / "energy_uj", 3_000_000)      # wrapped: 2 J + 3 J
    write_uj(root / "intel-rapl:0:1" / "energy_uj", 11_500_000)   # 1.5 J
    write_uj(root / "intel-rapl:0:0" / "energy_uj", 999_999_999)  # counted in the package
    assert counter.read_j() == pytest.approx(6.5)
    assert rapl_delta(10, 4, 20) == 14 and rapl_delta(4, 10, 20) == 6


def test_rapl_that_only_root_may_read_says_how_to_allow_it(tmp_path, monkeypatch):
    root = powercap(tmp_path, {"intel-rapl:0": ("package-0", 1, MAX_RANGE)})
    (root / "intel-rapl:0" / "energy_uj").chmod(0)
    if os.access(root / "intel-rapl:0" / "energy_uj", os.R_OK):
        # root reads any file: give it a reader that is refused, as an unprivileged user is
        def refused(path):
            raise PermissionError(13, "Permission denied", path)
        monkeypatch.setattr(telemetry.RaplCounter, "_raw", staticmethod(refused))
    counter, why = rapl_counter(str(root))
    assert counter is None
    assert why.startswith(f"CPU energy unavailable: {root}/intel-rapl:0/energy_uj is not readable")
    assert "sudo chmod a+r /sys/class/powercap/intel-rapl:*/energy_uj" in why
    counter, why = rapl_counter(str(tmp_path / "none"))
    assert counter is None and "no RAPL zones" in why


def test_a_linux_cpu_without_powercap_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv(telemetry.POWERCAP_ENV, str(tmp_path))
    counter, why = energy_counter("cpu", system="Linux")
    assert counter is None and why.startswith("CPU energy unavailable: no RAPL zones")


# ---------------------------------------------------------------- the meter around the blocks

class Readings(telemetry.EnergyCounter):
    kind = "rapl"
    label = "test counter"

    def __init__(self) -> None:
        self.reads: list[int] = []
        self.calls = 0

    def read_j(self) -> float:
        self.reads.append(self.calls)
        return self.calls * 0.5           # half a joule per call


def test_the_meter_reads_around_the_timed_blocks_only():
    counter = Readings()

    def call():
        counter.calls += 1
        end = time.perf_counter() + 0.001
        while time.perf_counter() < end:
            pass
    m = measure(call, lambda: None, MeasureSettings(min_block_s=0.005, min_blocks=5,
                                                    min_time_s=0.05, max_time_s=1.0,
                                                    max_warmup_s=0.2),
                meter=PointMeter(counter))
    timed_calls = len(m.per_call_s) * m.calls_per_block
    assert counter.reads[-1] - counter.reads[0] == timed_calls   # warm-up excluded, all timed
    assert m.energy["joules"] == pytest.approx(0.5 * timed_calls)
    assert m.energy["seconds"] >= m.elapsed_s and m.energy["source"] == "test counter"


# ---------------------------------------------------------------- a point's power

def gemm_rows(tflops: float, params: dict) -> list[Row]:
    return [Row("tflops", tflops, "TFLOPS", dict(params))]


def test_counter_power_is_joules_over_the_blocks_seconds():
    """The H200's own counter readings (h200-gemm.json's gpu_energy_j, from 4.046 s to 9.989 s
    of its run: 558.474 J to 4602.452 J) over the bf16 16384 point's 5.943 s."""
    rows = gemm_rows(679.886, {"size": 16384, "dtype": "bfloat16"})
    event = {"seconds": 9.989 - 4.046, "joules": 4602.452 - 558.474, "source": "board (NVML)",
             "min_window_s": 1.0}
    out = derived_rows(rows, [10.0], {"summary": {}, "series": {}, "interval_s": 1.0},
                       energies=[(0, 9.99, event)], idle_w=78.5)
    power, per_watt = out
    assert power.value == pytest.approx(4043.978 / 5.943) and power.flags == ["energy_counter"]
    assert power.note == "board (NVML) energy counter: 4,044 J over the 5.94 s of timed blocks"
    assert per_watt.value == pytest.approx(679.886 / power.value)
    assert power_trusted(power) and power_trusted(per_watt)


def test_a_point_shorter_than_the_counter_resolution_has_no_power():
    rows = gemm_rows(360.4, {"size": 8192, "dtype": "float32"})
    event = {"seconds": 0.4, "joules": 140.0, "source": "board (NVML)", "min_window_s": 1.0}
    out = derived_rows(rows, [3.0], {"summary": {}, "series": {}, "interval_s": 1.0},
                       energies=[(0, 2.9, event)])
    assert [(r.metric, r.value, r.flags) for r in out] == [("power", None, ["too_short"])]
    assert out[0].note == ("too short to measure power: the timed blocks lasted 0.400 s and the "
                           "board (NVML) energy counter needs 1 s")
    assert not power_trusted(out[0])


def sampled(t: list[float], watts: list[float]) -> dict:
    return {"interval_s": 1.0, "series": {"gpu_power_w": {"unit": "W", "t": t, "v": watts}},
            "summary": {"power_source": "board (NVML)", "power_series": "gpu_power_w"}}


def test_sampled_power_needs_five_samples_inside_the_blocks():
    """The H200 TF32 record's samples (one 1 s sample, 78.5 W, during a 0.4 s point) give no
    power now; the same point timed for 6 s over six samples does."""
    rows = gemm_rows(360.4, {"size": 8192, "dtype": "float32"})
    tel = sampled([0.066, 1.064, 2.065, 3.074, 3.802], [374.455, 126.349, 91.204, 78.545, 356.091])
    out = derived_rows(rows, [3.5], tel, energies=[(0, 3.4, {"seconds": 0.4})])
    assert [(r.metric, r.value, r.flags) for r in out] == [("power", None, ["too_short"])]
    assert out[0].note == ("too short to measure power: 1 board (NVML) power sample during its "
                           "0.400 s, 5 needed")
    tel = sampled([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 7.0],
                  [690.0, 700.0, 700.0, 698.0, 699.0, 700.0, 80.0])
    out = derived_rows(rows, [6.1], tel, energies=[(0, 6.0, {"seconds": 6.0})], idle_w=78.5)
    power, per_watt = out
    assert power.value == pytest.approx(4187 / 6) and power.flags == ["power_samples"]
    assert per_watt.value == pytest.approx(360.4 / (4187 / 6)) and power_trusted(per_watt)


def test_a_power_near_idle_is_flagged():
    rows = [Row("samples_per_s", 100.0, "img/s", {"batch_size": 8})]
    event = {"seconds": 2.0, "joules": 2.0 * 81.0, "source": "board (NVML)", "min_window_s": 1.0}
    out = derived_rows(rows, [3.0], {"summary": {}, "series": {}, "interval_s": 1.0},
                       energies=[(0, 2.9, event)], idle_w=78.5)
    assert [r.metric for r in out] == ["power", "joules_per_sample", "samples_per_watt"]
    assert all(r.flags == ["energy_counter", "near_idle"] for r in out)
    assert "within 5% of the idle 78.5 W" in out[0].note


def test_the_h200_records_one_sample_powers_are_not_shown():
    rec = RunRecord.from_dict(json.loads((H200 / "h200-gemmtf32.json").read_text()))
    per_watt = next(r for r in rec.rows if r.metric == "tflops_per_watt")
    assert per_watt.value == pytest.approx(4.589, abs=1e-3)         # what the record says
    assert not power_trusted(per_watt)
    assert power_trusted(next(r for r in rec.rows if r.metric == "tflops"))
    infer = RunRecord.from_dict(json.loads((H200 / "h200-infer.json").read_text()))
    assert not any(power_trusted(r) for r in infer.rows if r.metric in telemetry.POWER_METRICS)


# ---------------------------------------------------------------- NVIDIA: counter and throttling

def fake_pynvml(energy_mj: list[int], reasons: list[int], clocks: list[int]):
    """nvidia-ml-py as a driver answers it: the counter's readings, the clock-event reasons
    and the SM clock in turn."""
    energy, why, clock = iter(energy_mj), iter(reasons), iter(clocks)
    return types.SimpleNamespace(
        NVML_CLOCK_SM=1, nvmlInit=lambda: None, nvmlShutdown=lambda: None,
        nvmlDeviceGetHandleByIndex=lambda i: ("gpu", i),
        nvmlDeviceGetTotalEnergyConsumption=lambda h: next(energy),
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: next(why),
        nvmlDeviceGetClockInfo=lambda h, kind: next(clock),
        nvmlDeviceGetMaxClockInfo=lambda h, kind: 1980)


def test_nvml_counter_and_throttle_reasons_become_the_rows_flags_and_note(monkeypatch):
    # Counter in mJ since the driver loaded: the H200 record's readings on a driver base.
    base = 9_876_543_210
    nv = fake_pynvml([base, base + 558_474, base + 4_602_452],
                     [0x4, 0x4 | 0x40], [1545, 1425])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    counter = NvmlCounter("cuda:0", nv)
    assert counter._h == ("gpu", 2) and counter.min_window_s == 1.0
    meter = PointMeter(counter)
    meter.begin()
    reading = meter.end()
    assert reading["joules"] == pytest.approx(4043.978)
    assert reading["state"] == {"throttle": ["power_capped", "thermal_slowdown"],
                                "sm_clock_mhz": [1545.0, 1425.0], "max_sm_clock_mhz": 1980.0}
    reading["seconds"] = 5.943
    rows = gemm_rows(686.6, {"size": 4096, "dtype": "bfloat16"})
    derived_rows(rows, [6.0], {"summary": {}, "series": {}, "interval_s": 1.0},
                 energies=[(0, 5.99, reading)])
    assert rows[0].flags == ["power_capped", "thermal_slowdown"]
    assert rows[0].note == ("measured at the board's power cap (software power cap) and slowed "
                            "for temperature (thermal slowdown); SM clock 1,425–1,545 MHz of "
                            "1,980 max")


def test_an_unthrottled_point_says_nothing(monkeypatch):
    nv = fake_pynvml([0, 1_000_000], [0x1, 0x0], [1980, 1980])     # GpuIdle is not a slowdown
    meter = PointMeter(NvmlCounter("cuda", nv))
    meter.begin()
    reading = meter.end()
    assert reading["state"]["throttle"] == []
    rows = gemm_rows(50.7, {"size": 4096, "dtype": "float32"})
    derived_rows(rows, [2.0], {"summary": {}, "series": {}, "interval_s": 1.0},
                 energies=[(0, 1.9, reading)])
    assert rows[0].flags == [] and rows[0].note is None


def test_a_power_cap_left_from_the_point_before_is_not_this_point_s():
    """The H100's quick suite: bfloat16 N=256 (2.77 TFLOPS, 136 W) began with the software
    power cap still set by the float32 N=4096 point before it (750 W) and ended without it;
    that point, which reached the cap, holds it at its end."""
    before = fake_pynvml([0, 0, 765_000], [0x0, 0x4], [1980, 1950])
    after = fake_pynvml([0, 0, 136_000], [0x4, 0x0], [1965, 1980])
    readings = []
    for nv in (before, after):
        meter = PointMeter(NvmlCounter("cuda", nv))
        meter.begin()
        readings.append(meter.end())
    assert [r["state"]["throttle"] for r in readings] == [["power_capped"], []]
    assert readings[1]["state"]["sm_clock_mhz"] == [1965.0, 1980.0]


def test_mac_thermal_pressure_during_the_point_goes_on_the_row():
    rows = [Row("samples_per_s", 900.0, "img/s", {"batch_size": 64})]
    tel = {"interval_s": 1.0, "summary": {},
           "series": {"thermal_pressure": {"unit": "level", "t": [0.5, 2.5, 4.5, 9.0],
                                           "v": [0.0, 2.0, 1.0, 3.0]}}}
    derived_rows(rows, [6.0], tel, energies=[(0, 5.0, {"seconds": 4.0})])
    assert rows[0].flags == ["thermal_pressure"]
    assert rows[0].note == "measured under heavy macOS thermal pressure"


# ---------------------------------------------------------------- through a real run

@pytest.fixture
def live_rapl(tmp_path, monkeypatch):
    """A package counter rising 0.05 J every 5 ms (10 W, less when the thread wakes late) from
    1 J short of its wrap at 100 J, written by a thread while a real run reads it through
    SILICONBENCH_POWERCAP: it wraps in the run's first seconds, once, as a real package's
    counter (262 kJ: 20 min at 200 W) does between two reads."""
    root = powercap(tmp_path / "powercap", {"intel-rapl:0": ("package-0", 99_000_000,
                                                             100_000_000)})
    path = root / "intel-rapl:0" / "energy_uj"
    stop = threading.Event()
    late = {"s": 0.0}   # the longest the file went unwritten: how stale a read can be

    def rise():
        # The counter is 10 W of the clock's time, not of the thread's wake-ups: a thread
        # that wakes late on a loaded machine (CI's shared cores) writes a later value, never
        # a lower power (counting 0.05 J a wake-up read 1.5 W there).
        start = last = time.monotonic()
        while not stop.wait(0.005):
            now = time.monotonic()
            late["s"] = max(late["s"], now - last)
            last = now
            joules = 99 + 10 * (now - start)
            write_uj(path, int(joules * 1e6) % 100_000_000)
    thread = threading.Thread(target=rise, daemon=True)
    thread.start()
    monkeypatch.setenv(telemetry.POWERCAP_ENV, str(root))
    yield late
    stop.set()
    thread.join()


def test_a_cpu_run_takes_its_power_from_the_rapl_counter(monkeypatch, live_rapl):
    from siliconbench.core.runner import RunSpec, execute
    from siliconbench.core.store import Store
    monkeypatch.setenv("SILICONBENCH_MEASURE", '{"min_time_s": 0.3}')
    rec = execute(RunSpec("gemm", "mlx", params={"sizes": [64], "dtypes": ["float32"]},
                          quick=True), Store())
    assert rec.status == "ok", rec.reason
    power = next(r for r in rec.rows if r.metric == "power")
    assert power.flags[0] == "energy_counter"
    assert power.note.startswith("CPU package-0 (RAPL) energy counter:")
    # 10 W written, read across the wrap: never negative, never the wrap's 100 J jump
    assert 2 < power.value < 12
    assert rec.telemetry["summary"]["energy_counter"] == "CPU package-0 (RAPL)"
    [reading] = rec.telemetry["energy"]          # kept on the record, for an audit
    assert reading["source"] == "CPU package-0 (RAPL)" and reading["rows_before"] == 0
    assert reading["joules"] / reading["seconds"] == pytest.approx(power.value)
    # The idle read spans IDLE_S: a first read of a file the thread last wrote `late` ago
    # counts up to 10 W x late more (on a machine at load 12 here: 21 W, the thread 0.55 s
    # late); the wrap's 100 J jump would read 200 W or more.
    from siliconbench.core.telemetry.meter import IDLE_S
    assert 2 < rec.telemetry["summary"]["idle_power_w"] < 12 * (1 + live_rapl["s"] / IDLE_S)


def test_apple_silicon_energy_through_zeus_apple_silicons_cumulative_readings():
    """IOReport's counters as zeus-apple-silicon gives them (AppleEnergyMetrics, mJ; None for a
    rail the chip lacks): the GPU's for a GPU run, the CPU clusters' for a CPU run."""
    readings = iter([(1_000, 50_000), (1_000, 50_000), (4_000, 62_500)])

    class Monitor:
        def get_cumulative_energy(self):
            cpu, gpu = next(readings)
            return types.SimpleNamespace(cpu_total_mj=cpu, gpu_mj=gpu, ane_mj=None)
    counter, why = energy_counter("mps", system="Darwin", machine="arm64",
                                  load_monitor=Monitor)
    assert why is None and counter.label == "GPU (IOReport)" and counter.min_window_s == 0.1
    meter = PointMeter(counter)
    meter.begin()
    assert meter.end()["joules"] == pytest.approx(12.5)

    class NoAne:
        def get_cumulative_energy(self):
            return types.SimpleNamespace(ane_mj=None)
    counter, why = energy_counter("cpu", system="Darwin", machine="arm64", load_monitor=NoAne)
    assert counter is None and why == "energy counter unavailable: this chip reports no " \
                                      "cpu_total_mj"


def test_core_ml_s_neural_engine_units_count_every_rail_their_work_may_use():
    """A Core ML unit is a permission, not a pin: `ne` may run on the CPU and the Neural
    Engine, `all` on all three, so their counters sum those rails (reading the GPU's alone,
    as every non-CPU device did, missed the Neural Engine's energy)."""
    readings = iter([(1_000, 50_000, 200), (1_000, 50_000, 200), (3_000, 50_000, 2_200)] * 2)

    class Monitor:
        def get_cumulative_energy(self):
            cpu, gpu, ane = next(readings)
            return types.SimpleNamespace(cpu_total_mj=cpu, gpu_mj=gpu, ane_mj=ane)
    for device, label in (("ne", "CPU + Neural Engine (IOReport)"),
                          ("all", "CPU + GPU + Neural Engine (IOReport)")):
        counter, why = energy_counter(device, system="Darwin", machine="arm64",
                                      load_monitor=Monitor)
        assert why is None and counter.label == label
        meter = PointMeter(counter)
        meter.begin()
        assert meter.end()["joules"] == pytest.approx(4.0)     # 2 J of CPU + 2 J of ANE

    class NoAne:
        def get_cumulative_energy(self):
            return types.SimpleNamespace(cpu_total_mj=1, gpu_mj=1, ane_mj=None)
    counter, why = energy_counter("ne", system="Darwin", machine="arm64", load_monitor=NoAne)
    assert counter is None and why == "energy counter unavailable: this chip reports no ane_mj"


def test_a_gpu_without_the_energy_counter_says_so(monkeypatch):
    class NotSupported(Exception):
        pass

    def refuse(handle):
        raise NotSupported("Not Supported")
    nv = fake_pynvml([], [], [])
    nv.nvmlDeviceGetTotalEnergyConsumption = refuse            # a GPU before Volta
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    counter, why = energy_counter("cuda:0", system="Linux")
    assert counter is None and why == "energy counter unavailable: Not Supported"


def test_a_coarse_counter_makes_the_timed_phase_long_enough(monkeypatch):
    """Through RunContext as a workload sees it: NVIDIA's counter (updated every 20-100 ms)
    needs 1 s of timed blocks; the quick protocol's 0.1 s becomes 1 s, the record says so,
    and the worker sends the idle power and then the point's reading."""
    from siliconbench.core.context import RunContext
    from siliconbench.core.measure import QUICK

    class Board(Readings):
        kind, label = "nvml", "board (test)"
    monkeypatch.setattr(telemetry, "energy_counter", lambda device: (Board(), None))
    events: list[dict] = []
    ctx = RunContext(framework="torch", device_id="cuda:0", emit=events.append, settings=QUICK,
                     adapter=types.SimpleNamespace(synchronizer=lambda dev: lambda: None),
                     device=None, device_name="test GPU")
    ctx.measure(lambda: time.sleep(0.002))
    kinds = [e["event"] for e in events]
    assert kinds == ["energy_meter", "settings", "energy"]
    assert events[0]["source"] == "board (test)" and events[0]["idle_w"] == 0.0
    assert events[1]["settings"] == {"energy_min_time_s": 1.0}
    assert events[2]["seconds"] >= 1.0 and events[2]["source"] == "board (test)"


def test_a_counter_that_did_not_move_gives_no_power():
    rows = gemm_rows(50.7, {"size": 4096, "dtype": "float32"})
    event = {"seconds": 1.5, "joules": 0.0, "source": "board (NVML)", "min_window_s": 1.0}
    [power] = derived_rows(rows, [2.0], {"summary": {}, "series": {}, "interval_s": 1.0},
                           energies=[(0, 1.9, event)])
    assert power.value is None and power.flags == ["too_short"]
    assert power.note == ("no power: the board (NVML) energy counter did not advance during "
                          "the 1.50 s of timed blocks")
