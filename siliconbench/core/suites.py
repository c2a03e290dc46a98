"""Named suites of runs (siliconbench/resources/suites.json), expanded over the machine's usable devices."""

from __future__ import annotations

import json

from siliconbench import resources
from siliconbench.core.catalogue import headline, workload
from siliconbench.core.frameworks import DeviceInfo, runs_on
from siliconbench.core.numbers import peak_text, value_text
from siliconbench.core.results import FLAGS, SERIOUS_FLAGS, RunRecord
from siliconbench.core.runner import RunSpec


def load_suites() -> dict:
    text = resources.read_text("suites.json")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def expand(name: str, devices: list[DeviceInfo], label: str | None = None,
           store=None) -> list[RunSpec]:
    """One RunSpec per (suite entry, usable device of a framework the workload runs on).
    `store`: the results store the command or the app opened, whose triads measured here size
    the LLM it fits (None: rough figures)."""
    suites = load_suites()
    if name not in suites:
        raise ValueError(f"Unknown suite {name!r}; choose one of {', '.join(suites)}.")
    suite = suites[name]
    quick = suite.get("quick_measure", False)
    specs = []
    for entry in suite["runs"]:
        frameworks = entry.get("frameworks") or runs_on(workload(entry["workload"]))
        kinds = entry.get("kinds") or ("cpu", "gpu")
        for d in devices:
            if d.usable and d.framework in frameworks and d.kind in kinds:
                params = dict(entry.get("params", {}))
                if "fit" in entry:
                    params.update(fit_llm(entry["fit"], params, d, quick, store))
                specs.append(RunSpec(entry["workload"], d.framework, d.id, params, label,
                                     quick=quick))
    return specs


def llm_dtype(device: DeviceInfo) -> str:
    """The LLM's precision in the quick suite: float32 on a CPU (every CPU multiplies in it at
    full speed, bfloat16 is emulated on most), bfloat16 on CUDA, float16 on other GPUs."""
    if device.kind == "cpu":
        return "float32"
    return "bfloat16" if device.id.startswith("cuda") else "float16"


def fit_llm(fit: dict, params: dict, device: DeviceInfo, quick: bool, store=None) -> dict:
    """The largest of fit["presets"] (listed largest first) whose memory fits the device's
    (siliconbench.core.estimate: weights, the cache and a prefill's activations in 80% of its memory) and
    whose estimated time fits fit["budget_s"]; the last preset where none does."""
    from siliconbench.core.estimate import estimate
    dtype = llm_dtype(device)
    for preset in fit["presets"]:
        chosen = {"preset": preset, "dtype": dtype}
        est = estimate("llm", {**params, **chosen}, device, quick, store)
        if not est.too_big and est.seconds is not None and est.seconds <= fit["budget_s"]:
            return chosen
    return {"preset": fit["presets"][-1], "dtype": dtype}


def summary_lines(records: list[RunRecord]) -> list[str]:
    """A suite's outcome in a few lines: per device, each workload's headline (its best point,
    with % of the device's peak where known) or why the run has none."""
    devices: dict[str, list[RunRecord]] = {}
    for rec in records:
        where = f"{rec.device_name or rec.device} ({rec.framework} {rec.device})"
        devices.setdefault(where, []).append(rec)
    lines: list[str] = []
    for where, recs in devices.items():
        lines.append(where)
        for rec in recs:
            title = workload(rec.workload).title
            row = headline(rec)
            if rec.status != "ok":
                text = f"{rec.status}: {rec.reason or 'no reason given'}"
            elif row is None:
                text = "nothing measured"
            else:
                point = ", ".join(f"{k} {v}" for k, v in row.params.items())
                text = f"{value_text(row)} ({'; '.join(x for x in (point, peak_text(row)) if x)})"
                # A headline that cannot be trusted, or is to be read with care, says so
                # where it is read.
                doubts = [FLAGS[f] for f in SERIOUS_FLAGS if f in row.flags]
                if doubts:
                    text += f" — not to be trusted: {'; '.join(doubts)}"
                elif "noisy" in row.flags:
                    text += f" — read with care: {FLAGS['noisy']}"
            lines.append(f"  {title}: {text}")
    return lines
