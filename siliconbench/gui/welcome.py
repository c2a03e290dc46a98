"""First launch: a short welcome that offers the quick suite, says what it measures and where
results are kept. Shown once (a flag in the app's settings), never blocking the event loop."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

SHOWN_KEY = "welcome/shown"


def queue_quick_suite(window) -> int:
    """Queue the quick suite on every usable device; before the device list is in, queue it
    the moment it arrives. Returns the number of runs queued now."""
    from siliconbench.core.suites import expand
    found = [d for d in window.devices.devices if d.usable]
    # Every framework's devices, not those of the first to answer (MLX loads fastest).
    if not found or not window.devices.complete:
        window.statusBar().showMessage("The quick suite starts once the devices are found.")
        window.devices.discovered.connect(_queue_once(window))
        return 0
    names = {(d.framework, d.id): d.name for d in found}
    specs = expand("quick", found)
    titles = [f"Quick suite · {s.workload} · {names[(s.framework, s.device)]} "
              f"({s.framework} {s.device})" for s in specs]
    jobs: list = []

    def go() -> None:
        jobs.extend(window.queue.enqueue(specs, titles))
        window.live_runs.compare_when_done(jobs)  # it ends beside a published machine
    window.ask_before(specs, go)   # a device the suite cannot fit is asked about first
    return len(jobs)


def _queue_once(window):
    def queue() -> None:
        window.devices.discovered.disconnect(queue)
        queue_quick_suite(window)
    return queue


class WelcomeDialog(QDialog):
    def __init__(self, window, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        from siliconbench.core.store import home
        from siliconbench.core.suites import load_suites
        self.window_ = window
        self.setWindowTitle("Welcome to SiliconBench")
        quick = load_suites()["quick"]
        self.text = QLabel(
            "<h3>Welcome to SiliconBench</h3>"
            f"<p>{quick['summary']}</p>"
            "<p>It takes a few minutes (five or more on a busy 2-core CPU, less on an "
            "Apple GPU). Keep other heavy apps closed meanwhile: they slow the measurements.</p>"
            f"<p>Results are kept in <code>{home()}</code> and listed under Results; "
            "Help &gt; Show Data Folder opens it.</p>")
        self.text.setWordWrap(True)
        buttons = QDialogButtonBox()
        self.run_button = buttons.addButton("Run the Quick Suite",
                                            QDialogButtonBox.ButtonRole.AcceptRole)
        self.later_button = buttons.addButton("Not Now", QDialogButtonBox.ButtonRole.RejectRole)
        self.run_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.accepted.connect(lambda: queue_quick_suite(self.window_))
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)


def maybe_show_welcome(window) -> WelcomeDialog | None:
    """Open the welcome the first time the app runs (per settings file); None after that."""
    if str(window.settings.value(SHOWN_KEY, "false")).lower() == "true":
        return None
    window.settings.setValue(SHOWN_KEY, "true")  # once, even if the app is quit meanwhile
    window.settings.sync()
    dialog = WelcomeDialog(window)
    window.welcome = dialog  # kept alive while it is open
    dialog.open()            # window-modal, not exec(): the event loop (and tests) go on
    return dialog
