"""The desktop app, offscreen (pytest-qt): real tiny GEMM runs through the runner from the
window's own controls, live plots, export, cancel, failures, imports, the results browser,
settings and themes. Sizes stay tiny: the machine running tests is small and shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402

from siliconbench.core.frameworks import DeviceInfo  # noqa: E402
from siliconbench.core.results import Row, RunRecord, records_to_json  # noqa: E402
from siliconbench.core.runner import RunSpec  # noqa: E402
from siliconbench.core.stats import summarize  # noqa: E402
from tests.helpers.dialogs import answer_file_dialog, the_sheet  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_MS = 240_000
CPU = DeviceInfo("torch", "cpu", "Test CPU", "cpu", 8 * 2**30)
# Where the framework is not what a test is about (cancel, failures, the queue), its runs go to
# MLX: its child imports it in a tenth of a CPU-second, PyTorch's in three.
MLX_CPU = DeviceInfo("mlx", "cpu", "Test CPU", "cpu", 8 * 2**30)


@pytest.fixture(autouse=True)
def _own_home(tmp_path, monkeypatch):
    # conftest.py does this too; kept so this file stands alone.
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path / "sb-home"))


@pytest.fixture
def window(qtbot, store, settings):
    from siliconbench.gui.main_window import MainWindow
    w = MainWindow(store, settings)
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.resize(1280, 820)
    w.show()
    qtbot.waitExposed(w)
    return w


def with_devices(window, devices=(CPU,)):
    window.devices.set_devices(list(devices), {d.framework: "test" for d in devices})


def set_tiny_gemm(window, sizes="64,128"):
    window.catalogue.select("gemm")
    form = window.form
    form.fields["sizes"].editor.setText(sizes)
    for dtype, box in form.fields["dtypes"].choice_boxes.items():
        box.setChecked(dtype == "float32")
    window.quick_box.setChecked(True)


def wait_idle(qtbot, window, timeout=RUN_TIMEOUT_MS):
    qtbot.waitUntil(lambda: not window.queue.busy, timeout=timeout)


def fake_record(device="mps", name="Apple M1 Max GPU (32-core)", machine=None, scale=5.0,
                peak="Apple M1 Max (32-core GPU)", flags=()):
    rec = RunRecord("gemm", "torch", device, {"sizes": [128, 256], "dtypes": ["float32"]},
                    device_name=name, machine=machine or {"chip": "Apple M1 Max",
                                                          "gpu_cores": 32},
                    settings={"peak": peak} if peak else {})
    for i, n in enumerate((128, 256)):
        samples = [scale * (i + 1) * f for f in (0.97, 0.99, 1.0, 1.01, 1.03)]
        s = summarize(samples)
        rec.rows.append(Row("tflops", s.median, "TFLOPS", {"size": n, "dtype": "float32"}, s,
                            list(flags), None, 50.0 if peak else None, samples))
    return rec


# ---------------------------------------------------------------- startup and layering

def test_building_the_window_imports_no_framework():
    code = ("import sys, siliconbench.gui.app, siliconbench.gui.main_window;"
            "print(sorted(m for m in ('torch', 'tensorflow', 'mlx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("command", [["-m", "siliconbench.gui"], ["-m", "siliconbench.core.cli"], ["-m", "siliconbench.core.cli", "gui"]],
                         ids=["python -m gui", "siliconbench", "siliconbench gui"])
def test_the_app_opens_from_every_entry_point(tmp_path, command):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SILICONBENCH_HOME=str(tmp_path),
               SILICONBENCH_GUI_EXIT_AFTER_SHOWN="1")
    out = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "SILICONBENCH_SHOWN" in out.stdout
    assert "frameworks imported: none" in out.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="a Mac always has a display")
def test_without_a_display_the_app_says_so(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["SILICONBENCH_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-m", "siliconbench.gui"], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=60)
    assert out.returncode == 2 and "no display" in out.stderr


# ---------------------------------------------------------------- the parameter form

def test_form_is_generated_from_the_declaration_and_marks_bad_values(window):
    with_devices(window)
    window.catalogue.select("gemm")
    form = window.form
    assert set(form.fields) == {"sizes", "dtypes", "tf32", "grow", "budget_s",
                                "duration"}
    sizes = form.fields["sizes"]
    assert sizes.editor.placeholderText() == "auto"         # default None: auto
    assert "From 1 to 65,536." in sizes.hint.text()        # the bound is shown
    assert window.run_button.isEnabled()

    sizes.editor.setText("64,abc")
    assert not sizes.error_label.isHidden() and "whole numbers" in sizes.error
    assert not window.run_button.isEnabled()                # marked before Run
    assert window.run_clicked() == []                       # and never sent

    sizes.editor.setText("0")
    assert "at least 1" in sizes.error
    sizes.editor.setText("64, 128")
    assert sizes.error == "" and window.run_button.isEnabled()
    assert form.values() == {"sizes": [64, 128], "dtypes": list(form.fields["dtypes"]
                                                                 .param.default),
                             "tf32": False, "grow": False}

    for box in form.fields["dtypes"].choice_boxes.values():
        box.setChecked(False)
    assert "dtypes" in form.errors() and not window.run_button.isEnabled()


def test_every_listed_workload_gets_a_form(window):
    from siliconbench.core.catalogue import listed
    for w in listed():
        window.catalogue.select(w.name)
        assert set(window.form.fields) == {p.name for p in w.params}
        assert window.form.is_valid(), (w.name, window.form.errors())


# ---------------------------------------------------------------- real runs

def test_tiny_gemm_run_from_the_controls_plots_and_exports(qtbot, window, store, tmp_path,
                                                          monkeypatch):
    # Real discovery, of PyTorch alone: a child process asks it. Every framework's answer is
    # checked by tests/cli/test_cli.py's devices test; TensorFlow's import alone is 5 CPU-s.
    from siliconbench.core.frameworks import FRAMEWORKS
    monkeypatch.setattr("siliconbench.core.devices.FRAMEWORKS", {"torch": FRAMEWORKS["torch"]})
    # Preferences: select new runs when they finish (off by default: test_selection_is_the_users).
    from siliconbench.gui.settings import SELECT_NEW_RUNS
    window.settings.setValue(SELECT_NEW_RUNS, "true")
    window.start_background()
    qtbot.waitUntil(lambda: "torch:cpu" in window.devices.boxes, timeout=120_000)
    window.devices.set_checked(["torch:cpu"])
    set_tiny_gemm(window)
    assert window.run_button.isEnabled()

    seen_rows = []
    window.queue.row_arrived.connect(lambda job: seen_rows.append(len(job.record.rows)))
    qtbot.mouseClick(window.run_button, Qt.MouseButton.LeftButton)
    assert window.queue.busy
    job = window.queue.jobs[0]
    row = window.queue_view.row_for(job)
    assert row is not None and not row.cancel_button.isHidden()
    wait_idle(qtbot, window)

    assert job.state == "ok", job.reason
    assert seen_rows == [1, 2]                     # points arrived live, one by one
    chart = window.charts.curves["tflops"]
    assert chart.point_count() == 2
    assert window.charts.currentWidget() is chart and chart.has_data()
    assert "Peak unknown" in chart.caption.text()  # a CPU has no tabulated peak
    assert "Done · 2 points" in row.step.text() and "p25–p75" in row.step.text()
    # Stored, listed, selected and drawn from the store's copy.
    assert [r.id for r in store.runs()] == [job.record.id]
    assert [r.id for r in window.results.selected_records()] == [job.record.id]

    # The runner sampled telemetry alongside (CPU load at least, on any machine).
    window.charts.setCurrentWidget(window.charts.telemetry)
    assert window.charts.telemetry.point_count() > 0
    window.charts.setCurrentWidget(chart)

    png, svg, csv = tmp_path / "c.png", tmp_path / "c.svg", tmp_path / "runs.csv"
    assert window.files.export_chart(str(png)) and window.files.export_chart(str(svg))
    assert window.files.export_runs(str(csv))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000
    assert "<svg" in svg.read_text()
    lines = csv.read_text().splitlines()
    assert lines[0].startswith("run_id,") and "median" in lines[0]
    assert len(lines) == 3 and all(",tflops," in line for line in lines[1:])


def test_cancel_mid_run_keeps_the_window_and_the_run(qtbot, window, store):
    with_devices(window, [MLX_CPU])
    set_tiny_gemm(window, sizes="64,128,256,512,1024")
    window.devices.set_checked(["mlx:cpu"])
    window.quick_box.setChecked(False)
    jobs = window.run_clicked()
    assert len(jobs) == 1
    job = jobs[0]
    qtbot.waitUntil(lambda: job.measuring_since is not None, timeout=120_000)
    qtbot.mouseClick(window.queue_view.row_for(job).cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window, timeout=60_000)
    assert job.state == "cancelled"
    assert window.queue_view.row_for(job).step.text().startswith("Cancelled")
    assert window.queue_view.row_for(job).cancel_button.isHidden()
    assert store.runs()[0].status == "cancelled"
    assert window.isVisible()


def test_a_failing_run_shows_its_reason_inline(qtbot, window, store):
    # A device id the runner cannot resolve: the child refuses it with a UsageError.
    with_devices(window, [MLX_CPU, DeviceInfo("mlx", "gpu:7", "Phantom GPU", "gpu")])
    set_tiny_gemm(window)
    window.devices.set_checked(["mlx:gpu:7"])
    jobs = window.run_clicked()
    wait_idle(qtbot, window, timeout=120_000)
    job = jobs[0]
    assert job.state == "failed"
    assert "gpu:7" in job.reason
    text = window.queue_view.row_for(job).step.text()
    assert text.startswith("Failed:") and "gpu:7" in text
    assert store.runs() == []       # a run that could not start is not a result
    assert window.isVisible()


def test_a_crashing_run_fails_with_its_reason_and_keeps_its_rows(qtbot, window, store,
                                                                  fake_workloads):
    with_devices(window, [MLX_CPU])
    job, = window.queue.enqueue([RunSpec("fake-crash", "mlx", "cpu", {"steps": 1})])
    wait_idle(qtbot, window, timeout=120_000)
    assert job.state == "failed" and "SIGSEGV" in job.reason
    assert "Failed:" in window.queue_view.row_for(job).step.text()
    assert "1 result row kept" in window.queue_view.row_for(job).step.text()
    assert store.runs()[0].status == "failed" and len(store.runs()[0].rows) == 1
    assert window.isVisible()


def test_queue_runs_several_devices_in_turn(qtbot, window):
    # A queued job can be cancelled before it starts; the overall bar counts it as done.
    with_devices(window, [MLX_CPU])
    specs = [RunSpec("gemm", "mlx", "gpu:9", {"sizes": [64], "dtypes": ["float32"]},
                     quick=True) for _ in range(2)]
    first, second = window.queue.enqueue(specs)
    assert second.state == "queued"
    window.queue.cancel(second)
    assert second.state == "cancelled"
    wait_idle(qtbot, window, timeout=120_000)
    assert first.state == "failed"
    fraction, ended, total = window.queue.overall()
    assert (fraction, ended, total) == (1.0, 2, 2)
    assert "2 of 2 runs finished" in window.queue_view.overall_label.text()


# ---------------------------------------------------------------- charts

def test_several_runs_draw_together_with_peaks_flags_and_spread(window, store):
    """Real runs' records (tests/helpers/recorded.py) of four workloads selected together."""
    from tests.helpers.recorded import recorded
    gemm, bw = recorded("gemm-torch"), recorded("bandwidth-torch")
    train, infer = recorded("train-torch"), recorded("infer-torch")
    # The same run as measured on a GPU with a tabulated peak: the peak line and % of peak.
    gpu = recorded("gemm-torch-second")
    gpu.settings["peak"] = "Apple M1 Max (32-core GPU)"
    store.import_records([gemm, gpu, bw, train, infer])
    window.results.reload()
    window.results.select_ids({gemm.id, gpu.id, bw.id, train.id, infer.id})

    charts = window.charts
    tflops = charts.curves["tflops"]
    assert tflops.point_count() == 4 and len(tflops.series) == 2
    # The peak is 100,000x the CPU's points: a log axis holds both, the line at log10(peak).
    assert tflops.axis_mode() == "log"
    assert [10 ** line.value() for line in tflops._peak_lines] == [pytest.approx(10.62)]
    assert "Peak unknown for" in tflops.caption.text()
    # Two runs of one device: each curve is named by its run's identity.
    assert len({s.name for s in tflops.series}) == 2
    assert charts.curves["gb_per_s"].point_count() == 4
    assert charts.bars.point_count() == 2
    assert sorted(charts.bars.axis.names) == ["distilbert", "resnet18"]
    # The table says every number's spread, % of peak or "peak unknown", and flags in words.
    charts.setCurrentWidget(charts.table)
    table = charts.table
    cells = [[table.item(r, c).text() for c in range(table.columnCount())]
             for r in range(table.rowCount())]
    header = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    col = header.index
    assert len(cells) == sum(len(r.rows) for r in (gemm, gpu, bw, train, infer))
    measured = [line for line in cells if line[col("n")]]
    assert measured and all(line[col("p25–p75")] for line in measured)
    assert "peak unknown" in {line[col("% of peak")] for line in cells}


def test_hovering_a_point_shows_its_value_and_spread(qtbot, window):
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication
    window.charts.show_records([fake_record(flags=["noisy"])])
    chart = window.charts.curves["tflops"]
    window.charts.setCurrentWidget(chart)
    dots = next(iter(chart._items.values()))["dots"]
    spot = dots.points()[1]
    # The axes widen to fit their tick labels when first painted, which moves the plot area
    # (by ~16 px): a position taken before that paint misses the point, and when the paint
    # comes depends on the machine's load. Paint now and take the position once two paints
    # agree on it.
    seen = []

    def settled() -> bool:
        chart.plot.grab()
        QApplication.processEvents()
        seen.append(chart.plot.mapFromScene(dots.mapToScene(spot.pos())))
        return len(seen) >= 2 and seen[-1] == seen[-2]
    qtbot.waitUntil(settled)
    view_pos = seen[-1]
    # Hover events come from mouse moves: arrive from elsewhere, then onto the point, slowly
    # (pyqtgraph drops moves that come faster than a screen refresh).
    viewport = chart.plot.viewport()
    for x, y in ((5, 5), (view_pos.x(), view_pos.y())):
        local = QPointF(x, y)
        QApplication.sendEvent(viewport, QMouseEvent(
            QEvent.Type.MouseMove, local, viewport.mapToGlobal(local), Qt.MouseButton.NoButton,
            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
        qtbot.wait(60)
    qtbot.waitUntil(lambda: chart.plot_item.vb.toolTip() != "", timeout=2000)
    tip = chart.plot_item.vb.toolTip()
    assert "size = 256" in tip and "TFLOPS" in tip
    assert "p25–p75" in tip and "CI of the median" in tip and "50% of peak" in tip
    assert "noisy:" in tip          # the flag, explained in words


def test_telemetry_is_drawn_one_unit_at_a_time(window):
    rec = fake_record()
    rec.telemetry = {"interval_s": 0.5, "series": {
        "gpu_power_w": {"unit": "W", "t": [0.0, 0.5, 1.0], "v": [5.0, 20.0, None]},
        "cpu_percent": {"unit": "%", "t": [0.0, 0.5, 1.0], "v": [10.0, 90.0, 95.0]},
        "memory_used_bytes": {"unit": "bytes", "t": [0.0, 1.0], "v": [8e9, 9e9]}}}
    charts = window.charts
    charts.show_records([rec])
    charts.setCurrentWidget(charts.telemetry)
    chart = charts.telemetry
    units = [chart.unit_box.itemText(i) for i in range(chart.unit_box.count())]
    assert units == ["Power (W)", "Load (%)", "Memory (GB)"]       # power first
    assert chart.point_count() == 2 + 3 + 2                        # a gap (None) is skipped
    assert [item.yData.tolist() for item in chart._items.values()] == [[5.0, 20.0]]
    chart.unit_box.setCurrentIndex(2)
    assert [item.yData.tolist() for item in chart._items.values()] == [[8.0, 9.0]]


def test_theme_follows_the_colour_scheme(window):
    from siliconbench.gui.theme import DARK, LIGHT
    with_devices(window)
    window.charts.show_records([fake_record()])
    window.apply_color_scheme(Qt.ColorScheme.Dark)
    plot = window.charts.curves["tflops"].plot
    assert window.theme is DARK
    assert plot.backgroundBrush().color().name().upper() == DARK.background.upper()
    window.apply_color_scheme(Qt.ColorScheme.Light)
    assert window.theme is LIGHT
    assert plot.backgroundBrush().color().name().upper() == LIGHT.background.upper()


# ---------------------------------------------------------------- import, results, settings

def test_bad_files_are_refused_by_name_and_the_good_ones_imported(window, store, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(records_to_json([fake_record()]))
    garbage = tmp_path / "notes.json"
    garbage.write_text("this is not json")
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps({"workload": "gemm", "rows": "many"}))
    for bad in (garbage, damaged):
        assert window.import_files([str(bad)]) is False
        said = the_sheet(window).text()
        assert bad.name in said and "not a SiliconBench result file" in said
        assert store.runs() == []
    # Each bad file is named; the good one comes in all the same.
    assert window.import_files([str(garbage), str(good), str(damaged)]) is False
    lines = the_sheet(window).text().splitlines()
    assert [garbage.name in lines[0], damaged.name in lines[1]] == [True, True]
    assert lines[2] == "Imported 1 run; 2 files were refused (named above)."
    assert len(store.runs()) == 1
    store.delete([r.id for r in store.runs()])

    assert window.import_files([str(good)]) is True
    status = window.statusBar()
    assert len(store.runs()) == 1 and status.currentMessage() == "Imported 1 run."
    assert window.import_files([str(good)]) is True       # again: already there
    assert len(store.runs()) == 1 and "already in the store" in status.currentMessage()


def test_drop_a_result_file_onto_the_window(window, store, tmp_path):
    path = tmp_path / "other-mac.json"
    path.write_text(records_to_json([fake_record(), fake_record("cpu", peak=None)]))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(400, 300), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert len(store.runs()) == 2
    assert window.results.selected_records() == []       # the selection is the user's
    window.select_all_runs()
    assert window.charts.curves["tflops"].point_count() == 4


def test_results_browser_filters_renames_and_deletes(window, store, tmp_path):
    a1 = fake_record(machine={"chip": "Apple M1 Max", "gpu_cores": 32})
    a2 = fake_record("cpu", "Apple M1 Max", machine={"chip": "Apple M1 Max", "gpu_cores": 32},
                     peak=None)
    b = fake_record(machine={"chip": "Apple M2 Ultra", "gpu_cores": 76})
    b.status, b.reason = "failed", "out of memory"
    store.import_records([a1, a2, b])
    browser = window.results
    browser.reload()
    assert browser.proxy.rowCount() == 3
    browser.set_filter("Status", "failed")
    assert browser.proxy.rowCount() == 1
    browser.set_filter("Status", None)
    browser.set_filter("Machine", "Apple M1 Max")
    assert browser.proxy.rowCount() == 2
    browser.set_filter("Machine", None)
    browser.search.setText("cpu")
    assert browser.proxy.rowCount() == 1
    browser.search.clear()

    # Naming the machine of one run names all that machine's runs, and only them.
    assert browser.rename_machine("MacBook Pro 14 M1 Max", [a2]) == 2
    labels = {r.id: r.machine_label for r in store.runs()}
    assert labels[a1.id] == labels[a2.id] == "MacBook Pro 14 M1 Max"
    assert labels[b.id] == "Apple M2 Ultra"

    out = tmp_path / "sel.json"
    browser.select_ids({a1.id, b.id})
    assert window.files.export_runs(str(out))
    assert {r["id"] for r in json.loads(out.read_text())["runs"]} == {a1.id, b.id}

    assert browser.delete(browser.selected_records()) == 2
    assert [r.id for r in store.runs()] == [a2.id]


def test_settings_persist_between_windows(qtbot, store, settings):
    from siliconbench.gui.main_window import MainWindow
    first = MainWindow(store, settings)
    qtbot.addWidget(first)
    with_devices(first)
    set_tiny_gemm(first, sizes="64,256")
    first.devices.set_checked(["torch:cpu"])
    first.show()
    first.right_split.setSizes([300, 200])
    first.close()

    second = MainWindow(store, settings)
    qtbot.addWidget(second)
    assert second.catalogue.current().name == "gemm"
    assert second.quick_box.isChecked()
    assert second.form.fields["sizes"].text() == "64,256"
    assert second.form.fields["dtypes"].text() == "float32"
    with_devices(second)          # devices are ticked once discovery finds them
    assert second.devices.checked_keys() == ["torch:cpu"]
    # Geometry and splitters come back (the offscreen screen clamps sizes, so compare state).
    assert second.right_split.saveState() == settings.value("window/right_split")
    assert second.restoreGeometry(settings.value("window/geometry"))


def test_about_lists_the_versions():
    import platform

    import pyqtgraph
    import PySide6
    from PySide6.QtCore import qVersion

    import siliconbench
    from siliconbench.core.machine import framework_versions
    from siliconbench.gui.help import about_text
    lines = about_text().splitlines()
    assert lines[0] == f"SiliconBench {siliconbench.__version__}"
    assert lines[1].startswith(f"Python {platform.python_version()} ")
    assert lines[2] == (f"Qt {qVersion()} · PySide6 {PySide6.__version__} · pyqtgraph "
                        f"{pyqtgraph.__version__}")
    # The package of every framework of the registry installed here, in the registry's order,
    # then the libraries beside them; and nothing else.
    from importlib.metadata import version
    from importlib.util import find_spec

    from siliconbench.core.frameworks import FRAMEWORKS
    installed = [fw for fw in FRAMEWORKS.values() if find_spec(fw.module)]   # Core ML's too
    assert "torch" in [fw.name for fw in installed]   # this machine has one: not empty
    assert lines[3:3 + len(installed)] == [" ".join(fw.distribution()) for fw in installed]
    assert f"torch {version('torch')}" in lines
    if FRAMEWORKS["llamacpp"].installed():   # its distribution is not named as its import
        assert f"llama-cpp-python {version('llama-cpp-python')}" in lines
    assert lines[3 + len(installed):] == [f"{n} {v}" for n, v in
                                          sorted(framework_versions().items())
                                          if n not in FRAMEWORKS]


def test_about_lists_every_framework_the_registry_knows(monkeypatch):
    """A framework added by its folder is in the About box with no list to edit."""
    import numpy

    from siliconbench.core import frameworks
    from siliconbench.gui.help import about_text
    added = frameworks.FrameworkInfo("numpyfw", "NumPy (test)", "numpy",
                                     "siliconbench.core.frameworks.numpyfw.adapter", "numpyfw")
    monkeypatch.setitem(frameworks.FRAMEWORKS, "numpyfw", added)
    assert f"numpy {numpy.__version__}" in about_text().splitlines()


def test_export_dialogs_open_in_the_last_folder_and_remember_the_one_chosen(
        window, store, settings, tmp_path, monkeypatch):
    store.import_records([fake_record()])
    window.results.reload()
    window.results.select_ids({store.runs()[0].id})
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    dialog = window.files.choose_export_runs("json")
    assert dialog.windowTitle() == "Export Runs as JSON"
    answer_file_dialog(window, str(first / "runs.json"))
    assert json.loads((first / "runs.json").read_text())["runs"]
    dialog = window.files.choose_export_chart("png")
    assert dialog.windowTitle() == "Export Chart as PNG"
    assert dialog.selectedFiles() == [str(first / "siliconbench-tflops.png")]  # the last folder
    answer_file_dialog(window, str(second / "chart.png"))
    assert (second / "chart.png").stat().st_size > 0
    assert settings.value("files/last_dir") == str(second)


def test_a_dark_palette_paints_dark_before_qt_is_asked_for_the_scheme(qtbot, store, settings):
    """The first paint judges by the palette (siliconbench.gui.theme.palette_theme: asking Qt for the colour
    scheme builds the Qt namespace); build_rest then asks theme_for, which agrees here."""
    from PySide6.QtGui import QColor, QGuiApplication, QPalette

    from siliconbench.gui.main_window import MainWindow
    from siliconbench.gui.theme import DARK, palette_theme, theme_for
    app = QGuiApplication.instance()
    before = app.palette()
    dark = QPalette(before)
    dark.setColor(QPalette.ColorRole.Window, QColor("#1e1e1e"))
    app.setPalette(dark)
    try:
        assert palette_theme() is DARK and theme_for() is DARK   # offscreen: scheme Unknown
        w = MainWindow(store=store, settings=settings, defer=True)
        qtbot.addWidget(w)
        assert w.theme is DARK                       # painted dark, nothing built yet
        w.build_rest()
        assert w.theme is DARK
        w.ask_before_closing = False
    finally:
        app.setPalette(before)
