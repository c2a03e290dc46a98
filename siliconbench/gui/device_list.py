"""Devices grouped by framework, each with its status, and the picker: tick several devices
(and frameworks) to run the same workload on all of them. Discovery asks each framework in a
child process (siliconbench.core.runner.discover_devices), off the GUI thread; the list fills in."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from siliconbench.core.numbers import size
from siliconbench.gui.background import BackgroundCall
from siliconbench.gui.theme import LIGHT, Theme, tone, tone_role


def device_key(d) -> str:
    """'torch:cpu': what QSettings keeps and what tests tick."""
    return f"{d.framework}:{d.id}"


def discover(on_found) -> tuple[list, dict[str, str]]:
    """(devices, installed framework versions); runs in a background thread, calling
    on_found(devices so far) as each framework answers. The answers kept from the last launch
    (devices.json) come first, at once, so Run is available while every framework is asked
    again: a fresh answer replaces its framework's kept one."""
    from siliconbench.core.frameworks import FRAMEWORKS
    from siliconbench.core.machine import framework_versions
    from siliconbench.core.runner import DEVICE_CACHE, discover_devices
    from siliconbench.core.store import home
    answers: dict[str, list] = {}

    def merged(found: list) -> list:     # in the registry's order, not the answers'
        for fw in dict.fromkeys(d.framework for d in found):
            answers[fw] = [d for d in found if d.framework == fw]
        order = list(FRAMEWORKS)
        return [d for fw in sorted(answers, key=lambda f: order.index(f) if f in order
                                   else len(order)) for d in answers[fw]]
    if (home() / DEVICE_CACHE).exists():
        on_found(merged(discover_devices(on_found=lambda f: on_found(merged(f)), fresh=False)))
    return merged(discover_devices(on_found=lambda f: on_found(merged(f)))), \
        framework_versions()


def default_device(devices: list):
    """The device a first launch ticks: an accelerator (CUDA, MPS, an MLX or TensorFlow GPU)
    before any CPU, by the frameworks' first_choice (PyTorch's first: it runs every
    workload); None without a usable device. Ticking the first listed one ticked MLX's CPU
    beside an idle GPU."""
    from siliconbench.core.frameworks import FRAMEWORKS
    usable = [d for d in devices if d.usable]

    def rank(d) -> tuple:     # the framework's first_choice (FrameworkInfo), then any other
        choice = FRAMEWORKS[d.framework].first_choice if d.framework in FRAMEWORKS else None
        return (d.kind == "cpu", choice is None, choice or 0)
    return min(usable, key=rank) if usable else None

class DeviceList(QWidget):
    checked_changed = Signal()
    discovered = Signal()
    discovery_failed = Signal(str)
    partly_found = Signal(object)   # emitted from the discovery thread; queued to the GUI

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = LIGHT
        self.devices: list = []
        self.complete = False           # set_devices(final=True) has run
        self.boxes: dict[str, QCheckBox] = {}
        self._status_labels: list[tuple[QLabel, str]] = []
        self._wanted: set[str] = set()       # ticks to restore once discovery ends
        self._default: str | None = None     # tick_default's, until the user ticks a box
        self._allowed: tuple[str, ...] | None = None
        self._call: BackgroundCall | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.body = QVBoxLayout()
        self.body.setSpacing(4)
        outer.addLayout(self.body)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        outer.addWidget(self.busy)
        # The window puts this button in the section's header.
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setFlat(True)
        self.refresh_button.setToolTip("Ask every framework again which devices it sees")
        self.refresh_button.clicked.connect(self.start)
        self._message("Looking for devices…")
        self.partly_found.connect(self._on_partly_found)

    # ------------------------------------------------------------ discovery

    def start(self) -> None:
        if self._call is not None and not self._call.finished.is_set():
            return
        self._wanted |= set(self.checked_keys())
        self._message("Looking for devices… (each framework is asked in its own process)")
        self.busy.show()
        self.refresh_button.setEnabled(False)
        self._call = BackgroundCall(lambda: discover(self.partly_found.emit), self)
        self._call.done.connect(self._on_found)
        self._call.failed.connect(self._on_failed)
        self._call.start()

    def _on_found(self, result) -> None:
        devices, versions = result
        self.set_devices(devices, versions)

    def _on_partly_found(self, devices: list) -> None:
        """Show the frameworks that answered while the slower ones still load; ticks the user
        made meanwhile survive the rebuild."""
        if self._call is None or self._call.finished.is_set():
            return  # the full answer is already shown
        from siliconbench.core.machine import framework_versions
        self.set_devices(devices, framework_versions(), final=False)

    def _on_failed(self, message: str) -> None:
        self.busy.hide()
        self.refresh_button.setEnabled(True)
        self._message(f"Device discovery failed: {message}", error=True)
        self.discovery_failed.emit(message)

    def set_devices(self, devices: list, versions: dict[str, str] | None = None,
                    final: bool = True) -> None:
        from siliconbench.core.frameworks import FRAMEWORKS
        versions = versions or {}
        self._clear()
        self.devices = devices
        self.complete = final   # every framework has answered
        self.busy.setVisible(not final)
        self.refresh_button.setEnabled(final)
        by_fw: dict[str, list] = {}
        for d in devices:
            by_fw.setdefault(d.framework, []).append(d)
        if not devices:
            self._message("No framework is installed. Install one, e.g. "
                          "pip install 'siliconbench[torch]'.", error=True)
        for fw, found in by_fw.items():
            info = FRAMEWORKS.get(fw)
            title = info.title if info else fw
            if versions.get(fw):
                title += f" {versions[fw]}"
            header = QLabel(title)
            header.setProperty("role", "subsection")
            tone_role(header, self.theme)
            self.body.addWidget(header)
            for d in found:
                self._add_device(d)
        self.restrict_to(self._allowed)
        if final:
            self.discovered.emit()
        self.checked_changed.emit()

    def _add_device(self, d) -> None:
        key = device_key(d)
        row = QWidget()
        lay = QVBoxLayout(row)
        lay.setContentsMargins(8, 0, 0, 2)
        lay.setSpacing(0)
        if d.id == "-":  # the framework itself is missing
            status = QLabel(d.reason or "Not available.")
            status.setWordWrap(True)
            lay.addWidget(status)
            self._status_labels.append((status, "error"))
            self.body.addWidget(row)
            return
        box = QCheckBox(f"{d.name}")
        box.setToolTip(f"{d.framework} device {d.id!r}")
        box.setEnabled(d.usable)
        box.setChecked(d.usable and key in self._wanted)
        box.toggled.connect(self._on_toggled)
        lay.addWidget(box)
        mem = f" · {size(d.memory_bytes)}" if d.memory_bytes else ""
        if d.usable:
            status = QLabel(f"{d.id} · {d.kind.upper()}{mem} · ready"
                            + (f"\n{d.note}" if d.note else ""))
            kind = "ok"
        else:
            status = QLabel(f"{d.id} · unusable: {d.reason or 'no reason given'}")
            kind = "error"
        status.setWordWrap(True)
        status.setContentsMargins(22, 0, 0, 0)  # under the checkbox's text
        lay.addWidget(status)
        self._status_labels.append((status, kind))
        self.boxes[key] = box
        self.body.addWidget(row)
        self._style_status()

    def _message(self, text: str, error: bool = False) -> None:
        self._clear()
        label = QLabel(text)
        label.setWordWrap(True)
        self._status_labels.append((label, "error" if error else "muted"))
        self.body.addWidget(label)
        self._style_status()

    def _clear(self) -> None:
        while self.body.count():
            w = self.body.takeAt(0).widget()
            if w is not None:
                w.hide()  # gone now, not when the event loop gets to deleting it
                w.deleteLater()
        self.boxes.clear()
        self._status_labels.clear()

    # ------------------------------------------------------------ picking

    def tick_default(self) -> None:
        """A first launch's tick (default_device): made with nothing ticked or wished for,
        and moved to a better device as slower frameworks answer, until the user ticks a box
        themselves. MLX answers first and its CPU stayed ticked beside PyTorch's GPU."""
        best = default_device(self.devices)
        if best is None or (self.checked_keys() or self._wanted) and \
                (self._default is None or self._wanted != {self._default}):
            return
        if device_key(best) != self._default:
            self.set_checked([device_key(best)])
            self._default = device_key(best)

    def _on_toggled(self) -> None:
        self._default = None         # the user's ticks from now on
        # Keep the wishes for devices not listed yet (a framework still loading).
        self._wanted = (self._wanted - set(self.boxes)) | set(self.checked_keys())
        self.checked_changed.emit()

    def wanted(self) -> set[str]:
        """Devices to tick once listed: restored from settings, or ticked while a framework
        was still answering."""
        return set(self._wanted)

    def checked_keys(self) -> list[str]:
        return [k for k, box in self.boxes.items() if box.isChecked() and box.isEnabled()]

    def checked(self) -> list:
        keys = set(self.checked_keys())
        return [d for d in self.devices if device_key(d) in keys]

    def set_checked(self, keys) -> None:
        """Tick these devices (now, or when discovery finds them)."""
        self._default = None
        wanted = set(keys)
        self._wanted = wanted
        for k, box in self.boxes.items():
            box.blockSignals(True)  # one change signal at the end, not one per box
            box.setChecked(k in wanted and box.isEnabled())
            box.blockSignals(False)
        self._wanted = wanted
        self.checked_changed.emit()

    def restrict_to(self, frameworks: tuple[str, ...] | None) -> None:
        """Grey out devices of frameworks the chosen workload does not run on."""
        self._allowed = frameworks
        usable = {device_key(d) for d in self.devices if d.usable}
        for key, box in self.boxes.items():
            fw = key.split(":", 1)[0]
            allowed = frameworks is None or fw in frameworks
            box.setEnabled(key in usable and allowed)
            box.setToolTip("" if allowed else "The chosen workload does not run on this "
                                              "framework yet.")
        self.checked_changed.emit()

    def apply_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._style_status()

    def _style_status(self) -> None:
        colors = {"ok": self.theme.muted, "error": self.theme.error, "muted": self.theme.muted}
        for label, kind in self._status_labels:
            tone(label, colors[kind], 0.9)
