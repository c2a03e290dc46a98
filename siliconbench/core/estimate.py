"""An estimate of a run's time and peak memory before it starts, so a run that cannot fit is
refused and a long one is questioned instead of accepted silently (the CLI's warning, the app's
question before Run, Run It Here and the quick suite). Where the work is known from the
parameters: GEMM and bandwidth (sizes named or the defaults), the all-reduce (its buffers on
every local rank), the LLM (weights + KV cache + a prefill's activations; prefill FLOPs and
the bytes decode reads), the inference and training sweeps' --grow budget, and train, memory,
infer and scaling from the models' own sizes (ModelSize, read from
siliconbench/resources/model_sizes.json: no framework is imported here). The rates are the
device's published peak where SiliconBench has one, else deliberately rough CPU figures.
verdict() turns an estimate into a refusal or the questions to ask first.
It sits above the workloads (pyproject's layers) to read their own size arithmetic."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from siliconbench.core.kit.headroom import MEMORY_SHARE  # the workloads' own headroom rule
from siliconbench.core.measure import QUICK, MeasureSettings, point_seconds
from siliconbench.core.model_costs import (  # the models' own sizes, re-offered here
    MLP_CLASSES,
    MLP_INPUTS,
    PROCESS_BYTES,
    ModelSize,
    model_size,
)
from siliconbench.core.numbers import duration, size

LONG_RUN_S = 5 * 60          # warn beyond this
# Rough sustained rates of one CPU core, in GFLOPS per dtype (AVX2/NEON FMA; half precision
# without hardware support is emulated and far slower), and of a CPU's memory, in GB/s.
CPU_CORE_GFLOPS = {"float32": 30.0, "float64": 15.0, "float16": 0.5, "bfloat16": 0.5}
CPU_MEMORY_GBS = 10.0
GPU_SHARE_OF_PEAK = 0.7      # a large product reaches about this share of the peak
# A decode streams its weights at about this share of a measured triad (an H100's Llama-3.1-8B
# 2.06 of its 3.08 TB/s, 0.67; llama.cpp's 7B Q4_0 on this project's CPU 28.7 of 30.1 GB/s).
SHARE_OF_TRIAD = 0.7
ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2}


@dataclass
class Estimate:
    """How long a run will take and how much memory it needs, as far as earlier runs tell."""
    seconds: float | None = None        # None: not known
    peak_bytes: int | None = None
    basis: str = ""                      # where the rate came from, for the message
    too_big: list[str] = field(default_factory=list)   # points that will not fit
    points: int = 0                      # points that fit
    questions: list[str] = field(default_factory=list)  # other reasons to ask first

    def refusal(self, device_name: str, memory_bytes: int | None, free: bool = False
                ) -> str | None:
        """One sentence when no point of the run fits in MEMORY_SHARE of the device's
        memory (`free`: the memory free now, as a CPU's is read): the run would start only
        to run out of memory or end with nothing measured."""
        if not self.too_big or self.points or not memory_bytes:
            return None
        return (f"Nothing of this run fits in {_memory_words(device_name, memory_bytes, free)}:"
                f" {', '.join(self.too_big)}.")

    def warnings(self, device_name: str, memory_bytes: int | None, free: bool = False
                 ) -> list[str]:
        """One sentence per reason to think twice (points that need more memory than the
        device has, ranks that share cores, a run of more than LONG_RUN_S)."""
        out = []
        if self.too_big and memory_bytes and self.points:
            out.append(f"{', '.join(self.too_big)} need more than "
                       f"{_memory_words(device_name, memory_bytes, free)}: those points will "
                       f"be skipped.")
        out += self.questions
        if self.seconds is not None and self.seconds > LONG_RUN_S:
            out.append(f"This run may take about {duration(self.seconds)} on "
                       f"{device_name} ({self.basis}).")
        return out


def _memory_words(device_name: str, memory_bytes: int, free: bool) -> str:
    """'the 80% of Test CPU's 23.5 GB of memory that a run may fill' (free: '... of free
    memory ...')."""
    return (f"the {MEMORY_SHARE:.0%} of {device_name}'s {size(memory_bytes)} of "
            f"{'free ' if free else ''}memory that a run may fill")


def _gflops(device, dtype: str, tf32: bool) -> tuple[float | None, str]:
    if device.kind == "cpu":
        cores = os.cpu_count() or 1
        return CPU_CORE_GFLOPS.get(dtype, 30.0) * cores, f"a rough {cores}-core CPU figure"
    peak = _peak(device)
    tflops = peak.tflops_for(dtype, tf32) if peak else None
    if not tflops:
        return None, ""
    return tflops * 1000 * GPU_SHARE_OF_PEAK, f"from its published {dtype} peak"


def _peak(device):
    """The device's peak entry; an Apple GPU's is derived from the chip and its GPU cores,
    which the machine probe gives (as the worker finds it)."""
    from siliconbench.core.peaks import find_peak
    peak = find_peak(device.name)
    if peak is None and device.name.startswith("Apple"):
        try:
            from siliconbench.core.machine import probe
            m = probe()
            peak = find_peak(device.name, chip=m.chip, gpu_cores=m.gpu_cores)
        except Exception:  # no probe here: no peak, no time estimate
            peak = None
    return peak


def _memory_gbs(device, store) -> tuple[float | None, str]:
    stored = _stored_triad(device, store)
    if stored is not None:
        return stored * SHARE_OF_TRIAD, "the triad measured here"
    if device.kind == "cpu":
        return CPU_MEMORY_GBS, "a rough CPU memory figure"
    peak = _peak(device)
    if peak is None or not peak.bandwidth_gbs:
        return None, ""
    return peak.bandwidth_gbs * GPU_SHARE_OF_PEAK, "from its published memory bandwidth"


def _stored_triad(device, store) -> float | None:
    """The newest triad (GB/s) any framework measured on this machine's device in `store`
    (the command's or the app's; None: none), as the llm workload reads it for its bound: a
    16-core Xeon's 115 GB/s where the rough CPU figure says 10, which had the quick suite give
    it the tiny LLM."""
    from siliconbench.core.kit.ceilings import stored_bounds, stored_ceiling
    if store is None:
        return None
    try:
        found = stored_ceiling(stored_bounds(store, ("bandwidth",)), device.name, "bandwidth",
                               "float32")
    except Exception:  # an unreadable store: the rough figures
        return None
    return None if found is None else found.value


def estimate(workload: str, params: dict, device, quick: bool = False,
             store=None) -> Estimate:
    """The estimate for one run; params as given by the user (missing: the default). `store`:
    the results store the command or the app opened, whose runs measured here (a triad) make
    the estimate; None: rough figures alone."""
    from siliconbench.core.catalogue import workload as declared
    try:
        from siliconbench.core.params import resolve
        params = resolve(declared(workload).params, params)
    except Exception:  # an unknown workload or a wrong parameter: the run says so itself
        return Estimate()
    settings = QUICK if quick else MeasureSettings()
    memory = device.memory_bytes
    est = Estimate()

    def fits(need: float, share: float = MEMORY_SHARE) -> bool:
        return memory is None or need <= share * memory

    work = ESTIMATORS.get(workload)
    if work is not None:
        work(est, params, device, settings, fits, store)
    if params.get("budget_s") and (est.seconds is not None or params.get("grow")):
        # --grow stops at its budget; a named sweep skips the points past it
        est.seconds = min(est.seconds or math.inf, float(params["budget_s"]))
        est.basis = est.basis or "its time budget"
    return est


def _gemm(est: Estimate, params: dict, device, settings, fits, store) -> None:
    from siliconbench.core.workloads import gemm
    sizes = params["sizes"] or gemm.default_sizes(device.kind, device.memory_bytes)
    dtypes = params["dtypes"]
    if params.get("grow"):
        sizes = gemm.grown_sizes(sizes[0], device.memory_bytes)
    if params.get("duration"):   # sustained mode's points, each held that long
        sizes, dtypes, _ = gemm.sustained_point(params, device.kind, device.memory_bytes)
    total = 0.0
    for dtype in dtypes:
        rate, est.basis = _gflops(device, dtype, bool(params.get("tf32")))
        for n in sizes:
            need = 3 * n * n * ITEMSIZE.get(dtype, 4)
            if not fits(need):
                est.too_big.append(f"N={n} in {dtype} ({size(need)})")
                continue
            est.points += 1
            est.peak_bytes = max(est.peak_bytes or 0, need)
            if rate is None:
                total = float("nan")
                continue
            product_s = 2 * n ** 3 / (rate * 1e9)
            if params.get("duration"):
                total += params["duration"] * 60
                continue
            if params["sizes"] is None and product_s > gemm.AUTO_MAX_PRODUCT_S:
                continue      # the automatic sweep skips it
            total += point_seconds(product_s, settings)
    est.seconds = None if total != total else total


def _bandwidth(est: Estimate, params: dict, device, settings, fits, store) -> None:
    from siliconbench.core.workloads import bandwidth
    arrays = bandwidth.ARRAYS
    rate, est.basis = _memory_gbs(device, store)
    total = 0.0
    ops, sizes = params.get("ops") or list(arrays), params["sizes_mb"] or \
        bandwidth.DEFAULT_SIZES_MB
    if params.get("duration"):   # sustained mode: triad at SUSTAINED_MB unless named
        ops = bandwidth.sustained_ops(ops)
        sizes = params["sizes_mb"] or [bandwidth.SUSTAINED_MB]
    for op in ops:
        for mb in sizes:
            need = arrays[op] * mb * 2**20
            if not fits(need):
                est.too_big.append(f"{op} of {mb} MB arrays ({size(need)})")
                continue
            est.points += 1
            est.peak_bytes = max(est.peak_bytes or 0, need)
            if rate is not None:
                total += params["duration"] * 60 if params.get("duration") else \
                    point_seconds(need / (rate * 1e9), settings)
    est.seconds = total if rate is not None else None


# An all-reduce between local ranks moves through shared memory or loopback TCP at about this
# (gloo on a 2-core VM: ~1 GB/s of bus bandwidth); the timing protocol's per-block agreement
# adds a small all-reduce per block, ALLREDUCE_BLOCK_S. A loopback collective rarely settles
# within 10% on a shared machine, so each point runs to the protocol's time cap: the default
# sweep (34 points) took 8 minutes on two CPU ranks, 14 s a point.
ALLREDUCE_GBS = 1.0
ALLREDUCE_BLOCK_S = 0.05


def _allreduce(est: Estimate, params: dict, device, settings, fits, store) -> None:
    from siliconbench.core.workloads import allreduce
    ranks = params["processes"]       # on this machine: every host runs this many
    sizes = params["sizes"] or allreduce.default_sizes(device.memory_bytes, ranks)
    est.basis = "a rough figure for ranks on one machine"
    _shared_cores(est, ranks, device)
    total = 0.0
    for dtype in params["dtypes"]:
        for s in sizes:
            # input, output, the engine's staging, and on a CPU the process itself, every rank
            need = ranks * (3 * s + _process(device))
            if not fits(need):
                est.too_big.append(f"an all-reduce of {size(s)} {dtype} messages on {ranks} "
                                   f"rank{'s' * (ranks != 1)} ({size(need)})")
                continue
            est.points += 1
            est.peak_bytes = max(est.peak_bytes or 0, need)
            call_s = s * allreduce.bus_factor(max(ranks, 2)) / (ALLREDUCE_GBS * 1e9)
            blocks = settings.min_blocks + 3 + settings.discard_calls
            total += max(point_seconds(call_s, settings), settings.max_time_s) \
                + blocks * ALLREDUCE_BLOCK_S
    est.seconds = total


def _llm(est: Estimate, params: dict, device, settings, fits, store) -> None:
    from siliconbench.core.kit import llm_shapes as shapes
    from siliconbench.core.kit.llm_engine import device_type
    from siliconbench.core.kit.llm_plan import precision
    from siliconbench.core.workloads import llm
    try:
        own = llm.own_model(params)             # the file read once, as the run's plan does
        shape = llm.shape_for(params, own)
    except Exception:  # a custom shape no model has: the run refuses it in its own words
        return
    dtype = precision(params, own)
    batch, gen = params["batch"], params["gen_tokens"]
    compute = shapes.activation_dtype(dtype)
    # a file stored quantised holds its weights in its own bytes, not the formula's
    file_bytes = own.file.size - shapes.weight_bytes(shape, dtype) \
        if own and own.stored_dtype else 0
    # A quantized model's products on a CPU run in the engine's own SIMD kernels (llama.cpp's
    # q4_0/q8_0 dot products) at about the float32 rate, not at a framework's emulated
    # bfloat16 rate: taking bfloat16's made a llama-2-7b Q4_0 run here read "about 11.4 h".
    flops, est.basis = _gflops(device, "float32" if device.kind == "cpu" and
                               dtype not in shapes.ITEMSIZE else compute, False)
    gbs, memory = _memory_gbs(device, store)
    name = own.file.name if own else params["preset"]
    prompts, depths = llm.context_points(params, shape)
    prompts = prompts or list(llm.DEFAULT_PROMPTS)
    depths = depths or list(llm.DEFAULT_DEPTHS)
    total = 0.0
    runs: dict[str, list] = {"prefill": [], "decode": []}
    attention, on = _llm_engine(device.framework).attention_bytes, device_type(device.id)
    prefills = llm.prefill_points(params, _prefills_at_depth(device.framework), prompts,
                                  depths, shape)
    for kind, tokens, at, what in [("prefill", p + d, (p, d), f"a {p}-token prompt"
                                    + (f" at depth {d}" if d else "")) for p, d in prefills] + \
            [("decode", d + gen, d, f"decode from depth {d}") for d in depths]:
        need = shapes.memory_needed(shape, dtype, batch, tokens,
                                    attention(shape, dtype, on, batch, tokens)) + file_bytes
        if not fits(need):
            est.too_big.append(f"{name} in {dtype} with {what} ({size(need)})")
            continue
        est.points += 1
        est.peak_bytes = max(est.peak_bytes or 0, int(need))
        runs[kind].append(at)
    if flops is None or gbs is None:
        est.seconds = None
        return
    for p, d in runs["prefill"]:
        # past a cache of d positions each of the p tokens also attends to those d
        attend = 4 * shape.layers * shape.heads * shape.head_dim * p * d * batch
        total += point_seconds((shapes.prefill_flops(shape, batch, p) + attend)
                               / (flops * 1e9), settings)
    for d in runs["decode"]:
        step = shapes.bytes_per_decode_step(shape, dtype, batch, d, gen) / (gbs * 1e9)
        total += params["duration"] * 60 if params.get("duration") else \
            point_seconds(gen * step, settings)
    est.seconds = total
    est.basis = f"{est.basis} and {memory}"


def _llm_engine(framework: str):
    """The framework's LLM engine class (its module imports no framework), or BuiltEngine's
    declarations where it has none (llm.engine_class): the run refuses that in its own
    words."""
    from siliconbench.core.workloads.llm import engine_class
    return engine_class(framework)


def _prefills_at_depth(framework: str) -> bool:
    """Whether the framework's LLM engine prefills at every depth too (llama.cpp, as
    llama-bench's -d)."""
    return bool(_llm_engine(framework).PREFILL_DEPTHS)


# ---------------------------------------------------------------- models: train, memory, scaling, infer

# What a model costs (ModelSize, model_size): siliconbench.core.model_costs.

def physical_cores() -> int:
    """The cores ranks share (physical ones: a hyperthread is not a core to a training step)."""
    import psutil
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


def _process(device) -> float:
    return PROCESS_BYTES if device.kind == "cpu" else 0


def _step_seconds(model: ModelSize, batch: int, device, mixed: bool, est: Estimate,
                  backward: bool = True) -> float | None:
    """One step's time at the device's rate: a training step is three forwards (the
    backward two), an inference batch one."""
    dtype = "float16" if mixed and device.kind != "cpu" else "float32"
    rate, est.basis = _gflops(device, dtype, False)
    if rate is None:
        return None
    return (3 if backward else 1) * model.forward_flops * batch / (rate * 1e9)


def _train(est: Estimate, params: dict, device, settings, fits, store) -> None:
    from siliconbench.core.workloads.train import PUBLISHED_BATCH
    model = model_size(params)
    if model is None or model.saved_bytes is None:
        return
    batch = params["batch_size"] or PUBLISHED_BATCH[params["model"]]
    mixed = params["precision"] == "mixed"
    need = model.train_bytes(batch, mixed) + _process(device)
    if not fits(need):
        est.too_big.append(f"{params['model']} at batch size {batch} ({size(need)})")
        return
    est.points, est.peak_bytes = 1, int(need)
    step = _step_seconds(model, batch, device, mixed, est)
    if params["duration"]:
        est.seconds = params["duration"] * 60
    elif step is not None:
        est.seconds = point_seconds(step, settings)


def _memory(est: Estimate, params: dict, device, settings, fits, store) -> None:
    """The probes memory.search makes when each batch fits as the estimate says, every probe
    a quick train run (capped at --probe-time-limit); refused only when the first batch does
    not fit, since running out of memory is how the search ends."""
    from siliconbench.core.measure import QUICK
    from siliconbench.core.workloads.memory import Probe, search
    model = model_size(params)
    if model is None or model.saved_bytes is None:
        return
    mixed = params["precision"] == "mixed"

    def need(batch: int) -> float:
        return model.train_bytes(batch, mixed) + _process(device)
    start = params["start_batch"]
    if not fits(need(start)):
        est.too_big.append(f"{params['model']} at batch size {start}, the first probe "
                           f"({size(need(start))})")
        return
    tried: list[int] = []

    def probe(batch: int) -> Probe:
        tried.append(batch)
        return Probe(batch, fits(need(batch)), out_of_memory=not fits(need(batch)))
    largest, _ = search(probe, start, max(start, params["max_batch"]), params["bisect_steps"])
    est.points, est.peak_bytes = 1, int(need(largest))
    total = 0.0
    for batch in tried:
        step = _step_seconds(model, batch, device, mixed, est)
        if step is None:
            return
        total += min(point_seconds(step, QUICK), params["probe_time_limit"])
    est.seconds = total
    if largest < params["max_batch"]:
        est.basis = f"probes up to about batch size {largest}, where memory runs out; " \
                    f"{est.basis}"


def _infer(est: Estimate, params: dict, device, settings, fits, store) -> None:
    model = model_size(params)
    if model is None:
        return
    batch, mixed = params["batch_size"], params["precision"] == "mixed"
    need = model.infer_bytes(batch, mixed) + _process(device)
    if not fits(need):
        est.too_big.append(f"{params['model']} at batch size {batch} ({size(need)})")
        return
    est.points, est.peak_bytes = 1, int(need)
    call = _step_seconds(model, batch, device, mixed, est, backward=False)
    if call is None or params.get("grow"):
        return                            # --grow: its budget (estimate())
    paths = 2 if params["data"] == "both" else 1
    measured = params["duration"] * 60 if params["duration"] else point_seconds(call, settings)
    est.seconds = paths * (measured + math.ceil(params["images"] / batch) * call)


def _scaling(est: Estimate, params: dict, device, settings, fits, store) -> None:
    """Every world size's ranks on this machine at once (at most --processes), each a
    process training the model at its batch; on a CPU they share its cores, so a step of n
    ranks takes n / cores times a lone rank's where n is more than the cores."""
    from siliconbench.core.workloads.scaling import MLP_BATCH, world_sizes
    from siliconbench.core.workloads.train import PUBLISHED_BATCH
    try:
        worlds = world_sizes(params)
    except ValueError:                    # the run says it in its own words
        return
    model = model_size(params)
    if model is None or model.saved_bytes is None:
        return
    batch = params["batch_size"] or (MLP_BATCH if params["model"] == "mlp"
                                     else PUBLISHED_BATCH[params["model"]])
    ranks = min(max(worlds), params["processes"])
    need = ranks * (model.train_bytes(batch, False) + _process(device))
    if not fits(need):
        est.too_big.append(f"{ranks} ranks of {params['model']} at batch size {batch} "
                           f"({size(need)})")
        return
    est.points, est.peak_bytes = 1, int(need)
    cores = physical_cores()
    _shared_cores(est, ranks, device, "the larger worlds measure the cores' time-sharing, "
                  "not data-parallel scaling")
    step = _step_seconds(model, batch, device, False, est)
    if step is None:
        return
    est.seconds = sum(point_seconds(step * max(1.0, min(n, ranks) / cores)
                                    if device.kind == "cpu" else step, settings)
                      for n in worlds)


def _mlp(est: Estimate, params: dict, device, settings, fits, store) -> None:
    """The CIFAR-10 MLPs: each network trained for its epochs over the images (3 forwards a
    step at the device's float32 rate; per-step framework overhead not counted, so a lower
    bound), then its steps measured; in memory the images as float32, the weights, their
    gradients and a batch's activations, and on a CPU the process."""
    from siliconbench.core import cifar
    from siliconbench.core.workloads import mlp
    preset, batch = params["preset"], params["batch_size"]
    epochs = params["epochs"] or mlp.DEFAULT_EPOCHS[preset]
    count = params["samples"] or cifar.TRAIN_IMAGES
    nets = [[mlp.DEPTH_WIDTH] * d for d in params["depths"] or mlp.DEFAULT_DEPTHS] \
        if preset == "depth-sweep" else [mlp.WIDE_WIDTHS]
    rate, est.basis = _gflops(device, "float32", False)
    data = count * MLP_INPUTS * 4 + _process(device)
    total = 0.0
    for widths in nets:
        sizes = [MLP_INPUTS, *widths, MLP_CLASSES]
        weights = sum(a * b + b for a, b in zip(sizes, sizes[1:]))
        need = data + 4 * 2 * weights + batch * 4 * (2 * sum(widths) + 2 * MLP_INPUTS)
        if not fits(need):
            est.too_big.append(f"the {len(widths)}-layer MLP at batch size {batch} "
                               f"({size(need)})")
            continue
        est.points += 1
        est.peak_bytes = max(est.peak_bytes or 0, int(need))
        if rate is not None:
            step = mlp.train_flops(widths, batch) / (rate * 1e9)
            total += epochs * math.ceil(count / batch) * step + point_seconds(step, settings)
    est.seconds = total if rate is not None else None


def _shared_cores(est: Estimate, ranks: int, device,
                  what: str = "the all-reduce measures the cores' time-sharing") -> None:
    """The question when a CPU run's ranks outnumber this machine's cores."""
    cores = physical_cores()
    if device.kind == "cpu" and ranks > cores:
        est.questions.append(
            f"{ranks} processes on {cores} core{'s' * (cores != 1)}: each rank gets "
            f"1/{math.ceil(ranks / cores)} of a core, so {what}; --processes {cores} gives "
            "each its own.")


ESTIMATORS = {"gemm": _gemm, "bandwidth": _bandwidth, "allreduce": _allreduce, "llm": _llm,
              "train": _train, "memory": _memory, "infer": _infer, "scaling": _scaling,
              "mlp": _mlp}


def free_now(device):
    """The device as the estimate should hold a run to it, and whether its memory is the
    free memory: a CPU's memory is what the system has available now (what the run's own
    process will find); a GPU's, its size (its free memory needs its framework)."""
    if device.kind != "cpu":
        return device, False
    import dataclasses

    import psutil
    return dataclasses.replace(device, memory_bytes=psutil.virtual_memory().available), True


def verdict(spec, device, store=None) -> tuple[str | None, list[str]]:
    """(the sentence refusing the run, or None; the sentences to ask about first) for one
    run on one device (siliconbench.core.frameworks.DeviceInfo): the command line and the
    app's Run, Run It Here and the quick suite alike."""
    device, free = free_now(device)
    est = estimate(spec.workload, spec.params, device, spec.quick, store)
    refusal = est.refusal(device.name, device.memory_bytes, free)
    if refusal:
        return refusal, []
    return None, est.warnings(device.name, device.memory_bytes, free)


def spec_verdicts(specs: list, devices: list, store=None) -> tuple[list[str], list[str]]:
    """What the app says before it queues runs: (refusals, questions) over every run, each
    run on its device (matched on framework and id), one sentence each."""
    refusals: list[str] = []
    questions: list[str] = []
    for spec in specs:
        device = next((d for d in devices if (d.framework, d.id) == (spec.framework, spec.device)),
                      None)
        if device is None:
            continue
        refusal, asked = verdict(spec, device, store)
        refusals += [refusal] if refusal else []
        questions += asked
    return list(dict.fromkeys(refusals)), list(dict.fromkeys(questions))
