"""The parameter form of a workload, generated from its own declaration (siliconbench.core.params.Param):
defaults as placeholders, bounds in the help line, and inline validation with Param.parse, so a
bad value is marked in the form and never sent to a run."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from siliconbench.core.params import LIST_ALL_UP_TO, Param, ParamError, bound
from siliconbench.gui import qt_values
from siliconbench.gui.qt_values import set_value
from siliconbench.gui.sheets import file_dialog
from siliconbench.gui.theme import Theme, tone, tone_role

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QFileDialog

_BAD_FIELD = "QLineEdit { border: 1px solid #FF3B30; border-radius: 4px; padding: 2px; }"


def param_hint(p: Param) -> str:
    """The help line under a field: what it is, its default and its bounds."""
    parts = [p.help.rstrip(".") + "."]
    if p.kind == "int_list":
        parts.append("Comma-separated.")
    if p.min is not None and p.max is not None:
        parts.append(f"From {bound(p.min)} to {bound(p.max)}.")
    elif p.min is not None:
        parts.append(f"At least {bound(p.min)}.")
    elif p.max is not None:
        parts.append(f"At most {bound(p.max)}.")
    if p.default is None and p.auto:
        parts.append(f"Empty: {p.auto}.")
    return " ".join(parts)


# How a parameter's refusal reads under its own field, after the label: "Message sizes:
# whole numbers only, not 'abc'." where "Message sizes takes whole numbers" read as bad English
# (the command line's sentence has a flag, --sizes, where the form has a label).
_FIELD_WORDING = ((re.compile(r"takes (.+?)(, not .*)?\.$", re.S), r"\1 only\2."),
                  (re.compile(r"needs (.+?)\.$", re.S), r"\1 needed."),
                  (re.compile(r"must be (.+)$", re.S), r"\1"))


def field_error(param: Param, error: ParamError) -> str:
    """A ParamError as the form says it under the field: 'Label: what it takes, not what
    was typed.'; another sentence ('Model does not know …', one about two fields) stays
    whole."""
    text = param.form_message(error)
    head = param.label + " "
    if text.startswith(head):
        rest = text[len(head):]
        for pattern, instead in _FIELD_WORDING:
            if pattern.match(rest):
                return f"{param.label}: {pattern.sub(instead, rest, count=1)}"
    return text


class ParamField(QWidget):
    """One parameter's editor, chosen by its kind, with its error line."""

    changed = Signal()

    def __init__(self, param: Param, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.param = param
        self.error = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.editor = self._make_editor()
        self.choose_button: QPushButton | None = None
        if param.path:  # a file or folder: typed, or chosen in the system's dialog
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(self.editor, 1)
            self.choose_button = QPushButton("Choose…")
            self.choose_button.clicked.connect(self.choose_path)
            row.addWidget(self.choose_button)
            layout.addLayout(row)
        else:
            layout.addWidget(self.editor)
        self.hint = QLabel(param_hint(param))
        self.hint.setWordWrap(True)
        self.hint.setProperty("role", "hint")
        layout.addWidget(self.hint)
        self.error_label = QLabel()
        self.error_label.setWordWrap(True)
        self.error_label.setProperty("role", "error")
        self.error_label.hide()
        layout.addWidget(self.error_label)
        self.setToolTip(param.help)
        self.validate()

    def _make_editor(self) -> QWidget:
        p = self.param
        if p.kind == "bool":
            box = QCheckBox("On")
            box.setChecked(bool(p.default))
            box.toggled.connect(self._on_change)
            return box
        if p.kind == "choice":
            combo = QComboBox()
            combo.addItems(list(p.choices))
            if len(p.choices) > LIST_ALL_UP_TO:
                # A long list (torchvision's models): type to narrow it, or open it.
                combo.setEditable(True)
                combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
                completer = QCompleter(list(p.choices), combo)
                set_value(completer, "caseSensitivity", qt_values.CASE_INSENSITIVE)
                set_value(completer, "filterMode", qt_values.MATCH_CONTAINS)
                combo.setCompleter(completer)
            if p.default in p.choices:
                combo.setCurrentText(p.default)
            # Entries past the choices carry data (the LLM form's model files: model_choice):
            # choosing one keeps the choice before it as the field's value.
            self.last_choice = combo.currentText()
            combo.currentTextChanged.connect(self._remember_choice)
            combo.currentTextChanged.connect(self._on_change)
            return combo
        if p.kind == "choice_list":
            row = QWidget()
            lay = QHBoxLayout(row)
            lay.setContentsMargins(0, 0, 0, 0)
            self.choice_boxes: dict[str, QCheckBox] = {}
            for choice in p.choices:
                box = QCheckBox(choice)
                box.setChecked(choice in (p.default or []))
                box.toggled.connect(self._on_change)
                lay.addWidget(box)
                self.choice_boxes[choice] = box
            lay.addStretch(1)
            return row
        edit = QLineEdit()
        # The clear button shows only over text; its icon takes 6-9 ms to load the first time,
        # so it is turned on when the field first has text, not before the first paint.
        edit.textChanged.connect(lambda text: text and edit.setClearButtonEnabled(True))
        edit.setPlaceholderText(p.format(p.default) if p.default is not None else "auto")
        edit.textChanged.connect(self._on_change)
        return edit

    def choose_path(self) -> QFileDialog:
        return file_dialog(self, f"Choose {self.param.label}", self.editor.text(), "All files (*)",
                    lambda paths, _: paths and self.editor.setText(paths[0]))

    def _remember_choice(self, text: str) -> None:
        if self.editor.currentData() is None:
            self.last_choice = text

    def _on_change(self, *_: Any) -> None:
        self.validate()
        self.changed.emit()

    def text(self) -> str:
        """The field's content as a user would type it (also what QSettings keeps)."""
        p = self.param
        if p.kind == "bool":
            return p.format(self.editor.isChecked())
        if p.kind == "choice":
            return self.editor.currentText() if self.editor.currentData() is None \
                else self.last_choice
        if p.kind == "choice_list":
            return ",".join(c for c, box in self.choice_boxes.items() if box.isChecked())
        return self.editor.text()

    def set_text(self, text: str) -> None:
        p = self.param
        if p.kind == "bool":
            self.editor.setChecked(text.strip().lower() in ("1", "true", "yes", "on"))
        elif p.kind == "choice":
            if text in p.choices or self.editor.isEditable():
                self.editor.setCurrentText(text)
        elif p.kind == "choice_list":
            wanted = {t.strip() for t in text.split(",")}
            for choice, box in self.choice_boxes.items():
                box.setChecked(choice in wanted)
        else:
            self.editor.setText(text)
        self.validate()

    def is_default_empty(self) -> bool:
        """An empty text field means 'the default' (or 'auto' when the default is None)."""
        return self.param.kind in ("int", "float", "str", "int_list") and not self.text().strip()

    def value(self) -> Any:
        """The validated value; ParamError when the field is wrong."""
        if self.is_default_empty():
            return self.param.default
        if self.param.kind == "choice_list" and not self.text():
            raise ParamError(f"Choose at least one of {', '.join(self.param.choices)}.")
        if self.param.kind == "choice" and not self.text().strip():
            raise ParamError(f"Choose a {self.param.label.lower()}.")
        return self.param.parse(self.text())

    def validate(self) -> bool:
        try:
            self.value()
            self.error = ""
        except ParamError as e:
            self.error = field_error(self.param, e)
        return self._show_error()

    def mark(self, sentence: str) -> None:
        """A clash with other fields (the workload's checks), marked on this field until the
        next change."""
        self.error = sentence
        self._show_error()

    def _show_error(self) -> bool:
        bad = bool(self.error)
        self.error_label.setText(self.error)
        self.error_label.setVisible(bad)
        self.hint.setVisible(not bad)
        if isinstance(self.editor, QLineEdit) and bad != bool(self.editor.styleSheet()):
            self.editor.setStyleSheet(_BAD_FIELD if bad else "")   # a polish: only on a change
        return not bad


class ParamForm(QWidget):
    """All fields of one workload; `validity_changed(bool)` tells the Run button."""

    validity_changed = Signal(bool)

    def __init__(self, params: tuple[Param, ...], parent: QWidget | None = None,
                 check: Callable[[dict], None] | None = None) -> None:
        """check: the workload's own (Workload.check), which refuses what the fields allow one
        by one but not together; its sentence is marked on the field it names first."""
        super().__init__(parent)
        self.params, self.check = params, check
        self.clash: str | None = None     # the field marked with check's sentence
        self.fields: dict[str, ParamField] = {}
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        # Labels above their fields: the sidebar is narrow and some fields are wide.
        layout.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        layout.setVerticalSpacing(6)
        for p in params:
            f = ParamField(p)
            f.changed.connect(self._on_change)
            label = QLabel(p.label)
            tone(label, bold=True)
            label.setToolTip(p.help)
            layout.addRow(label, f)
            self.fields[p.name] = f
        # The LLM form: the model files found on this machine after the presets.
        self.models = None
        if {"preset", "model_path"} <= self.fields.keys():
            from siliconbench.gui.model_choice import ModelChoice
            self.models = ModelChoice(self.fields["preset"], self.fields["model_path"])

    def set_frameworks(self, frameworks: set[str]) -> None:
        """The frameworks of the devices ticked: the model files none of them runs are
        greyed."""
        if self.models is not None:
            self.models.set_frameworks(frameworks)

    def apply_theme(self, theme: Theme) -> None:
        for f in self.fields.values():
            tone_role(f.hint, theme)
            tone_role(f.error_label, theme)

    def _on_change(self) -> None:
        self.check_together()
        self.validity_changed.emit(self.is_valid())

    def check_together(self) -> str | None:
        """The workload's check over the fields' values, when each is right on its own: a
        clash (a context sweep with prompt lengths given) marked on the field its sentence
        names first, before Run rather than in a sheet after it. The field marked, or None."""
        if self.clash is not None:
            self.fields[self.clash].validate()
            self.clash = None
        if self.check is None or any(f.error for f in self.fields.values()):
            return None
        from siliconbench.core.params import resolve, worded_for_form
        try:
            self.check(resolve(self.params, self.values()))
        except ParamError as e:
            text = str(e)
            named = [(text.find(p.flag), -len(p.flag), p.name) for p in self.params
                     if p.flag in text]   # at one place, --batch-size rather than --batch
            if named:
                self.clash = min(named)[2]
                self.fields[self.clash].mark(worded_for_form(self.params, text))
        except (ValueError, OSError):
            pass   # the field's own check says it; Run's check says the rest
        return self.clash

    def is_valid(self) -> bool:
        return not self.errors()

    def errors(self) -> dict[str, str]:
        return {name: f.error for name, f in self.fields.items() if f.error}

    def values(self) -> dict[str, Any]:
        """The parameters to send: only fields the user filled in (defaults stay implicit, so
        "auto" keeps meaning auto). ParamError if any field is wrong."""
        out = {}
        for name, f in self.fields.items():
            if f.error:
                raise ParamError(f.error)
            if not f.is_default_empty():
                out[name] = f.value()
        return out

    def texts(self) -> dict[str, str]:
        return {name: f.text() for name, f in self.fields.items()}

    def set_texts(self, texts: dict[str, str], keep_valid: bool = False) -> None:
        """Fill in the fields named in `texts`; keep_valid: a text the field refuses leaves the
        field as it was (texts remembered in the settings, a default being better than an
        error the user did not type)."""
        if not isinstance(texts, dict):
            return
        for name, text in texts.items():
            field = self.fields.get(name) if isinstance(name, str) else None
            if field is None or not isinstance(text, str):
                continue
            before = field.text()
            field.set_text(text)
            if keep_valid and field.error:
                field.set_text(before)
        self._on_change()
