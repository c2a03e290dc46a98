"""Results and the queue name what a run measured (the model, the precision, TF32): the H200's
TF32 GEMM read like its plain float32 one. The Device filter lists PyTorch's "cuda" and
"cuda:0" as one device. The H200 records are real runs (tests/data/h200); the "cuda:0" copy
is one of them with its id and device changed, as a run addressed as cuda:0 records it."""

from __future__ import annotations

from siliconbench.core.child import RunSpec
from siliconbench.core.results import new_id
from siliconbench.gui.results_browser import DEVICE, WORKLOAD
from tests.helpers.h200_records import h200


def _cells(window, column: int) -> dict[str, str]:
    model = window.results.model
    return {rec.id: model.cell(rec, column) for rec in model.records}


def test_results_name_the_precision_tf32_and_model(qtbot, window, store):
    plain, tf32, llm = h200("h200-gemm"), h200("h200-gemmtf32"), h200("h200-llm8b")
    store.import_records([plain, tf32, llm])
    window.results.reload()
    cells = _cells(window, WORKLOAD)
    assert cells[tf32.id] == "Matrix multiply (TFLOPS) · float32 · TF32"
    assert cells[plain.id] == "Matrix multiply (TFLOPS) · float32, bfloat16, float16"
    assert cells[llm.id] == "LLM inference (tokens/s) · llama-3.1-8b · bfloat16"
    # The Workload filter still lists a workload once, and the search finds TF32.
    combo = window.results.combos[WORKLOAD]
    assert [combo.itemText(i) for i in range(1, combo.count())].count(
        "Matrix multiply (TFLOPS)") == 1
    window.results.search.setText("tf32")
    assert window.results.shown_ids({plain.id, tf32.id, llm.id}) == {tf32.id}


def test_cuda_and_cuda0_are_one_device_in_the_filter(qtbot, window, store):
    first = h200("h200-gemm")
    second = h200("h200-gemmtf32")
    second.id, second.device = new_id(), "cuda:0"
    store.import_records([first, second])
    window.results.reload()
    combo = window.results.combos[DEVICE]
    devices = [combo.itemText(i) for i in range(1, combo.count())]
    assert len(devices) == 1 and "cuda:0" in devices[0], devices
    window.results.set_filter("Device", devices[0])
    assert window.results.shown_ids({first.id, second.id}) == {first.id, second.id}


def test_the_queue_names_the_precision_and_tf32(qtbot, window, short_protocol):
    jobs = window.queue.enqueue([RunSpec("gemm", "torch", "cpu",
                                         {"dtypes": ["float32"], "sizes": [64], "tf32": True}),
                                 RunSpec("llm", "torch", "cpu", {"preset": "tiny"})],
                                ["Matrix multiply (TFLOPS) · This CPU (torch cpu)",
                                 "LLM inference (tokens/s) · This CPU (torch cpu)"])
    assert jobs[0].title.endswith(" · float32 · TF32")
    assert jobs[1].title.endswith(" · tiny · bfloat16")
    assert window.queue_view.row_for(jobs[0]).title.text() == jobs[0].title
    window.queue.cancel_all()
