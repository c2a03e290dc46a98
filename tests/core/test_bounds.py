"""What a stored bandwidth run may bound: only arrays of 64 MB and 4 times the last-level
cache (a --sizes-mb 4 run measures a cache, not the memory), and on a CPU the read kernel
measured beside the triad (a decode only reads; STREAM's triad counts 3 arrays where a
write-allocating core moves 4), the triad where the read streams slower, never under it. Each
bandwidth row carries STREAM's best rate beside the median."""

import json
from dataclasses import replace

import pytest

from siliconbench.core.kit import ceilings
from siliconbench.core.kit.ceilings import (
    MEASURED_READ,
    MEASURED_TRIAD,
    bound_min_mb,
    last_level_cache,
    stored_bounds,
    stored_ceiling,
    triad_name,
)
from siliconbench.core.machine import probe
from siliconbench.core.results import Row
from siliconbench.core.store import Store
from siliconbench.core.workloads import bandwidth
from tests.helpers.bounds import assert_cpu_decode_bound, bound_figures
from tests.helpers.recorded import recorded


def store(tmp_path, monkeypatch, rec):
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    rec.machine = probe().to_dict()          # a run of this machine
    s = Store(tmp_path / "results.sqlite3")
    s.save(rec)
    s.close()
    return rec


def kept(tmp_path) -> dict:
    """The bounds the command or the app reads from the store before a run."""
    s = Store(tmp_path / "results.sqlite3")
    try:
        return stored_bounds(s)
    finally:
        s.close()


def test_a_4_mb_bandwidth_run_is_refused_as_a_bound(tmp_path, monkeypatch):
    rec = store(tmp_path, monkeypatch, recorded("bandwidth-torch"))   # 1 and 4 MB arrays
    assert max(r.params["size_mb"] for r in rec.rows) == 4
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32") is None
    # Even with no cache known (a GPU whose L2 is not asked): the 64 MB floor holds.
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32", cache_bytes=0) is None


def test_arrays_must_pass_four_times_the_last_level_cache(tmp_path, monkeypatch):
    """An H100's 50 MB L2: a 64 MB triad is the cache's, 256 MB the memory's."""
    rec = recorded("bandwidth-torch")
    triads = [r for r in rec.rows if r.params["op"] == "triad"]
    for row, size in zip(triads, (64, 256)):     # the same rows, as runs of larger arrays
        row.params = {**row.params, "size_mb": size}
    rec.rows = triads
    store(tmp_path, monkeypatch, rec)
    l2 = 50 * 2**20
    assert bound_min_mb(l2) == 200 and bound_min_mb(None) == bound_min_mb(0) == 64
    ceiling = stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32", cache_bytes=l2)
    assert ceiling.source == MEASURED_TRIAD and ceiling.value == triads[1].value
    assert "(torch, 256 MB arrays)" in ceiling.text
    rec.rows = triads[:1]
    store(tmp_path, monkeypatch, rec)         # the newest run: 64 MB alone
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32", cache_bytes=l2) is None
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32",
                          cache_bytes=0).value == triads[0].value


def test_a_cpu_s_decode_bound_is_the_read_kernel(tmp_path, monkeypatch):
    monkeypatch.setattr(ceilings, "last_level_cache", lambda: 32 * 2**20)
    rec = recorded("bandwidth-torch")
    [triad] = [r for r in rec.rows if r.params["op"] == "triad" and r.params["size_mb"] == 4]
    triad.params = {**triad.params, "size_mb": 256}
    rec.rows = [triad]
    store(tmp_path, monkeypatch, rec)
    # A run with no read kernel does not bound a CPU's decode: its triad is no read's rate.
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32",
                          read=True) is None
    read = read_row(triad, 1.3)
    rec.rows = [triad, read]
    store(tmp_path, monkeypatch, rec)
    ceiling = stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32", read=True)
    assert (ceiling.source, ceiling.value) == (MEASURED_READ, read.value)
    assert ceiling.text.startswith(f"the read kernel (s = sum(a)) {read.value:.4g} GB/s "
                                   f"beside {triad_name(rec.settings)} {triad.value:.4g} "
                                   "GB/s, measured here by run ")
    # A decode at 1.2 times the triad is not called wrong against the read.
    _, flags, note = ceilings.against_ceiling(ceiling, 1.2 * triad.value, "GB/s", [])
    assert "above_peak" not in flags and "the read kernel" in note
    assert "above_peak" in ceilings.against_ceiling(
        stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32"),
        1.2 * triad.value, "GB/s", [])[1]


def read_row(triad: Row, times: float) -> Row:
    """A read kernel's row beside `triad`, at `times` its rate."""
    return Row("gb_per_s", times * triad.value, "GB/s", {**triad.params, "op": "read"},
               triad.stats, [], None, None, [times * s for s in triad.samples])


def test_a_cpu_s_decode_bound_is_never_under_the_triad_beside_its_read(tmp_path,
                                                                       monkeypatch):
    """This project's 2-core VM: torch.sum read 24.1 GB/s where the triad read 29.7. The bound
    is then the triad, and the record says why; the read alone, or a read row at another size
    than the triad's, does not serve."""
    monkeypatch.setattr(ceilings, "last_level_cache", lambda: 32 * 2**20)
    rec = recorded("bandwidth-torch")
    [triad] = [r for r in rec.rows if r.params["op"] == "triad" and r.params["size_mb"] == 4]
    triad.params = {**triad.params, "size_mb": 256}
    read = read_row(triad, 24.1 / 29.7)
    rec.rows = [read]
    store(tmp_path, monkeypatch, rec)
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32",
                          read=True) is None
    rec.rows = [triad, read]
    store(tmp_path, monkeypatch, rec)
    ceiling = stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32",
                          read=True)
    assert (ceiling.source, ceiling.value) == (MEASURED_TRIAD, triad.value) > (
        MEASURED_TRIAD, read.value)
    assert ceiling.text.startswith(f"{triad_name(rec.settings)} {triad.value:.4g} GB/s, "
                                   "measured here by run ")
    assert ceiling.text.endswith(
        f"above the read kernel (s = sum(a)) {read.value:.4g} GB/s beside it (a decode only "
        "reads, but this CPU's read kernel streams slower than the triad: the bound is the "
        "higher of the two)")
    # A decode at the triad's rate is not called wrong.
    assert "above_peak" not in ceilings.against_ceiling(ceiling, triad.value, "GB/s", [])[1]
    # The read and the triad at one size: a 512 MB read beside a 256 MB triad is not paired.
    rec.rows = [triad, replace(read, params={**read.params, "size_mb": 512})]
    store(tmp_path, monkeypatch, rec)
    assert stored_ceiling(kept(tmp_path), rec.device_name, "bandwidth", "float32",
                          read=True) is None


def test_the_last_level_cache_is_read_from_sysfs():
    cache = last_level_cache()
    from pathlib import Path
    if not Path("/sys/devices/system/cpu/cpu0/cache").exists():
        assert cache is None
    else:
        assert cache is None or cache >= 2**16


@pytest.mark.usefixtures("short_protocol")
def test_every_bandwidth_row_carries_stream_s_best_rate():
    from siliconbench.core.measure import settings_for
    from tests.helpers.torch_cpu import sweep
    rows, events = sweep({"sizes_mb": [1], "ops": ["triad", "read"]},
                         settings=settings_for(True))
    for row in rows:
        best = max(row.samples)
        assert bandwidth.best_rate(row) == best >= row.value
        from siliconbench.core.numbers import quantity
        assert f"best rate {quantity(best, 'GB/s')} (STREAM's headline" in row.note
    assert [r.params["op"] for r in rows] == ["triad", "read"]
    settings = [e["settings"] for e in events if e["event"] == "settings"]
    assert settings[0]["read_kernel"] == "torch.sum(a)"
    assert settings[0]["stream_kernels"] == {"triad": "a = b + s*c"}   # read is not STREAM's


def test_the_read_kernel_sums_one_array():
    from types import SimpleNamespace

    import numpy as np
    import torch

    from siliconbench.core.frameworks.llamacpp.ops import Ops as NumpyOps
    from siliconbench.core.frameworks.torch.ops import Ops as TorchOps
    ctx = SimpleNamespace(device=torch.device("cpu"), device_id="cpu",
                          adapter=SimpleNamespace(empty_cache=lambda d: None))
    for ops in (TorchOps(ctx), NumpyOps(ctx)):
        a = ops.random((300_001,), "float32")
        got = ops.read(a)()
        assert float(np.sum(np.asarray(got, dtype=np.float64))) == pytest.approx(
            float(ops.to_numpy(a).sum()), rel=1e-4)
        ops.release()
    assert bandwidth.MOVED["read"] == bandwidth.INPUTS["read"] == 1


@pytest.mark.usefixtures("short_protocol")
def test_a_decode_bound_measured_now_is_never_under_its_triad(monkeypatch):
    """own_bound on a CPU whose read streams slower than the triad (here a read that sums its
    array eight times over): the bound is the triad measured beside it, and says so."""
    import torch

    from siliconbench.core.context import RunContext
    from siliconbench.core.frameworks.torch import adapter
    from siliconbench.core.frameworks.torch.ops import TorchOps
    from siliconbench.core.measure import settings_for

    def slow_read(self, a):
        return lambda: [torch.sum(a) for _ in range(8)][-1]
    monkeypatch.setattr(TorchOps, "read", slow_read)
    monkeypatch.setattr(bandwidth, "OWN_BOUND_MB", (4,))
    events = []
    ctx = RunContext(framework="torch", device_id="cpu", adapter=adapter,
                     device=torch.device("cpu"), device_name="test cpu", emit=events.append,
                     settings=settings_for(True))
    bound = bandwidth.own_bound(ctx)
    read, triad = bound_figures(bound.text)
    assert read < triad and (bound.source, f"{bound.value:.4g}") == (MEASURED_TRIAD,
                                                                     f"{triad:.4g}")
    assert bound.text.startswith("STREAM's triad (a = b + s*c) ")
    assert "measured by this run (torch, 4 MB arrays), above the read kernel" in bound.text
    assert bound.text.endswith("the bound is the higher of the two)")
    from siliconbench.core.workloads.llm import bound_setting
    assert_cpu_decode_bound(bound_setting(bound)["memory_bound"])


def test_the_bounds_passed_to_a_run_keep_only_what_can_be_picked(tmp_path, monkeypatch):
    """stored_bounds reads a store of many runs into the few entries a run's plan carries:
    an older run of a framework on the device whose arrays are no larger than a newer one's
    is never the bound (the newer one serves wherever it would), so it is left out; what
    stored_ceiling picks from them is what it picked from the store's every run."""
    import dataclasses
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    base = recorded("bandwidth-torch")
    [triad] = [r for r in base.rows if r.params["op"] == "triad" and r.params["size_mb"] == 4]

    def keep(sizes):
        """Runs of triads of these sizes, oldest first; the bounds read from them."""
        path = tmp_path / f"{'-'.join(map(str, sizes))}.sqlite3"
        s = Store(path)
        for i, size in enumerate(sizes):
            row = dataclasses.replace(triad, params={**triad.params, "size_mb": size},
                                      value=triad.value * (i + 1))
            rec = dataclasses.replace(base, id=f"{i:08d}" + base.id[8:], rows=[row],
                                      created_at=f"2026-01-0{i + 1}T00:00:00Z",
                                      machine=probe().to_dict())
            s.save(rec)
        bounds = stored_bounds(s)
        s.close()
        return bounds
    # Newest first, each smaller than the one before it: all three can be picked.
    bounds = keep([1024, 256, 64])
    assert [e["sizes"][-1][0] for e in bounds["bandwidth"]] == [64, 256, 1024]
    assert bounds["gemm"] == []
    for cache, size in ((0, 64), (50 * 2**20, 256), (100 * 2**20, 1024)):
        ceiling = stored_ceiling(bounds, base.device_name, "bandwidth", "float32",
                                 cache_bytes=cache)
        assert f"({base.framework}, {size} MB arrays)" in ceiling.text
    # Newest the largest: the older runs are never the bound, and are not passed on.
    bounds = keep([64, 256, 1024])
    assert [e["sizes"][-1][0] for e in bounds["bandwidth"]] == [1024]
    assert stored_ceiling(bounds, base.device_name, "bandwidth", "float32",
                          cache_bytes=0).value == 3 * triad.value
    json.dumps(bounds)     # plain JSON: it crosses to the run's process in its plan
    # An older run with a read beside its triad stays where the newer, larger one has none:
    # a CPU's decode bound needs both at one size.
    s = Store(tmp_path / "64-256-1024.sqlite3")
    older = s.runs(workload="bandwidth")[-1]
    s.close()
    path = tmp_path / "read.sqlite3"
    s = Store(path)
    s.save(dataclasses.replace(older, rows=older.rows + [read_row(older.rows[0], 1.1)]))
    newer = s.runs(workload="bandwidth")
    s.save(dataclasses.replace(base, id="9" * 8 + base.id[8:], machine=probe().to_dict(),
                               created_at="2026-02-01T00:00:00Z",
                               rows=[dataclasses.replace(triad, params={
                                   **triad.params, "size_mb": 1024})]))
    bounds = stored_bounds(s)
    s.close()
    assert newer and len(bounds["bandwidth"]) == 2
    ceiling = stored_ceiling(bounds, base.device_name, "bandwidth", "float32", read=True,
                             cache_bytes=0)
    assert ceiling.source == MEASURED_READ and f"run {older.id[:8]}" in ceiling.text


def test_a_shared_store_s_bounds_are_read_in_this_machine_s_file(tmp_path, monkeypatch):
    """With a lab's shared store chosen, the bounds come from this machine's own file (where
    its runs are kept first and stay), not from the lab's thousands over the network: the
    shared database, here one that answers nothing, is never asked."""
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    rec = recorded("bandwidth-torch")
    [triad] = [r for r in rec.rows if r.params["op"] == "triad" and r.params["size_mb"] == 4]
    triad.params = {**triad.params, "size_mb": 256}
    rec.rows = [triad]
    store(tmp_path, monkeypatch, rec)

    class Shared:         # a SharedStore's face: reads go to the lab's database
        local = Store(tmp_path / "results.sqlite3")

        def runs(self, *args, **kwargs):
            raise AssertionError("the shared database was read for a run's bounds")
    shared = Shared()
    try:
        bounds = stored_bounds(shared)
    finally:
        shared.local.close()
    assert stored_ceiling(bounds, rec.device_name, "bandwidth", "float32",
                          cache_bytes=0).value == triad.value


def test_the_runner_passes_a_run_what_its_workload_is_held_against(tmp_path, monkeypatch):
    """runner.execute reads the bounds from the store it was given into the spec (the run's
    plan carries them to its process); a workload held against nothing reads nothing."""
    from siliconbench.core.child import plan_run
    from siliconbench.core.runner import RunSpec, with_ceilings
    rec = store(tmp_path, monkeypatch, recorded("bandwidth-torch"))
    s = Store(tmp_path / "results.sqlite3")
    try:
        spec = with_ceilings(RunSpec("llm", "torch", "cpu", {"preset": "tiny"}), s)
        assert spec.ceilings == stored_bounds(s) and spec.ceilings["bandwidth"]
        assert {e["run"] for e in spec.ceilings["bandwidth"]} == {rec.id[:8]}
        assert plan_run(spec).to_dict()["ceilings"] == spec.ceilings   # frozen in the plan
        assert with_ceilings(RunSpec("gemm", "torch", "cpu"), s).ceilings == {}
    finally:
        s.close()
