"""Who this machine is: chip or CPU, Mac model, GPU, memory, OS, power source, framework
versions. Probes per OS; each parser is a pure function of one command's text, tested on
recorded outputs.

One module per concern; this package re-exports their public names, so callers keep writing
`from siliconbench.core.machine import X`:

- record.py: MachineInfo, the record kept with every run (its summary line and hardware key),
  virtual_mac, other_cpu_of_same_chip, host_hash (the host identity, one-way) and the CPU
  core tiers in words.
- commands.py: run_command and read_text, which every probe calls, and attempt (a failing
  step leaves its facts unknown).
- mac.py: the Mac's facts from sysctl, system_profiler and sw_vers (probe_macos), and the Mac
  model names.
- linux.py: Linux's facts from /proc, lscpu, /etc/os-release and NVML (probe_linux, nvidia_gpu),
  and probe_other for any other OS.
- power.py: PowerStatus and power_status (pmset, /sys/class/power_supply), re-read when asked.
- probing.py: probe(), once per process, and framework_versions.

A test that replaces a name replaces it in the module that looks it up (`commands.run_command`
and `commands.read_text`, `linux.nvidia_gpu`, `power.POWER_SUPPLY_DIR`), not here: those are
not re-exported, so a replacement made here fails instead of reaching nothing.
"""

from __future__ import annotations

from siliconbench.core.machine.linux import (
    parse_cpuinfo,
    parse_lscpu,
    parse_meminfo,
    parse_os_release,
    probe_linux,
    probe_other,
)
from siliconbench.core.machine.mac import (
    SYSCTL_KEYS,
    mac_model_name,
    mac_model_names,
    parse_sw_vers,
    parse_sysctl,
    parse_system_profiler,
    probe_macos,
)
from siliconbench.core.machine.power import (
    PowerStatus,
    parse_clamshell,
    parse_pmset_batt,
    parse_pmset_custom,
    parse_pmset_lowpower,
    parse_pmset_mode,
    parse_power_supplies,
    power_state_warnings,
    power_status,
)
from siliconbench.core.machine.probing import FRAMEWORK_DISTRIBUTIONS, framework_versions, probe
from siliconbench.core.machine.record import (
    MachineInfo,
    describe_cpu_tiers,
    host_hash,
    other_cpu_of_same_chip,
    virtual_mac,
)
