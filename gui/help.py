"""The Help menu's own entries: the bundled help page, the data folder, how to send results."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QMessageBox

SEND_RESULTS_TEXT = (
    "1. Under Results, select the runs to send.\n"
    "2. File > Export Selected Runs as JSON…, and name the file with the .sbresults "
    "extension (JSON inside, all the measurements and the machine they ran on).\n"
    "3. Send that file, by mail or chat.\n\n"
    "The other side double-clicks it (SiliconBench opens and imports it), drops it on the "
    "window, uses File > Import Results…, or runs: siliconbench import FILE")


def help_page() -> Path:
    """resources/help.html; a real file, since the bundle keeps resources/ as a folder."""
    return Path(str(resources.files("resources").joinpath("help.html")))


def open_url(url: QUrl) -> bool:
    """One place that opens things outside the app, so tests can stand in for it."""
    return QDesktopServices.openUrl(url)


def open_help() -> bool:
    return open_url(QUrl.fromLocalFile(str(help_page())))


def show_data_folder() -> bool:
    from core.store import home
    folder = home()
    folder.mkdir(parents=True, exist_ok=True)
    return open_url(QUrl.fromLocalFile(str(folder)))


def show_how_to_send(window) -> None:
    window.show_message("How to Send Results", SEND_RESULTS_TEXT, QMessageBox.Icon.Information)
