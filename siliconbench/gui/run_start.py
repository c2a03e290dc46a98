"""Starting runs: Run makes one RunSpec per ticked device from the chosen workload's form and
queues them; Run, Compare's Run It Here and the quick suite ask first where
siliconbench.core.estimate finds a run that does not fit or takes long. Built with the
window's rest (MainWindow.build_rest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from siliconbench.core.params import ParamError, resolve, worded_for_form
from siliconbench.core.runner import RunSpec
from siliconbench.gui.sheets import message_sheet, question_sheet

if TYPE_CHECKING:
    from PySide6.QtWidgets import QCheckBox, QMessageBox, QWidget

    from siliconbench.gui.device_list import DeviceList
    from siliconbench.gui.param_form import ParamForm
    from siliconbench.gui.run_queue import RunJob, RunQueue
    from siliconbench.gui.workload_catalogue import WorkloadCatalogue


class RunStarter:
    """Runs of the `catalogue`'s workload with `form()`'s values on the `devices` ticked
    (Quick measurement: `quick_box`), into `queue`; its questions are sheets over `parent`,
    and `save_choices()` keeps the choices a run was started with."""

    def __init__(self, parent: QWidget, catalogue: WorkloadCatalogue, devices: DeviceList,
                 form: Callable[[], ParamForm | None], quick_box: QCheckBox, queue: RunQueue,
                 save_choices: Callable[[], None]) -> None:
        self.parent, self.catalogue, self.devices = parent, catalogue, devices
        self.form, self.quick_box, self.queue = form, quick_box, queue
        self.save_choices = save_choices

    def build_specs(self) -> tuple[list[RunSpec], list[str]]:
        """One RunSpec per ticked device, from the form; ParamError if a field is wrong."""
        w = self.catalogue.current()
        form = self.form()
        params = form.values() if form else {}
        try:        # what the fields allow one by one but not together, before any run starts
            w.plan(resolve(w.params, params))        # the run's plan, checked
        except ParamError as e:
            raise ParamError(worded_for_form(w.params, str(e))) from None
        specs, titles = [], []
        for d in self.devices.checked():
            specs.append(RunSpec(w.name, d.framework, d.id, dict(params),
                                 quick=self.quick_box.isChecked()))
            titles.append(f"{w.title} · {d.name} ({d.framework} {d.id})")
        return specs, titles

    def run(self) -> list[RunJob]:
        """Run: the runs queued now; none when a field is wrong (said in a sheet), when a run
        cannot fit (said in a sheet) or when the runs are asked about first."""
        try:
            specs, titles = self.build_specs()
        except ParamError as e:  # the form marks it too; a run is never sent with it
            message_sheet(self.parent, "Check the parameters", str(e))
            return []
        self.save_choices()
        jobs: list[RunJob] = []
        self.ask_before(specs, lambda: jobs.extend(self.queue.enqueue(specs, titles)))
        return jobs

    def run_warnings(self, specs: list[RunSpec]) -> list[str]:
        """Why these runs deserve a second thought (siliconbench.core.estimate), one sentence
        each: a refusal or a question."""
        from siliconbench.core.estimate import spec_verdicts
        refusals, questions = spec_verdicts(specs, self.devices.devices, self.queue.store)
        return refusals + questions

    def confirm_big_run(self, warnings: list[str], go: Callable[[], object]) -> QMessageBox:
        return question_sheet(self.parent, "Run Anyway?", "This is a big run.",
                              "\n\n".join(warnings) + "\n\nSmaller sizes or Quick measurement "
                              "give a first look sooner.", "Run Anyway", go)

    def ask_before(self, specs: list[RunSpec], go: Callable[[], object]) -> bool:
        """Run, Run It Here and the quick suite: siliconbench.core.estimate's verdict first.
        A run that cannot fit in memory is refused in a sheet and nothing is queued; one that
        takes long (or shares cores, or skips points) waits for Run Anyway; otherwise `go()`
        now. True when it went now."""
        from siliconbench.core.estimate import spec_verdicts
        refusals, questions = spec_verdicts(specs, self.devices.devices, self.queue.store)
        if refusals:
            message_sheet(self.parent, "This run cannot start", "\n\n".join(refusals))
            return False
        if questions:
            self.confirm_big_run(questions, go)
            return False
        go()
        return True
