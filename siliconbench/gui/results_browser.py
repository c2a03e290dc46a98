"""The results browser: every stored run (measured here or imported), filtered by workload,
machine, device and status. Selected runs are drawn together; a machine can be given a name
("MacBook Pro 14 M1 Max"); runs can be deleted. The table holds the store's listings (a few
hundred bytes of each run: siliconbench.core.store_schema.Listed); a run's whole record is read
only when it is selected (drawn, exported, compared)."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from siliconbench.core.results import RunRecord
from siliconbench.core.store_schema import Listed
from siliconbench.gui.background import BackgroundCall
from siliconbench.gui.results_model import (  # noqa: F401 - what importers of this module use
    BEST,
    COLUMN_WIDTHS,
    COLUMNS,
    DEVICE,
    FITTED,
    MACHINE,
    SORT_ROLE,
    STATUS,
    WHEN,
    WORKLOAD,
    RunFilter,
    RunTableModel,
    best_text,
    cell_text,
    device_text,
    filter_device,
    filter_value,
    local_time,
    machine_key,
    run_flags,
    run_kind,
    warnings_of,
    workload_text,
    workload_title,
)
from siliconbench.gui.row_table import one_row_height
from siliconbench.gui.theme import Theme


class ResultsBrowser(QWidget):
    selection_changed = Signal(list)   # list[RunRecord]
    store_changed = Signal()
    machine_named = Signal(set, str)   # the machines' keys (machine_key), their name ("": none)

    # (column, filter name, the entry that means "no filter")
    FILTERS = ((WORKLOAD, "Workload", "All workloads"), (MACHINE, "Machine", "All machines"),
               (DEVICE, "Device", "All devices"), (STATUS, "Status", "Any status"))

    def __init__(self, store, parent: QWidget | None = None) -> None:
        """`store`: the RunStore the app chose (siliconbench.core.run_store)."""
        super().__init__(parent)
        self.store = store
        # Whole records read since the last load, by run id (the table holds listings).
        self._records: dict[str, RunRecord] = {}
        self.unopened: str | None = None   # why the selection's records could not be read
        # Why the shared store refused, while Results shows this machine's runs instead
        # (siliconbench.gui.store_banner); None: Results reads the store itself.
        self.shared_refused: str | None = None
        self._drawn: set[str] = set()     # the ids selection_changed last gave
        self.model = RunTableModel(self)
        self.proxy = RunFilter(self)
        self.proxy.setSourceModel(self.model)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 0, 6, 0)
        self.combos: dict[int, QComboBox] = {}
        for column, name, _ in self.FILTERS:
            combo = QComboBox()
            combo.setToolTip(f"Show only runs of this {name.lower()}")
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(9)
            combo.view().setMinimumWidth(320)  # the open list shows long device names whole
            combo.currentIndexChanged.connect(self._filter)
            bar.addWidget(combo, 1)
            self.combos[column] = combo
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(110)
        self.search.textChanged.connect(self._filter)
        bar.addWidget(self.search, 1)
        layout.addLayout(bar)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(WHEN, Qt.SortOrder.DescendingOrder)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setAlternatingRowColors(True)
        self.view.setShowGrid(False)
        self.view.verticalHeader().hide()
        self.view.setWordWrap(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate(COLUMN_WIDTHS):
            self.view.setColumnWidth(column, width)
        self.view.selectionModel().selectionChanged.connect(self._on_selection)
        # At the window's smallest the charts have the room first (main_window.
        # ChartsFirstSplit): the table keeps its header and a row over its scroll bar.
        self.view.setMinimumHeight(one_row_height(self.view))
        layout.addWidget(self.view, 1)
        foot = QHBoxLayout()
        foot.setContentsMargins(6, 0, 6, 4)
        self.count_label = QLabel()
        self.rename_button = QPushButton("Name Machine…")
        self.rename_button.setToolTip("Give the machine of the selected runs a name, e.g. "
                                      "“MacBook Pro 14 M1 Max”")
        self.delete_button = QPushButton("Delete")
        foot.addWidget(self.count_label, 1)
        foot.addWidget(self.rename_button)
        foot.addWidget(self.delete_button)
        layout.addLayout(foot)
        self._on_selection()

    # ------------------------------------------------------------ loading

    def read_locally(self, reason: str | None) -> None:
        """Show this machine's runs while the shared store refuses (`reason`, its sentence),
        or the store's own again (None). The caller loads them."""
        self.shared_refused = reason

    def _reading(self):
        """The store Results reads: this machine's while the shared one refuses."""
        return self.store.local if self.shared_refused else self.store

    def load_in_background(self, switched: bool = False) -> None:
        """The first load, off the GUI thread: the listing of thousands of runs takes a while
        to read. Its own connection to the same store (reopen): SQLite connections are not
        for sharing. `switched`: the runs listed came from another store (this machine's,
        while the shared one refused) and go."""
        reading = self._reading()

        def read() -> list[RunRecord]:
            store = reading.reopen()
            try:
                return store.listing()
            finally:
                store.close()

        self.count_label.setText("Reading the results store…")
        self._loader = BackgroundCall(read, self)
        self._loader.done.connect(lambda records: self._loaded(records, switched))
        self._loader.failed.connect(lambda msg: self.count_label.setText(
            f"The results store could not be read: {msg}"))
        self._loader.start()

    def _loaded(self, records: list[RunRecord], switched: bool = False) -> None:
        # Runs that ended while the store was being read are in the model already.
        stored = {r.id for r in records}
        newer = [] if switched else [r for r in self.model.records if r.id not in stored]
        ids = self.selected_ids()
        if switched:
            self._records.clear()
        self.model.set_records(newer + records)
        self._fill_combos()
        self.select_ids(ids)

    def reload(self, keep_selection: bool = True) -> None:
        ids = self.selected_ids() if keep_selection else set()
        self._records.clear()   # a label or a deletion changed them
        self.model.set_records(self._reading().listing())
        self._fill_combos()
        self.select_ids(ids)

    def add_record(self, rec: RunRecord, select: bool = False,
                   together: set[str] = frozenset()) -> None:
        """A run that just ended (or was cancelled): no need to reread the store. The selection
        is the user's and stays as it is; `select` (Preferences: select new runs when they
        finish) draws the run instead, with the runs `together` (those queued with it) that
        the filters show. Filtered out, a new run leaves the selection as it was."""
        self._records[rec.id] = rec
        row = next((i for i, r in enumerate(self.model.records) if r.id == rec.id), None)
        if row is not None:      # in place: a reset of the model would drop the selection
            self.model.replace(row, rec)
        else:
            self.model.add(rec)
        self._fill_combos()
        if select and self.shown_ids(set(together) | {rec.id}):
            self.select_ids(set(together) | {rec.id})

    def shown_ids(self, ids: set[str]) -> set[str]:
        """Those of these runs the filters show."""
        return {rec.id for row in range(self.proxy.rowCount())
                if (rec := self.proxy.data(self.proxy.index(row, 0),
                                           Qt.ItemDataRole.UserRole)).id in ids}

    def _fill_combos(self) -> None:
        for column, _, anything in self.FILTERS:
            combo = self.combos[column]
            current = combo.currentText()
            values = sorted({filter_value(r, column, self.model.machines)
                             for r in self.model.records})
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([anything] + values)
            combo.setCurrentText(current if current in values else anything)
            combo.blockSignals(False)
        self._filter()
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Status, Device and Machine as wide as their text up to FITTED; a Machine column
        with no name in it hidden."""
        self.view.setColumnHidden(MACHINE, not any(r.machine_label for r in self.model.records))
        for column, cap in FITTED.items():
            if not self.view.isColumnHidden(column):
                self.view.resizeColumnToContents(column)
                self.view.setColumnWidth(column, min(cap, self.view.columnWidth(column)))

    def _filter(self) -> None:
        # Entry 0 of each combo means "no filter" (None).
        self.proxy.choices = {c: (combo.currentText() if combo.currentIndex() > 0 else None)
                              for c, combo in self.combos.items()}
        self.proxy.search = self.search.text().strip()
        self.proxy.invalidate()   # the rows kept; their order is the model's (RunFilter.sort)
        self._update_count()
        # Rows the filter hides leave the selection without a selectionChanged signal: the
        # charts and Compare kept drawing runs no longer selected (nor exported).
        if self.selected_ids() != self._drawn:
            self._on_selection()

    def set_filter(self, name: str, value: str | None) -> None:
        """Set a filter by its name ("Workload", "Machine", "Device", "Status"); None: any."""
        column, anything = {n: (c, a) for c, n, a in self.FILTERS}[name]
        self.combos[column].setCurrentText(anything if value is None else value)

    # ------------------------------------------------------------ selection

    def selected_ids(self) -> set[str]:
        return {self.proxy.data(i, Qt.ItemDataRole.UserRole).id
                for i in self.view.selectionModel().selectedRows()}

    def selected_records(self) -> list[RunRecord]:
        """The selected runs' whole records (those not read yet read from the store in one
        go; a run deleted meanwhile is left out), oldest first."""
        rows = self.view.selectionModel().selectedRows()
        listed = [self.proxy.data(i, Qt.ItemDataRole.UserRole) for i in rows]
        self._read_whole([r.id for r in listed
                          if isinstance(r, Listed) and r.id not in self._records])
        recs = [self._records.get(r.id) if isinstance(r, Listed) else r for r in listed]
        return sorted((r for r in recs if r is not None), key=lambda r: r.created_at)

    def _read_whole(self, run_ids: list[str]) -> None:
        if not run_ids:
            return
        from siliconbench.core.store_schema import StoreError
        try:
            found = self._reading().get_many(run_ids)
        except StoreError as e:   # the shared store went away: said below the table
            self.unopened = str(e)
            return
        self._records.update((r.id, r) for r in found)

    def select_ids(self, ids: set[str]) -> None:
        selection = QItemSelection()
        for row, rec in enumerate(self.model.records) if ids else ():
            if rec.id in ids:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                if index.isValid():   # not filtered out
                    selection.select(index, self.proxy.index(index.row(), len(COLUMNS) - 1))
        self.view.selectionModel().select(
            selection, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def _on_selection(self, *_) -> None:
        self.unopened = None
        selected = self.selected_records()
        self._drawn = self.selected_ids()
        # Only the selection's records are kept (a record may hold thousands of samples).
        self._records = {i: r for i, r in self._records.items() if i in self._drawn}
        self.rename_button.setEnabled(bool(selected))
        self.delete_button.setEnabled(bool(selected))
        self._update_count()
        self.selection_changed.emit(selected)

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), len(self.model.records)
        selected = len(self.view.selectionModel().selectedRows())
        text = f"{shown} of {total} runs" if shown != total else f"{total} runs"
        if self.shared_refused:
            text += " on this machine (the shared store could not be opened)"
        if self.unopened:
            text += f" · the selected runs could not be read: {self.unopened}"
        if selected:
            text += f" · {selected} selected and drawn"
        elif total:
            text += " · select runs to draw them together (⌘/Ctrl-click for several)"
        self.count_label.setText(text)

    # ------------------------------------------------------------ changing the store

    def rename_machine(self, label: str, records: list[RunRecord] | None = None,
                       others: bool = False) -> int:
        """Name the machine(s) of these runs (default: the selection) on all their runs, and
        for their future runs (siliconbench.core.machine_names). A run of theirs that carries
        another name (an imported run's) keeps it unless `others` (the action asks first:
        runs_to_name). ValueError or OSError, with nothing renamed, when the name is too long
        or the names file cannot be written."""
        from siliconbench.core.machine_names import runs_to_name, set_names
        records = records if records is not None else self.selected_records()
        # The names file first, in one write: when it cannot be written (ValueError, OSError)
        # nothing is renamed.
        set_names([rec.machine for rec in {machine_key(r): r for r in records
                                           if r.machine}.values()
                   if rec.source != "published"], label)
        keys = {machine_key(r) for r in records}
        ids, named = runs_to_name(self.model.records, records, label)
        if not others:
            kept = {r.id for r in named}
            ids = [i for i in ids if i not in kept]
        self.store.set_label(ids, label.strip() or None)
        self.reload()
        self.store_changed.emit()
        self.machine_named.emit(keys, label.strip())
        return len(ids)

    def delete(self, records: list[RunRecord]) -> int:
        n = self.store.delete([r.id for r in records])
        self.reload(keep_selection=False)
        self.store_changed.emit()
        return n

    def apply_theme(self, theme: Theme) -> None:
        self.model.theme = theme
        self.view.viewport().update()
