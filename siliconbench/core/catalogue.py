"""The workload catalogue. Each module under siliconbench/core/workloads declares one WORKLOAD
(cheap to import: no framework at module level) and a run(ctx, params) that the worker calls;
the catalogue finds them by their files. It sits low, beside the store (whose listings read
each run's headline), and imports the workload modules only by name, when first asked; the
frameworks a workload runs on come from the framework registry
(siliconbench.core.frameworks.runs_on)."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cache

from siliconbench.core.params import Param
from siliconbench.core.results import Row


@dataclass(frozen=True)
class Workload:
    """A workload as the catalogue lists it: its name, parameters and how it runs."""
    name: str
    title: str
    summary: str                    # one line: what it measures
    params: tuple[Param, ...]
    module: str                     # holds the entry function, run(ctx, params) by default
    order: int = 100                # where the catalogue lists it, lowest first
    # The frameworks it runs on, for a test workload, or serve (every framework: with --url
    # the server's engine is measured): the others' are those whose package declares them
    # (FrameworkInfo.workloads; siliconbench.core.frameworks.runs_on).
    frameworks: tuple[str, ...] = ()
    metric: str = ""                # the headline metric: charts, "best", summaries
    x: str = ""                     # the point parameter a curve of `metric` sweeps (log2
                                    # axis); empty: the metric is drawn as bars or tabled
    entry: str = "run"
    hidden: bool = False            # test workloads stay out of listings
    # A function of the module giving more tables for the terminal from a record:
    # [(title, header, rows of cells)], e.g. llm's llama-bench-like pp512/tg128 table.
    terminal_tables: str = ""
    distributed: bool = False       # runs as ranks under the framework's own launcher
                                    # (params processes, hosts, port, backend)
    multiplies: bool = True         # its numbers rest on matrix products, so a framework's
                                    # word on its BLAS (adapter.caveat) applies to them
    starts_runs: bool = False       # its run only starts other runs (ChildRun), which import
                                    # the framework: its own process never does (seconds)
    # The workloads whose runs stored here bound its numbers (siliconbench.core.kit.ceilings):
    # the command or the app reads them from its store before the run and passes them in.
    held_against: tuple[str, ...] = ()
    # A function of the module, plans(params) -> (params, precision, model), that works out
    # the run's inputs once where it starts (siliconbench.core.plan.RunPlan): the llm's
    # model file read, its precision decided. Empty: the parameters as resolved, no model.
    plans: str = ""
    checks: str = ""                # a function of the module, checks(params, framework),
                                    # that refuses (ParamError) what the parameters (and the
                                    # framework, None in the app's form) rule out: called
                                    # before any process starts, so the sentence comes at once

    def more_tables(self, rec) -> list[tuple[str, list[str], list[list[str]]]]:
        if not self.terminal_tables:
            return []
        return getattr(importlib.import_module(self.module), self.terminal_tables)(rec)

    def check(self, params: dict, framework: str | None = None) -> None:
        if self.checks:
            getattr(importlib.import_module(self.module), self.checks)(params, framework)

    def plan(self, params: dict, framework: str | None = None
             ) -> tuple[dict, str | None, object]:
        """(the parameters the run keeps, its precision, its model), worked out and checked
        (ParamError): `plans`, then `checks`; the run's plan takes them
        (siliconbench.core.child.plan_run), the app's form its refusals."""
        if self.plans:
            params, precision, model = getattr(importlib.import_module(self.module),
                                               self.plans)(params)
        else:
            precision, model = None, None
        self.check(params, framework)
        return params, precision, model

    def run(self, ctx, params: dict) -> None:
        getattr(importlib.import_module(self.module), self.entry)(ctx, params)

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "summary": self.summary,
                "metric": self.metric, "x": self.x,
                "params": [p.to_dict() for p in self.params]}


class UnknownWorkload(ValueError):
    pass


@cache
def catalogue() -> dict[str, Workload]:
    """Every workload: the WORKLOAD (or WORKLOADS) of each module in this folder, in their
    declared order; adding a workload is adding its module."""
    import importlib.util
    import pkgutil
    package = "siliconbench.core.workloads"
    folder = importlib.util.find_spec(package).submodule_search_locations
    modules = [f"{package}.{m.name}" for m in pkgutil.iter_modules(folder) if not m.ispkg]
    # Extra workload modules (tests' crash/hang workloads, plug-ins), comma-separated.
    modules += [m for m in os.environ.get("SILICONBENCH_EXTRA_WORKLOADS", "").split(",") if m]
    found: list[Workload] = []
    for name in modules:
        mod = importlib.import_module(name)
        found += getattr(mod, "WORKLOADS", None) or [mod.WORKLOAD]
    return {w.name: w for w in sorted(found, key=lambda w: w.order)}


def listed() -> list[Workload]:
    return [w for w in catalogue().values() if not w.hidden]


def workload(name: str) -> Workload:
    try:
        return catalogue()[name]
    except KeyError:
        names = ", ".join(w.name for w in listed())
        raise UnknownWorkload(f"Unknown workload {name!r}; choose one of {names}.") from None


def headline(rec) -> Row | None:
    """A run's headline: the best measured row of its workload's declared metric (the
    highest rate, the shortest time), or None when it measured none (or the workload is
    unknown here, e.g. imported from a newer SiliconBench)."""
    from siliconbench.core.compare_stats import direction

    w = catalogue().get(rec.workload)
    rows = [r for r in rec.rows if w is not None and r.metric == w.metric
            and r.value is not None]
    if not rows:
        return None
    lower = direction(rows[0].metric, rows[0].unit) == "lower"
    return (min if lower else max)(rows, key=lambda r: r.value)
