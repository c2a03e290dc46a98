"""The issue's story with a real server: Test Connection succeeds with a password typed in the
address; OK keeps the address without it. Preferences then says the password is not kept and
offers the password file. Declined, the next start is refused: the window says so at once and
shows this machine's runs; Try Again, once the password is in the file, reads the shared store.
Saved, the next start connects. No password file holds the role's password here but the one
the test writes (PGPASSFILE), so only the typed password can connect."""

from __future__ import annotations

import stat

from PySide6.QtWidgets import QDialogButtonBox

from siliconbench.core.run_store import open_store
from siliconbench.core.store import Store
from siliconbench.core.store_sync import SharedStore
from siliconbench.gui.settings import app_settings, shared_store, use_store_preference
from tests.helpers.recorded import recorded


def _choose_with_password(qtbot, shared, settings):
    """Edit > Preferences > Change…: the address with its password, tested, then OK; the
    Preferences window and its offer of the password file."""
    from siliconbench.gui.preferences import Preferences
    window = Preferences(settings)
    qtbot.addWidget(window)
    window.show()
    window.change_store.click()
    dialog = window.store_dialog
    dialog.address.setText(shared.url("mach_a") + " password=pass-a")
    dialog.shared.setChecked(True)
    dialog.test.click()
    assert "answers" in dialog.answer.text(), dialog.answer.text()
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    qtbot.waitUntil(lambda: getattr(window, "pgpass_offer", None) is not None
                    and window.pgpass_offer.isVisible())
    offer = window.pgpass_offer
    assert "does not keep the password" in offer.text()
    assert "pass-a" not in offer.text() + offer.informativeText()
    assert "pass-a" not in (shared_store(settings) or "")
    return window, offer


def _click(box, text: str) -> None:
    next(b for b in box.buttons() if b.text() == text).click()


def test_declined_the_next_start_is_refused_in_the_window_with_local_runs(
        shared, qtbot, tmp_path, monkeypatch):
    theirs = recorded("bandwidth-torch")   # another machine's run in the shared store
    from siliconbench.core.store_pg import SharedDatabase
    other = SharedDatabase(shared.url("mach_b"))   # not through this machine's store
    other.insert([(theirs, False)])
    other.close()
    assert shared.count(theirs.id) == 1
    passfile = tmp_path / "own-pgpass"
    monkeypatch.setenv("PGPASSFILE", str(passfile))   # none yet: only the typed password works
    local = Store()
    mine = [recorded("gemm-torch"), recorded("train-torch")]
    for rec in mine:
        local.save(rec)
    local.close()
    settings = app_settings()
    window, offer = _choose_with_password(qtbot, shared, settings)
    _click(offer, "Don't Save")
    assert not passfile.exists()
    assert "from the next start, in the shared store" in window.store_text.text()

    # The next start.
    use_store_preference(app_settings())
    store = open_store()
    assert isinstance(store, SharedStore) and "refused the password" in store.offline
    from siliconbench.gui.main_window import MainWindow
    w = MainWindow(store, app_settings())
    w.ask_before_closing = False
    qtbot.addWidget(w)
    w.show()
    w.results.load_in_background()
    qtbot.waitUntil(lambda: w.results.model.rowCount() == len(mine), timeout=20_000)
    banner = w.store_watch.banner
    assert banner.isVisible()
    assert "refused the password" in banner.text() and "~/.pgpass" in banner.text()

    # The password put where libpq finds it: Try Again reads the shared store.
    from siliconbench.core.pgpass import keep_password
    keep_password(shared.url("mach_a") + " password=pass-a")
    w.store_watch.try_again()
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=20_000)
    qtbot.waitUntil(lambda: theirs.id in {r.id for r in w.results.model.records},
                    timeout=20_000)
    assert {r.id for r in w.results.model.records} == {theirs.id}   # the shared store's
    assert "shared store" not in w.results.count_label.text()
    store.close()


def test_saved_the_password_is_in_the_file_and_the_next_start_connects(
        shared, qtbot, tmp_path, monkeypatch):
    passfile = tmp_path / "own-pgpass"
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    settings = app_settings()
    window, offer = _choose_with_password(qtbot, shared, settings)
    _click(offer, "Save Password")
    assert stat.S_IMODE(passfile.stat().st_mode) == 0o600
    assert passfile.read_text().endswith(f":{shared.dbname}:mach_a:pass-a\n")
    assert str(passfile) in window.password_text.text()
    use_store_preference(app_settings())
    store = open_store()
    assert isinstance(store, SharedStore) and store.offline is None
    store.close()
