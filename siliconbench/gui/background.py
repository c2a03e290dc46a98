"""Runs a slow call (device discovery, machine probe) off the GUI thread and hands its result
back as a Qt signal, so the window shows at once and fills in."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal


class BackgroundCall(QObject):
    """fn() in a daemon thread; `done(result)` or `failed(message)` arrive in the GUI thread.

    A daemon thread rather than a QThread: discovery cannot be interrupted, and a QThread still
    running when the window closes would abort the process."""

    done = Signal(object)
    failed = Signal(str)

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.finished = threading.Event()

    def start(self) -> BackgroundCall:
        threading.Thread(target=self._work, daemon=True).start()
        return self

    def _work(self) -> None:
        try:
            result = self._fn()
        except Exception as e:  # shown to the user in the panel that asked
            self._deliver(self.failed, f"{type(e).__name__}: {e}")
        else:
            self._deliver(self.done, result)
        self.finished.set()

    @staticmethod
    def _deliver(signal, value) -> None:
        try:
            signal.emit(value)
        except RuntimeError:
            pass  # the receiving window was closed meanwhile
