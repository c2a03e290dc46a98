"""The LLM form meets hostile model files (issue 51): its list is found in the background and
says where it was cut; a bad file is greyed with why while the rest are listed; and a hostile
file typed into Model file is refused in a sheet at once, its header read within bounds (the
99-byte GGUF hung the app's own thread in gguf-py's reader)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from siliconbench.core.frameworks import DeviceInfo  # noqa: E402
from tests.helpers.dialogs import the_sheet  # noqa: E402
from tests.helpers.model_files import (  # noqa: E402
    gguf_99_bytes,  # noqa: E402
    hub_repo,
    write_gguf,
)

pytestmark = pytest.mark.timeout(120)
GB = 2**30


@pytest.fixture
def hostile_hub(tmp_path, monkeypatch):
    cache = tmp_path / "hub"
    for var, folder in (("HF_HUB_CACHE", cache), ("HOME", tmp_path / "home"),
                        ("OLLAMA_MODELS", tmp_path / "ollama"),
                        ("LLAMA_CACHE", tmp_path / "llama.cpp")):
        monkeypatch.setenv(var, str(folder))
    write_gguf(tmp_path / "good.gguf")
    hub_repo(cache, "a/good-GGUF", {"good.gguf": (tmp_path / "good.gguf").read_bytes()})
    snap = hub_repo(cache, "a/hostile-GGUF", {"h.gguf": gguf_99_bytes(tmp_path / "h")
                                              .read_bytes()})
    return snap / "h.gguf"


@pytest.fixture
def cut_hub(hostile_hub, monkeypatch):
    """The hub listed 5 entries at most (10,000 models listed 9,900 without a word)."""
    from siliconbench.core.kit import model_files, model_places
    monkeypatch.setattr(model_files, "MAX_ENTRIES", 5)      # a folder's listing
    monkeypatch.setattr(model_places, "MAX_ENTRIES", 5)     # a tree's walk
    for i in range(5):                                  # past the cut: not listed, but said
        (hostile_hub.parents[3] / f"models--z--m{i}").mkdir()
    return hostile_hub


def test_the_form_lists_past_a_hostile_file_and_says_a_cut(qtbot, cut_hub, window):
    from siliconbench.gui.qt_values import TOOL_TIP_ROLE
    window.catalogue.select("llm")
    form = window.form
    qtbot.waitUntil(lambda: form.models.models is not None, timeout=60_000)
    listed = {text.split(" · ")[0]: enabled for text, _, enabled in form.models.listed()}
    assert set(listed.items()) <= {("a/good-GGUF/good.gguf", True),
                                   ("a/hostile-GGUF/h.gguf", False)}
    combo = form.fields["preset"].editor
    header = form.models.first_row - 1
    assert combo.itemText(header) == "Your models (cut short: its tip says where)"
    assert "holds more than 5 entries" in combo.itemData(header, TOOL_TIP_ROLE)


def test_a_hostile_file_listed_with_why_beside_a_good_one(qtbot, hostile_hub, window):
    window.catalogue.select("llm")
    form = window.form
    qtbot.waitUntil(lambda: form.models.models is not None, timeout=60_000)
    listed = {text.split(" · ")[0]: enabled for text, _, enabled in form.models.listed()}
    assert listed == {"a/good-GGUF/good.gguf": True, "a/hostile-GGUF/h.gguf": False}
    assert form.models.notes == []


def test_a_hostile_file_typed_in_is_refused_in_a_sheet_at_once(qtbot, hostile_hub, window):
    window.devices.set_devices([DeviceInfo("torch", "cpu", "Test CPU", "cpu", 64 * GB)],
                               {"torch": "test"})
    window.devices.set_checked(["torch:cpu"])
    window.catalogue.select("llm")
    window.form.fields["model_path"].set_text(str(hostile_hub))
    assert window.run_clicked() == [] and window.queue.jobs == []
    box = the_sheet(window)
    assert box.windowTitle() == "Check the parameters"
    assert "h.gguf is not a readable GGUF file" in box.informativeText() + box.text()
    box.accept()
