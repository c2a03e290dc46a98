"""Power on a Mac through `sudo -n powermetrics`: its plist stream parsed (pure), the command, why
it could not start (the sudoers rule it needs), and the source that runs it."""

from __future__ import annotations

import plistlib
import subprocess
import threading
from collections.abc import Callable
from typing import ClassVar
from xml.parsers.expat import ExpatError

from siliconbench.core.telemetry.sources import DEFAULT_INTERVAL_S, Source, Values
from siliconbench.core.telemetry.thermal import thermal_level

SUDOERS_LINE = "%admin ALL=(root) NOPASSWD: /usr/bin/powermetrics"
POWERMETRICS_HELP = (
    "GPU and CPU power on a Mac come from powermetrics, which needs root. To allow it once, "
    "run `sudo visudo -f /etc/sudoers.d/siliconbench` and add the line "
    f"`{SUDOERS_LINE}`; it lets administrators run powermetrics (and nothing else) without a "
    "password. On Apple Silicon, `pip install 'siliconbench[macpower]'` reads power without "
    "root instead. SiliconBench works without either, with no power figures.")


class PlistStream:
    """Splits powermetrics' `-f plist` stream (one XML plist per sample, separated by NUL
    bytes) into dicts. A plist is complete only once the next one starts, or at flush()."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[dict]:
        self._buffer += chunk
        *complete, self._buffer = self._buffer.split(b"\0")
        return [doc for doc in map(_load_plist, complete) if doc is not None]

    def flush(self) -> list[dict]:
        rest, self._buffer = self._buffer, b""
        doc = _load_plist(rest)
        return [doc] if doc is not None else []


def _load_plist(data: bytes) -> dict | None:
    data = data.strip()
    if not data:
        return None
    try:
        doc = plistlib.loads(data)
    except (plistlib.InvalidFileException, ExpatError, ValueError):
        return None   # a truncated sample (the process was stopped mid-write) is skipped
    return doc if isinstance(doc, dict) else None


def powermetrics_values(doc: dict) -> Values:
    """One powermetrics sample -> series values. Apple Silicon reports power (mW) and the GPU's
    clock and busy share, not temperatures; Intel Macs' smc sampler adds die temperatures."""
    out: Values = {}
    proc = doc.get("processor") or {}
    elapsed_s = (doc.get("elapsed_ns") or 0) / 1e9
    for name, key in (("cpu_power_w", "cpu"), ("gpu_power_w", "gpu"), ("ane_power_w", "ane")):
        mw = proc.get(f"{key}_power")
        if mw is None and proc.get(f"{key}_energy") is not None and elapsed_s > 0:
            mw = proc[f"{key}_energy"] / elapsed_s     # mJ over the interval
        if mw is not None:
            out[name] = ("W", float(mw) / 1000)
    if proc.get("combined_power") is not None:
        out["package_power_w"] = ("W", float(proc["combined_power"]) / 1000)
    elif proc.get("package_watts") is not None:       # Intel Macs
        out["package_power_w"] = ("W", float(proc["package_watts"]))
    for cluster in proc.get("clusters") or []:
        # "E-Cluster", "P0-Cluster", "P1-Cluster": each cluster's active clock, in Hz here.
        name = str(cluster.get("name", "")).lower().removesuffix("-cluster").replace("-", "_")
        if name and cluster.get("freq_hz") is not None:
            out[f"cpu_{name}_clock_mhz"] = ("MHz", float(cluster["freq_hz"]) / 1e6)
    gpu = doc.get("gpu") or {}
    states = [s for s in gpu.get("dvfm_states") or []
              if s.get("freq") is not None and s.get("used_ratio") is not None]
    if states:
        # Residency at the top: the share of the interval the GPU ran at its highest
        # frequency state, which falls when it is held below it (heat, power).
        top = max(s["freq"] for s in states)
        out["gpu_top_state_percent"] = ("%", 100.0 * sum(
            s["used_ratio"] for s in states if s["freq"] == top))
    if gpu.get("freq_hz") is not None:
        out["gpu_clock_mhz"] = ("MHz", float(gpu["freq_hz"]))  # the key says Hz; it is MHz
    if gpu.get("idle_ratio") is not None:
        out["gpu_active_percent"] = ("%", 100.0 * (1.0 - float(gpu["idle_ratio"])))
    smc = doc.get("smc") or {}
    for name, key in (("cpu_temperature_c", "cpu_die"), ("gpu_temperature_c", "gpu_die")):
        if smc.get(key) is not None:
            out[name] = ("°C", float(smc[key]))
    if smc.get("fan") is not None:
        out["fan_rpm"] = ("rpm", float(smc["fan"]))
    level = thermal_level(doc.get("thermal_pressure"))   # what the `thermal` sampler adds
    if level is not None:
        out["thermal_pressure"] = ("level", float(level))
    return out


def powermetrics_command(arch: str, interval_s: float = DEFAULT_INTERVAL_S) -> list[str]:
    """`sudo -n` never asks for a password: without the sudoers rule it fails at once. Intel
    Macs add the smc sampler (die temperatures, fan); Apple Silicon has none and reports no
    temperatures through powermetrics."""
    samplers = "cpu_power,gpu_power,thermal" + (",smc" if arch == "x86_64" else "")
    return ["sudo", "-n", "/usr/bin/powermetrics", "--samplers", samplers, "-f", "plist",
            "-i", str(max(100, round(interval_s * 1000)))]


def sudo_failure_reason(stderr: str) -> str:
    """sudo's complaint (`sudo: a password is required`) as the 'power unavailable' reason."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else "powermetrics could not be started"


class PowermetricsSource(Source):
    """GPU, CPU and package power from `sudo -n powermetrics`, which works only once the user
    has added the sudoers rule (POWERMETRICS_HELP); otherwise it says why, once."""

    name = "powermetrics"
    power_labels: ClassVar[dict[str, str]] = {
        "gpu_power_w": "GPU (powermetrics)", "cpu_power_w": "CPU (powermetrics)",
        "package_power_w": "CPU+GPU package (powermetrics)"}

    def __init__(self, command: list[str]) -> None:
        super().__init__()
        self.command = command
        self._proc: subprocess.Popen | None = None
        self._got_sample = False

    def open(self, emit: Callable[[Values], None]) -> None:
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            self.notes.append(f"power unavailable: {e.strerror or e}. {POWERMETRICS_HELP}")
            return
        self._reader = threading.Thread(target=self._read, args=(emit,), daemon=True)
        self._reader.start()

    def _read(self, emit: Callable[[Values], None]) -> None:
        stream = PlistStream()
        for chunk in iter(lambda: self._proc.stdout.read1(1 << 16), b""):
            for doc in stream.feed(chunk):
                self._got_sample = True
                emit(powermetrics_values(doc))
        for doc in stream.flush():
            self._got_sample = True
            emit(powermetrics_values(doc))

    def close(self) -> None:
        p = self._proc
        if p is None:
            return
        if p.poll() is None:
            p.terminate()     # sudo relays it to powermetrics
            try:
                p.wait(3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._reader.join(timeout=3)
        stderr = p.stderr.read().decode("utf-8", "replace") if p.stderr else ""
        if not self._got_sample:
            self.notes.append(f"power unavailable: {sudo_failure_reason(stderr)}. "
                              f"{POWERMETRICS_HELP}")


class PowermetricsClocks(PowermetricsSource):
    """The clocks and GPU residency alone from `sudo -n powermetrics`, beside IOReport's power
    (which has no clocks) in a sustained run: each CPU cluster's clock, the GPU's clock, busy
    share and top-state residency. Without the sudoers rule it says so once, as clocks (the
    run's power is IOReport's)."""

    name = "powermetrics clocks"
    power_labels: ClassVar[dict[str, str]] = {}
    KEEP = ("_clock_mhz", "gpu_active_percent", "gpu_top_state_percent")

    def open(self, emit: Callable[[Values], None]) -> None:
        super().open(lambda values: emit({k: v for k, v in values.items()
                                          if k.endswith(self.KEEP)}))

    def close(self) -> None:
        super().close()
        self.notes = [n.replace("power unavailable:", "GPU and CPU clocks unavailable:", 1)
                      for n in self.notes]
