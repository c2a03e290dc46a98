"""The machine card: chip or CPU, GPU and cores, memory, OS, and AC or battery, which is
re-read every minute because a laptop gets unplugged mid-session."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from siliconbench.core.numbers import size
from siliconbench.gui import qt_values
from siliconbench.gui.background import BackgroundCall
from siliconbench.gui.qt_values import set_value
from siliconbench.gui.theme import LIGHT, Theme, tone

POWER_REFRESH_MS = 60_000


def describe(m) -> tuple[str, list[str], list[str]]:
    """(title, detail lines, warnings) for a siliconbench.core.machine.MachineInfo."""
    processor = m.chip or m.cpu_model or "Unknown processor"
    title = m.model_name or processor
    lines = []
    # The tiers as the Mac names them ("18-core CPU: 6 super + 12 performance").
    cores = m.cpu_summary() or (f"{m.cpu_cores}-core CPU" if m.cpu_cores else "")
    lines.append(" · ".join(x for x in ((processor if m.model_name else ""), cores) if x))
    gpu = ""
    if m.gpu_cores:
        gpu = f"{m.gpu_cores}-core GPU"
    elif m.gpu_name:
        gpu = m.gpu_name + (f" ({size(m.gpu_memory_bytes)})" if m.gpu_memory_bytes else "")
    else:
        gpu = "No separate GPU found"
    lines.append(gpu)
    if m.memory_bytes:
        lines.append(f"{size(m.memory_bytes)} memory" + (" (unified)" if m.chip else ""))
    os_text = m.os_version or m.os_name
    if m.os_name and m.os_version and m.os_version[:1].isdigit():  # "14.5" needs "macOS"
        os_text = f"{m.os_name} {m.os_version}"
    if os_text:
        lines.append(os_text + (f" · {m.arch}" if m.arch else ""))
    warnings = []
    if m.rosetta:
        warnings.append("Python runs under Rosetta: results will be far slower than native.")
    return title, [line for line in lines if line], warnings


def power_line(status) -> tuple[str, str]:
    """('On AC power' | 'On battery, 80%: ...' | ..., "ok" | "warn" | "muted")."""
    if status.power_source == "ac":
        text, tone = "On AC power", "ok"
    elif status.power_source == "battery":
        pct = f", {status.battery_percent}%" if status.battery_percent is not None else ""
        text, tone = f"On battery{pct}: plug in for full speed", "warn"
    else:
        text, tone = "Power source unknown", "muted"
    if status.low_power_mode:
        text, tone = text + " · Low Power Mode is on", "warn"
    return text, tone


class MachineCard(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MachineCard")
        self.theme = LIGHT
        self.info = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(2)
        self.title = QLabel("This Mac" if sys.platform == "darwin" else "This machine")
        tone(self.title, scale=1.25, bold=True)
        self.details = QLabel("Reading the machine…")
        self.details.setWordWrap(True)
        set_value(self.details, "textInteractionFlags", qt_values.TEXT_SELECTABLE_BY_MOUSE)
        self.power = QLabel()
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.hide()
        for w in (self.title, self.details, self.power, self.warnings):
            layout.addWidget(w)
        self._power_tone = "muted"
        self._calls: list[BackgroundCall] = []
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.refresh_power)

    def start(self) -> None:
        """Probe in the background: on a Mac system_profiler takes a second."""
        from siliconbench.core.machine import probe
        call = BackgroundCall(probe, self)
        call.done.connect(self.set_machine)
        call.failed.connect(lambda msg: self.details.setText(f"Could not read the machine: {msg}"))
        self._calls.append(call.start())
        self._timer.start(POWER_REFRESH_MS)

    def set_machine(self, info) -> None:
        self.info = info
        title, lines, warnings = describe(info)
        # The name given under Name Machine (siliconbench.core.machine_names) first, its
        # model under it.
        from siliconbench.core.machine_names import name_for
        name = name_for(info.to_dict())
        if name and name != title:
            title, lines = name, [title, *lines]
        self.title.setText(title)
        self.details.setText("\n".join(lines))
        self.warnings.setText("\n".join(warnings))
        self.warnings.setVisible(bool(warnings))
        from siliconbench.core.machine import PowerStatus
        self.set_power(PowerStatus(info.power_source, info.battery_percent, info.low_power_mode))

    def refresh_power(self) -> None:
        from siliconbench.core.machine import power_status
        self._calls = [c for c in self._calls if not c.finished.is_set()]
        call = BackgroundCall(power_status, self)
        call.done.connect(self.set_power)
        self._calls.append(call.start())

    def set_power(self, status) -> None:
        text, self._power_tone = power_line(status)
        self.power.setText(text)
        self._style_power()

    def summary(self) -> str:
        return self.info.summary() if self.info is not None else ""

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        # The rounded card is the one style sheet before the first paint (siliconbench.gui.theme.tone):
        # drawn in a paintEvent from its palette's brushes it cost as much (callgrind), and a
        # QPen or QBrush made in Python builds all of Qt's enums (siliconbench/gui/qt_values.py).
        self.setStyleSheet(f"#MachineCard {{ background: {theme.card}; border: 1px solid"
                           f" {theme.border}; border-radius: 10px; }}")
        tone(self.details, theme.muted)
        tone(self.warnings, theme.warning)
        self._style_power()

    def _style_power(self) -> None:
        color = {"ok": self.theme.ok, "warn": self.theme.warning}.get(self._power_tone,
                                                                      self.theme.muted)
        tone(self.power, color)
