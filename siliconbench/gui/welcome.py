"""First launch: a short welcome that offers the quick suite, says what it measures and where
results are kept. Shown once (a flag in the app's settings), never blocking the event loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QStatusBar

    from siliconbench.core.runner import RunSpec
    from siliconbench.gui.device_list import DeviceList
    from siliconbench.gui.run_queue import RunJob

SHOWN_KEY = "welcome/shown"

# Queues runs to compare when done, asking first where one is big: LiveRuns.queue_compared.
QueueCompared = Callable[[list["RunSpec"], list[str]], list["RunJob"]]


def queue_quick_suite(devices: DeviceList, status: QStatusBar, queue: QueueCompared,
                      suite: str = "quick", store=None) -> int:
    """Queue the quick suite on every usable device of `devices` with `queue` (it ends beside
    a published machine; a device the suite cannot fit is asked about first); before the
    device list is in, say so in `status` and queue it the moment it arrives. Returns the
    number of runs queued now. `suite`: another suite of suites.json ("sustained": the
    Sustained check) the same way. `store`: the window's, whose triads measured here size
    the suite's LLM (siliconbench.core.suites.expand)."""
    from siliconbench.core.suites import expand, load_suites
    found = [d for d in devices.devices if d.usable]
    # Every framework's devices, not those of the first to answer (MLX loads fastest).
    if not found or not devices.complete:
        status.showMessage("The quick suite starts once the devices are found.")
        devices.discovered.connect(_queue_once(devices, status, queue, suite, store))
        return 0
    names = {(d.framework, d.id): d.name for d in found}
    specs = expand(suite, found, store=store)
    title = load_suites()[suite]["title"]
    titles = [f"{title} · {s.workload} · {names[(s.framework, s.device)]} "
              f"({s.framework} {s.device})" for s in specs]
    return len(queue(specs, titles))


def _queue_once(devices: DeviceList, status: QStatusBar, queue: QueueCompared,
                suite: str = "quick", store=None):
    def once() -> None:
        devices.discovered.disconnect(once)
        queue_quick_suite(devices, status, queue, suite, store)
    return once


def suite_seconds(specs: list[RunSpec], devices: list, store=None) -> float:
    """How long these runs take by siliconbench.core.estimate, each on its device; a
    sustained run (--duration) that the estimate cannot time counts its duration."""
    from siliconbench.core.estimate import estimate
    total = 0.0
    for spec in specs:
        device = next(d for d in devices if (d.framework, d.id) == (spec.framework, spec.device))
        seconds = estimate(spec.workload, spec.params, device, spec.quick, store).seconds
        total += seconds if seconds is not None else 60.0 * (spec.params.get("duration") or 0)
    return total


def ask_sustained_check(parent: QWidget, devices: DeviceList, status: QStatusBar,
                        queue: QueueCompared, store=None):
    """Run > Run the Sustained Check: how long it takes on the GPUs found, asked first (Run
    the Sustained Check or Cancel), then queued as the quick suite is (queue_quick_suite,
    with the estimate's own questions). The sheet shown; None before the devices are in."""
    from siliconbench.core.numbers import duration
    from siliconbench.core.suites import expand, load_suites
    from siliconbench.gui.sheets import message_sheet, question_sheet
    found = [d for d in devices.devices if d.usable]
    if not found or not devices.complete:
        status.showMessage("The Sustained check can be started once the devices are found.",
                           8000)
        return None
    suite = load_suites()["sustained"]
    specs = expand("sustained", found, store=store)
    if not specs:
        return message_sheet(
            parent, "No GPU for the Sustained check",
            "The Sustained check runs on GPUs, and none of the devices found is one. To see "
            "how a CPU holds up, give a workload a Duration (minutes) in its form and Run it.")
    gpus = list(dict.fromkeys((s.framework, s.device) for s in specs))
    names = {(d.framework, d.id): d.name for d in found}
    where = f"on {names[gpus[0]]}" if len(gpus) == 1 else \
        f"in all, on {len(gpus)} GPUs one after another"
    return question_sheet(
        parent, "Run the Sustained Check?",
        f"The Sustained check takes about {duration(suite_seconds(specs, found, store))} {where}.",
        f"{suite['summary']}\n\nThe GPU is busy all that time; keep other heavy apps closed.",
        "Run the Sustained Check",
        lambda: queue_quick_suite(devices, status, queue, suite="sustained", store=store))


class WelcomeDialog(QDialog):
    """The welcome over `parent`; Run the Quick Suite calls `queue_suite()`."""

    def __init__(self, parent: QWidget, queue_suite: Callable[[], object]) -> None:
        super().__init__(parent)
        from siliconbench.core.store import home
        from siliconbench.core.suites import load_suites
        self.setWindowTitle("Welcome to SiliconBench")
        quick = load_suites()["quick"]
        self.text = QLabel(
            "<h3>Welcome to SiliconBench</h3>"
            f"<p>{quick['summary']}</p>"
            "<p>It takes a few minutes (five or more on a busy 2-core CPU, less on an "
            "Apple GPU). Keep other heavy apps closed meanwhile: they slow the measurements.</p>"
            f"<p>Results are kept in <code>{home()}</code> and listed under Results; "
            "Help &gt; Show Data Folder opens it.</p>"
            "<p>Not now? Run &gt; Run the Quick Suite starts it whenever you like.</p>")
        self.text.setWordWrap(True)
        buttons = QDialogButtonBox()
        self.run_button = buttons.addButton("Run the Quick Suite",
                                            QDialogButtonBox.ButtonRole.AcceptRole)
        self.later_button = buttons.addButton("Not Now", QDialogButtonBox.ButtonRole.RejectRole)
        self.run_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.accepted.connect(queue_suite)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)


def maybe_show_welcome(settings: QSettings, parent: QWidget,
                       queue_suite: Callable[[], object]) -> WelcomeDialog | None:
    """Open the welcome over `parent` the first time the app runs (per `settings` file); None
    after that."""
    if str(settings.value(SHOWN_KEY, "false")).lower() == "true":
        return None
    settings.setValue(SHOWN_KEY, "true")  # once, even if the app is quit meanwhile
    settings.sync()
    dialog = WelcomeDialog(parent, queue_suite)   # its parent keeps it alive while open
    dialog.open()            # window-modal, not exec(): the event loop (and tests) go on
    return dialog
