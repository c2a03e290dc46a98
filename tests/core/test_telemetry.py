"""Telemetry: parsers on recorded powermetrics output, powermetrics without the sudoers rule,
the in-process Mac sources (notify(3) through ctypes, IOReport through zeus-apple-silicon) as
far as they run off a Mac, derived energy metrics with known answers, sustained-mode rows, and
a sampler running in the parent during a real tiny run, starting no process per sample."""

import json
import shutil
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import ClassVar

import pytest

from siliconbench.core import telemetry
from siliconbench.core.measure import MeasureSettings, measure_for
from siliconbench.core.results import Row, RunRecord
from siliconbench.core.runner import RunSpec, execute
from siliconbench.core.store import Store
from siliconbench.core.telemetry import (
    SUDOERS_LINE,
    PlistStream,
    PowermetricsSource,
    Source,
    TelemetrySampler,
    ThermalPressureSource,
    derived_rows,
    nvml_index,
    powermetrics_command,
    powermetrics_values,
    summarize_series,
    sustained,
    sustained_rows,
)

DATA = Path(__file__).parent.parent / "data" / "powermetrics"


# ---------------------------------------------------------------- parsers

def recorded_samples(name: str) -> list[dict]:
    stream = PlistStream()
    return stream.feed((DATA / name).read_bytes()) + stream.flush()


@pytest.mark.parametrize("chunk", [1, 7, 4096, 10**6])
def test_powermetrics_stream_splits_recorded_samples_however_it_arrives(chunk):
    raw = (DATA / "m1max_gpu_load.plist").read_bytes()
    stream = PlistStream()
    docs = []
    for i in range(0, len(raw), chunk):
        docs += stream.feed(raw[i:i + chunk])
    assert len(docs) == 2          # the last sample is complete only at the end
    docs += stream.flush()
    assert [d["thermal_pressure"] for d in docs] == ["Nominal", "Nominal", "Moderate"]


def test_powermetrics_values_on_apple_silicon():
    v = powermetrics_values(recorded_samples("m1max_gpu_load.plist")[0])
    assert v["gpu_power_w"] == ("W", pytest.approx(37.21))
    assert v["cpu_power_w"] == ("W", pytest.approx(3.912))
    assert v["package_power_w"] == ("W", pytest.approx(41.122))
    assert v["gpu_clock_mhz"] == ("MHz", 1296.0)
    assert v["gpu_active_percent"][1] == pytest.approx(96.16)
    assert "gpu_temperature_c" not in v     # Apple Silicon reports none through powermetrics


def test_powermetrics_falls_back_to_energy_over_the_interval():
    doc = {"elapsed_ns": 500_000_000, "processor": {"gpu_energy": 10_000, "cpu_energy": 500}}
    v = powermetrics_values(doc)
    assert v["gpu_power_w"][1] == pytest.approx(20.0)    # 10 J in half a second
    assert v["cpu_power_w"][1] == pytest.approx(1.0)


def test_powermetrics_values_on_an_intel_mac_with_smc():
    [doc] = recorded_samples("intel_smc.plist")
    v = powermetrics_values(doc)
    assert v["package_power_w"] == ("W", pytest.approx(42.65))
    assert v["cpu_temperature_c"] == ("°C", 97.4)
    assert v["gpu_temperature_c"] == ("°C", 71.0)
    assert v["fan_rpm"][1] == 4312.5


def test_powermetrics_command_never_prompts_and_adds_smc_on_intel():
    arm = powermetrics_command("arm64")
    assert arm[:3] == ["sudo", "-n", "/usr/bin/powermetrics"]
    assert "cpu_power,gpu_power,thermal" in arm and arm[-2:] == ["-i", "1000"]
    assert "cpu_power,gpu_power,thermal,smc" in powermetrics_command("x86_64")


def test_real_powermetrics_capture_gives_thermal_pressure_and_power():
    # A whole sample a MacBook Pro 16 (Mac16,5, M4 Max, macOS 26.2) printed (README.md here).
    [doc] = recorded_samples("m4max_pausemonitor.plist")
    assert doc["thermal_pressure"] == "Nominal"
    v = powermetrics_values(doc)
    assert v["thermal_pressure"] == ("level", 0.0)
    assert v["cpu_power_w"] == ("W", pytest.approx(2.97845))
    assert v["gpu_power_w"] == ("W", pytest.approx(0.269614))
    assert v["package_power_w"] == ("W", pytest.approx(3.24807))
    assert v["gpu_active_percent"][1] == pytest.approx(12.2657)


def test_thermal_pressure_words_map_to_levels():
    words = ["Nominal", "Moderate", "Heavy", "Trapping", "Sleeping"]
    assert [telemetry.thermal_level(w) for w in words] == [0, 1, 2, 3, 4]
    assert telemetry.thermal_level("heavy") == 2
    assert telemetry.thermal_level("Critical") is None and telemetry.thermal_level(None) is None
    assert [telemetry.thermal_level_name(i) for i in range(5)] == words
    assert telemetry.thermal_level_name(30) == "level 30"      # iOS-style numbers, unnamed


@pytest.mark.parametrize("device, visible, index", [
    ("cuda", None, 0), ("cuda:1", None, 1), ("cuda:1", "2,3", 3), ("cuda:0", "GPU-abc", 0)])
def test_nvml_index_follows_cuda_visible_devices(device, visible, index):
    assert nvml_index(device, visible) == index


# ---------------------------------------------------------------- powermetrics as a process

def _fake_powermetrics(script: str) -> list[str]:
    return [sys.executable, "-c", script]


def test_without_the_sudoers_rule_power_is_unavailable_and_explained():
    stderr = (DATA / "sudo_no_rule.txt").read_text()
    source = PowermetricsSource(_fake_powermetrics(
        f"import sys; sys.stderr.write({stderr!r}); sys.exit(1)"))
    sampler = TelemetrySampler("mps", 0.05, [source]).start()
    # Stop only once sudo has answered: on a loaded machine the stand-in can take longer than
    # any fixed sleep to start, and stopping earlier kills it before it says why.
    source._proc.wait(timeout=60)
    t = sampler.stop()
    note = next(n for n in t["notes"] if n.startswith("power unavailable"))
    assert "sudo: a password is required" in note and SUDOERS_LINE in note
    assert t["summary"]["power_source"] is None
    assert t["summary"]["power_unavailable"] == note


def test_powermetrics_stream_becomes_series_and_is_stopped():
    # Plays the recorded output a sample at a time, then waits like powermetrics does.
    script = (f"import sys, time; docs = open({str(DATA / 'm1max_gpu_load.plist')!r}, 'rb')"
              ".read().split(b'\\0')\n"
              "for i, d in enumerate(docs):\n"
              "    sys.stdout.buffer.write((b'\\0' if i else b'') + d); sys.stdout.flush()"
              "; time.sleep(0.05)\n"
              "time.sleep(60)")
    sampler = TelemetrySampler("mps", 0.05, [PowermetricsSource(_fake_powermetrics(script))])
    sampler.start()
    deadline = time.monotonic() + 10
    while len(sampler.snapshot().get("gpu_power_w", {}).get("v", [])) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    t0 = time.monotonic()
    t = sampler.stop()
    assert time.monotonic() - t0 < 5          # the endless process was ended
    assert t["series"]["gpu_power_w"]["v"] == pytest.approx([37.21, 39.874, 38.122])
    s = t["summary"]
    assert s["power_source"] == "GPU (powermetrics)" and s["power_series"] == "gpu_power_w"
    assert s["power_w"] == pytest.approx((37.21 + 39.874 + 38.122) / 3)
    assert not any(n.startswith("power unavailable") for n in t["notes"])


# ---------------------------------------------------------------- derived metrics

def _telemetry(power: list[tuple[float, float]], name="gpu_power_w", label="board (NVML)",
               **extra_series) -> dict:
    series = {name: {"unit": "W", "t": [t for t, _ in power], "v": [v for _, v in power]},
              **extra_series}
    return {"interval_s": 1.0, "series": series,
            "summary": summarize_series(series, name, label, power[-1][0], [])}


def test_energy_per_sample_and_per_watt_use_each_points_own_power():
    # 40 W while point A runs (t 0..5), 50 W while point B runs (t 5..10).
    power = [(t, 40.0 if t <= 5 else 50.0) for t in range(11)]
    a, b = {"model": "resnet50", "batch_size": 64}, {"model": "resnet50", "batch_size": 128}
    rows = [Row("samples_per_s", 100.0, "img/s", a), Row("step_time", 640.0, "ms", a),
            Row("tflops", 2.0, "TFLOPS", a), Row("samples_per_s", 200.0, "img/s", b)]
    extra = derived_rows(rows, [5.0, 5.0, 5.0, 10.0], _telemetry(power))
    got = {(r.metric, r.params["batch_size"]): r for r in extra}
    assert got["power", 64].value == pytest.approx(40.0)
    assert got["power", 128].value == pytest.approx((40 + 5 * 50) / 6)  # samples t = 5..10
    assert got["joules_per_sample", 64].value == pytest.approx(0.4)
    assert got["joules_per_sample", 64].unit == "J/sample"
    assert got["samples_per_watt", 64].value == pytest.approx(2.5)
    assert got["samples_per_watt", 64].unit == "img/s/W"
    assert got["tflops_per_watt", 64].value == pytest.approx(0.05)
    assert "board (NVML)" in got["joules_per_sample", 64].note
    assert [r.metric for r in extra].count("power") == 2          # once per point


def test_rows_sent_together_get_no_made_up_power():
    # A sustained run's per-minute rows arrive together after the whole-run row.
    point = {"model": "resnet50"}
    rows = [Row("samples_per_s", 100.0, "img/s", point)] + \
        sustained_rows([float(t) for t in range(1, 121)], [100.0] * 120, "img/s", point)
    times = [120.0] * len(rows)
    extra = derived_rows(rows, times, _telemetry([(t, 30.0) for t in range(121)]))
    assert [r.params for r in extra if r.metric == "joules_per_sample"] == [point]


def test_summary_energy_temperature_pressure_and_battery():
    power = [(0.0, 10.0), (1.0, 20.0), (2.0, 20.0)]
    t = _telemetry(power, "cpu_power_w", "CPU (powermetrics)",
                   thermal_pressure={"unit": "level", "t": [0, 1, 2], "v": [0, 2, 1]},
                   on_battery={"unit": "bool", "t": [0, 2], "v": [0, 1]})
    s = t["summary"]
    assert s["energy_j"] == pytest.approx(15 + 20)               # trapezoids
    assert s["max_thermal_pressure"] == "Heavy" and s["on_battery"] is True
    assert s["series"]["cpu_power_w"]["max"] == 20.0
    nvml = _telemetry([(0.0, 100.0), (1.0, 300.0)],
                      gpu_energy_j={"unit": "J", "t": [0, 1], "v": [0.0, 250.0]},
                      gpu_temperature_c={"unit": "°C", "t": [0, 1], "v": [61.0, None]})
    assert nvml["summary"]["energy_j"] == 250.0                  # the counter wins
    rows = derived_rows([], [], nvml)
    assert [(r.metric, r.value, r.params) for r in rows] == [("max_temperature", 61.0, {})]
    rows = derived_rows([], [], t)
    assert rows[0].metric == "max_thermal_pressure" and "Heavy" in rows[0].note


# ---------------------------------------------------------------- sustained mode

def test_throttle_ratio_with_known_answer():
    ends = [float(t) for t in range(1, 181)]                     # one block a second, 3 min
    rates = [100.0] * 60 + [90.0] * 60 + [80.0] * 60
    s = sustained(ends, rates)
    assert (s.first, s.last, s.ratio) == (100.0, 80.0, pytest.approx(0.8))
    assert s.per_window == [(0.0, 100.0), (60.0, 90.0), (120.0, 80.0)]
    rows = sustained_rows(ends, rates, "img/s", {"model": "resnet50"})
    assert [r.params.get("minute") for r in rows[:-1]] == [0.0, 1.0, 2.0]
    assert rows[-1].metric == "throttle_ratio" and rows[-1].value == pytest.approx(0.8)
    assert rows[-1].params == {"model": "resnet50"}
    assert [r.note for r in rows[:2]] == ["median over the 1 min window starting 0 s in",
                                          "median over the 1 min window starting 1 min in"]
    assert rows[-1].note.startswith("last 1 min / first 1 min median throughput "
                                    "(80 / 100 img/s)")


def test_a_short_sustained_runs_notes_read_in_seconds():
    """A run of seconds is cut in halves: its notes give them as siliconbench.core.numbers writes a span,
    never raw minutes ('0.0251523 min')."""
    ends = [0.5 * i for i in range(1, 7)]                         # 3 s, cut into 1.5 s halves
    rows = sustained_rows(ends, [10.0, 10.0, 10.0, 9.0, 9.0, 9.0], "img/s", {})
    assert [r.note for r in rows[:2]] == ["median over the 1.50 s window starting 0 s in",
                                          "median over the 1.50 s window starting 1.50 s in"]
    assert rows[-1].note.startswith("last 1.50 s / first 1.50 s median throughput (9 / 10 img/s)")


def test_short_sustained_run_uses_halves():
    s = sustained([0.5, 1.0, 1.5, 2.0], [10.0, 10.0, 5.0, 5.0], window_s=60)
    assert s.window_s == 1.0 and s.ratio == pytest.approx(0.5)
    with pytest.raises(ValueError):
        sustained([1.0], [1.0])


def test_measure_for_runs_for_the_duration_and_keeps_block_times():
    def call():
        end = time.perf_counter() + 0.001
        while time.perf_counter() < end:
            pass
    seen = []
    m = measure_for(call, lambda: None, 0.3, MeasureSettings(min_block_s=0.01, max_warmup_s=0.2),
                    on_block=seen.append)
    assert m.block_end_s == seen and m.block_end_s == sorted(m.block_end_s)
    assert m.block_end_s[-1] >= 0.3 and len(m.block_end_s) == len(m.per_call_s)


# ---------------------------------------------------------------- the sampler

def sampled(sampler: TelemetrySampler, name: str, n: int, timeout: float = 60) -> None:
    """Wait until the sampler's thread has taken `n` samples of `name` (however long a loaded
    machine keeps it from running), failing after `timeout` s."""
    deadline = time.monotonic() + timeout
    while len(sampler.snapshot().get(name, {}).get("v", [])) < n:
        assert time.monotonic() < deadline, f"fewer than {n} samples of {name} in {timeout} s"
        time.sleep(0.01)


class ConstantPower(Source):
    name = "test power"
    power_labels: ClassVar[dict[str, str]] = {"cpu_power_w": "CPU (test)"}

    def poll(self):
        return {"cpu_power_w": ("W", 20.0)}


class Broken(Source):
    name = "broken"

    def poll(self):
        raise OSError("sensor gone")


def test_a_broken_source_stops_alone():
    sampler = TelemetrySampler("cpu", 0.02, [Broken(), ConstantPower()]).start()
    sampled(sampler, "cpu_power_w", 3)
    t = sampler.stop()
    assert any("broken sampling stopped: sensor gone" in n for n in t["notes"])
    assert len(t["series"]["cpu_power_w"]["v"]) >= 3


@pytest.mark.usefixtures("fake_workloads")
def test_sampler_runs_in_the_parent_during_a_real_run(monkeypatch):
    # The sampler reads the interval in its own module: patched there, not on the package.
    monkeypatch.setattr(telemetry.sampler, "DEFAULT_INTERVAL_S", 0.05)
    from tests.helpers.fake_workloads import FRAMEWORK
    rec = execute(RunSpec("fake-ok", FRAMEWORK, params={"steps": 2}), Store())
    t = rec.telemetry
    assert t["interval_s"] == 0.05
    for name in ("cpu_percent", "memory_used_bytes", "swap_used_bytes"):
        assert len(t["series"][name]["v"]) >= 2
        assert t["series"][name]["t"] == sorted(t["series"][name]["t"])
    assert t["summary"]["series"]["memory_used_bytes"]["max"] > 0
    stored = Store().get(rec.id)
    assert stored.telemetry == json.loads(json.dumps(t))         # kept and valid
    assert RunRecord.from_dict(rec.to_dict()).telemetry is not None


def test_tiny_gemm_gets_tflops_per_watt(monkeypatch):
    """Sampled power (no energy counter on this machine's CPU, or a powercap folder with none):
    at 10 ms a sample, the 0.5 s of timed blocks hold far more than the 5 samples needed."""
    monkeypatch.setattr(telemetry.sampler, "DEFAULT_INTERVAL_S", 0.01)
    monkeypatch.setenv("SILICONBENCH_MEASURE", '{"min_time_s": 0.5}')
    monkeypatch.setenv(telemetry.POWERCAP_ENV, "/nonexistent")
    monkeypatch.setattr(telemetry.sampler, "default_sources",
                        lambda device, interval_s, clocks=False: [telemetry.PsutilSource(),
                                                                  ConstantPower()])
    # In MLX, a tenth of a CPU-second to import where PyTorch takes three: the per-watt row is
    # derived in the parent from any framework's products.
    rec = execute(RunSpec("gemm", "mlx", params={"sizes": [64], "dtypes": ["float32"]},
                          quick=True), Store())
    assert rec.status == "ok", rec.reason
    per_watt = [r for r in rec.rows if r.metric == "tflops_per_watt"]
    assert len(per_watt) == 1 and per_watt[0].params == {"size": 64, "dtype": "float32"}
    tflops = next(r for r in rec.rows if r.metric == "tflops")
    assert per_watt[0].value == pytest.approx(tflops.value / 20.0)
    assert "CPU (test)" in per_watt[0].note and per_watt[0].flags == ["power_samples"]
    assert rec.telemetry["summary"]["derived"][0]["metric"] == "power"
    assert telemetry.power_trusted(per_watt[0])


def test_nvml_source_reads_the_runs_gpu(monkeypatch):
    # nvidia-ml-py's calls as a fake driver answers them: no GPU is needed for the test.
    import types
    calls = {"energy": 5_000_000}

    def energy(handle):
        calls["energy"] += 30_000              # mJ per poll
        return calls["energy"]

    def not_supported(*_):
        raise RuntimeError("Not Supported")

    fake = types.SimpleNamespace(
        NVML_TEMPERATURE_GPU=0, NVML_CLOCK_SM=1, nvmlInit=lambda: None,
        nvmlShutdown=lambda: None, nvmlDeviceGetHandleByIndex=lambda i: ("gpu", i),
        nvmlDeviceGetPowerUsage=lambda h: 312_500, nvmlDeviceGetTotalEnergyConsumption=energy,
        nvmlDeviceGetTemperature=lambda h, kind: 71, nvmlDeviceGetClockInfo=not_supported,
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(used=8 * 2**30))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    source = telemetry.NvmlSource("cuda:0")
    t = TelemetrySampler("cuda:0", 0.02, [source]).start()
    sampled(t, "gpu_energy_j", 2)
    result = t.stop()
    assert source._handle == ("gpu", 3)
    s = result["series"]
    assert set(s["gpu_power_w"]["v"]) == {312.5} and set(s["gpu_temperature_c"]["v"]) == {71}
    assert s["gpu_energy_j"]["v"][0] == 0.0 and s["gpu_energy_j"]["v"][1] == pytest.approx(30.0)
    assert "gpu_sm_clock_mhz" not in s
    assert any("gpu_sm_clock_mhz unavailable" in n for n in result["notes"])
    summary = result["summary"]
    assert summary["power_source"] == "board (NVML)" and summary["power_w"] == 312.5
    assert summary["energy_j"] == pytest.approx(30.0 * (len(s["gpu_energy_j"]["v"]) - 1))
    assert summary["max_temperature_c"] == 71


def test_sustained_with_a_first_block_longer_than_the_window():
    s = sustained([2.0, 2.5, 3.0, 3.5], [10.0, 10.0, 8.0, 8.0])
    assert s.first == 10.0 and s.last == 9.0 and s.ratio == pytest.approx(0.9)


# ---------------------------------------------------------------- Mac sources, off a Mac

# notify(3) as libSystem declares it (notify.h), answering a fixed level: built with the C
# compiler so the source's real ctypes calls (argument types, pointers) run here.
FAKE_NOTIFY_C = r"""
#include <stdint.h>
#include <string.h>
static int cancelled = 0;
uint32_t notify_register_check(const char *name, int *out_token) {
    if (strcmp(name, "com.apple.system.thermalpressurelevel") != 0) return 1;
    *out_token = 42;
    return 0;
}
uint32_t notify_get_state(int token, uint64_t *state64) {
    if (token != 42) return 2;
    *state64 = 2;   /* kOSThermalPressureLevelHeavy on macOS */
    return 0;
}
uint32_t notify_cancel(int token) { cancelled = token; return 0; }
int cancelled_token(void) { return cancelled; }
"""


@pytest.fixture(scope="module")
def fake_libsystem(tmp_path_factory):
    import ctypes
    if shutil.which("cc") is None:
        pytest.skip("no C compiler to build the stand-in for libSystem's notify(3)")
    d = tmp_path_factory.mktemp("notify")
    (d / "notify.c").write_text(FAKE_NOTIFY_C)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(d / "libnotify.so"), str(d / "notify.c")],
                   check=True)
    return ctypes.CDLL(str(d / "libnotify.so"))


def test_thermal_pressure_through_notify_in_process(fake_libsystem):
    source = ThermalPressureSource(lambda: fake_libsystem)
    t = TelemetrySampler("mps", 0.02, [source]).start()
    sampled(t, "thermal_pressure", 2)
    result = t.stop()
    assert set(result["series"]["thermal_pressure"]["v"]) == {2.0}
    assert result["summary"]["max_thermal_pressure"] == "Heavy"
    assert fake_libsystem.cancelled_token() == 42               # the token was given back


def test_thermal_pressure_without_libsystem_or_its_symbol_is_a_note():
    import ctypes

    def missing():
        raise OSError("dlopen(/usr/lib/libSystem.B.dylib): image not found")

    libc = ctypes.CDLL(None)             # a real C library, without notify(3)
    for load, why in ((missing, "image not found"), (lambda: libc, "notify_register_check")):
        t = TelemetrySampler("cpu", 0.02, [ThermalPressureSource(load)]).start()
        result = t.stop()       # its last poll included: a source that failed gives nothing
        assert "thermal_pressure" not in result["series"]
        note = next(n for n in result["notes"] if n.startswith("thermal pressure unavailable"))
        assert why in note


def _energy(cpu, gpu, ane=None, dram=None):
    # zeus-apple-silicon's AppleEnergyMetrics as its bindings document it (energy_bindings.hpp:
    # optional int64 mJ per rail, None where the chip has no channel; the 1.1.0 macOS wheel's
    # extension names these attributes). The package is Mac-only, so this stands in for its
    # result: the documented shape, not a measurement.
    return types.SimpleNamespace(cpu_total_mj=cpu, gpu_mj=gpu, ane_mj=ane, dram_mj=dram,
                                 gpu_sram_mj=None, efficiency_cores_mj=None)


def test_ioreport_energy_readings_become_watts():
    v = telemetry.ioreport_values(_energy(1_000, 50_000, 0), _energy(3_000, 80_000, 0), 0.5)
    assert v == {"cpu_power_w": ("W", 4.0), "gpu_power_w": ("W", 60.0), "ane_power_w": ("W", 0.0)}
    assert telemetry.ioreport_values(_energy(1, 1), _energy(2, 2), 0) == {}
    # A counter that went backwards (a wrapped or reset channel) gives no figure, not a negative.
    assert "gpu_power_w" not in telemetry.ioreport_values(_energy(1, 9), _energy(2, 3), 1.0)


def test_power_source_choice_on_a_mac_is_recorded():
    readings = iter(_energy(1000 * i, 20_000 * i) for i in range(1000))
    monitor = types.SimpleNamespace(get_cumulative_energy=lambda: next(readings))
    source = telemetry.mac_power_source("arm64", 0.02, lambda: monitor)
    t = TelemetrySampler("mps", 0.02, [source]).start()
    sampled(t, "gpu_power_w", 2)
    result = t.stop()
    assert result["summary"]["power_source"] == "GPU (IOReport)"
    assert all(v > 0 for v in result["series"]["gpu_power_w"]["v"])
    assert any("IOReport" in n and "without admin rights" in n for n in result["notes"])

    def unsupported():
        raise RuntimeError("IOReport subscription failed")

    fallback = telemetry.mac_power_source("arm64", 1.0, unsupported)
    assert isinstance(fallback, PowermetricsSource) and fallback.command[:2] == ["sudo", "-n"]
    assert "IOReport subscription failed" in fallback.notes[0]
    # Here zeus-apple-silicon is not installed: the note names the extra that adds it.
    assert "siliconbench[macpower]" in telemetry.mac_power_source("arm64").notes[0]
    assert telemetry.mac_power_source("x86_64").notes == []      # Intel: powermetrics only


# ---------------------------------------------------------------- no process per sample

class SpawnsPerPoll(Source):
    """What the Mac sources used to do (notifyutil, pmset every second): the check must see it."""
    name = "spawns"

    def poll(self):
        subprocess.run(["sleep", "0.05"], check=True)
        return {}


def _children_while_sampling(monkeypatch, sources, seconds=1.0) -> tuple[dict, set[int], int]:
    """(the telemetry, the child pids seen, processes launched): psutil
    lists this process's children throughout the window, and every way Python starts a process
    is counted too, since a short-lived one can end between two listings. Only the sampler's:
    a child an earlier test left ending, or one its threads start meanwhile, is not counted."""
    import os
    import threading

    import psutil
    launched = []

    def counted(real):
        def launch(*args, **kwargs):
            if threading.current_thread().name == "telemetry":  # TelemetrySampler's thread
                launched.append(real.__name__)
            return real(*args, **kwargs)
        return launch

    for owner, name in ((subprocess.Popen, "_execute_child"), (os, "fork"),
                        (os, "posix_spawn"), (os, "posix_spawnp")):
        monkeypatch.setattr(owner, name, counted(getattr(owner, name)))
    me = psutil.Process()
    before = {c.pid for c in me.children(recursive=True)}
    sampler = TelemetrySampler("cpu", 0.02, sources).start()
    seen: set[int] = set()
    listings = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seen |= {c.pid for c in me.children(recursive=True)} - before
        listings += 1
    result = sampler.stop()
    monkeypatch.undo()
    assert listings >= 10
    return result, seen, len(launched)


def test_a_linux_telemetry_session_starts_no_process_per_sample(monkeypatch):
    result, seen, launched = _children_while_sampling(
        monkeypatch, telemetry.default_sources("cpu", 0.02))
    assert len(result["series"]["cpu_percent"]["v"]) >= 10      # it did sample meanwhile
    assert seen == set() and launched == 0
    # The same check catches a source that runs a command every sample.
    _, seen, launched = _children_while_sampling(monkeypatch, [SpawnsPerPoll()])
    assert len(seen) >= 3 and launched >= 3


def test_battery_state_from_psutil(monkeypatch):
    import psutil

    def sbattery(percent, secsleft, power_plugged):   # psutil.sensors_battery's documented tuple
        return types.SimpleNamespace(percent=percent, secsleft=secsleft,
                                     power_plugged=power_plugged)

    states = iter([sbattery(80, 3600, False), sbattery(81, psutil.POWER_TIME_UNLIMITED, True),
                   None])
    monkeypatch.setattr(psutil, "sensors_battery", lambda: next(states, None))
    source = telemetry.BatterySource()
    source.open(lambda values: None)
    assert [source.poll(), source.poll(), source.poll()] == [
        {"on_battery": ("bool", 1.0)}, {"on_battery": ("bool", 0.0)}, {}]
