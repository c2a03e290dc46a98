"""Help covers Preferences (and its key, Ctrl+, / ⌘,), Your models, how Compare's sides form and
best vs best; the quick suite the welcome offers has a menu entry for whoever chose Not Now."""

from __future__ import annotations

import re

from siliconbench.core.frameworks import DeviceInfo
from siliconbench.core.suites import expand
from siliconbench.gui.help import help_page, shortcuts_html

CPU = DeviceInfo("torch", "cpu", "Test CPU", "cpu", 8 * 2**30)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_help_covers_preferences_your_models_sides_and_best_vs_best():
    page = help_page().read_text()
    headings = re.findall(r"<h[23]>([^<]+)</h[23]>", page)
    for heading in ("Preferences", "Your models", "How the sides form", "Best vs best"):
        assert heading in headings, headings
    text = _text(page)
    assert "Test Connection" in text and "~/.pgpass" in text and "next start" in text
    assert "Try Again" in text            # the banner when the shared store refuses
    assert "Model file" in text and "siliconbench models" in text
    for platform, key in (("linux", "Ctrl+,"), ("darwin", "⌘,")):
        keys = _text(shortcuts_html(platform))
        assert "Preferences…" in keys, keys
        if platform == "linux":
            assert key in keys


def test_not_now_leaves_the_quick_suite_in_the_run_menu(qtbot, window):
    dialog = window.show_welcome()
    assert "Run > Run the Quick Suite" in _text(dialog.text.text()).replace("&gt;", ">")
    dialog.later_button.click()
    assert not dialog.isVisible() and window.queue.jobs == []
    window.devices.set_devices([CPU], {"torch": "test"})
    entry = window.menu_actions["quick_suite"]
    assert entry in window.menus["Run"].actions() and entry.text() == "Run the Quick Suite"
    entry.trigger()
    titles = [job.title for job in window.queue.jobs]
    assert len(titles) == len(expand("quick", [CPU])) and all(
        t.startswith("Quick suite · ") for t in titles)
    window.queue.cancel_all()
