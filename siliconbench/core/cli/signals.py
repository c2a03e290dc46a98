"""Ctrl-C, `kill` and a closed terminal end the command with one line and keep any run under
way as cancelled (siliconbench.core.runner.execute): SIGINT raises KeyboardInterrupt, SIGTERM
and SIGHUP raise Ended (a KeyboardInterrupt), and `interrupted` says so and gives the exit
code (130, or 128 + the signal). The handler for a Ctrl-C that lands while the command is
still importing is set by the package's first lines (siliconbench.core.cli)."""

from __future__ import annotations

import _signal
import signal
import sys
from collections.abc import Callable


class Ended(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled like Ctrl-C (a run under way is cancelled and kept)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.reason = f"cancelled: siliconbench was ended ({signal.Signals(signum).name})"
        super().__init__(self.reason)


def _raise_ended(signum, frame) -> None:
    raise Ended(signum)


ENDING_SIGNALS = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s]


_ctrl_c: list[int] = []   # Ctrl-C seen by guarded(), even where Python swallowed the exception


def _on_ctrl_c(signum, frame) -> None:
    _ctrl_c.append(signum)
    raise KeyboardInterrupt


def _quiet_unraisable(hook):
    """A KeyboardInterrupt raised in a callback (a weakref's, during an import) cannot
    propagate: Python prints "Exception ignored" and goes on. guarded() ends it as Ctrl-C."""
    def quiet(unraisable) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            hook(unraisable)
    return quiet


def guarded(command: Callable[[list[str]], int], argv: list[str]) -> int:
    """command(argv) with the signals above handled, its exit code. The handlers are set
    inside the try and the Ctrl-C one restored first in the finally, with `_signal` (C, no
    Python frame that could take the signal in between): a Ctrl-C outside the try ends quietly
    (the package's `_end_quietly`)."""
    before = {s: _signal.getsignal(s) for s in [signal.SIGINT, *ENDING_SIGNALS]}
    before = {s: signal.SIG_DFL if h is None else h for s, h in before.items()}
    hook, _ctrl_c[:] = sys.unraisablehook, []
    try:
        _signal.signal(_signal.SIGINT, _on_ctrl_c)
        sys.unraisablehook = _quiet_unraisable(hook)
        for sig in ENDING_SIGNALS:
            _signal.signal(sig, _raise_ended)
        code = command(argv)
    except KeyboardInterrupt as e:  # also one raised while another was being handled
        code = interrupted(e)
    except Exception as e:  # a Ctrl-C wrapped by Python: while a class was made, say
        if (ctrl_c := wrapped_interrupt(e)) is None:
            raise
        code = interrupted(ctrl_c)
    finally:  # main() called in-process (tests) leaves the caller's handlers as they were
        _signal.signal(_signal.SIGINT, before[signal.SIGINT])
        sys.unraisablehook = hook
        for sig in ENDING_SIGNALS:
            _signal.signal(sig, before[sig])
    if _ctrl_c and code != 130:  # the KeyboardInterrupt was swallowed (see above)
        code = interrupted(KeyboardInterrupt())
    return code


def interrupted(e: KeyboardInterrupt) -> int:
    """Say the command was interrupted or ended (and which run was kept); its exit code."""
    rec = getattr(e, "record", None)
    kept = (f" The run {rec.id[:8]} was cancelled and kept in the store with its "
            f"{len(rec.rows)} result row(s).") if rec is not None else ""
    try:
        print("siliconbench: " + (f"ended by {signal.Signals(e.signum).name}."
                                  if isinstance(e, Ended) else "interrupted.") + kept,
              file=sys.stderr)
    except OSError:
        pass  # the terminal that would show it is gone (SIGHUP)
    return 128 + e.signum if isinstance(e, Ended) else 130


def wrapped_interrupt(e: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C (or SIGTERM) that caused `e`, if one did. Python 3.11 wraps an exception
    raised in a `__set_name__` in a RuntimeError, so a Ctrl-C landing while a dataclass is
    being created (a module importing) arrives as "Error calling __set_name__"."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None
