"""A shared store that refuses at the app's start is said in the window at once (a banner with
the server's sentence, which names what to fix), and Results shows this machine's runs
meanwhile. Before, Results stayed empty and the reason was only in its footer, cut off.

The store here is a PostgreSQL address whose socket folder has no server: libpq refuses it at
once, as it refuses a server that is down; the records are real runs (tests/data/records).
tests/store_pg/test_store_pg_at_start.py does the same with a real server refusing a password."""

from __future__ import annotations

from siliconbench.core.run_store import open_store
from siliconbench.core.store import Store
from siliconbench.core.store_sync import SharedStore
from tests.helpers.recorded import recorded


def _window(qtbot, store, settings):
    from siliconbench.gui.main_window import MainWindow
    w = MainWindow(store, settings)
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_a_refused_shared_store_is_said_at_once_and_local_runs_are_shown(
        qtbot, settings, tmp_path, monkeypatch):
    local = Store()   # this machine's store (SILICONBENCH_HOME), with two real runs
    runs = [recorded("gemm-torch"), recorded("bandwidth-torch")]
    for rec in runs:
        local.save(rec)
    local.close()
    nowhere = tmp_path / "no-server"
    nowhere.mkdir()
    monkeypatch.setenv("SILICONBENCH_STORE", f"host={nowhere} dbname=lab user=mach_a "
                                             "connect_timeout=2")
    store = open_store()
    assert isinstance(store, SharedStore) and store.offline
    w = _window(qtbot, store, settings)
    w.results.load_in_background()   # as the app's start does (start_background)
    qtbot.waitUntil(lambda: w.results.model.rowCount() == len(runs), timeout=20_000)
    assert {r.id for r in w.results.model.records} == {r.id for r in runs}
    banner = w.store_watch.banner
    assert banner.isVisible() and banner.geometry().top() < w.main_split.geometry().top()
    said = banner.text()
    assert "could not be opened" in said and "this machine's runs" in said
    assert "cannot be reached" in said and "check the address" in said   # what to fix
    assert str(nowhere) in said and "\n" not in said
    # libpq's quotes as quotes (the label showed &quot;), and Results in view.
    from PySide6.QtCore import Qt
    assert banner.sentence.textFormat() == Qt.TextFormat.PlainText and "&quot;" not in said
    assert w.bottom.currentWidget() is w.results
    assert "on this machine (the shared store could not be opened)" in \
        w.results.count_label.text()
    # Try Again while it still refuses: the banner stays, with the sentence again.
    trial = w.store_watch.try_again()
    qtbot.waitUntil(trial.finished.is_set, timeout=20_000)
    qtbot.waitUntil(lambda: banner.try_again.isEnabled())
    assert banner.isVisible() and "cannot be reached" in banner.text()
    store.close()


def test_a_local_store_shows_no_banner(qtbot, store, settings):
    store.save(recorded("gemm-torch"))
    w = _window(qtbot, store, settings)
    w.results.load_in_background()
    qtbot.waitUntil(lambda: w.results.model.rowCount() == 1, timeout=20_000)
    assert not w.store_watch.banner.isVisible()
    assert "shared store" not in w.results.count_label.text()
