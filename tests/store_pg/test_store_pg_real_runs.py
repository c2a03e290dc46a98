"""Real tiny runs (GEMM, MLX on the CPU: a tenth of a second to import) made with `siliconbench
run --store URL`: with the server up the run is in the shared store at once; with the server
stopped the run still ends well, is kept on this machine and says so, and `siliconbench store
sync` sends it once the server is back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.store_pg.conftest import new_database

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "gemm", "--sizes", "16", "--dtypes", "float32", "--quick", "--json",
       "--framework", "mlx"]


def _sb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "siliconbench.core.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, env=dict(os.environ), timeout=240)


def test_real_runs_reach_the_shared_store_once_whether_it_was_up_or_not(own_server, tmp_path,
                                                                        monkeypatch):
    shared = new_database(own_server, tmp_path, monkeypatch)
    url = shared.url("mach_a")
    up = _sb(*RUN, "--store", url)
    assert up.returncode == 0, up.stderr
    first = json.loads(up.stdout)["id"]
    assert shared.count(first) == 1 and "kept on this machine" not in up.stderr

    own_server.stop()
    down = _sb(*RUN, "--store", url)
    assert down.returncode == 0, down.stderr
    second = json.loads(down.stdout)["id"]
    assert "is kept on this machine and not yet in the shared store" in down.stderr
    assert "cannot be reached" in down.stderr

    own_server.start()
    assert shared.count(second) == 0
    synced = _sb("store", "sync", "--store", url)
    assert synced.returncode == 0 and "Sent 1 run to the shared store." in synced.stdout
    listed = _sb("results", "--json", "--store", url)
    assert sorted(r["id"] for r in json.loads(listed.stdout)) == sorted([first, second])
    assert shared.count() == 2
