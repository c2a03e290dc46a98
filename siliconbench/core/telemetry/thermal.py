"""macOS thermal pressure: thermald's levels and their names, and the source that reads the level
in-process through notify(3)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from siliconbench.core.telemetry.sources import Source, Values

# macOS thermal pressure as thermald publishes it (OSThermalNotification.h), 0 to 4.
THERMAL_LEVELS = ("Nominal", "Moderate", "Heavy", "Trapping", "Sleeping")
THERMAL_NOTIFICATION = "com.apple.system.thermalpressurelevel"


def thermal_level(word: Any) -> int | None:
    """powermetrics' `thermal_pressure` word ("Nominal", "Heavy", ...) -> the level 0..4."""
    names = [name.lower() for name in THERMAL_LEVELS]
    return names.index(word.lower()) if isinstance(word, str) and word.lower() in names else None


def thermal_level_name(level: float | None) -> str | None:
    if level is None:
        return None
    i = int(level)
    return THERMAL_LEVELS[i] if 0 <= i < len(THERMAL_LEVELS) else f"level {i}"


NOTIFY_STATUS_OK = 0


def load_libsystem() -> Any:
    """macOS's C library, which holds notify(3)."""
    import ctypes
    return ctypes.CDLL("/usr/lib/libSystem.B.dylib")


class ThermalPressureSource(Source):
    """thermald's thermal pressure level through notify(3) in this process: a token registered
    once (notify_register_check), then one notify_get_state call per sample. No process, no
    root; `load_library` is what tests replace, since only a Mac has the real one."""

    name = "thermal pressure"

    def __init__(self, load_library: Callable[[], Any] = load_libsystem) -> None:
        super().__init__()
        self._load_library = load_library
        self._get_state: Callable[..., int] | None = None

    def open(self, emit: Callable[[Values], None]) -> None:
        import ctypes
        try:
            lib = self._load_library()
            register, get_state = lib.notify_register_check, lib.notify_get_state
        except (OSError, AttributeError) as e:
            self.notes.append(f"thermal pressure unavailable: notify(3) not found ({e})")
            return
        register.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        register.restype = ctypes.c_uint32
        get_state.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
        get_state.restype = ctypes.c_uint32
        token = ctypes.c_int(-1)
        status = register(THERMAL_NOTIFICATION.encode(), ctypes.pointer(token))
        if status != NOTIFY_STATUS_OK:
            self.notes.append(f"thermal pressure unavailable: notify_register_check returned "
                              f"status {status}")
            return
        self._lib, self._token = lib, token.value
        self._state = ctypes.c_uint64(0)
        self._state_ptr = ctypes.pointer(self._state)
        self._get_state = get_state

    def poll(self) -> Values:
        if self._get_state is None:
            return {}
        if self._get_state(self._token, self._state_ptr) != NOTIFY_STATUS_OK:
            return {}   # thermald not answering this time: a gap, not a made-up level
        return {"thermal_pressure": ("level", float(self._state.value))}

    def close(self) -> None:
        if self._get_state is not None:
            with contextlib.suppress(AttributeError):   # a library without notify_cancel
                self._lib.notify_cancel(self._token)
            self._get_state = None
