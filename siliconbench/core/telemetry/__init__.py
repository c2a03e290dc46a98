"""Power, thermal and load telemetry sampled by the parent process while a run's child works
(it costs the workload nothing), the energy metrics derived from it, and sustained-mode rows.

One module per concern; this package re-exports their public names, so callers keep writing
`from siliconbench.core.telemetry import X`:

- sources.py: the Source interface, DEFAULT_INTERVAL_S, and the sources every OS has (psutil's
  load and memory, battery).
- nvidia.py: NVIDIA's GPU through NVML (NvmlSource), nvml_index under CUDA_VISIBLE_DEVICES.
- thermal.py: macOS thermal pressure, its levels and ThermalPressureSource (notify(3)).
- powermetrics.py: `sudo -n powermetrics`, its plist parser and PowermetricsSource.
- ioreport.py: Apple Silicon's IOReport power (IOReportSource) and mac_power_source, which picks
  IOReport or powermetrics.
- counters.py: the energy counters the worker reads around a point (NVML, IOReport, RAPL through
  powercap) and energy_counter, which picks the run device's.
- meter.py: PointMeter, the per-point meter around a point's timed blocks.
- trust.py: power_trusted, which power and efficiency rows may be shown.
- sampler.py: TelemetrySampler, the thread that samples during a run, and default_sources.
- summary.py: the run-level summary of the sampled series.
- derived.py: the rows derived per point (power, efficiency, throttle state) and per run.
- throughput.py: sustained mode's throughput per window and throttle ratio.

A test that replaces a name replaces it in the module that looks it up (the sampler reads
`sampler.DEFAULT_INTERVAL_S` and `sampler.default_sources`), not here.
"""

from __future__ import annotations

from siliconbench.core.telemetry.counters import (
    CLOCK_REASON_WORDS,
    CLOCK_REASONS,
    COUNTER_MIN_S,
    IOREPORT_RAILS,
    POWERCAP_ENV,
    RAPL_HELP,
    RAPL_ROOT,
    EnergyCounter,
    IOReportCounter,
    NvmlCounter,
    RaplCounter,
    energy_counter,
    rapl_counter,
    rapl_delta,
)
from siliconbench.core.telemetry.derived import (
    MIN_POINT_S,
    MIN_SAMPLES,
    NEAR_IDLE,
    THROUGHPUT_METRICS,
    PointPower,
    derived_rows,
    point_power,
    throttle_words,
)
from siliconbench.core.telemetry.ioreport import (
    IOREPORT_EXTRA,
    IOREPORT_FIELDS,
    IOReportSource,
    ioreport_values,
    mac_power_source,
)
from siliconbench.core.telemetry.meter import IDLE_S, KEEP_UP_S, PointMeter, merge_states
from siliconbench.core.telemetry.nvidia import NvmlSource, nvml_index
from siliconbench.core.telemetry.powermetrics import (
    POWERMETRICS_HELP,
    SUDOERS_LINE,
    PlistStream,
    PowermetricsSource,
    powermetrics_command,
    powermetrics_values,
    sudo_failure_reason,
)
from siliconbench.core.telemetry.sampler import (
    TelemetrySampler,
    default_sources,
    power_series_name,
)
from siliconbench.core.telemetry.sources import (
    DEFAULT_INTERVAL_S,
    BatterySource,
    PsutilSource,
    Source,
    Values,
)
from siliconbench.core.telemetry.summary import TEMPERATURE_SERIES, summarize_series
from siliconbench.core.telemetry.thermal import (
    NOTIFY_STATUS_OK,
    THERMAL_LEVELS,
    THERMAL_NOTIFICATION,
    ThermalPressureSource,
    load_libsystem,
    thermal_level,
    thermal_level_name,
)
from siliconbench.core.telemetry.throughput import Sustained, sustained, sustained_rows
from siliconbench.core.telemetry.trust import POWER_METRICS, power_trusted
