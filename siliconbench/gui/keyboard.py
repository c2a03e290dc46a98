"""The main window's keyboard: the order Tab visits its controls in, and the menus' keys that
a text field would take for itself (siliconbench.gui.main_window: a part of MainWindow)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

# The menu entries whose keys stay with a text field that has the focus: they edit its text.
TEXT_KEYS = ("copy", "select_all", "delete")


class MenuKeysFirst(QObject):
    """On a text field: the menus' keys go to the menus (`actions`, by name: those of
    TEXT_KEYS excepted). On X11 a QLineEdit claims Ctrl+E (end of line) and Ctrl+K (delete
    to its end) as Emacs does, so Export Chart as PNG and Compare did nothing while a field
    had the focus."""

    def __init__(self, actions: dict, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.actions = actions   # the menus' entries, read when a key comes: more are added

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride:
            from PySide6.QtGui import QKeySequence
            pressed = QKeySequence(event.keyCombination()).toString(
                QKeySequence.SequenceFormat.PortableText)
            if any(k.toString(QKeySequence.SequenceFormat.PortableText) == pressed
                   for name, action in self.actions.items()
                   if name not in TEXT_KEYS and action.isEnabled() for k in action.shortcuts()):
                return True   # not accepted: the shortcut is the menus'
        return False


class Keyboard:
    """Tab's order and the menus' keys (a part of MainWindow)."""

    def focus_chain(self) -> list[QWidget]:
        """What Tab visits, in reading order: the devices, the workload, its parameters,
        Run; then the charts' tabs, the queue and the results."""
        from PySide6.QtCore import Qt
        chain: list[QWidget] = [*self.devices.boxes.values(), self.devices.refresh_button,
                                self.catalogue]
        form = self.form
        if form is not None:
            # Not a combo's popup list, which lives in a window of its own (Qt warned
            # "setTabOrder: 'first' and 'second' must be in the same window" and the chain
            # broke there: Tab skipped the scaling form's fields), nor a hidden field's.
            chain += [w for w in form.findChildren(QWidget)
                      if w.focusPolicy() & Qt.FocusPolicy.TabFocus and w.window() is self
                      and w.isVisibleTo(form)]
        chain += [self.quick_box, self.run_button]
        if self._charts is not None:
            chain.append(self._charts.tabBar())
        chain.append(self.bottom.tabBar())
        if self._rest_built:
            chain += [self._queue_view.cancel_all_button, *self._results.combos.values(),
                      self._results.search, self._results.view]
        return chain

    def _update_tab_order(self, *_) -> None:
        if not self._rest_built:    # build_rest sets it, after the first paint (it reads Qt's
            return                  # focus policies: siliconbench/gui/qt_values.py)
        from PySide6.QtCore import Qt
        # A tab widget is its tab bar's focus proxy: Tab after the last control went back
        # to that tab bar, round and round (Qt 6.12), never to the devices again. The bar
        # takes the focus itself; the tab widget none.
        for tabs in (self.bottom, self._charts):
            if tabs is not None:
                tabs.setFocusProxy(None)
                tabs.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        chain = self.focus_chain()
        for first, second in zip(chain, chain[1:]):
            QWidget.setTabOrder(first, second)
        self.menu_keys_first(chain)

    def menu_keys_first(self, widgets: list[QWidget]) -> None:
        """The text fields among `widgets` (and inside them: a spin box's) leave the menus'
        keys to the menus, but for those that edit text (TEXT_KEYS)."""
        from PySide6.QtWidgets import QLineEdit
        if self.menu_actions is None:
            return
        if getattr(self, "_menu_keys", None) is None:
            self._menu_keys = MenuKeysFirst(self.menu_actions.named, self)
        for widget in widgets:
            fields = [widget] if isinstance(widget, QLineEdit) else []
            for field in fields + widget.findChildren(QLineEdit):
                if not field.property("menu_keys_first"):
                    field.setProperty("menu_keys_first", True)
                    field.installEventFilter(self._menu_keys)
