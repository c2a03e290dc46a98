"""What Macs printed (tests/data/macos): a run_command that answers the probe's commands with
one Mac's captures, and the captures of an M5 Max, a VM and an Intel Mac."""

from __future__ import annotations

import json
from pathlib import Path

MACOS = Path(__file__).parent.parent / "data" / "macos"


def recorded(folder: Path, name: str) -> str:
    return (folder / name).read_text(encoding="utf-8")


def capture(name: str) -> str:
    return recorded(MACOS, name)


def missing_command(args: list[str]) -> str:
    raise FileNotFoundError(2, "No such file or directory", args[0])


def mac_commands(sysctl=None, system_profiler=(), sw_vers=None, pmset_batt=None, pmset=None):
    """A run_command that answers each macOS command with what one Mac printed.

    system_profiler: the captures of its data types; where they were captured one data type per
    command, the answer joins them as the one command the probe runs prints them together.
    A command with no capture fails as a missing one does.
    """
    answers = {"sysctl": sysctl, "sw_vers": sw_vers, "pmset -g batt": pmset_batt,
               "pmset -g": pmset}

    def run(args: list[str]) -> str:
        if args[0] == "system_profiler":
            if not system_profiler:
                return missing_command(args)
            joined = {}
            for name in system_profiler:
                joined.update(json.loads(capture(name)))
            return json.dumps(joined)
        name = answers[" ".join(args[:3]) if args[0] == "pmset" else args[0]]
        return capture(name) if name else missing_command(args)

    return run


M5_MAX = {"sysctl": "m5max_macbookpro_sysctl_perflevels.txt",
          "system_profiler": ["m5max_macbookpro_SPHardwareDataType.json"]}


VM = {"sysctl": "vm_m1_ghrunner_macos26_sysctl.txt",
      "system_profiler": ["vm_m1_ghrunner_macos26_SPHardwareDataType.json"],
      "sw_vers": "vm_m1_ghrunner_macos26_sw_vers.txt"}


INTEL = {"sysctl": "intel_ghrunner_macos15_sysctl.txt",
         "system_profiler": ["intel_ghrunner_macos15_SPHardwareDataType.json",
                             "intel_ghrunner_macos15_SPDisplaysDataType.json"],
         "sw_vers": "intel_ghrunner_macos15_sw_vers.txt"}
