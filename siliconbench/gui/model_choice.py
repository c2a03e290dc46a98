"""The model files on this machine in the LLM form: the Preset list gives the presets, then
"Your models", the files siliconbench.core.kit.model_places.find() finds (the Hugging Face
cache, LM Studio, Ollama, llama.cpp's cache), looked for once in the background when the form
is made. Choosing one fills the Model file field; choosing a preset empties it. A file no
engine can read, or none of the ticked devices' frameworks, is listed greyed with why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from siliconbench.core.numbers import number, size
from siliconbench.gui.background import BackgroundCall
from siliconbench.gui.qt_values import TOOL_TIP_ROLE

if TYPE_CHECKING:
    from siliconbench.core.kit.model_files import ModelFile

HEADER = "Your models"
PLACES = "the Hugging Face cache, LM Studio, Ollama or llama.cpp's cache"


def find_models() -> list[ModelFile]:
    from siliconbench.core.kit import model_places  # in the background thread, as its work
    return model_places.find()


def count_text(n: int) -> str:
    """A parameter count as model names give it: '1.24B', '494M', '107K'."""
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= div:
            return number(n / div) + suffix
    return number(n)


def model_text(m: ModelFile) -> str:
    """'org/Llama-3.2-1B-Instruct-GGUF/…-Q4_0.gguf · llama · 1.24B · Q4_0 · 737 MB', as the
    list reads."""
    parts = [m.name, m.architecture, count_text(m.parameters) if m.parameters else "",
             m.quantisation, size(m.size) if m.size else ""]
    return " · ".join(p for p in parts if p)


def engine_titles(names) -> str:
    from siliconbench.core.frameworks import FRAMEWORKS
    return " or ".join(FRAMEWORKS[n].title if n in FRAMEWORKS else n for n in names)


class ModelChoice(QObject):
    """The found files after `preset`'s presets, tied to the `path` field."""

    def __init__(self, preset, path, find=find_models) -> None:
        # preset, path: the form's ParamFields (param_form, which makes this: not imported)
        super().__init__(preset)
        self.preset, self.path, self.combo = preset, path, preset.editor
        self.models: list[ModelFile] | None = None     # None: still looking
        self.error = ""
        self.notes: list[str] = []
        self.frameworks: set[str] = set()               # the ticked devices'; empty: any
        self.first_row = self.combo.count() + 2         # after a separator and the header
        self.combo.insertSeparator(self.combo.count())
        self.combo.addItem(HEADER)
        self._fill()
        self.combo.activated.connect(self._chosen)
        path.changed.connect(self.show_path)
        self.call = BackgroundCall(find, self)
        self.call.done.connect(self._found)
        self.call.failed.connect(self._failed)
        self.call.start()

    def _found(self, models: list[ModelFile]) -> None:
        self.notes = list(getattr(models, "notes", []))     # where the listing was cut
        self.models = sorted(models, key=lambda m: (bool(m.problem), m.name.lower()))
        self._fill()

    def _failed(self, message: str) -> None:
        self.models, self.error = [], message
        self._fill()

    def set_frameworks(self, frameworks: set[str]) -> None:
        if frameworks != self.frameworks:
            self.frameworks = set(frameworks)
            self._fill()

    def why_not(self, m: ModelFile) -> str:
        """Why `m` cannot be chosen now ('' when it can)."""
        if m.problem:
            return m.problem
        if self.frameworks and not self.frameworks & set(m.engines):
            return (f"A {m.format} model runs on {engine_titles(m.engines)}: tick a device "
                    "of it.")
        return ""

    def _header(self) -> str:
        if self.models is None:
            return f"{HEADER}: looking…"
        if self.error:
            return f"{HEADER}: not found ({self.error})"
        cut = " (cut short: its tip says where)" if self.notes else ""
        return (HEADER if self.models else f"{HEADER}: none found in {PLACES}") + cut

    def _fill(self) -> None:
        combo, items = self.combo, self.combo.model()
        combo.blockSignals(True)
        try:
            while combo.count() > self.first_row:
                combo.removeItem(combo.count() - 1)
            header = self.first_row - 1
            combo.setItemText(header, self._header())
            combo.setItemData(header, "\n".join(self.notes) or None, TOOL_TIP_ROLE)
            items.item(header).setEnabled(False)
            for m in self.models or []:
                combo.addItem(model_text(m), m.path)
                row = combo.count() - 1
                why = self.why_not(m)
                combo.setItemData(row, "\n".join(x for x in (
                    m.path, f"{m.source} · {m.format} · runs on {engine_titles(m.engines)}"
                    if m.engines else m.source, why) if x), TOOL_TIP_ROLE)
                items.item(row).setEnabled(not why)
        finally:
            combo.blockSignals(False)
        self.show_path()

    def listed(self) -> list[tuple[str, str, bool]]:
        """(text, path, can be chosen) of each file in the list, in its order."""
        return [(self.combo.itemText(i), self.combo.itemData(i),
                 self.combo.model().item(i).isEnabled())
                for i in range(self.first_row, self.combo.count())]

    def show_path(self) -> None:
        """The list shows the Model file field's file where it is one of them, else the
        preset."""
        path = self.path.text().strip()
        row = self.combo.findData(path) if path else -1
        self.combo.blockSignals(True)
        try:
            self.combo.setCurrentIndex(row if row >= 0 else
                                       self.combo.findText(self.preset.last_choice))
        finally:
            self.combo.blockSignals(False)

    def _chosen(self, row: int) -> None:
        """A person chose `row`: a file fills the Model file field, a preset empties it."""
        path = self.combo.itemData(row)
        if path:
            self.path.set_text(path)
        elif self.path.text():
            self.path.set_text("")
