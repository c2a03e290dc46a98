"""Tests of siliconbench.core.machine: parsers on recorded outputs, probes with commands replaced, records."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import types
from pathlib import Path

import pytest

from siliconbench.core import machine
from siliconbench.core.machine import MachineInfo, commands, linux, power
from tests.helpers.mac_probe import (
    INTEL,
    M5_MAX,
    MACOS,
    VM,
    capture,
    mac_commands,
    missing_command,
    recorded,
)

DATA = Path(__file__).parent.parent / "data" / "machine"
EPYC = DATA / "linux_epyc"
REPO = Path(__file__).resolve().parents[2]


def tiers(*pairs) -> list[dict]:
    return [{"name": name, "cores": cores} for name, cores in pairs]


# --- every real capture parses to the facts it states (tests/data/macos/SOURCES.md) ---------

# (capture, the facts it states). Chip names in brackets come from the capture's source, not
# the capture: `sysctl hw` prints no brand string.
SYSCTL_CAPTURES = [
    ("m1_bigsur_archspec_sysctl.txt",  # macOS 11 knew no perflevels and no chip names yet
     {"cpu_tiers": None, "cpu_model": "Apple processor", "chip": None}),
    ("m1_macbookair_sysctl_hw.txt",  # [Apple M1], names of levels not printed yet
     {"cpu_tiers": tiers(("performance", 4), ("efficiency", 4)), "cpu_cores": 8,
      "cpu_physical_cores": 8, "memory_bytes": 17179869184}),
    ("m1pro_monterey_archspec_sysctl.txt",  # the 8-core M1 Pro
     {"cpu_tiers": tiers(("performance", 6), ("efficiency", 2)), "chip": "Apple M1 Pro",
      "cpu_cores": 8, "memory_bytes": 17179869184}),
    ("m2_macbookair_sysctl_hw.txt",  # [Apple M2]
     {"cpu_tiers": tiers(("performance", 4), ("efficiency", 4)), "memory_bytes": 25769803776}),
    ("m2_monterey_archspec_sysctl.txt",
     {"cpu_tiers": tiers(("performance", 4), ("efficiency", 4)), "chip": "Apple M2",
      "cpu_cores": 8, "memory_bytes": 17179869184}),
    ("m3max_macbookpro16_sysctl_hw.txt",  # [Apple M3 Max], hw.targettype J516c
     {"cpu_tiers": tiers(("performance", 12), ("efficiency", 4)), "cpu_cores": 16,
      "memory_bytes": 137438953472}),
    ("m3max_sequoia_archspec_sysctl.txt",  # the binned 14-core M3 Max
     {"cpu_tiers": tiers(("performance", 10), ("efficiency", 4)), "chip": "Apple M3 Max",
      "cpu_cores": 14, "memory_bytes": 38654705664}),
    ("m4pro_macmini_sysctl_hw.txt",  # [Apple M4 Pro], hw.targettype J773s
     {"cpu_tiers": tiers(("performance", 10), ("efficiency", 4)), "cpu_cores": 14,
      "memory_bytes": 68719476736}),
    ("m4max_sequoia_archspec_sysctl.txt",
     {"cpu_tiers": tiers(("performance", 12), ("efficiency", 4)), "chip": "Apple M4 Max",
      "cpu_cores": 16, "memory_bytes": 68719476736}),
    ("m5_tahoe_archspec_sysctl.txt",  # base M5: Super and Efficiency
     {"cpu_tiers": tiers(("super", 4), ("efficiency", 6)), "chip": "Apple M5",
      "cpu_cores": 10, "cpu_physical_cores": 10, "memory_bytes": 25769803776}),
    ("m5max_macbookpro_sysctl_perflevels.txt",  # M5 Max: Super and Performance, no Efficiency
     {"cpu_tiers": tiers(("super", 6), ("performance", 12)), "memory_bytes": None}),
    ("vm_m1_ghrunner_macos26_sysctl.txt",  # one level, "Standard"
     {"cpu_tiers": tiers((None, 3)), "chip": "Apple M1 (Virtual)",
      "model_identifier": "VirtualMac2,1", "memory_bytes": 7516192768}),
    ("intel_ghrunner_macos15_sysctl.txt",  # one level, "Standard"
     {"cpu_tiers": tiers((None, 4)), "chip": None, "model_identifier": "Macmini6,2",
      "cpu_model": "Intel(R) Core(TM) i7-8700B CPU @ 3.20GHz", "memory_bytes": 15032385536}),
    ("intel_haswell_mojave_archspec_sysctl.txt",  # macOS 10.14: no perflevels
     {"cpu_tiers": None, "chip": None,
      "cpu_model": "Intel(R) Core(TM) i7-4980HQ CPU @ 2.80GHz"}),
    ("intel_skylake_mojave_archspec_sysctl.txt",
     {"cpu_tiers": None, "chip": None, "cpu_model": "Intel(R) Core(TM) i7-6700K CPU @ 4.00GHz"}),
]

SYSTEM_PROFILER_CAPTURES = [
    ("m1_macbookair_SPHardwareDataType.json",
     {"chip": "Apple M1", "model_identifier": "MacBookAir10,1", "model_name": "MacBook Air",
      "cpu_physical_cores": 8, "cpu_tiers": tiers(("performance", 4), ("efficiency", 4)),
      "memory_bytes": 16 * 1024**3}),
    ("m1_rosetta_macbookair_SPHardwareDataType.json",  # the same Mac, asked from Rosetta
     {"chip": None, "cpu_physical_cores": 8, "cpu_tiers": None, "memory_bytes": 16 * 1024**3}),
    ("m1pro_SPDisplaysDataType.json",  # three displays on the one GPU
     {"gpu_name": "Apple M1 Pro", "gpu_cores": 14, "chip": None}),
    ("m5max_macbookpro_SPHardwareDataType.json",  # "proc 18:6:0:12"
     {"chip": "Apple M5 Max", "model_identifier": "Mac17,6", "cpu_physical_cores": 18,
      "cpu_tiers": tiers(("super", 6), ("performance", 12)), "memory_bytes": 128 * 1024**3}),
    ("vm_m1_ghrunner_macos26_SPHardwareDataType.json",  # number_processors: 3
     {"chip": "Apple M1 (Virtual)", "model_name": "Apple Virtual Machine 1",
      "cpu_physical_cores": 3, "cpu_tiers": None, "memory_bytes": 7 * 1024**3}),
    ("intel_ghrunner_macos15_SPHardwareDataType.json",
     {"chip": None, "model_identifier": "Macmini6,2", "cpu_physical_cores": 4,
      "cpu_tiers": None, "memory_bytes": 14 * 1024**3}),
    ("intel_ghrunner_macos15_SPDisplaysDataType.json",
     {"gpu_name": "Apple Paravirtualized Graphics Device", "gpu_cores": None}),
    ("intel_imacpro_SPHardwareDataType.json",  # 8 cores, Hyper-Threading on
     {"chip": None, "model_identifier": "iMacPro1,1", "cpu_physical_cores": 8,
      "memory_bytes": 32 * 1024**3}),
]

SW_VERS_CAPTURES = [
    ("vm_m1_ghrunner_macos26_sw_vers.txt", "26.6.2"),
    ("intel_ghrunner_macos15_sw_vers.txt", "15.7.9"),
    ("sw_vers_catalina_rubybuild1451.txt", "10.15.5"),  # still "Mac OS X"
]

PMSET_BATT_CAPTURES = [
    ("pmset_batt_battery_spaceship640.txt", ("battery", 95)),
    ("pmset_batt_battery_elcapitan_tmuxbattery25.txt", ("battery", 85)),  # no (id=...)
    ("pmset_batt_ac_sierra_tmuxbattery25.txt", ("ac", 67)),
    ("pmset_ps_battery_batterynvim2.txt", ("battery", 94)),  # `pmset -g ps`: the same report
    ("pmset_batt_ac_maccli69.txt", ("ac", 84)),
    ("pmset_batt_ac_powerlevel9k376.txt", ("ac", 43)),
]

# `pmset -g`: (the power mode in use, Low Power Mode on). An older macOS's `lowpowermode 0`
# reads as Automatic: pmset takes it as a synonym of `powermode` (SOURCES.md).
PMSET_CAPTURES = [
    ("pmset_g_arm64_aldente603.txt", ("Automatic", False)),
    ("pmset_g_powermode0_m3max_knowledgebase.txt", ("Automatic", False)),
    ("pmset_g_powermode0_laptop_realm.txt", ("Automatic", False)),
]

# `pmset -g custom`: the mode each power source is set to.
PMSET_CUSTOM_CAPTURES = [
    ("pmset_custom_battery_low_ac_high.txt",
     {"Battery Power": "Low Power", "AC Power": "High Power"}),
    ("pmset_custom_mac17_8_battery_low.txt",
     {"Battery Power": "Low Power", "AC Power": "Automatic"}),
    ("pmset_custom_mbp18_2_battery_low.txt",
     {"Battery Power": "Low Power", "AC Power": "Automatic"}),
]


@pytest.mark.parametrize(("name", "facts"), SYSCTL_CAPTURES, ids=[c[0] for c in SYSCTL_CAPTURES])
def test_sysctl_capture(name, facts):
    parsed = machine.parse_sysctl(capture(name))
    assert {key: parsed[key] for key in facts} == facts


@pytest.mark.parametrize(
    ("name", "facts"), SYSTEM_PROFILER_CAPTURES, ids=[c[0] for c in SYSTEM_PROFILER_CAPTURES]
)
def test_system_profiler_capture(name, facts):
    parsed = machine.parse_system_profiler(capture(name))
    assert {key: parsed[key] for key in facts} == facts


@pytest.mark.parametrize(("name", "version"), SW_VERS_CAPTURES)
def test_sw_vers_capture(name, version):
    assert machine.parse_sw_vers(capture(name)) == version


@pytest.mark.parametrize(("name", "power"), PMSET_BATT_CAPTURES)
def test_pmset_batt_capture(name, power):
    parsed = machine.parse_pmset_batt(capture(name))
    assert (parsed["power_source"], parsed["battery_percent"]) == power


@pytest.mark.parametrize(("name", "state"), PMSET_CAPTURES)
def test_pmset_capture(name, state):
    mode, low_power = state
    assert machine.parse_pmset_mode(capture(name)) == mode
    assert machine.parse_pmset_lowpower(capture(name)) is low_power


@pytest.mark.parametrize(("name", "modes"), PMSET_CUSTOM_CAPTURES)
def test_pmset_custom_capture(name, modes):
    assert machine.parse_pmset_custom(capture(name)) == modes
    # `pmset -g` would print no mode from these: the per-source sections hold none in use.
    assert machine.parse_pmset_mode("Currently in use:\n sleep 1\n") is None


@pytest.mark.parametrize(("source", "expected"), [("ac", "High Power"),
                                                  ("battery", "Low Power")])
def test_the_mode_in_use_falls_back_to_the_current_sources_section(monkeypatch, source,
                                                                   expected):
    """A `pmset -g` without the key: the mode the current source is set to, from the real
    `pmset -g custom` with Low Power on battery and High Power on AC."""
    batt = {"ac": "pmset_batt_ac_maccli69.txt",
            "battery": "pmset_batt_battery_spaceship640.txt"}[source]
    outputs = {"pmset -g batt": capture(batt), "pmset -g": "Currently in use:\n sleep 1\n",
               "pmset -g custom": capture("pmset_custom_battery_low_ac_high.txt"),
               "ioreg": '  |   "AppleClamshellState" = No\n'}

    def run(args, *rest, **kw):
        return outputs[" ".join(args[:3]) if args[0] == "pmset" else args[0]]
    monkeypatch.setattr(machine.commands, "run_command", run)
    from siliconbench.core.machine.power import power_status_macos
    status = power_status_macos()
    assert (status.power_source, status.power_mode) == (source, expected)
    assert status.low_power_mode is (expected == "Low Power")
    assert status.lid_closed is False


def test_the_lid_line():
    # Only this line is quoted by projects that read it (SOURCES.md: no whole capture).
    assert machine.parse_clamshell('  |   "AppleClamshellState" = Yes\n') is True
    assert machine.parse_clamshell('  |   "AppleClamshellState" = No\n') is False
    assert machine.parse_clamshell("") is None


def test_every_capture_is_tested_and_has_a_source():
    tables = (SYSCTL_CAPTURES, SYSTEM_PROFILER_CAPTURES, SW_VERS_CAPTURES, PMSET_BATT_CAPTURES,
              PMSET_CAPTURES, PMSET_CUSTOM_CAPTURES)
    tested = [name for table in tables for name, _ in table]
    on_disk = sorted(p.name for p in MACOS.iterdir() if p.name != "SOURCES.md")
    assert sorted(tested) == on_disk
    sources = capture("SOURCES.md")
    assert [name for name in on_disk if f"`{name}`" not in sources] == []


# --- what the captures do not show: formats the parsers must survive ------------------------


@pytest.mark.parametrize(
    ("number_processors", "chip", "expected"),
    [
        # Invented layouts that no capture shows, kept to pin the rules down.
        ("proc 10:4:6:0", "Apple M5", (10, tiers(("super", 4), ("efficiency", 6)))),
        ("proc 24:16:8:0", "Apple M2 Ultra", (24, tiers(("performance", 16), ("efficiency", 8)))),
        ("proc 15:5:0:10", None, (15, tiers(("super", 5), ("performance", 10)))),
        ("proc 12:8:8", None, (12, None)),  # numbers that do not add up: no tiers
        (4, None, (4, None)),
        ("garbage", None, (None, None)),
    ],
)
def test_number_processors_layouts(number_processors, chip, expected):
    data = {"SPHardwareDataType": [{"number_processors": number_processors, "chip_type": chip}]}
    parsed = machine.parse_system_profiler(data)
    assert (parsed["cpu_physical_cores"], parsed["cpu_tiers"]) == expected


def test_parse_sysctl_partial_listing_gives_no_tiers():
    # hw.nperflevels says two levels but only one is listed: no split rather than a wrong one.
    text = "hw.nperflevels: 2\nhw.perflevel0.name: Performance\nhw.perflevel0.physicalcpu: 8\n"
    assert machine.parse_sysctl(text)["cpu_tiers"] is None


def test_parse_pmset_edge_cases():
    # Invented: a Mac with no battery prints only the first line; garbage; Low Power Mode as
    # newer macOS spells it (no real capture of these was found).
    assert machine.parse_pmset_batt("Now drawing from 'AC Power'\n") == {
        "power_source": "ac", "battery_percent": None}
    assert machine.parse_pmset_batt("garbage") == {
        "power_source": "unknown", "battery_percent": None}
    assert machine.parse_pmset_lowpower(" lowpowermode         1\n womp 0\n") is True
    assert machine.parse_pmset_lowpower(" powermode            1\n") is True
    assert machine.parse_pmset_lowpower(" powermode            2\n") is False
    assert machine.parse_pmset_mode(" powermode            2\n") == "High Power"
    # Both keys printed: powermode, the newer one, says which mode (it can be High Power).
    assert machine.parse_pmset_mode(" lowpowermode         0\n powermode            2\n") \
        == "High Power"
    assert machine.parse_pmset_lowpower(" sleep 1\n") is None
    assert machine.parse_sw_vers("") is None


def test_describe_cpu_tiers():
    assert (machine.describe_cpu_tiers(tiers(("super", 6), ("performance", 12)))
            == "18-core CPU: 6 super + 12 performance")
    assert machine.describe_cpu_tiers(tiers((None, 3))) == "3-core CPU"
    assert machine.describe_cpu_tiers(None) is None


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


def test_probe_m5_max_names_super_and_performance_tiers(monkeypatch):
    monkeypatch.setattr(commands, "run_command", mac_commands(**M5_MAX))
    monkeypatch.setattr(platform, "mac_ver", lambda: ("", ("", "", ""), ""))  # no sw_vers
    info = machine.probe_macos()
    assert info.cpu_tiers == tiers(("super", 6), ("performance", 12))
    assert info.sources["cpu_tiers"] == "sysctl"
    assert info.chip == "Apple M5 Max" and info.sources["chip"] == "system_profiler"
    # That sysctl listing has no hw.memsize: memory comes from system_profiler, and says so.
    assert info.memory_bytes == 128 * 1024**3
    assert info.sources["memory_bytes"] == "system_profiler"
    assert info.summary() == (
        "MacBook Pro · Apple M5 Max · 18-core CPU: 6 super + 12 performance · 128 GB · macOS")


def test_probe_m5_max_without_sysctl_reads_the_tiers_from_system_profiler(monkeypatch):
    monkeypatch.setattr(commands, "run_command",
                        mac_commands(system_profiler=M5_MAX["system_profiler"]))
    info = machine.probe_macos()
    assert info.cpu_tiers == tiers(("super", 6), ("performance", 12))
    assert info.sources["cpu_tiers"] == "system_profiler"


def test_probe_prefers_sysctl_tiers_over_system_profiler(monkeypatch):
    # The Rosetta capture's bare count (8) says nothing of tiers; sysctl's levels do.
    monkeypatch.setattr(commands, "run_command", mac_commands(
        sysctl="m1_macbookair_sysctl_hw.txt",
        system_profiler=["m1_rosetta_macbookair_SPHardwareDataType.json"]))
    info = machine.probe_macos()
    assert info.cpu_tiers == tiers(("performance", 4), ("efficiency", 4))
    assert (info.memory_bytes, info.sources["memory_bytes"]) == (17179869184, "sysctl")
    assert info.model_name == "MacBook Air (M1, 2020)"
    assert info.sources["model_name"] == "mac_models.json"


def test_probe_virtual_mac_has_one_unnamed_tier(monkeypatch):
    monkeypatch.setattr(commands, "run_command", mac_commands(**VM))
    info = machine.probe_macos()
    assert info.cpu_tiers == tiers((None, 3))
    assert info.chip == "Apple M1 (Virtual)" and info.model_identifier == "VirtualMac2,1"
    assert info.os_version == "26.6.2" and info.sources["os_version"] == "sw_vers"
    assert info.summary() == (
        "Apple Virtual Machine 1 · Apple M1 (Virtual) · 3-core CPU · 7 GB · macOS 26.6.2")
    assert machine.virtual_mac(info.to_dict())


def test_probe_intel_mac_has_one_unnamed_tier_and_no_chip(monkeypatch):
    monkeypatch.setattr(commands, "run_command", mac_commands(**INTEL))
    info = machine.probe_macos()
    assert info.cpu_tiers == tiers((None, 4)) and info.chip is None
    assert info.cpu_model == "Intel(R) Core(TM) i7-8700B CPU @ 3.20GHz"
    assert info.gpu_name == "Apple Paravirtualized Graphics Device"
    assert info.summary() == (
        "Mac mini · Intel(R) Core(TM) i7-8700B CPU @ 3.20GHz · 4-core CPU · 14 GB"
        " · macOS 15.7.9 · Apple Paravirtualized Graphics Device")
    assert not machine.virtual_mac(info.to_dict())


def test_probe_reads_power_from_pmset(monkeypatch):
    monkeypatch.setattr(commands, "run_command", mac_commands(
        pmset_batt="pmset_batt_battery_spaceship640.txt", pmset="pmset_g_arm64_aldente603.txt"))
    info = machine.probe_macos()
    assert (info.power_source, info.battery_percent, info.low_power_mode) == ("battery", 95, False)


def test_probe_macos_with_system_profiler_failing_keeps_sysctl_fields(monkeypatch):
    run = mac_commands(**VM)

    def slow_profiler(args):
        if args[0] == "system_profiler":
            raise subprocess.TimeoutExpired(args, 5)
        return run(args)

    monkeypatch.setattr(commands, "run_command", slow_profiler)
    info = machine.probe_macos()
    assert info.gpu_cores is None and info.gpu_name is None
    assert info.chip == "Apple M1 (Virtual)" and info.sources["chip"] == "sysctl"
    assert info.memory_bytes == 7516192768


def test_probe_macos_with_every_command_missing_gives_none_fields(monkeypatch):
    monkeypatch.setattr(commands, "run_command", missing_command)
    info = machine.probe_macos()
    assert info.os_name == "macOS"
    assert info.chip is None and info.model_identifier is None and info.model_name is None
    assert info.memory_bytes is None and info.gpu_cores is None and info.cpu_model is None
    assert info.cpu_tiers is None and "cpu_tiers" not in info.sources
    assert (
        info.power_source == "unknown"
        and info.battery_percent is None
        and info.low_power_mode is None
    )


def test_probe_macos_with_garbage_output_gives_none_fields(monkeypatch):
    monkeypatch.setattr(commands, "run_command", lambda args: "\x00 not what you expected {")
    info = machine.probe_macos()
    assert info.chip is None and info.memory_bytes is None and info.gpu_cores is None
    assert info.cpu_tiers is None
    assert info.power_source == "unknown"


def test_probe_linux_on_recorded_epyc(monkeypatch, tmp_path):
    files = {
        "/proc/cpuinfo": "cpuinfo.txt",
        "/proc/meminfo": "meminfo.txt",
        "/etc/os-release": "os-release.txt",
    }
    monkeypatch.setattr(commands, "read_text", lambda path: recorded(EPYC, files[str(path)]))
    monkeypatch.setattr(commands, "run_command", lambda args: recorded(EPYC, "lscpu.txt"))
    monkeypatch.setattr(linux, "nvidia_gpu", lambda: None)
    monkeypatch.setattr(power, "POWER_SUPPLY_DIR", tmp_path / "absent")
    info = machine.probe_linux()
    assert info.cpu_model == "AMD EPYC"
    assert (info.cpu_cores, info.cpu_physical_cores) == (2, 2)
    assert info.memory_bytes == 24684084 * 1024
    assert info.os_version == "Debian GNU/Linux 12 (bookworm)"
    assert info.power_source == "unknown"
    assert info.chip is None and info.model_identifier is None


def test_probe_linux_with_lscpu_missing_still_reads_proc(monkeypatch):
    monkeypatch.setattr(commands, "run_command", missing_command)
    monkeypatch.setattr(linux, "nvidia_gpu", lambda: None)
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
    monkeypatch.setattr(power, "POWER_SUPPLY_DIR", tmp_path)
    monkeypatch.setattr(platform, "system", lambda: "Linux")
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
    assert linux.nvidia_gpu() == {
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "gpu_memory_bytes": 85520809984,
    }


def test_nvidia_gpu_without_driver_is_none(monkeypatch):
    def no_driver():
        raise RuntimeError("NVML Shared Library Not Found")

    monkeypatch.setitem(sys.modules, "pynvml", types.SimpleNamespace(nvmlInit=no_driver))
    assert linux.nvidia_gpu() is None
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert linux.nvidia_gpu() is None


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
        cpu_tiers=tiers(("performance", 8), ("efficiency", 2)),
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
        "MacBook Pro (16-inch, 2021) · Apple M1 Max · 10-core CPU: 8 performance + 2 efficiency"
        " · 32-core GPU · 64 GB · macOS 14.5 · AC power"
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
        "AMD EPYC 7763 64-Core Processor · 2 cores · 23.5 GB · Linux 6.1.0-18-amd64"
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
        "import siliconbench.core.machine, sys; "
        "print([m for m in ('torch', 'tensorflow', 'PySide6', 'mlx') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_probe_does_not_import_frameworks():
    code = (
        "import siliconbench.core.machine, sys; siliconbench.core.machine.probe(); "
        "print([m for m in ('torch', 'tensorflow', 'PySide6', 'mlx') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_old_records_perf_and_eff_cores_become_tiers():
    old = sample_info().to_dict()
    del old["cpu_tiers"], old["sources"]
    old |= {"perf_cores": 8, "eff_cores": 2}
    info = MachineInfo.from_dict(old)
    assert info.cpu_tiers == tiers(("performance", 8), ("efficiency", 2))
    assert info.key() == sample_info().key()  # old and new records of one Mac group together
    # Old records stored a virtual Mac's single level as performance cores.
    single = MachineInfo.from_dict({"chip": "Apple M1 (Virtual)", "perf_cores": 3})
    assert single.cpu_tiers == tiers((None, 3)) and single.cpu_summary() == "3-core CPU"
    assert MachineInfo.from_dict({"chip": "Apple M1 Max"}).cpu_tiers is None
    # Old records of M5 Macs stored the Super level as perf_cores (captures: M5, M5 Max).
    m5_max = MachineInfo.from_dict({"chip": "Apple M5 Max", "perf_cores": 6, "eff_cores": 12})
    assert m5_max.cpu_summary() == "18-core CPU: 6 super + 12 performance"
    m5 = MachineInfo.from_dict({"chip": "Apple M5", "perf_cores": 4, "eff_cores": 6})
    assert m5.cpu_summary() == "10-core CPU: 4 super + 6 efficiency"


def test_key_tells_binned_chips_apart():
    full, binned = sample_info(), sample_info()
    binned.cpu_tiers = tiers(("performance", 6), ("efficiency", 2))
    assert full.key() != binned.key()


def test_other_cpu_of_same_chip():
    # The two M3 Max captures: 12 + 4 (hw.targettype J516c) and the binned 10 + 4.
    big = machine.parse_sysctl(capture("m3max_macbookpro16_sysctl_hw.txt")) | {
        "chip": "Apple M3 Max"}
    binned = machine.parse_sysctl(capture("m3max_sequoia_archspec_sysctl.txt"))
    assert machine.other_cpu_of_same_chip(big, binned) == (
        "16-core CPU: 12 performance + 4 efficiency", "14-core CPU: 10 performance + 4 efficiency")
    assert machine.other_cpu_of_same_chip(binned, binned) is None
    m4_max = machine.parse_sysctl(capture("m4max_sequoia_archspec_sysctl.txt"))
    assert machine.other_cpu_of_same_chip(big, m4_max) is None  # other chips: no warning


@pytest.mark.parametrize("captures", [M5_MAX, VM, INTEL], ids=["m5max", "vm", "intel"])
def test_a_probed_mac_travels_in_a_result_file(captures, monkeypatch):
    """What a Mac's probe records (tiers, sources) must pass the import schema, or a run
    kept in a file when the store failed could never be imported."""
    from siliconbench.core.results import RunRecord, records_from_json, records_to_json
    monkeypatch.setattr(commands, "run_command", mac_commands(**captures))
    info = machine.probe_macos()
    rec = RunRecord("gemm", "torch", "mps", {}, machine=info.to_dict())
    back = records_from_json(records_to_json([rec]))[0]
    assert machine.MachineInfo.from_dict(back.machine).cpu_tiers == info.cpu_tiers
    assert back.machine["sources"] == info.sources


def test_compare_says_when_two_runs_power_states_differ():
    from siliconbench.core.results import RunRecord
    studio = RunRecord(workload="gemm", framework="mlx", device="gpu", params={},
                       machine={"power_source": "ac"})
    studio.telemetry = {"power_state": {
        "start": {"power_source": "ac", "power_mode": "Automatic", "lid_closed": None},
        "end": {"power_source": "ac", "power_mode": "Automatic", "lid_closed": None}}}
    laptop = RunRecord(workload="gemm", framework="mlx", device="gpu", params={},
                       machine={"power_source": "battery"})
    laptop.telemetry = {"power_state": {
        "start": {"power_source": "ac", "power_mode": "High Power", "lid_closed": False},
        "end": {"power_source": "battery", "power_mode": "High Power", "lid_closed": False}}}
    said = machine.power_state_warnings("Mac Studio", studio, "MacBook Pro", laptop)
    assert said == [
        "different power: Mac Studio ran on AC, MacBook Pro on AC then on battery",
        "MacBook Pro's power changed during the run (on AC then on battery)",
        "different power mode: Mac Studio ran in Automatic mode, MacBook Pro in High Power mode"]
    # An older record without power states: its machine probe's Low Power Mode.
    old = RunRecord(workload="gemm", framework="mlx", device="gpu", params={},
                    machine={"power_source": "ac", "low_power_mode": True})
    assert machine.power_state_warnings("old", old, "Mac Studio", studio) == [
        "different power mode: old ran in Low Power mode, Mac Studio in Automatic mode"]
    assert machine.power_state_warnings("a", studio, "b", studio) == []
