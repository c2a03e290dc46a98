"""The bandwidth workload's triad is STREAM's (a = b + s*c, 3 arrays) since it runs STREAM's
four kernels; a record made before ran d = a*b + c over 4 arrays under the same op name. A
record keeps its meaning: its settings say which it was, and the LLM bound that divides its
figure names the kernel it used."""

from siliconbench.core.kit.ceilings import (
    STREAM_KERNELS,
    stored_bounds,
    stored_ceiling,
    triad_name,
)
from siliconbench.core.machine import probe
from siliconbench.core.store import Store
from siliconbench.core.workloads import bandwidth
from tests.helpers.recorded import recorded


def test_stream_s_kernels_and_byte_counts():
    assert bandwidth.OPS == ("copy", "scale", "add", "triad")
    assert bandwidth.MOVED == {"copy": 2, "scale": 2, "add": 3, "triad": 3, "read": 1}
    assert STREAM_KERNELS["triad"][0] == "a = b + s*c" and bandwidth.SCALAR == 3.0


def test_a_record_from_before_reads_as_the_four_array_kernel():
    old = recorded("bandwidth-torch")           # a real run, before STREAM's kernels
    assert "stream_kernels" not in old.settings
    assert triad_name(old.settings) == \
        "the triad d = a*b + c (4 arrays, SiliconBench's before STREAM's)"
    assert triad_name({**old.settings, "stream_kernels": {"triad": "a = b + s*c"}}) == \
        "STREAM's triad (a = b + s*c)"


def test_the_llm_bound_from_an_old_record_names_its_kernel(tmp_path, monkeypatch):
    from siliconbench.core.kit import ceilings
    monkeypatch.setattr(ceilings, "MIN_BOUND_MB", 4)      # the record's arrays: 1 and 4 MB
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    old = recorded("bandwidth-torch")
    old.machine = probe().to_dict()
    store = Store(tmp_path / "results.sqlite3")
    store.save(old)
    bounds = stored_bounds(store)
    store.close()
    ceiling = stored_ceiling(bounds, old.device_name, "bandwidth", "float32", cache_bytes=0)
    assert ceiling.text.startswith("the triad d = a*b + c (4 arrays") and \
        old.id[:8] in ceiling.text
