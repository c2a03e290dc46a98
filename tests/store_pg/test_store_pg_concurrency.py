"""Eight machines saving at once: 8 processes, each its own SiliconBench with its own local
store, save 25 runs each into the shared store together; all 200 arrive, none twice."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from siliconbench.core.run_store import open_store

ROOT = Path(__file__).resolve().parents[2]
PROCESSES, RUNS = 8, 25

SAVER = """
import dataclasses, os, sys, time
from pathlib import Path
from siliconbench.core.run_store import open_store
from tests.helpers.recorded import recorded
n, go = int(sys.argv[1]), Path(sys.argv[2])
template = recorded("gemm-torch")
store = open_store()
(go.parent / f"ready-{n}").touch()
deadline = time.monotonic() + 240
while not go.exists():
    if time.monotonic() > deadline:
        sys.exit("no go within 240 s")
    time.sleep(0.01)
for i in range(int(sys.argv[3])):
    store.save(dataclasses.replace(template, id=f"{n:02d}-{i:03d}-{template.id}"))
store.close()
"""


def test_eight_processes_saving_at_once_keep_every_run_once(shared, tmp_path, qtbot):
    go = tmp_path / "go"
    procs = []
    for n in range(PROCESSES):
        env = os.environ | {"SILICONBENCH_STORE": shared.url("mach_a" if n % 2 else "mach_b"),
                            "SILICONBENCH_HOME": str(tmp_path / f"machine-{n}")}
        procs.append(subprocess.Popen([sys.executable, "-c", SAVER, str(n), str(go), str(RUNS)],
                                      cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True))
    # All at once: each has imported and connected before any saves.
    deadline = time.monotonic() + 240
    while not all((tmp_path / f"ready-{n}").exists() or procs[n].poll() is not None
                  for n in range(PROCESSES)):
        assert time.monotonic() < deadline, "the savers were not all ready within 240 s"
        time.sleep(0.05)
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        assert "kept on this machine" not in err
    with shared.admin() as db:
        ids = [row[0] for row in db.execute("SELECT id FROM siliconbench.runs")]
    assert len(ids) == PROCESSES * RUNS and len(set(ids)) == len(ids)
    assert {i[:6] for i in ids} == {f"{n:02d}-{i:03d}" for n in range(PROCESSES)
                                    for i in range(RUNS)}
    # The app open on the shared store: its Results lists every one of them.
    from siliconbench.gui.results_browser import ResultsBrowser
    lab = open_store(shared.url("mach_a"))
    browser = ResultsBrowser(lab)
    qtbot.addWidget(browser)
    browser.reload()
    assert browser.model.rowCount() == PROCESSES * RUNS
    assert len(lab.listing()) == PROCESSES * RUNS
    lab.close()
