"""Tests of core.machine: parsers on recorded outputs, probes with commands replaced, records."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from core import machine
from core.machine import MachineInfo

DATA = Path(__file__).parent / "data" / "machine"
M1_MAX = DATA / "macbookpro18_4_m1max"
M2_ULTRA = DATA / "macstudio_m2ultra"
EPYC = DATA / "linux_epyc"
REPO = Path(__file__).resolve().parent.parent


def recorded(folder: Path, name: str) -> str:
    return (folder / name).read_text(encoding="utf-8")


def fake_mac_commands(folder: Path):
    """A run_command that answers each macOS command with what it printed on a recorded Mac."""
    files = {
        "sysctl": "sysctl.txt",
        "system_profiler": "system_profiler.json",
        "sw_vers": "sw_vers.txt",
    }

    def run(args: list[str]) -> str:
        if args[:3] == ["pmset", "-g", "batt"]:
            return recorded(folder, "pmset_batt.txt")
        if args[:2] == ["pmset", "-g"]:
            return recorded(folder, "pmset.txt")
        return recorded(folder, files[args[0]])

    return run


def missing_command(args: list[str]) -> str:
    raise FileNotFoundError(2, "No such file or directory", args[0])


# --- macOS parsers --------------------------------------------------------------------------


def test_parse_sysctl_m1_max():
    assert machine.parse_sysctl(recorded(M1_MAX, "sysctl.txt")) == {
        "memory_bytes": 64 * 1024**3,
        "cpu_cores": 10,
        "cpu_physical_cores": 10,
        "perf_cores": 8,
        "eff_cores": 2,
        "cpu_model": "Apple M1 Max",
        "model_identifier": "MacBookPro18,4",
        "rosetta": False,
    }


def test_parse_sysctl_m2_ultra():
    parsed = machine.parse_sysctl(recorded(M2_ULTRA, "sysctl.txt"))
    assert parsed["memory_bytes"] == 192 * 1024**3 == 206158430208
    assert (parsed["cpu_cores"], parsed["perf_cores"], parsed["eff_cores"]) == (24, 16, 8)
    assert parsed["model_identifier"] == "Mac14,14"
    assert parsed["cpu_model"] == "Apple M2 Ultra"


def test_parse_sysctl_intel_mac_lacks_perflevels():
    # An Intel Mac's sysctl prints the keys it knows and complains about the rest on stderr.
    text = (
        "hw.memsize: 17179869184\n"
        "hw.ncpu: 12\n"
        "hw.physicalcpu: 6\n"
        "machdep.cpu.brand_string: Intel(R) Core(TM) i7-8750H CPU @ 2.20GHz\n"
        "hw.model: MacBookPro15,1\n"
    )
    parsed = machine.parse_sysctl(text)
    assert (
        parsed["perf_cores"] is None and parsed["eff_cores"] is None and parsed["rosetta"] is None
    )
    assert parsed["cpu_physical_cores"] == 6
    assert parsed["cpu_model"] == "Intel(R) Core(TM) i7-8750H CPU @ 2.20GHz"


def test_parse_system_profiler_m1_max():
    assert machine.parse_system_profiler(recorded(M1_MAX, "system_profiler.json")) == {
        "chip": "Apple M1 Max",
        "model_identifier": "MacBookPro18,4",
        "model_name": "MacBook Pro",
        "memory_bytes": 68719476736,
        "cpu_cores": 10,
        "perf_cores": 8,
        "eff_cores": 2,
        "gpu_name": "Apple M1 Max",
        "gpu_cores": 32,
    }


def test_parse_system_profiler_m2_ultra_four_field_processors():
    parsed = machine.parse_system_profiler(recorded(M2_ULTRA, "system_profiler.json"))
    assert parsed["chip"] == "Apple M2 Ultra"
    assert parsed["model_identifier"] == "Mac14,14"
    assert (parsed["cpu_cores"], parsed["perf_cores"], parsed["eff_cores"]) == (24, 16, 8)
    assert parsed["gpu_cores"] == 76
    assert parsed["memory_bytes"] == 206158430208


def test_parse_system_profiler_intel_mac_prefers_discrete_gpu():
    data = {
        "SPHardwareDataType": [
            {
                "machine_model": "MacBookPro16,1",
                "machine_name": "MacBook Pro",
                "cpu_type": "8-Core Intel Core i9",
                "physical_memory": "32 GB",
            }
        ],
        "SPDisplaysDataType": [
            {
                "_name": "Intel UHD Graphics 630",
                "sppci_model": "Intel UHD Graphics 630",
                "sppci_bus": "spdisplays_builtin",
            },
            {
                "_name": "AMD Radeon Pro 5500M",
                "sppci_model": "AMD Radeon Pro 5500M",
                "sppci_bus": "spdisplays_pcie_device",
            },
        ],
    }
    parsed = machine.parse_system_profiler(json.dumps(data))
    assert parsed["gpu_name"] == "AMD Radeon Pro 5500M"
    assert parsed["gpu_cores"] is None and parsed["chip"] is None
    assert parsed["memory_bytes"] == 32 * 1024**3


@pytest.mark.parametrize(
    ("number_processors", "expected"),
    [
        ("proc 10:8:2", (10, 8, 2)),
        ("proc 24:16:8:0", (24, 16, 8)),
        ("proc 12:0:8:4", (12, 8, 4)),
        ("proc 18:6:0:12", (18, None, None)),  # three tiers: no P/E split to report
        (4, (4, None, None)),  # a virtual Mac
        ("garbage", (None, None, None)),
    ],
)
def test_number_processors_variants(number_processors, expected):
    data = {"SPHardwareDataType": [{"number_processors": number_processors}]}
    parsed = machine.parse_system_profiler(data)
    assert (parsed["cpu_cores"], parsed["perf_cores"], parsed["eff_cores"]) == expected


def test_parse_pmset_batt():
    assert machine.parse_pmset_batt(recorded(M1_MAX, "pmset_batt.txt")) == {
        "power_source": "battery",
        "battery_percent": 87,
    }
    # A Mac Studio has no battery line at all.
    assert machine.parse_pmset_batt(recorded(M2_ULTRA, "pmset_batt.txt")) == {
        "power_source": "ac",
        "battery_percent": None,
    }
    charging = (
        "Now drawing from 'AC Power'\n"
        " -InternalBattery-0 (id=4325123)\t64%; charging; 1:05 remaining present: true\n"
    )
    assert machine.parse_pmset_batt(charging) == {"power_source": "ac", "battery_percent": 64}
    assert machine.parse_pmset_batt("garbage") == {
        "power_source": "unknown",
        "battery_percent": None,
    }


def test_parse_pmset_lowpower():
    assert machine.parse_pmset_lowpower(recorded(M1_MAX, "pmset.txt")) is False
    assert machine.parse_pmset_lowpower(recorded(M2_ULTRA, "pmset.txt")) is False
    assert machine.parse_pmset_lowpower(" lowpowermode         1\n womp 0\n") is True
    assert machine.parse_pmset_lowpower(" powermode            1\n") is True
    assert machine.parse_pmset_lowpower(" powermode            2\n") is False
    assert machine.parse_pmset_lowpower(" sleep 1\n") is None


def test_parse_sw_vers():
    assert machine.parse_sw_vers(recorded(M1_MAX, "sw_vers.txt")) == "14.5"
    assert machine.parse_sw_vers(recorded(M2_ULTRA, "sw_vers.txt")) == "15.1"
    assert machine.parse_sw_vers("") is None


# --- Linux parsers --------------------------------------------------------------------------


def test_parse_cpuinfo():
    assert machine.parse_cpuinfo(recorded(EPYC, "cpuinfo.txt")) == {
        "cpu_model": "AMD EPYC",
        "cpu_cores": 2,
    }


def test_parse_meminfo():
    assert machine.parse_meminfo(recorded(EPYC, "meminfo.txt")) == 24684084 * 1024
    assert machine.parse_meminfo("nothing here") is None


def test_parse_lscpu():
    assert machine.parse_lscpu(recorded(EPYC, "lscpu.txt")) == {
        "cpu_model": "AMD EPYC",
        "cpu_cores": 2,
        "cpu_physical_cores": 2,
    }


def test_parse_lscpu_indented_layout():
    # util-linux 2.37+ nests per-model lines under "Vendor ID".
    text = (
        "Architecture:            x86_64\n"
        "CPU(s):                  128\n"
        "Vendor ID:               AuthenticAMD\n"
        "  Model name:            AMD EPYC 7763 64-Core Processor\n"
        "    Thread(s) per core:  2\n"
        "    Core(s) per socket:  32\n"
        "    Socket(s):           2\n"
        "NUMA node0 CPU(s):       0-63\n"
    )
    assert machine.parse_lscpu(text) == {
        "cpu_model": "AMD EPYC 7763 64-Core Processor",
        "cpu_cores": 128,
        "cpu_physical_cores": 64,
    }


def test_parse_os_release():
    assert (
        machine.parse_os_release(recorded(EPYC, "os-release.txt"))
        == "Debian GNU/Linux 12 (bookworm)"
    )
    assert machine.parse_os_release('NAME="Fedora Linux"\nVERSION_ID=40\n') == "Fedora Linux 40"
    assert machine.parse_os_release("") is None


def test_parse_power_supplies():
    laptop_plugged = {
        "AC": {"type": "Mains", "online": "1"},
        "BAT0": {"type": "Battery", "status": "Charging", "capacity": "55"},
    }
    assert machine.parse_power_supplies(laptop_plugged) == {
        "power_source": "ac",
        "battery_percent": 55,
    }
    laptop_unplugged = {
        "AC": {"type": "Mains", "online": "0"},
        "BAT0": {"type": "Battery", "status": "Discharging", "capacity": "40"},
    }
    assert machine.parse_power_supplies(laptop_unplugged) == {
        "power_source": "battery",
        "battery_percent": 40,
    }
    assert machine.parse_power_supplies({}) == {"power_source": "unknown", "battery_percent": None}


# --- Mac model names ------------------------------------------------------------------------


def test_mac_model_names():
    assert machine.mac_model_name("MacBookPro18,4") == "MacBook Pro (14-inch, 2021)"
    assert machine.mac_model_name("MacBookPro18,2") == "MacBook Pro (16-inch, 2021)"
    assert machine.mac_model_name("Mac13,2") == "Mac Studio (2022)"
    assert machine.mac_model_name("Mac14,14") == "Mac Studio (2023)"
    assert machine.mac_model_name("MacPro7,1") is None
    assert machine.mac_model_name(None) is None
    assert "_source" not in machine.mac_model_names()


# --- probes ---------------------------------------------------------------------------------


def test_probe_macos_on_recorded_m1_max(monkeypatch):
    monkeypatch.setattr(machine, "run_command", fake_mac_commands(M1_MAX))
    info = machine.probe_macos()
    assert info.model_identifier == "MacBookPro18,4"
    assert info.model_name == "MacBook Pro (14-inch, 2021)"
    assert info.chip == "Apple M1 Max"
    assert (info.cpu_cores, info.perf_cores, info.eff_cores) == (10, 8, 2)
    assert info.gpu_cores == 32
    assert info.memory_bytes == 68719476736
    assert info.os_version == "14.5"
    assert (info.power_source, info.battery_percent, info.low_power_mode) == ("battery", 87, False)
    assert info.rosetta is False
    assert info.summary() == (
        "MacBook Pro (14-inch, 2021) · Apple M1 Max · 32-core GPU · 64 GB · macOS 14.5"
        " · battery 87%"
    )


def test_probe_macos_on_recorded_m2_ultra(monkeypatch):
    monkeypatch.setattr(machine, "run_command", fake_mac_commands(M2_ULTRA))
    info = machine.probe_macos()
    assert info.model_identifier == "Mac14,14"
    assert info.model_name == "Mac Studio (2023)"
    assert info.chip == "Apple M2 Ultra"
    assert (info.cpu_cores, info.perf_cores, info.eff_cores) == (24, 16, 8)
    assert info.gpu_cores == 76
    assert info.memory_bytes == 192 * 1024**3
    assert (info.power_source, info.battery_percent) == ("ac", None)
    assert info.summary() == (
        "Mac Studio (2023) · Apple M2 Ultra · 76-core GPU · 192 GB · macOS 15.1 · AC power"
    )


def test_probe_macos_with_system_profiler_failing_keeps_sysctl_fields(monkeypatch):
    recorded_run = fake_mac_commands(M1_MAX)

    def run(args):
        if args[0] == "system_profiler":
            raise subprocess.TimeoutExpired(args, 5)
        return recorded_run(args)

    monkeypatch.setattr(machine, "run_command", run)
    info = machine.probe_macos()
    assert info.gpu_cores is None and info.gpu_name is None
    assert info.chip == "Apple M1 Max"  # from the sysctl brand string
    assert info.model_name == "MacBook Pro (14-inch, 2021)"
    assert info.memory_bytes == 68719476736


def test_probe_macos_with_every_command_missing_gives_none_fields(monkeypatch):
    monkeypatch.setattr(machine, "run_command", missing_command)
    info = machine.probe_macos()
    assert info.os_name == "macOS"
    assert info.chip is None and info.model_identifier is None and info.model_name is None
    assert info.memory_bytes is None and info.gpu_cores is None and info.cpu_model is None
    assert (
        info.power_source == "unknown"
        and info.battery_percent is None
        and info.low_power_mode is None
    )


def test_probe_macos_with_garbage_output_gives_none_fields(monkeypatch):
    monkeypatch.setattr(machine, "run_command", lambda args: "\x00 not what you expected {")
    info = machine.probe_macos()
    assert info.chip is None and info.memory_bytes is None and info.gpu_cores is None
    assert info.power_source == "unknown"


def test_probe_linux_on_recorded_epyc(monkeypatch, tmp_path):
    files = {
        "/proc/cpuinfo": "cpuinfo.txt",
        "/proc/meminfo": "meminfo.txt",
        "/etc/os-release": "os-release.txt",
    }
    monkeypatch.setattr(machine, "read_text", lambda path: recorded(EPYC, files[str(path)]))
    monkeypatch.setattr(machine, "run_command", lambda args: recorded(EPYC, "lscpu.txt"))
    monkeypatch.setattr(machine, "nvidia_gpu", lambda: None)
    monkeypatch.setattr(machine, "POWER_SUPPLY_DIR", tmp_path / "absent")
    info = machine.probe_linux()
    assert info.cpu_model == "AMD EPYC"
    assert (info.cpu_cores, info.cpu_physical_cores) == (2, 2)
    assert info.memory_bytes == 24684084 * 1024
    assert info.os_version == "Debian GNU/Linux 12 (bookworm)"
    assert info.power_source == "unknown"
    assert info.chip is None and info.model_identifier is None


def test_probe_linux_with_lscpu_missing_still_reads_proc(monkeypatch):
    monkeypatch.setattr(machine, "run_command", missing_command)
    monkeypatch.setattr(machine, "nvidia_gpu", lambda: None)
    info = machine.probe_linux()
    if Path("/proc/cpuinfo").exists():
        assert info.cpu_cores and info.cpu_cores > 0
    assert info.cpu_physical_cores is None  # only lscpu tells it


def test_linux_power_from_sysfs(monkeypatch, tmp_path):
    for name, attributes in {
        "AC": {"type": "Mains", "online": "0"},
        "BAT0": {"type": "Battery", "status": "Discharging", "capacity": "71"},
    }.items():
        (tmp_path / name).mkdir()
        for attribute, value in attributes.items():
            (tmp_path / name / attribute).write_text(value + "\n")
    monkeypatch.setattr(machine, "POWER_SUPPLY_DIR", tmp_path)
    monkeypatch.setattr(machine.platform, "system", lambda: "Linux")
    status = machine.power_status()
    assert (status.power_source, status.battery_percent) == ("battery", 71)


def test_nvidia_gpu_through_a_fake_nvml(monkeypatch):
    fake = types.SimpleNamespace(
        nvmlInit=lambda: None,
        nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: 1,
        nvmlDeviceGetHandleByIndex=lambda index: "handle",
        nvmlDeviceGetName=lambda handle: b"NVIDIA H100 80GB HBM3",
        nvmlDeviceGetMemoryInfo=lambda handle: types.SimpleNamespace(total=85520809984),
    )
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert machine.nvidia_gpu() == {
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "gpu_memory_bytes": 85520809984,
    }


def test_nvidia_gpu_without_driver_is_none(monkeypatch):
    def no_driver():
        raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=no_driver))
    assert machine.nvidia_gpu() is None
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert machine.nvidia_gpu() is None


def test_probe_on_this_machine_is_sane():
    info = machine.probe()
    assert info.cpu_model is not None
    assert info.memory_bytes and info.memory_bytes > 0
    assert isinstance(info.frameworks, dict)
    assert info.python_version and info.os_name
    assert info.power_source in ("ac", "battery", "unknown")
    json.dumps(info.to_dict())  # a record must serialise
    assert machine.probe() is not info  # callers get their own copy of the cached probe


def test_framework_versions_reads_metadata_only():
    versions = machine.framework_versions()
    assert set(versions) <= set(machine.FRAMEWORK_DISTRIBUTIONS)
    assert all(isinstance(v, str) for v in versions.values())


# --- the record -----------------------------------------------------------------------------


def sample_info() -> MachineInfo:
    return MachineInfo(
        os_name="macOS",
        os_version="14.5",
        arch="arm64",
        cpu_model="Apple M1 Max",
        chip="Apple M1 Max",
        model_identifier="MacBookPro18,2",
        model_name="MacBook Pro (16-inch, 2021)",
        cpu_cores=10,
        cpu_physical_cores=10,
        perf_cores=8,
        eff_cores=2,
        gpu_name="Apple M1 Max",
        gpu_cores=32,
        memory_bytes=64 * 1024**3,
        power_source="ac",
        battery_percent=100,
        low_power_mode=False,
        rosetta=False,
        python_version="3.11.7",
        frameworks={"torch": "2.3.0", "mlx": "0.15.0"},
    )


def test_round_trip_through_json():
    info = sample_info()
    assert MachineInfo.from_dict(json.loads(json.dumps(info.to_dict()))) == info


def test_from_dict_ignores_unknown_keys_and_fills_missing_ones():
    data = sample_info().to_dict()
    data["hostname"] = "someones-macbook"
    data["a_field_from_the_future"] = {"x": 1}
    del data["rosetta"]
    info = MachineInfo.from_dict(data)
    assert info.chip == "Apple M1 Max" and info.rosetta is None
    assert not hasattr(info, "a_field_from_the_future")
    assert MachineInfo.from_dict({}) == MachineInfo()


def test_summary_examples():
    assert sample_info().summary() == (
        "MacBook Pro (16-inch, 2021) · Apple M1 Max · 32-core GPU · 64 GB · macOS 14.5 · AC power"
    )
    linux = MachineInfo(
        os_name="Linux",
        os_version="6.1.0-18-amd64",
        cpu_model="AMD EPYC 7763 64-Core Processor",
        cpu_cores=2,
        memory_bytes=24684084 * 1024,
        gpu_name="NVIDIA H100 80GB HBM3",
    )
    assert linux.summary() == (
        "AMD EPYC 7763 64-Core Processor · 2 cores · 24 GB · Linux 6.1.0-18-amd64"
        " · NVIDIA H100 80GB HBM3"
    )
    assert MachineInfo().summary() == "unknown machine"


def test_key_is_stable_and_tracks_hardware_only():
    info = sample_info()
    assert info.key() == sample_info().key()
    assert len(info.key()) == 12
    changed_software = sample_info()
    changed_software.os_version, changed_software.frameworks = "15.0", {}
    changed_software.power_source, changed_software.battery_percent = "battery", 40
    assert changed_software.key() == info.key()
    other_gpu = sample_info()
    other_gpu.gpu_cores = 24
    assert other_gpu.key() != info.key()
    # Linux's MemTotal drifts by megabytes between kernels; the key does not.
    server = MachineInfo(cpu_model="AMD EPYC", memory_bytes=24684084 * 1024)
    drifted = MachineInfo(cpu_model="AMD  EPYC", memory_bytes=24690000 * 1024)
    assert server.key() == drifted.key()


def test_import_stays_cheap():
    code = (
        "import core.machine, sys; "
        "print([m for m in ('torch', 'tensorflow', 'PySide6', 'mlx') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_probe_does_not_import_frameworks():
    code = (
        "import core.machine, sys; core.machine.probe(); "
        "print([m for m in ('torch', 'tensorflow', 'PySide6', 'mlx') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("folder", [M1_MAX, M2_ULTRA])
def test_recorded_system_profiler_is_valid_json(folder):
    data = json.loads(recorded(folder, "system_profiler.json"))
    assert set(data) == {"SPHardwareDataType", "SPDisplaysDataType"}
