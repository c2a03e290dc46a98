"""llama.cpp adapter (through llama-cpp-python): the devices llama.cpp's backends see (the CPU
with the threads llama-bench would use; a Metal GPU on a Mac, CUDA or another GPU backend where
the wheel was built with it), synchronisation (each call of the llm workload synchronises the
context itself) and memory."""

from __future__ import annotations

import ctypes
import os
import platform
import re
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import NamedTuple

from siliconbench.core.frameworks import (
    Device,
    DeviceInfo,
    UnknownDevice,
    apple_gpu_name,
    cpu_name,
    host_memory,
)

NAME = "llamacpp"

# The llama.cpp commit each llama-cpp-python release vendors, from its CHANGELOG ("update
# llama.cpp to ggml-org/llama.cpp@..."): a wheel built from the source package reports its
# build as "unknown" (no git), so the record takes the commit from here.
VENDORED_COMMIT = {"0.3.36": "0c1e57098"}

GGML_LOG_LEVEL_INFO, GGML_LOG_LEVEL_ERROR = 2, 4     # enum ggml_log_level (ggml/include/ggml.h)
# ggml_backend_dev_type (ggml/include/ggml-backend.h)
CPU, GPU, IGPU = 0, 1, 2


class LlamaCppUnusable(RuntimeError):
    """llama-cpp-python is installed but cannot be loaded; the message is one sentence."""


@cache
def lib():
    """llama_cpp's low-level module, its backends initialised once."""
    try:
        import llama_cpp
    except (ImportError, OSError) as e:   # OSError: its shared library does not load
        raise LlamaCppUnusable(f"llama-cpp-python cannot be loaded ({e}); reinstall it with "
                               "pip install 'siliconbench[llamacpp]'.") from e
    llama_cpp.llama_backend_init()
    return llama_cpp


# What llama.cpp logs of each weight buffer as it loads a model, e.g.
# "load_tensors:   CPU_REPACK model buffer size =     1.50 MiB" (src/llama-model.cpp).
_BUFFER_LINE = re.compile(rb"(\S+) model buffer size =\s*([0-9.]+) MiB")
WEIGHT_BUFFERS: list[tuple[str, float]] = []   # (buffer, MiB) of the loads since the last clear
ERRORS: list[str] = []     # llama.cpp's last error lines (a failed load's reason), at most 8


def quiet() -> None:
    """llama.cpp's log (model loading, every context's buffers, the quantiser's fallbacks) down
    to its errors, on stderr; the weight buffers a load makes are kept in WEIGHT_BUFFERS.
    llama-cpp-python's own logger maps ggml's levels of an older llama.cpp (a warning passes
    as an error), so the callback here reads them itself."""
    llama_cpp = lib()
    if getattr(quiet, "callback", None) is None:
        @llama_cpp.llama_log_callback
        def callback(level, text, user_data):
            if level == GGML_LOG_LEVEL_ERROR and text:
                os.write(2, text)
                ERRORS[:] = ERRORS[-7:] + [text.decode(errors="replace").strip()[:300]]
            elif level == GGML_LOG_LEVEL_INFO and text and \
                    (m := _BUFFER_LINE.search(text)) is not None:
                WEIGHT_BUFFERS.append((m[1].decode(errors="replace"), float(m[2])))
        quiet.callback = callback          # kept alive: llama.cpp holds the pointer
        llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


@cache
def _ggml():
    """ggml's backend-device registry, bound with ctypes from the wheel's libggml
    (llama-cpp-python has no binding for it); None when the library lacks it."""
    import llama_cpp
    folder = Path(llama_cpp.__file__).parent / "lib"
    names = sorted(p for p in folder.glob("*ggml*") if p.name.split(".")[0] in
                   ("libggml", "ggml") and p.suffix in (".so", ".dylib", ".dll"))
    if not names:
        return None
    lib()
    g = ctypes.CDLL(str(names[0]))      # loaded already with libllama: the same library
    try:
        g.ggml_backend_dev_count.restype = ctypes.c_size_t
        g.ggml_backend_dev_get.argtypes = [ctypes.c_size_t]
        g.ggml_backend_dev_get.restype = ctypes.c_void_p
        for f in (g.ggml_backend_dev_name, g.ggml_backend_dev_description):
            f.argtypes, f.restype = [ctypes.c_void_p], ctypes.c_char_p
        g.ggml_backend_dev_type.argtypes = [ctypes.c_void_p]
        g.ggml_backend_dev_type.restype = ctypes.c_int
        g.ggml_backend_dev_memory.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                              ctypes.POINTER(ctypes.c_size_t)]
        g.ggml_backend_dev_memory.restype = None
    except AttributeError:
        return None
    return g


def _cpu_reg(g) -> int | None:
    """The CPU backend's registry (ggml_backend_reg_t), its proc-address lookup declared;
    AttributeError where the library lacks a function."""
    g.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    g.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    g.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
    g.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
    g.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    g.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
    dev = g.ggml_backend_dev_by_type(CPU)
    return g.ggml_backend_dev_backend_reg(dev) if dev else None


def cpu_extra_buffer_types() -> list[str]:
    """The names of the weight buffer types llama.cpp's CPU backend offers beside plain host
    memory in this build (ggml-cpu.cpp, ggml_backend_cpu_get_extra_buffer_types): AMX where
    it was compiled for AMX (a native build on a Sapphire Rapids Xeon) and the kernel grants
    the tiles, CPU_REPACK (weights interleaved for the SIMD kernels), KleidiAI on Arm."""
    g = _ggml()
    if g is None:
        return []
    try:
        reg = _cpu_reg(g)
        g.ggml_backend_buft_name.argtypes = [ctypes.c_void_p]
        g.ggml_backend_buft_name.restype = ctypes.c_char_p
    except AttributeError:
        return []
    if not reg:
        return []
    dev = g.ggml_backend_dev_by_type(CPU)
    address = g.ggml_backend_reg_get_proc_address(reg, b"ggml_backend_dev_get_extra_bufts")
    if not address:
        return []
    get = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(address)
    listed, names = get(dev), []
    while listed and listed[len(names)]:
        names.append((g.ggml_backend_buft_name(listed[len(names)]) or b"").decode())
    return names


def backend_devices() -> list[dict]:
    """Every device ggml registered: {handle, name (CPU, MTL0, CUDA0), description, type,
    free, total}."""
    g = _ggml()
    if g is None:
        return []
    out = []
    for i in range(g.ggml_backend_dev_count()):
        dev = g.ggml_backend_dev_get(i)
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        g.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
        out.append({"handle": dev, "name": (g.ggml_backend_dev_name(dev) or b"").decode(),
                    "description": (g.ggml_backend_dev_description(dev) or b"").decode(),
                    "type": g.ggml_backend_dev_type(dev), "free": free.value,
                    "total": total.value})
    return out


def device_id(backend_name: str) -> str:
    """What --device takes for a ggml device: metal for MTL0, cuda:N for CUDAn, else its name
    in lower case (vulkan0)."""
    if backend_name.startswith("MTL"):
        return "metal"
    if backend_name.startswith("CUDA") and backend_name[4:].isdigit():
        return f"cuda:{backend_name[4:]}"
    return backend_name.lower()


@cache
def threads() -> int:
    """The threads llama-bench runs by default: common_cpu_get_num_math() of llama.cpp's
    common/common.cpp, on this machine."""
    return num_math()


def num_math(system: str | None = None, machine: str | None = None,
             sys_root: Path = Path("/sys"), cpuinfo: Path = Path("/proc/cpuinfo"),
             online: int | None = None, allowed: set[int] | None = None) -> int:
    """common_cpu_get_num_math() ported: on Linux x86-64 with a hybrid CPU (cpuid leaf 7's
    hybrid bit, which Linux lists as the `hybrid_cpu` flag) the CPUs counted as llama.cpp
    counts them, one per performance core, skipping efficiency cores (those of the kernel's
    cpu_atom PMU, cpuid leaf 0x1a's Atom core type) and the sibling after each performance
    CPU; elsewhere, or where that count fails, the physical cores
    (common_cpu_get_num_physical_cores). The arguments stand in for the machine in tests."""
    system = system or platform.system()
    machine = (machine or platform.machine()).lower()
    if system == "Linux" and machine in ("x86_64", "amd64"):
        n_cpu = online if online is not None else os.sysconf("SC_NPROCESSORS_ONLN")
        if n_cpu >= 1 and _hybrid(cpuinfo):
            counted = _count_math_cpus(n_cpu, _cpu_list(sys_root / "devices/cpu_atom/cpus"),
                                       allowed if allowed is not None
                                       else os.sched_getaffinity(0))
            if counted > 0:
                return counted
    return physical_cores(system, sys_root)


def _hybrid(cpuinfo: Path) -> bool:
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and "hybrid_cpu" in line.split()
               for line in text.splitlines())


def _cpu_list(path: Path) -> set[int]:
    """A sysfs CPU list ("0-3,8,10-11") as a set; empty where there is none."""
    try:
        text = path.read_text().strip()
    except OSError:
        return set()
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def _count_math_cpus(n_cpu: int, efficiency: set[int], allowed: set[int]) -> int:
    """cpu_count_math_cpus: each CPU in turn (pinning to one outside the process's affinity
    fails: -1), an efficiency core skipped, a performance core counted and the CPU after it
    (its hyperthread) skipped."""
    result, cpu = 0, 0
    while cpu < n_cpu:
        if cpu not in allowed:
            return -1
        if cpu in efficiency:
            cpu += 1
            continue
        cpu += 2
        result += 1
    return result


def physical_cores(system: str, sys_root: Path = Path("/sys")) -> int:
    """common_cpu_get_num_physical_cores: on Linux the distinct thread_siblings masks of
    cpu0, cpu1, ... up to the first missing one; on macOS the performance cores
    (hw.perflevel0.physicalcpu), else hw.physicalcpu; elsewhere, or where those fail,
    std::thread::hardware_concurrency() halved above 4."""
    if system == "Linux":
        siblings, cpu = set(), 0
        while True:
            try:
                siblings.add((sys_root / f"devices/system/cpu/cpu{cpu}/topology/"
                              "thread_siblings").read_text().splitlines()[0])
            except (OSError, IndexError):
                break
            cpu += 1
        if siblings:
            return len(siblings)
    elif system == "Darwin":
        for key in ("hw.perflevel0.physicalcpu", "hw.physicalcpu"):
            try:
                out = subprocess.run(["sysctl", "-n", key], capture_output=True, text=True,
                                     timeout=5).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                continue
            if out.isdigit() and int(out) > 0:
                return int(out)
    elif system == "Windows":
        import psutil
        if psutil.cpu_count(logical=False):
            return psutil.cpu_count(logical=False)
    n = os.cpu_count() or 0
    return (n if n <= 4 else n // 2) if n > 0 else 4


# ggml_threadpool_params (ggml/include/ggml.h): llama-cpp-python has no binding for it.
GGML_MAX_N_THREADS = 512


class ThreadpoolParams(ctypes.Structure):
    _fields_ = [("cpumask", ctypes.c_bool * GGML_MAX_N_THREADS), ("n_threads", ctypes.c_int),
                ("prio", ctypes.c_int), ("poll", ctypes.c_uint32),
                ("strict_cpu", ctypes.c_bool), ("paused", ctypes.c_bool)]


class Threadpools(NamedTuple):
    """ggml's thread pool functions, declared with ctypes (llama-cpp-python 0.3.36 binds
    none of them: its llama_attach_threadpool is a TODO)."""
    params_default: Callable       # ggml_threadpool_params_default(n_threads) (libggml-base)
    new: Callable                  # ggml_threadpool_new(&params) (the CPU backend)
    free: Callable                 # ggml_threadpool_free(pool)
    attach: Callable               # llama_attach_threadpool(ctx, pool, pool_batch) (libllama)


@cache
def threadpools() -> Threadpools | None:
    """The thread pool functions as llama-bench reaches them: the CPU backend's through its
    registry's proc addresses (ggml_backend_reg_get_proc_address), so a build whose backends
    are loadable modules has them too; None where the build lacks one."""
    g = _ggml()
    if g is None:
        return None
    import llama_cpp.llama_cpp as bindings
    try:
        g.ggml_threadpool_params_default.argtypes = [ctypes.c_int]
        g.ggml_threadpool_params_default.restype = ThreadpoolParams
        attach = bindings._lib.llama_attach_threadpool
        attach.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        attach.restype = None
        reg = _cpu_reg(g)
    except AttributeError:
        return None
    if not reg:
        return None

    def proc(name: str, restype, *argtypes):
        address = g.ggml_backend_reg_get_proc_address(reg, name.encode())
        return ctypes.CFUNCTYPE(restype, *argtypes)(address) if address else None
    new = proc("ggml_threadpool_new", ctypes.c_void_p, ctypes.POINTER(ThreadpoolParams))
    free = proc("ggml_threadpool_free", None, ctypes.c_void_p)
    if new is None or free is None:
        return None
    return Threadpools(g.ggml_threadpool_params_default, new, free, attach)


def version() -> str:
    return lib().__version__


def commit() -> str:
    return VENDORED_COMMIT.get(version(), "unknown")


def software() -> dict:
    llama_cpp = lib()
    return {"llama_cpp_python": llama_cpp.__version__,
            "llama_cpp_commit": commit(),
            "llama_cpp_commit_source": "llama-cpp-python's CHANGELOG (the build says unknown)",
            "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
            "backends": ", ".join(d["name"] for d in backend_devices()),
            "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip()}


def caveat(dev: Device) -> str | None:
    return None


def _no_gpu_reason() -> str:
    if platform.system() == "Darwin":
        return ("This llama-cpp-python was built without Metal; reinstall it with "
                "CMAKE_ARGS='-DGGML_METAL=on' pip install --force-reinstall --no-cache-dir "
                "llama-cpp-python.")
    return ("This llama-cpp-python was built for the CPU only; a CUDA build needs the CUDA "
            "toolkit and CMAKE_ARGS='-DGGML_CUDA=on' pip install --force-reinstall "
            "--no-cache-dir llama-cpp-python.")


def devices() -> list[DeviceInfo]:
    try:
        llama_cpp = lib()
    except LlamaCppUnusable as e:
        return [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", usable=False, reason=str(e))]
    out = [DeviceInfo(NAME, "cpu", cpu_name(), "cpu", host_memory(),
                      note=f"{threads()} threads, as llama-bench runs by default")]
    gpus = [d for d in backend_devices() if d["type"] in (GPU, IGPU)]
    for d in gpus:
        ident = device_id(d["name"])
        name = apple_gpu_name() if ident == "metal" else (d["description"] or d["name"])
        out.append(DeviceInfo(NAME, ident, name, "gpu", d["total"] or None))
    if not gpus:
        why = _no_gpu_reason() if not llama_cpp.llama_supports_gpu_offload() else \
            "llama.cpp finds no GPU here."
        out.append(DeviceInfo(NAME, "gpu", "GPU", "gpu", usable=False, reason=why))
    return out


def resolve(device_id_: str) -> Device:
    """'cpu', 'metal', 'cuda:0' (or 'gpu' for the first GPU) -> Device whose native is the
    ggml device handle (None for the CPU)."""
    try:
        lib()
    except LlamaCppUnusable as e:
        raise UnknownDevice(str(e)) from None
    listed = devices()
    wanted = device_id_.strip().lower()
    usable = [d for d in listed if d.usable]
    if wanted in ("gpu", "gpu:0", "cuda"):
        gpu = next((d for d in usable if d.kind == "gpu"), None)
        wanted = gpu.id if gpu is not None else wanted
    device = next((d for d in listed if d.id == wanted), None)
    if device is None or not device.usable:
        if device is not None:
            raise UnknownDevice(f"llama.cpp device {device_id_!r} is not usable here: "
                                f"{device.reason}")
        raise UnknownDevice(f"llama.cpp has no device {device_id_!r} here; choose one of "
                            f"{', '.join(d.id for d in usable)}.")
    if device.kind == "cpu":
        return Device("cpu", 0, None)
    handle = next(d["handle"] for d in backend_devices() if device_id(d["name"]) == wanted)
    index = int(wanted.split(":")[1]) if ":" in wanted else 0
    return Device("gpu", index, handle)


def device_name(dev: Device) -> str:
    if dev.type == "cpu":
        return cpu_name()
    for d in backend_devices():
        if d["handle"] == dev.native:
            return apple_gpu_name() if d["name"].startswith("MTL") else \
                (d["description"] or d["name"])
    return "GPU"


def synchronizer(dev: Device) -> Callable[[], None]:
    """Nothing to wait for: every timed call of the llm workload ends in llama_synchronize."""
    return lambda: None


def free_memory(dev: Device) -> int | None:
    if dev.type == "cpu":
        import psutil
        return psutil.virtual_memory().available
    for d in backend_devices():
        if d["handle"] == dev.native:
            return d["free"] or None
    return None


def reset_peak_memory(dev: Device) -> None:
    pass


def peak_memory(dev: Device) -> int | None:
    """llama.cpp keeps no allocator count: None, so the rows take the process's peak resident
    memory (which on a GPU misses the device's buffers)."""
    return None


def empty_cache(dev: Device) -> None:
    pass
