"""Every framework's devices, each framework asked in a child process of its own (they import
heavy libraries, and TensorFlow and PyTorch never share a process), and devices.json beside the
store, which keeps their answers while the installation stays the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from siliconbench.core.child import child_env, worker_command
from siliconbench.core.frameworks import FRAMEWORKS, DeviceInfo, framework

DEVICE_CACHE = "devices.json"


def _installation_key() -> str:
    """What the devices a framework sees depend on: the installed packages (versions of every
    ML framework and plug-in), this interpreter, the visible GPUs and the hardware."""
    import hashlib

    from siliconbench.core.machine import framework_versions, probe
    parts = [sys.executable, probe().key(), json.dumps(framework_versions(), sort_keys=True)]
    parts += [f"{k}={v}" for k, v in sorted(os.environ.items())
              if k.endswith("_VISIBLE_DEVICES") or k.startswith(("PYTORCH_", "MLX_", "TF_"))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


DEVICE_CACHE_LIMIT = 1 << 20   # a few devices per framework take a few KB
DEVICE_FIELDS = set(DeviceInfo.__dataclass_fields__)


def _cached_device(entry: object, framework_name: str) -> DeviceInfo | None:
    """The DeviceInfo a devices.json entry holds, or None when it holds something else."""
    if not isinstance(entry, dict) or not set(entry) <= DEVICE_FIELDS:
        return None
    try:
        d = DeviceInfo(**entry)
    except TypeError:                     # a required field missing
        return None
    texts = (d.framework, d.id, d.name, d.kind)
    if d.framework != framework_name or not all(isinstance(t, str) and t for t in texts) or \
            not isinstance(d.usable, bool) or \
            not (d.memory_bytes is None or type(d.memory_bytes) is int and d.memory_bytes >= 0) or \
            not all(t is None or isinstance(t, str) for t in (d.reason, d.note)):
        return None
    return d


def _read_device_cache(path: Path, key: str) -> dict | None:
    """devices.json's answers when it holds answers for this installation (`key`), in its
    shape; None otherwise (missing, another installation's, not a regular file, too large,
    damaged: every such cache is asked again and rewritten)."""
    from siliconbench.core.files import read_small
    try:
        cached = json.loads(read_small(path, DEVICE_CACHE_LIMIT, "device list"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(cached, dict) or cached.get("key") != key or \
            not isinstance(cached.get("frameworks"), dict):
        return None
    for name, entries in cached["frameworks"].items():
        if not isinstance(entries, list) or \
                any(_cached_device(e, name) is None for e in entries):
            return None
    return {"key": key, "frameworks": cached["frameworks"]}


def discover_devices(names: list[str] | None = None,
                     on_found: Callable[[list[DeviceInfo]], None] | None = None,
                     fresh: bool = True) -> list[DeviceInfo]:
    """Every framework's devices, each framework asked in its own child process, in parallel
    (they import heavy libraries, and TensorFlow and PyTorch never share a process).
    `on_found(devices so far)` is called as each framework answers (TensorFlow takes seconds
    to import; the others need not wait for it). fresh=False reuses an answer kept in the
    store's folder while nothing it depends on (_installation_key) has changed."""
    from siliconbench.core.files import write_atomic
    from siliconbench.core.store import home
    names = names or list(FRAMEWORKS)
    cache_path = home() / DEVICE_CACHE
    key = _installation_key()
    cached = _read_device_cache(cache_path, key) if not fresh else None
    if cached is None:
        cached = {"key": key, "frameworks": {}}

    def ask(name: str) -> list[DeviceInfo]:
        fw = framework(name)
        if not fw.installed():
            return [DeviceInfo(name, "-", fw.title, "-", usable=False,
                               reason=fw.missing_reason())]
        if name in cached["frameworks"]:
            return [DeviceInfo(**d) for d in cached["frameworks"][name]]
        found = _ask_child(name, fw)
        if all(d.id != "-" for d in found):  # a failure to load is not worth keeping
            cached["frameworks"][name] = [d.to_dict() for d in found]
        return found
    answers: dict[str, list[DeviceInfo]] = {}
    lock = threading.Lock()

    def ask_and_report(name: str) -> None:
        found = ask(name)
        with lock:
            answers[name] = found
            if on_found is not None:
                on_found([d for n in names if n in answers for d in answers[n]])

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        list(pool.map(ask_and_report, names))
    try:
        cache_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache_path, json.dumps(cached), own=True)  # two discoveries at once: one wins whole
    except OSError:
        pass  # a read-only data dir only costs the next call its speed
    return [d for n in names for d in answers[n]]


def _ask_child(name: str, fw) -> list[DeviceInfo]:
    """One framework's devices from a child process that imports it."""
    try:
        out = subprocess.run(worker_command("devices", name),
                             capture_output=True, text=True, env=child_env(), timeout=120)
    except subprocess.TimeoutExpired:
        return [DeviceInfo(name, "-", fw.title, "-", usable=False,
                           reason=f"{fw.title} did not list its devices within 120 s.")]
    for line in out.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("event") == "devices":
            return [DeviceInfo(**d) for d in event["devices"]]
    last = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return [DeviceInfo(name, "-", fw.title, "-", usable=False,
                       reason=f"{fw.title} failed to load: {last}")]

