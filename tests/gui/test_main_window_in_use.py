"""The main window as a person uses it: deleting and exporting runs that real runs wrote
(tests/data/runs: a tiny GEMM and bandwidth run on a CPU, exported once by the CLI), the
keyboard path through the controls, the sidebars and the window's smallest size."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from tests.helpers.dialogs import answer_file_dialog, the_sheet  # noqa: E402
from tests.helpers.gui import this_cpu  # noqa: E402

REAL_RUNS = Path(__file__).parent.parent / "data" / "runs" / "tiny-cpu-runs.json"


@pytest.fixture
def imported(window, store):
    assert window.import_files([str(REAL_RUNS)])
    ids = [r.id for r in store.runs()]
    assert len(ids) == 2
    return ids


def click_button(qtbot, box: QMessageBox, text: str) -> None:
    button = next(b for b in box.buttons() if b.text().replace("&", "") == text)
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


@pytest.mark.parametrize("path", ["menu", "button"])
def test_deleting_selected_runs_asks_then_deletes_them(qtbot, window, store, imported, path):
    window.results.select_ids({imported[0]})
    if path == "menu":
        window.menu_actions["delete"].trigger()
    else:
        qtbot.mouseClick(window.results.delete_button, Qt.MouseButton.LeftButton)
    box = the_sheet(window)
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "Delete 1 run from" in box.text()
    click_button(qtbot, box, "Cancel")                      # Cancel keeps everything
    assert sorted(r.id for r in store.runs()) == sorted(imported)

    window.results.select_ids({imported[0]})
    window.menu_actions["delete"].trigger()
    click_button(qtbot, the_sheet(window), "Delete")
    assert [r.id for r in store.runs()] == [imported[1]]
    assert window.results.proxy.rowCount() == 1
    assert "Deleted 1 run." in window.statusBar().currentMessage()

    window.select_all_runs()                                # the charts forget them too
    assert window.charts.curves["tflops"].point_count() + \
        window.charts.curves["gb_per_s"].point_count() > 0
    window.menu_actions["delete"].trigger()
    click_button(qtbot, the_sheet(window), "Delete")
    assert store.runs() == [] and window.charts.curves["tflops"].point_count() == 0
    assert window.charts.curves["gb_per_s"].point_count() == 0


@pytest.mark.parametrize("fmt, name", [("json", "runs"), ("sbresults", "to-send"),
                                       ("csv", "table")])
def test_export_without_an_extension_writes_the_format_chosen(window, imported, tmp_path,
                                                               monkeypatch, fmt, name):
    target = tmp_path / name
    window.select_all_runs()
    window.files.choose_export_runs(fmt)
    answer_file_dialog(window, str(target))
    text = target.read_text()
    if fmt == "csv":
        assert text.startswith("run_id,") and len(text.splitlines()) > 2
    else:
        assert {r["id"] for r in json.loads(text)["runs"]} == set(imported)


def test_tab_goes_devices_workload_parameters_run_then_charts(qtbot, window):
    from siliconbench.core.frameworks import DeviceInfo
    window.devices.set_devices([DeviceInfo("torch", "cpu", "This CPU", "cpu", 8 * 2**30)],
                               {"torch": "test"})
    window.catalogue.select("gemm")
    first = window.devices.boxes["torch:cpu"]
    first.setFocus()
    qtbot.waitUntil(first.hasFocus)
    visited = [first]
    for _ in range(30):
        window.focusNextChild()
        widget = QApplication_focus()
        if widget is first:
            break
        visited.append(widget)
    from PySide6.QtWidgets import QScrollArea
    assert not [w for w in visited if isinstance(w, QScrollArea)], [(type(w).__name__, w.objectName(), type(w.parent()).__name__) for w in visited]
    form_editors = [f.editor for f in window.form.fields.values()]
    order = [visited.index(w) for w in (window.catalogue, form_editors[0], window.quick_box,
                                        window.run_button, window.charts.tabBar())]
    assert order == sorted(order), [type(w).__name__ for w in visited]


def QApplication_focus():
    from PySide6.QtWidgets import QApplication
    return QApplication.focusWidget()


def test_the_sidebar_hides_and_the_window_shrinks(qtbot, window, tmp_path):
    window.resize(1440, 900)
    assert window.menu_actions["sidebar"].text() == "Hide Sidebar"
    window.menu_actions["sidebar"].trigger()
    assert window.device_pane.isHidden() and window.setup_pane.isHidden()
    assert window.menu_actions["sidebar"].text() == "Show Sidebar"
    window.menu_actions["sidebar"].trigger()
    assert window.device_pane.isVisible() and window.setup_pane.isVisible()
    # It used to stop at 1180 x 680; now the panes' own needs set the limit.
    window.resize(900, 520)
    qtbot.waitUntil(lambda: window.height() <= 560)
    assert window.width() < 1150 and window.run_button.isVisible()
    window.show_sidebar(False)            # the charts alone fit half a 13-inch screen
    window.resize(720, 520)
    qtbot.waitUntil(lambda: window.width() <= 760)


def test_a_huge_run_is_questioned_before_it_starts(qtbot, window):
    window.devices.set_devices([this_cpu()], {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    window.catalogue.select("gemm")
    form = window.form
    form.fields["sizes"].editor.setText("16384,32768")
    for dtype, box in form.fields["dtypes"].choice_boxes.items():
        box.setChecked(dtype == "float64")
    assert window.run_clicked() == []                      # not queued yet
    box = the_sheet(window)
    assert box.isVisible() and "N=32768 in float64" in box.informativeText()
    assert box.windowModality() == Qt.WindowModality.WindowModal  # a sheet on the Mac
    assert "may take about" in box.informativeText()
    click_button(qtbot, box, "Cancel")
    assert window.queue.jobs == []

    form.fields["sizes"].editor.setText("64")              # a small run goes straight in
    assert window.starter.run_warnings(window.starter.build_specs()[0]) == []


def test_a_mistyped_model_is_marked_before_running(qtbot, window):
    window.catalogue.select("infer")
    field = window.form.fields["model"]
    combo = field.editor
    assert combo.isEditable() and combo.findText("mobilenet_v3_small") >= 0
    combo.setCurrentText("resnet5")
    assert field.error.startswith("Model does not know 'resnet5'; did you mean resnet50")
    assert "--" not in field.error
    assert not window.run_button.isEnabled()
    combo.setCurrentText("resnet18")
    assert field.error == "" and window.form.values()["model"] == "resnet18"


def test_fields_that_do_not_fit_together_are_refused_before_a_run_is_queued(qtbot, window):
    window.devices.set_devices([this_cpu()], {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    window.catalogue.select("infer")
    window.form.fields["images"].editor.setText("3")
    window.form.fields["batch_size"].editor.setText("4")
    # Each field alone is fine; together they are marked on the field named first, and Run
    # waits (the sentence came in a sheet after Run).
    assert window.form.fields["images"].error == "Images (3) must be at least Batch size (4)."
    assert not window.run_button.isEnabled()
    assert window.run_clicked() == [] and window.queue.jobs == []
    window.form.fields["images"].editor.setText("8")
    assert not window.form.fields["images"].error and window.run_button.isEnabled()


def test_path_parameters_have_a_choose_button(qtbot, window, tmp_path):
    window.catalogue.select("mlp")
    field = window.form.fields["cifar"]
    assert field.choose_button is not None and field.choose_button.text() == "Choose…"
    archive = tmp_path / "cifar-10-python.tar.gz"
    archive.write_bytes(b"")  # the dialog chooses files that exist
    qtbot.mouseClick(field.choose_button, Qt.MouseButton.LeftButton)
    answer_file_dialog(field, str(archive))
    assert field.text() == str(archive)
    labels = [p.label for p in window.catalogue.current().params]
    assert "CIFAR-10 data" in labels and not [x for x in labels if x.endswith(" mb")]


def test_the_help_page_explains_every_parameter_flag_and_verdict(window, monkeypatch):
    from html import escape

    from siliconbench.core.catalogue import listed
    from siliconbench.core.results import FLAGS
    from siliconbench.gui import help as gui_help
    opened = []
    monkeypatch.setattr(gui_help, "open_url", lambda url: opened.append(url) or True)
    gui_help.open_help()
    page = Path(opened[0].toLocalFile()).read_text()
    assert "<!--" not in page
    for w in listed():
        assert escape(w.title) in page
        for p in w.params:
            assert f"<b>{escape(p.label)}</b> <code>{p.flag}</code>" in page, p.name
    for name in FLAGS:
        assert f"<b>{name.replace('_', ' ')}</b>" in page
    for word in ("Quick measurement", "faster", "same", "Mann-Whitney", "TFLOPS"):
        assert word in page


def test_run_details_context_menu_and_copy(qtbot, window, imported):
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QGuiApplication

    from siliconbench.core.results import records_from_json
    runs = {r.id: r for r in records_from_json(REAL_RUNS.read_text())}
    gemm = next(r for r in runs.values() if r.workload == "gemm")
    window.results.select_ids({gemm.id})
    from siliconbench.gui.menus import results_context_menu
    menu = results_context_menu(window, window.menu_actions, window.results.view, QPoint(10, 10))
    assert [a.text() for a in menu.actions()][:2] == ["Show Run Details…", "Copy"]
    menu.close()

    detail = window.results_actions.show_run_details()
    assert detail.rows.rowCount() == len(gemm.rows)
    text = detail.plain_text()
    for part in (gemm.id, "Machine", "Software", "Settings", "Parameters", "TFLOPS"):
        assert part in text
    qtbot.mouseClick(detail.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == text
    detail.close()

    window.select_all_runs()
    window.results.view.setFocus()
    assert window.results_actions.copy_selection() == 2
    lines = QGuiApplication.clipboard().text().splitlines()
    assert lines[0].startswith("When\tStatus\tWorkload") and len(lines) == 3


def test_no_shortcut_takes_a_key_the_mac_keeps_for_itself(window):
    from PySide6.QtGui import QAction, QKeySequence
    reserved = {QKeySequence("Ctrl+Shift+Q"), QKeySequence("Ctrl+Alt+Q"),
                QKeySequence("Ctrl+Alt+Shift+Q"), QKeySequence("Ctrl+H"), QKeySequence("Ctrl+M"),
                QKeySequence("Ctrl+Alt+H")}
    taken = {a.text(): a.shortcut() for a in window.findChildren(QAction) if a.shortcut()}
    assert taken["Run Queue"] == QKeySequence("Ctrl+Alt+1")
    assert taken.pop("Minimize") == QKeySequence("Ctrl+M")  # the one it is kept for
    assert not {name: k.toString() for name, k in taken.items() if k in reserved}


def test_devices_kept_from_last_launch_make_run_available_at_once(qtbot, window, monkeypatch,
                                                                   siliconbench_home):
    """The kept answers (devices.json, as discover_devices writes it) show at once; Run is
    available while every framework is asked again (held here until the test lets it go)."""
    import threading

    from siliconbench.core import devices
    from siliconbench.core.frameworks import FRAMEWORKS, DeviceInfo
    from siliconbench.core.store import home
    kept = {name: [DeviceInfo(name, "cpu", "Kept CPU", "cpu", 8 * 2**30).to_dict()]
            for name in FRAMEWORKS}
    home().mkdir(parents=True, exist_ok=True)
    (home() / devices.DEVICE_CACHE).write_text(json.dumps(
        {"key": devices._installation_key(), "frameworks": kept}))
    release = threading.Event()
    fresh = DeviceInfo("torch", "cpu", "Fresh CPU", "cpu", 8 * 2**30)
    monkeypatch.setattr(devices, "_ask_child", lambda name, fw: (release.wait(120), [
        DeviceInfo(name, "cpu", "Fresh CPU", "cpu", 8 * 2**30)])[1])
    window.catalogue.select("gemm")
    window.devices.start()
    # Generous limits: this checks the order (Run before the fresh answers), not the speed,
    # which benchmarks/gui_startup.py measures; a loaded machine took over 10 s.
    qtbot.waitUntil(lambda: window.run_button.isEnabled(), timeout=60_000)
    assert not window.devices._call.finished.is_set()       # still asking afresh
    installed = [d for d in window.devices.devices if d.id != "-"]
    assert installed and {d.name for d in installed} == {"Kept CPU"}
    release.set()
    qtbot.waitUntil(lambda: window.devices._call.finished.is_set(), timeout=30_000)
    qtbot.waitUntil(lambda: fresh.name in {d.name for d in window.devices.devices})
    assert window.run_button.isEnabled()


def test_the_widgets_built_before_the_first_paint_have_qts_own_values(window):
    """siliconbench/gui/qt_values.py writes Qt's numbers through the property system: they are Qt's enums,
    and the window's widgets read them back as those enums."""
    from PySide6.QtWidgets import QCompleter, QScrollArea

    from siliconbench.gui import qt_values as v
    assert (v.VERTICAL, v.ALIGN_CENTER, v.NO_FOCUS, v.SCROLL_BAR_ALWAYS_OFF,
            v.TEXT_SELECTABLE_BY_MOUSE, v.CASE_INSENSITIVE, v.MATCH_CONTAINS, v.USER_ROLE) == (
        Qt.Orientation.Vertical.value, Qt.AlignmentFlag.AlignCenter.value,
        Qt.FocusPolicy.NoFocus.value, Qt.ScrollBarPolicy.ScrollBarAlwaysOff.value,
        Qt.TextInteractionFlag.TextSelectableByMouse.value,
        Qt.CaseSensitivity.CaseInsensitive.value, Qt.MatchFlag.MatchContains.value,
        Qt.ItemDataRole.UserRole.value)
    assert window.right_split.orientation() == Qt.Orientation.Vertical
    assert window.main_split.orientation() == Qt.Orientation.Horizontal
    scrolls = [s for s in window.findChildren(QScrollArea)
               if window.device_pane.isAncestorOf(s) or window.setup_pane.isAncestorOf(s)]
    assert len(scrolls) == 2 and all(  # the sidebars' (MainWindow._scrolling)
        s.focusPolicy() == Qt.FocusPolicy.NoFocus and
        s.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff for s in scrolls)
    assert window.catalogue.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    first = window.catalogue.item(0)
    assert first.data(Qt.ItemDataRole.UserRole) == window.catalogue.workloads[0].name
    assert window.machine_card.details.textInteractionFlags() == \
        Qt.TextInteractionFlag.TextSelectableByMouse
    window.catalogue.select("infer")            # its model list: type to narrow it
    [completer] = window.form.findChildren(QCompleter)
    assert completer.caseSensitivity() == Qt.CaseSensitivity.CaseInsensitive
    assert completer.filterMode() == Qt.MatchFlag.MatchContains


FIRST_PAINT = """
import sys
from PySide6 import QtCore
from PySide6.QtWidgets import QApplication
app = QApplication([])
from siliconbench.gui.main_window import MainWindow
w = MainWindow(defer=True)
w.show()
app.processEvents()
print("built" if "Qt" in QtCore.__dict__ else "not built")
"""


def test_the_window_paints_without_building_the_qt_namespace(tmp_path):
    """Reading PySide6's Qt namespace builds its ~100 enums (35-43 ms, siliconbench/gui/qt_values.py): the
    window up to its first paint never does; a child process, as this one has Qt."""
    import subprocess
    import sys
    env = {**os.environ, "SILICONBENCH_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", FIRST_PAINT], capture_output=True, text=True,
                         env=env, timeout=120, cwd=Path(__file__).parents[2])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "not built"


def test_a_text_field_offers_its_clear_button_once_it_has_text(qtbot, window):
    """The clear button shows only over text, so it is turned on with the first text (its
    icon would otherwise load before the first paint); saved texts bring it back too."""
    from PySide6.QtWidgets import QLineEdit
    window.catalogue.select("gemm")
    field = next(f for f in window.form.fields.values() if isinstance(f.editor, QLineEdit))
    edit = field.editor
    assert edit.text() == "" and not edit.isClearButtonEnabled()
    qtbot.keyClicks(edit, "3")
    assert edit.isClearButtonEnabled()
    edit.clear()                      # what the button does; it stays on for the next text
    assert edit.text() == "" and edit.isClearButtonEnabled()


def test_the_sidebar_is_coloured_and_sized_without_style_sheets_in_both_themes(window):
    """Section titles, hints, errors and the chosen workload's summary are toned with palettes
    and fonts (siliconbench.gui.theme.tone): before the first paint only the machine card has a style sheet,
    and a change of scheme recolours what the user reads."""
    from PySide6.QtWidgets import QLabel, QWidget

    from siliconbench.gui.theme import DARK, LIGHT
    sidebar = [w for pane in (window.device_pane, window.setup_pane)
               for w in pane.findChildren(QWidget)]
    styled = [w for w in sidebar if w.styleSheet()]
    assert all(window.machine_card.isAncestorOf(w) or w is window.machine_card for w in styled)

    def text_color(label: QLabel) -> str:   # the colour it paints its text with
        return label.palette().color(label.foregroundRole()).name().upper()

    base = window.font().pointSizeF()
    for theme, scheme in ((DARK, Qt.ColorScheme.Dark), (LIGHT, Qt.ColorScheme.Light)):
        window.apply_color_scheme(scheme)
        assert window.theme is theme
        titles = [w for w in sidebar if isinstance(w, QLabel) and w.property("role") == "section"]
        assert [t.text() for t in titles] == ["Devices", "Workload", "Parameters"]
        for title in titles:
            assert text_color(title) == theme.muted.upper() and title.font().bold()
        field = next(iter(window.form.fields.values()))
        assert text_color(field.hint) == theme.muted.upper()
        assert field.hint.font().pointSizeF() < base
        assert text_color(field.error_label) == theme.error.upper()
        assert text_color(window.machine_card.details) == theme.muted.upper()
        summary = window.workload_summary
        assert text_color(summary) == theme.muted.upper() and summary.font().pointSizeF() < base


def test_the_catalogue_shows_every_workload_and_says_what_the_chosen_one_measures(qtbot,
                                                                                   window):
    """One line per workload, every one in view without scrolling (at the window's first
    width and after the splitter widens the sidebar); the chosen workload's summary is said
    under the list and changes with the choice; each entry's tooltip says it too."""
    from siliconbench.core.catalogue import listed
    catalogue = window.catalogue
    workloads = listed()
    assert [catalogue.item(i).text() for i in range(catalogue.count())] == \
        [w.title for w in workloads]

    def all_in_view() -> bool:
        view = catalogue.viewport().rect()
        return all(view.contains(catalogue.visualItemRect(catalogue.item(i)))
                   for i in range(catalogue.count()))
    qtbot.waitUntil(all_in_view)
    sizes = window.main_split.sizes()
    window.main_split.setSizes([sizes[0], sizes[1] + 200, sizes[2] - 200])
    assert all_in_view()
    for w in (workloads[-1], workloads[0]):
        catalogue.select(w.name)
        assert window.workload_summary.text() == w.summary
        assert window.workload_summary.isVisible()
        assert catalogue.currentItem().toolTip().startswith(w.summary)
