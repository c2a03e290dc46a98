"""The results browser: every stored run (measured here or imported), filtered by workload,
machine, device and status. Selected runs are drawn together; a machine can be given a name
("MacBook Pro 14 M1 Max"); runs can be deleted. The table holds the store's listings (a few
hundred bytes of each run: siliconbench.core.store_schema.Listed); a run's whole record is read
only when it is selected (drawn, exported, compared)."""

from __future__ import annotations

import datetime as dt

from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor
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
from siliconbench.gui.row_table import one_row_height
from siliconbench.gui.row_text import (
    flag_counts,
    flag_label,
    headline_text,
    warning_count,
    warnings_tooltip,
)
from siliconbench.gui.theme import LIGHT, Theme

# The result comes early so it stays in view; long names at the end are elided first.
COLUMNS = ("When", "Status", "Workload", "Headline [p25–p75]", "Device", "Machine")
WHEN, STATUS, WORKLOAD, BEST, DEVICE, MACHINE = range(len(COLUMNS))
COLUMN_WIDTHS = (118, 60, 160, 235, 190)
# The columns sized to their text (up to these widths) as runs are listed: Status and Device
# were elided at fixed widths beside an empty Machine column, and the Workload's model,
# precision and TF32 (run_kind) at 160 px.
FITTED = {STATUS: 170, WORKLOAD: 330, DEVICE: 280, MACHINE: 220}
SORT_ROLE = Qt.ItemDataRole.UserRole + 1


def local_time(iso: str) -> str:
    try:
        return dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso


def device_text(rec: RunRecord) -> str:
    return rec.device_text     # as the command lists it (siliconbench.core.results)


def workload_title(name: str) -> str:
    from siliconbench.core.catalogue import UnknownWorkload, workload
    try:
        return workload(name).title
    except UnknownWorkload:
        return name  # imported from a newer SiliconBench


def run_kind(workload: str, params: dict) -> str:
    """What a run measured within its workload: its model (a preset, or its own file's name),
    precision and TF32 ('llama-3.1-8b · bfloat16', 'float32 · TF32'); the Results' Workload
    column and the queue's rows name it (a TF32 GEMM read like a plain float32 one)."""
    from siliconbench.core.catalogue import UnknownWorkload
    from siliconbench.core.catalogue import workload as find
    try:
        given = {p.name: p.default for p in find(workload).params}
    except UnknownWorkload:
        given = {}
    given.update(params or {})
    path = given.get("model_path")
    model = str(path).rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] if path else \
        given.get("model") or given.get("preset")
    dtypes = given.get("dtypes")
    dtype = given.get("dtype") or (", ".join(map(str, dtypes)) if isinstance(dtypes, list)
                                   else None) or given.get("precision")
    parts = [str(x) for x in (model, dtype) if x]
    if given.get("tf32"):
        parts.append("TF32")
    return " · ".join(parts)


def workload_text(rec: RunRecord) -> str:
    """The Workload column: the workload and what it measured ('GEMM · float32 · TF32')."""
    kind = run_kind(rec.workload, rec.params)
    return workload_title(rec.workload) + (f" · {kind}" if kind else "")


def run_flags(rec: RunRecord) -> str:
    """'2 noisy, 1 above peak' over all of a run's rows (a listing counts them for it)."""
    if isinstance(rec, Listed):
        return ", ".join(f"{n} {flag_label(f)}" for f, n in rec.flags.items())
    return flag_counts(rec.rows)


def warnings_of(rec: RunRecord) -> int:
    """How many warnings a run has (a listing keeps the first few of them)."""
    return rec.warning_count if isinstance(rec, Listed) else len(rec.warnings)


def best_text(rec: RunRecord) -> str:
    """The headline with its spread and the run's flags: '0.178 TFLOPS [0.17–0.18] · 1 noisy'."""
    flagged = run_flags(rec)
    return headline_text(rec) + (f" · {flagged}" if flagged else "")


def machine_key(rec: RunRecord) -> str:
    from siliconbench.core.machine import MachineInfo
    return MachineInfo.from_dict(rec.machine).key() if rec.machine else rec.machine_label


def cell_text(rec: RunRecord, column: int, machines: dict[str, str] | None = None) -> str:
    """The text of one column of COLUMNS for a run; its machine's name told apart from other
    machines of that name by `machines` (siliconbench.core.comparison.machine_names)."""
    if column == WHEN:
        return local_time(rec.created_at)
    if column == MACHINE:
        return (machines or {}).get(rec.id, rec.machine_label)
    if column == WORKLOAD:
        return workload_text(rec)
    if column == DEVICE:
        return device_text(rec)
    if column == STATUS:
        if rec.status != "ok":
            return f"{rec.status}: {rec.reason or ''}"
        return f"ok · {warning_count(warnings_of(rec))}" if rec.warnings else "ok"
    return best_text(rec)


def filter_device(rec: RunRecord) -> str:
    """The device as the Device filter lists it: PyTorch's "cuda" is the current GPU, cuda:0
    unless a run chose another, so "cuda" and "cuda:0" are one device there (they were two
    entries of one H200)."""
    device = "cuda:0" if rec.device == "cuda" else rec.device
    return f"{rec.device_name or device} ({rec.framework} {device})"


def filter_value(rec: RunRecord, column: int, machines: dict[str, str] | None = None) -> str:
    """What a filter combo compares: the status without its reason, the workload without
    what it measured, a device as one however it was addressed (filter_device), else the
    cell text (a machine by its identity: two Xeon
    hosts of one CPU name are two machines)."""
    if column == STATUS:
        return rec.status
    if column == WORKLOAD:
        return workload_title(rec.workload)
    if column == DEVICE:
        return filter_device(rec)
    return cell_text(rec, column, machines)


class RunTableModel(QAbstractTableModel):
    """The runs, in the order the table shows them: the model sorts itself (sort), by each
    run's SORT_ROLE value, stably from the order they came in (`_arrived`), as the proxy's
    sort did, in one Python sort rather than a Python call per comparison (10,000 runs took
    seconds)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.records: list[RunRecord] = []
        self._arrived: dict[str, int] = {}   # run id -> its place in the order runs came
        self.sort_column, self.sort_order = -1, Qt.SortOrder.AscendingOrder
        self.machines: dict[str, str] = {}   # run id -> its machine's name, told apart
        self.theme = LIGHT

    def _name_machines(self) -> None:
        from siliconbench.core.comparison import machine_names
        self.machines = machine_names(self.records)

    def sort_key(self, rec: RunRecord, column: int) -> str:
        return rec.created_at if column == WHEN else self.cell(rec, column)

    def _sorted(self, records: list[RunRecord]) -> list[RunRecord]:
        records = sorted(records, key=lambda r: self._arrived[r.id])
        if self.sort_column < 0:
            return records
        return sorted(records, key=lambda r: self.sort_key(r, self.sort_column),
                      reverse=self.sort_order == Qt.SortOrder.DescendingOrder)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self.sort_column, self.sort_order = column, order
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        rows = {id(rec): row for row, rec in enumerate(self.records)}
        self.records = self._sorted(self.records)
        moved = {rows[id(rec)]: row for row, rec in enumerate(self.records)}
        self.changePersistentIndexList(
            before, [self.createIndex(moved[i.row()], i.column()) for i in before])
        self.layoutChanged.emit()

    def set_records(self, records: list[RunRecord]) -> None:
        self.beginResetModel()
        self._arrived = {r.id: n for n, r in enumerate(records)}
        self.records = self._sorted(list(records))
        self._name_machines()
        self.endResetModel()

    def add(self, rec: RunRecord) -> None:
        """A new run: first in the order runs came, in its place in the table's order."""
        self._arrived = {rec.id: -len(self._arrived) - 1} | self._arrived
        row = next(i for i, r in enumerate(self._sorted([*self.records, rec])) if r is rec)
        self.beginInsertRows(QModelIndex(), row, row)
        self.records.insert(row, rec)
        self._name_machines()
        self.endInsertRows()

    def replace(self, row: int, rec: RunRecord) -> None:
        self.records[row] = rec
        self._name_machines()
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
        if self.sort_column not in (-1, WHEN):   # its text may have moved it
            self.sort(self.sort_column, self.sort_order)

    def rowCount(self, parent: QModelIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self.records)

    def columnCount(self, parent: QModelIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def cell(self, rec: RunRecord, column: int) -> str:
        return cell_text(rec, column, self.machines)

    def index(self, row: int, column: int, parent: QModelIndex | None = None) -> QModelIndex:
        """As Qt's, without asking rowCount and columnCount (Python calls) each time: sorting
        10,000 runs asks for an index hundreds of thousands of times."""
        if (parent is not None and parent.isValid()) or not 0 <= row < len(self.records) \
                or not 0 <= column < len(COLUMNS):
            return QModelIndex()
        return self.createIndex(row, column)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        rec = self.records[index.row()]
        if role == SORT_ROLE:   # first: sorting asks for it most
            column = index.column()
            return rec.created_at if column == WHEN else self.cell(rec, column)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            text = self.cell(rec, index.column())
            if role == Qt.ItemDataRole.ToolTipRole and index.column() == MACHINE:
                text = rec.machine.get("model_name") or text
                text += f"\nrun {rec.id}" + (f"\nsource: {rec.source}" if rec.source else "")
            if role == Qt.ItemDataRole.ToolTipRole and index.column() == STATUS \
                    and rec.warnings:
                text += "\n" + warnings_tooltip(rec.warnings)
                more = warnings_of(rec) - len(rec.warnings)
                if more > 0:   # a listing keeps the first few: the run's record has them all
                    text += f"\n… and {more} more (select the run to read them)"
            return text
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == STATUS \
                and (rec.status != "ok" or rec.warnings):
            # A failure in the error colour, warnings in the warning colour; a cancel is no
            # fault, in the muted one ('ok · ⚠' read like a cancel).
            return QColor(self.theme.error if rec.status == "failed" else
                          self.theme.muted if rec.status == "cancelled" else self.theme.warning)
        if role == Qt.ItemDataRole.UserRole:
            return rec
        return None


class RunFilter(QSortFilterProxyModel):
    """Keeps runs matching every chosen filter and the search text."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.choices: dict[int, str | None] = {}   # column -> wanted text (None = any)
        self.search = ""
        self.setSortRole(SORT_ROLE)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """The table's sort, done by the runs' model (RunTableModel.sort); the proxy keeps
        its order."""
        self.sourceModel().sort(column, order)

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        model: RunTableModel = self.sourceModel()
        rec = model.records[source_row]
        for column, wanted in self.choices.items():
            if wanted is not None and filter_value(rec, column, model.machines) != wanted:
                return False
        if self.search:
            hay = " ".join(model.cell(rec, c) for c in range(len(COLUMNS))).lower()
            return all(word in hay for word in self.search.lower().split())
        return True


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
