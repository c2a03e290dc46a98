"""Issue #41 (the GUI): the Results selection and the chart tab in front are the user's; a run
that ends, is cancelled or is imported joins Results without changing them (Preferences can
have new runs selected); Compare opens an LLM run on decode; the LLM tab draws each decode
series' memory bound as a line with its value, and no label overprints another or a point.
Everything on real records (tests/data/records, h200, h100)."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from siliconbench.core.numbers import number  # noqa: E402
from siliconbench.core.results import RunRecord, records_from_file  # noqa: E402
from siliconbench.core.runner import RunSpec  # noqa: E402
from siliconbench.gui.run_queue import RunJob  # noqa: E402
from tests.helpers.gui import compare_view  # noqa: E402
from tests.helpers.h200_records import (  # noqa: E402
    gpu_and_cpu,
    h100_runs,  # noqa: E402
    h200,
)
from tests.helpers.recorded import recorded  # noqa: E402

DATA = Path(__file__).parent.parent / "data"


def every_real_run() -> list[RunRecord]:
    """The H200's, the H100's and this machine's recorded runs."""
    return gpu_and_cpu() + h100_runs() + records_from_file(DATA / "runs" / "tiny-cpu-runs.json")


def fresh(rec: RunRecord, **changes) -> RunRecord:
    """A real run as a new run of the same kind would end: its own id."""
    return dataclasses.replace(rec, id=uuid.uuid4().hex, **changes)


def end(window, rec: RunRecord, batch: int = 9999) -> RunJob:
    """`rec` ends in the window's queue as a run that was measured: saved, then announced."""
    job = RunJob(RunSpec(rec.workload, rec.framework, rec.device, dict(rec.params)),
                 f"{rec.workload} (test)", batch=batch)
    job.record, job.saved = rec, True
    job.state = "ok" if rec.status == "ok" else rec.status
    window.store.save(rec)
    window.queue.jobs.append(job)
    window.queue.job_ended.emit(job)
    return job


def selected_ids(window) -> set[str]:
    return {r.id for r in window.results.selected_records()}


@pytest.fixture
def stocked(window):
    """The window over a store of every real run, all of them selected."""
    runs = every_real_run()
    # One more than the real records: a copy of a GEMM run under its own id.
    runs.append(fresh(recorded("gemm-torch")))
    for rec in runs:
        window.store.save(rec)
    window.results.reload()
    window.select_all_runs()
    assert len(selected_ids(window)) == len(runs) >= 51
    return window


def test_a_run_ending_keeps_a_51_run_selection(stocked):
    window = stocked
    before = selected_ids(window)
    new = fresh(recorded("bandwidth-torch"))
    end(window, new)
    assert window.results.model.rowCount() == len(before) + 1      # listed
    assert selected_ids(window) == before                          # and nothing else changed
    assert {r.id for r in window.compare.records} == before


def test_a_finished_run_hidden_by_the_filters_leaves_the_selection_drawn(window):
    for rec in every_real_run():
        window.store.save(rec)
    window.results.reload()
    window.results.set_filter("Workload", "Memory bandwidth (GB/s)")
    shown = window.results.proxy
    two = {shown.data(shown.index(i, 0), 0x0100).id for i in range(2)}
    window.results.select_ids(two)
    assert selected_ids(window) == two
    end(window, fresh(recorded("allreduce-torch")))
    assert selected_ids(window) == two
    drawn = {s.key[0] for s in window.charts.curves["gb_per_s"].series}
    assert two <= drawn


def test_a_cancelled_run_it_here_leaves_compare_as_it_was(window):
    runs = [recorded("gemm-torch"), recorded("gemm-torch-second")]
    for rec in runs:
        window.store.save(rec)
    window.results.reload()
    window.select_all_runs()
    window.charts.setCurrentWidget(window.compare)
    assert window.compare.comparison is not None and window.compare.comparison.rows
    cancelled = fresh(recorded("gemm-torch"), status="cancelled", reason="cancelled")
    job_batch = 4242
    window.live_runs.compare_batches.add(job_batch)
    end(window, cancelled, batch=job_batch)
    assert selected_ids(window) == {r.id for r in runs}
    assert window.compare.comparison is not None and window.compare.comparison.rows


def test_preferences_can_select_new_runs(window):
    from siliconbench.gui.settings import selects_new_runs
    assert not selects_new_runs(window.settings)                    # off by default
    box = window.show_preferences().select_new_runs
    assert not box.isChecked()
    box.setChecked(True)
    assert selects_new_runs(window.settings)
    old = recorded("gemm-torch")
    window.store.save(old)
    window.results.reload()
    window.results.select_ids({old.id})
    new = fresh(recorded("bandwidth-torch"))
    end(window, new)
    assert selected_ids(window) == {new.id}


def test_a_run_importing_keeps_the_selection(window, tmp_path):
    old = recorded("gemm-torch")
    window.store.save(old)
    window.results.reload()
    window.results.select_ids({old.id})
    assert window.import_files([str(DATA / "h200" / "h200-bw.json")])
    assert window.results.model.rowCount() == 2
    assert selected_ids(window) == {old.id}


# ---------------------------------------------------------------- the chart tab


def test_a_live_run_leaves_the_chart_tab_the_user_chose(window):
    charts = window.charts
    bandwidth = charts.tab_of("gb_per_s")
    charts.setCurrentWidget(bandwidth)
    job = RunJob(RunSpec("llm", "torch", "cuda", {}), "llm (test)")
    job.record = h200("h200-llm8b")
    window.queue.row_arrived.emit(job)                  # a run's rows arrive, live
    assert charts.curves["decode_tokens_per_s"].has_data()   # drawn where it belongs
    assert charts.currentWidget() is bandwidth               # the user's tab stays


def test_compare_opens_llm_runs_on_decode(qtbot):
    view = compare_view(qtbot, 1440, 800)
    by_time = {r.created_at[11:16]: r for r in h100_runs() if r.workload == "llm"}
    one_b = [by_time["10:19"], by_time["10:25"]]        # llama-3.2-1b, twice
    eight_b = [by_time["10:26"], h200("h200-llm8b")]    # 8B: 32 and 128 tokens generated
    view.set_records(one_b)
    groups = [view.chart_combo.itemData(i) for i in range(view.chart_combo.count())]
    assert groups[0][1] != "decode_tokens_per_s"        # the rows list another metric first
    assert view.chart_combo.currentData()[1] == "decode_tokens_per_s"
    assert view.current_chart() is view.curves["decode_tokens_per_s"]
    # The user's choice stays while the comparison has it.
    other = next(i for i, g in enumerate(groups) if g[1] == "prefill_tokens_per_s")
    view.chart_combo.setCurrentIndex(other)
    view.set_records(one_b[::-1])
    assert view.chart_combo.currentData()[1] == "prefill_tokens_per_s"
    # Runs that share no decode point still open on their decode curves, both drawn.
    view.set_records([])
    view.set_records(eight_b)
    assert view.chart_combo.currentData()[1] == "decode_tokens_per_s"
    decode = view.curves["decode_tokens_per_s"]
    assert view.current_chart() is decode
    assert {s.key[0] for s in decode.series} == {r.id for r in eight_b}


# ---------------------------------------------------------------- bounds and peak labels


def gpu_llm_runs() -> list[RunRecord]:
    return [r for r in h100_runs() + [h200("h200-llm8b")] if r.workload == "llm"]


def label_rects(chart, labels):
    return [label.sceneBoundingRect() for label in labels if label.isVisible()]


def assert_clear(qtbot, chart, labels):
    """The visible labels lie inside the plot, apart from each other and off every point."""
    from PySide6.QtCore import QPointF
    vb = chart.plot_item.vb

    def clear() -> bool:
        view = vb.sceneBoundingRect()
        rects = label_rects(chart, labels)
        points = [vb.mapViewToScene(QPointF(x, chart.y(r.value)))
                  for s in chart.series for x, r in zip(s.xs(), s.rows, strict=True)]
        return bool(rects) and all(
            view.left() - 1 <= r.left() and r.right() <= view.right() + 1
            and view.top() - 1 <= r.top() and r.bottom() <= view.bottom() + 1
            and not any(r.contains(p) for p in points)
            and not any(r.intersects(o) for o in rects if o is not r) for r in rects)
    qtbot.waitUntil(clear, timeout=3000)


def test_each_decode_bound_is_a_dashed_line_with_its_value(panel, qtbot):
    from PySide6.QtCore import Qt
    panel.show_records(gpu_llm_runs())
    decode = panel.curves["decode_tokens_per_s"]
    panel.setCurrentWidget(panel.tab_of("decode_tokens_per_s"))
    bounded = [s for s in decode.series if s.bounds]
    assert len(bounded) >= 3
    legend = decode.legend_names()
    labels = []
    for s in bounded:
        items = decode._items[s.key]
        xs, ys = items["bound"].getData()
        assert items["bound"].isVisible()
        assert items["bound"].opts["pen"].style() == Qt.PenStyle.DashLine
        if len(s.bounds) == 1:
            # A single depth is a point: its bound a dashed stretch across it, where a line
            # of one point drew nothing.
            (x,) = s.xs()
            assert list(ys) == [decode.y(s.bounds[0].value)] * 2
            assert xs[0] < x < xs[1]
        else:
            assert list(ys) == [decode.y(r.value) for r in s.bounds]
        # Its value is in the legend, whatever room the plot has for labels.
        values = sorted(r.value for r in s.bounds)
        span = number(values[0]) if len(set(values)) == 1 else \
            f"{number(values[0])}–{number(values[-1])}"
        assert f"{s.name} · bound {span} tok/s" in legend
        labels.append(items["bound_label"])
    shown = [label for label in labels if label.isVisible()]
    assert shown
    for label in shown:
        text = label.textItem.toPlainText()
        assert text.startswith("bound ") and text.endswith("tok/s")
    single = [s for s in bounded if len(s.bounds) == 1]
    assert single                                      # the H100 1B quick run
    assert_clear(qtbot, decode, labels)


def test_peak_labels_never_overprint_or_leave_the_plot(panel, qtbot):
    gemm = [h200("h200-gemm"), h200("h200-gemmtf32")] + \
        [r for r in h100_runs() if r.workload == "gemm"]
    panel.show_records(gemm)
    tflops = panel.curves["tflops"]
    panel.setCurrentWidget(tflops)
    labels = [line.label for line in tflops._peak_lines]
    assert len(labels) >= 3
    texts = [label.textItem.toPlainText() for label in labels]
    assert all(" peak " in t for t in texts)
    assert_clear(qtbot, tflops, labels)


# ---------------------------------------------------------------- the first launch's tick


def test_a_first_launch_ticks_pytorch_though_mlx_answers_first(window):
    from siliconbench.core.frameworks import DeviceInfo
    mlx_cpu = DeviceInfo("mlx", "cpu", "AMD EPYC", "cpu")
    torch_cpu = DeviceInfo("torch", "cpu", "AMD EPYC", "cpu")
    devices = window.devices
    devices.set_devices([mlx_cpu], final=False)     # MLX answers first
    window._pick_first_device()
    assert devices.checked_keys() == ["mlx:cpu"]
    devices.set_devices([torch_cpu, mlx_cpu])       # then PyTorch: the registry's first choice
    assert devices.checked_keys() == ["torch:cpu"]
    # A tick of the user's own is never moved.
    devices.boxes["torch:cpu"].setChecked(False)
    devices.boxes["mlx:cpu"].setChecked(True)
    devices.set_devices([torch_cpu, mlx_cpu])
    assert devices.checked_keys() == ["mlx:cpu"]
