"""The app's Preferences choose the store: "This machine only" or "Shared store: <address>",
with Test Connection saying in one sentence what the server answered; the address is kept with
its password taken out (libpq finds it in ~/.pgpass), and the app then opens that store."""

from __future__ import annotations

from siliconbench.core.run_store import open_store
from siliconbench.core.store_pg import without_password
from siliconbench.core.store_sync import SharedStore
from siliconbench.gui.settings import (
    app_settings,
    settings_file,
    shared_store,
    store_preferences,
    use_store_preference,
)
from tests.helpers.dialogs import click_ok
from tests.helpers.recorded import recorded


def test_preferences_keep_the_shared_store_without_its_password(shared, qtbot, monkeypatch):
    rec = recorded("gemm-torch")
    open_store(shared.url("mach_b")).save(rec)
    settings = app_settings()
    dialog = store_preferences(None, settings)
    qtbot.addWidget(dialog)
    assert dialog.local.isChecked()
    given = shared.url("mach_a") + " password=pass-a"
    dialog.address.setText(given)
    dialog.shared.setChecked(True)
    dialog.test.click()
    assert dialog.answer.text().endswith("answers: 1 runs of 1 machines; this machine writes "
                                         "as mach_a.")
    click_ok(dialog)
    text = settings_file().read_text()
    assert "pass-a" not in text and "password" not in text
    assert shared_store(settings) == without_password(given)
    # The app's next start opens it (the password from PGPASSFILE, as libpq reads it).
    use_store_preference(app_settings())
    lab = open_store()
    assert isinstance(lab, SharedStore)
    assert [r.id for r in lab.runs()] == [rec.id]
    lab.close()


def test_test_connection_says_what_to_fix_in_one_sentence(shared, qtbot):
    dialog = store_preferences(None, app_settings())
    qtbot.addWidget(dialog)
    dialog.address.setText(shared.server.url("mach_a", "no_such_lab"))
    dialog.test.click()
    answer = dialog.answer.text()
    assert 'database "no_such_lab" does not exist' in answer and answer.count(".") >= 1 \
        and "\n" not in answer


def test_this_machine_only_forgets_the_shared_store(shared, qtbot, monkeypatch):
    settings = app_settings()
    dialog = store_preferences(None, settings)
    qtbot.addWidget(dialog)
    dialog.address.setText(shared.url("mach_a"))
    dialog.shared.setChecked(True)
    click_ok(dialog)
    assert shared_store(settings)
    again = store_preferences(None, settings)
    qtbot.addWidget(again)
    assert again.shared.isChecked()
    again.local.setChecked(True)
    click_ok(again)
    assert shared_store(settings) is None
    use_store_preference(settings)
    assert not isinstance(open_store(), SharedStore)


def test_the_preferences_window_names_where_runs_are_kept(qtbot, monkeypatch):
    """Edit > Preferences is one window: the selection choice, and the store, whose Change…
    opens the store's sheet; the line follows what the sheet kept."""
    from siliconbench.gui.preferences import Preferences
    from siliconbench.gui.settings import keep_shared_store
    settings = app_settings()
    window = Preferences(settings)
    qtbot.addWidget(window)
    assert window.store_text.text() == "Runs are kept on this machine only."
    keep_shared_store(settings, "service=lab")
    window._say_store()
    # The app opens its store at the start: a change applies from the next one, and says so.
    assert window.store_text.text() == ("Runs are kept on this machine only until "
                                        "SiliconBench starts again; from the next start, in "
                                        "the shared store service=lab.")
    use_store_preference(settings)   # the next start
    window._say_store()
    assert window.store_text.text() == "Runs are kept in the shared store service=lab."
    assert window.change_store.text() == "Change…"
