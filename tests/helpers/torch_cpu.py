"""torch on this CPU: a run context, the bandwidth sweep, the tiny LLM with spread weights
(`spread_model`, a fixture registered in tests/conftest.py) and the command run in-process or
under a memory limit. torch is imported only when one of them is used."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from siliconbench.core.cli import main
from siliconbench.core.context import RunContext
from siliconbench.core.frameworks.torch import adapter as torch_adapter
from siliconbench.core.measure import QUICK
from siliconbench.core.results import Row
from siliconbench.core.workloads import bandwidth, llm
from tests.conftest import SHORT_PROTOCOL
from tests.helpers.cli_processes import ROOT

TINY = llm.PRESETS["tiny"]


# For runs that check rows, kernels, notes and a bound's arithmetic, not numbers: QUICK
# shortened as conftest.SHORT_PROTOCOL shortens a CLI run's (QUICK's caps let each point take
# up to 1 s + 2 s, most of those tests' time on a loaded machine).
SHORT = replace(QUICK, **json.loads(SHORT_PROTOCOL))


def context(events, peak=None, settings=QUICK):
    """A run's context on the torch CPU with QUICK's protocol (or `settings`), its events kept
    in `events`."""
    import torch
    return RunContext(framework="torch", device_id="cpu", adapter=torch_adapter,
                      device=torch.device("cpu"), device_name="test cpu", emit=events.append,
                      settings=settings, peak=peak)


def short_context(events, peak=None):
    """context() in the short protocol (SHORT)."""
    return context(events, peak, SHORT)


def sweep(params, peak=None, settings=SHORT):
    """The bandwidth workload at 1 and 2 MB on the torch CPU (the short protocol, or
    `settings`): its rows, and every event."""
    events = []
    bandwidth.run(context(events, peak, settings),
                  {"sizes_mb": [1, 2], "ops": list(bandwidth.OPS)}
                  | params)
    return [Row.from_dict(e["row"]) for e in events if e["event"] == "row"], events


@pytest.fixture
def spread_model():
    """The tiny model with weights large enough that greedy decode changes token at every
    step (at its init's 0.02 it repeats one token, which any broken loop would too)."""
    import torch

    from siliconbench.core.frameworks.torch import llm as torch_llm
    lm = torch_llm.TorchLM(TINY, "float32", torch.device("cpu"))
    torch.manual_seed(1)
    with torch.no_grad():
        for p in lm.model.parameters():
            if p.dim() == 2:
                p.normal_(0, 3 / p.shape[1] ** 0.5)
    return lm


def run_cli(capsys, *args: str) -> tuple[int, dict | None, str]:
    """`siliconbench run ARGS --json --quick` in-process (the run itself is a child process):
    exit code, the run record (None when nothing ran) and stderr."""
    code = main(["run", *args, "--json", "--quick"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


def run_limited(args: list[str], home: Path, data_bytes: int) -> subprocess.CompletedProcess:
    """The command in a subprocess whose heap may not grow past data_bytes (inherited by the
    run's child processes): an out-of-memory on the CPU without filling the machine."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (data_bytes, data_bytes))
    env = dict(os.environ, SILICONBENCH_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", "run", *args, "--json", "--quick"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=240,
                          preexec_fn=limit, check=False)


def by_metric(rows) -> dict:
    return {(r["metric"] if isinstance(r, dict) else r.metric): r for r in rows}
