"""llama.cpp's part of the llm workload, measured as llama-bench measures
(tools/llama-bench/llama-bench.cpp in the vendored source): the model loaded once with
n_gpu_layers (-ngl, all layers by default) on the run's device; per test a context of
prompt + generated + depth positions with llama-bench's defaults (n_batch 2048, n_ubatch 512,
flash attention auto, a float16 KV cache, its threads); pp = the prompt's random tokens decoded
in n_batch chunks from an empty KV memory, then llama_synchronize; tg = single-token decodes
each synchronised, from a context filled to the depth (-d) once and rewound to it before every
call, as llama-bench restores its saved depth state. Warm-up and repetitions are SiliconBench's
protocol (ctx.measure), so the rows carry its statistics, and they are the rows of the MLX and
torch runs (prefill and decode tokens/s, time to first token, peak memory, decode against the
memory bound), so the engines share the LLM tab and Compare: the workload's run drives Engine,
this module's siliconbench.core.workloads.llm.LLMEngine, as it drives torch's and MLX's."""

from __future__ import annotations

import ctypes
from pathlib import Path

from siliconbench.core.kit.llm_engine import plain_decoder
from siliconbench.core.kit.llm_plan import run_own_model
from siliconbench.core.kit.llm_shapes import (
    ModelShape,
    describe_shape,
    memory_needed,
    score_bytes,
    tensors_step_bytes,
    weight_bytes,
)
from siliconbench.core.params import ParamError

DTYPES = ("float32", "float16", "bfloat16", "q8_0", "q4_0", "q4_k_m")
LOOPS = ("eager",)           # one llama_decode per token; nothing is compiled
N_BATCH, N_UBATCH = 2048, 512          # llama-bench's -b and -ub defaults
FLASH_ATTN_AUTO = -1                   # llama-bench's -fa default (LLAMA_FLASH_ATTN_TYPE_AUTO)
KV_DTYPE = "float16"                   # llama-bench's -ctk/-ctv default
SWA_FULL = False                       # llama-bench's (llama_context_params.swa_full)
# The GEMM rate a prefill is held against: a float model's own precision; a quantised one
# multiplies in llama.cpp's integer dot products, which no GEMM run measures.
FLOP_DTYPE = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}
# Extra weight buffer types known to crash: llama.cpp's AMX kernels segfault in
# ggml_backend_amx_mul_mat on quantised weights on Sapphire Rapids Xeons (ggml-org/llama.cpp
# #20824, closed without a fix; stanfordnlp/dspy#10079 took llama.cpp's AMX build out of its CI
# for it). A build has them only where its compiler targeted AMX (pip's native build on such a
# CPU), and then every weight of a type AMX takes (Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS)
# goes to them. llama.cpp has one switch for all extra types, AMX and CPU_REPACK together
# (llama_model_params.use_extra_bufts), which llama-cli turns off with --no-repack and
# llama-bench cannot (its --repack is ggml-org/llama.cpp PR #28968, open): so on such a build
# it is off and the run measures what `llama-cli --no-repack` runs, which no llama-bench row
# measures (the record and every CPU row say so); on every other build it stays on, as
# llama-bench always runs.
CRASHING_BUFFERS = {"AMX": "ggml-org/llama.cpp#20824"}
NO_REPACK = "as llama-cli --no-repack; llama-bench has no switch for it"
REPORT = ("report it at https://github.com/ggml-org/llama.cpp/issues with the model file's "
          "quant type and the llama.cpp system info `siliconbench devices --json` prints")


def extra_buffers(available: list[str]) -> tuple[bool, str]:
    """(use_extra_bufts, what the record says of it) for a build whose CPU backend offers the
    extra weight buffer types `available` (adapter.cpu_extra_buffer_types)."""
    crashing = [name for name in available if name in CRASHING_BUFFERS]
    if crashing:
        issues = ", ".join(sorted({CRASHING_BUFFERS[n] for n in crashing}))
        return False, (f"off, {NO_REPACK} (ggml-org/llama.cpp PR #28968 is open): this "
                       f"build's {', '.join(crashing)} kernels crash on quantised weights "
                       f"({issues}), and llama.cpp turns {', '.join(available)} off together, "
                       "so its CPU rows are not comparable with llama-bench's")
    return True, f"on, as llama-bench runs ({', '.join(available) or 'none in this build'})"


class GgufModel:
    """A GGUF model loaded on the run's device, and one context at a time, driven through
    llama.cpp's C API with token ids (the model files have no vocabulary to tokenise with)."""

    def __init__(self, path, device, gpu_layers: int, threads: int, vocab: int) -> None:
        from siliconbench.core.frameworks.llamacpp.adapter import (
            ERRORS,
            WEIGHT_BUFFERS,
            cpu_extra_buffer_types,
            lib,
            quiet,
            threadpools,
        )
        self.lc = lc = lib()
        quiet()
        self.threads, self.vocab = threads, vocab
        mparams = lc.llama_model_default_params()
        mparams.n_gpu_layers = gpu_layers
        # On every device: the layers left on the CPU (the output, or all of them) use them.
        self.repack, self.extra_buffers = extra_buffers(cpu_extra_buffer_types())
        mparams.use_extra_bufts = self.repack
        # The devices the model may use, NULL-terminated: none but the CPU for the cpu device
        # (so no layer or operation is offloaded), else the run's GPU alone.
        self._devices = (ctypes.c_void_p * 2)(device.native, None) if device.type != "cpu" \
            else (ctypes.c_void_p * 1)(None)
        mparams.devices = ctypes.cast(self._devices, ctypes.c_void_p)
        WEIGHT_BUFFERS.clear()
        ERRORS.clear()
        self.model = lc.llama_model_load_from_file(str(path).encode(), mparams)
        if not self.model:       # its reason is what llama.cpp logged as an error
            said = "; ".join(e for e in ERRORS if e) or "it logged no reason"
            raise RuntimeError(f"llama.cpp could not load {Path(path).name}: {said}")
        # Where the weights went, as llama.cpp's load said it: "CPU_REPACK 1.50 MiB, ..."
        self.weight_buffers = ", ".join(f"{name} {mib:.2f} MiB" for name, mib in WEIGHT_BUFFERS)
        self.ctx = self.pool = None
        self.pool_api = threadpools() is not None
        buf = ctypes.create_string_buffer(256)
        lc.llama_model_desc(self.model, buf, len(buf))
        self.desc = buf.value.decode(errors="replace")
        self.parameters = int(lc.llama_model_n_params(self.model))
        self.size = int(lc.llama_model_size(self.model))

    def open(self, n_ctx: int) -> None:
        """A fresh context of n_ctx positions (llama-bench makes one per test)."""
        lc = self.lc
        self.close()
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = N_BATCH
        cparams.n_ubatch = N_UBATCH
        cparams.n_threads = cparams.n_threads_batch = self.threads
        cparams.flash_attn_type = FLASH_ATTN_AUTO
        # llama-bench's: a sliding-window layer's cache holds its window only (llama.cpp's
        # default, true, gives Gemma 2/3's and gpt-oss's such layers a full-size cache)
        cparams.swa_full = SWA_FULL
        cparams.no_perf = False
        self.ctx = lc.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise MemoryError(f"out of memory: llama.cpp could not make a context of {n_ctx} "
                              "positions")
        self.memory = lc.llama_get_memory(self.ctx)
        self.pool = self._threadpool()

    def _threadpool(self):
        """llama-bench's thread pool, made per test and attached to its context: the
        default parameters for the threads (ggml_threadpool_params_default: polling 50, no CPU
        mask, normal priority, as llama-bench's defaults leave them). Without one, ggml makes
        and frees its threads at every llama_decode where it is built without OpenMP (the
        usual macOS build). None where this build lacks the functions (a run then says so)."""
        from siliconbench.core.frameworks.llamacpp.adapter import threadpools
        api = threadpools()
        if api is None:
            return None
        params = api.params_default(self.threads)
        pool = api.new(ctypes.byref(params))
        if not pool:
            raise RuntimeError(f"llama.cpp could not make a thread pool of {self.threads} "
                               "threads")
        api.attach(self.ctx, pool, None)
        return pool

    def ids(self, n: int, seed: int) -> list[int]:
        """n random token ids, as llama-bench draws them (any id of the vocabulary)."""
        import numpy as np
        return np.random.default_rng(seed).integers(0, self.vocab, n).tolist()

    def tokens(self, n: int, seed: int) -> list:
        """n random token ids in ctypes arrays of at most N_BATCH (llama-bench's chunks)."""
        ids = self.ids(n, seed)
        return [(ctypes.c_int32 * len(ids[i:i + N_BATCH]))(*ids[i:i + N_BATCH])
                for i in range(0, n, N_BATCH)]

    def decode(self, chunk) -> None:
        rc = self.lc.llama_decode(self.ctx, self.lc.llama_batch_get_one(chunk, len(chunk)))
        if rc != 0:
            raise RuntimeError(f"llama_decode failed ({rc})")

    def clear(self) -> None:
        self.lc.llama_memory_clear(self.memory, False)

    def rewind(self, position: int) -> None:
        """Forget every position from `position` on."""
        self.lc.llama_memory_seq_rm(self.memory, 0, position, -1)

    def sync(self) -> None:
        self.lc.llama_synchronize(self.ctx)

    def last_logits(self):
        import numpy as np
        ptr = self.lc.llama_get_logits_ith(self.ctx, -1)
        return np.ctypeslib.as_array(ptr, (self.vocab,)).copy()

    def fill(self, depth: int) -> None:
        """The context filled to `depth` from an empty KV memory (untimed, as llama-bench's
        depth run before a test's timing starts)."""
        self.clear()
        for chunk in self.tokens(depth, depth + 1):
            self.decode(chunk)
        self.sync()

    def prompt_call(self, prompt: int, depth: int = 0):
        """llama-bench's pp test (`pp512 @ d4096` past an empty context): the context filled
        to `depth` once and rewound to it before every call (an empty KV memory at depth 0),
        the prompt in n_batch chunks after it, then one synchronisation."""
        chunks = self.tokens(prompt, prompt)
        self.fill(depth)

        def call() -> None:
            self.rewind(depth) if depth else self.clear()
            for chunk in chunks:
                self.decode(chunk)
            self.sync()
        return call

    def gen_call(self, depth: int, steps: int):
        """llama-bench's tg test: `steps` single-token decodes each synchronised, from a
        context filled to `depth` once (untimed) and rewound to it before every call."""
        self.fill(depth)
        singles = [(ctypes.c_int32 * 1)(t) for t in self.ids(steps, steps + 7)]

        def call() -> None:
            self.rewind(depth)
            for one in singles:
                self.decode(one)
                self.sync()
        return call

    def next_token_check(self, length: int) -> tuple[bool, float]:
        """(same next token, relative logits gap): the whole sequence decoded at once against
        all but its last token followed by one single-token decode (the KV cache is real)."""
        import numpy as np
        self.open(length + 1)
        chunk = self.tokens(length, 4242)[0]
        self.clear()
        self.decode(chunk)
        self.sync()
        whole = self.last_logits()
        self.clear()
        self.decode((ctypes.c_int32 * (length - 1))(*chunk[:-1]))
        self.decode((ctypes.c_int32 * 1)(chunk[length - 1]))
        self.sync()
        stepped = self.last_logits()
        gap = float(np.max(np.abs(whole - stepped)) / max(np.max(np.abs(whole)), 1e-30))
        return int(np.argmax(whole)) == int(np.argmax(stepped)), gap

    def close(self) -> None:
        """The context, then its thread pool, as llama-bench frees them after a test."""
        if self.ctx:
            self.lc.llama_free(self.ctx)
        if self.pool:
            from siliconbench.core.frameworks.llamacpp.adapter import threadpools
            threadpools().free(self.pool)
        self.ctx = self.pool = None

    def release(self) -> None:
        self.close()
        if self.model:
            self.lc.llama_model_free(self.model)
        self.model = None


def backend(ctx) -> str:
    """llama-bench's backend column: CPU, Metal, CUDA, Vulkan, ..."""
    if ctx.device.type == "cpu":
        return "CPU"
    from siliconbench.core.frameworks.llamacpp.adapter import backend_devices
    name = next((d["name"] for d in backend_devices() if d["handle"] == ctx.device.native),
                "GPU")
    return "Metal" if name.startswith("MTL") else name.rstrip("0123456789") or "GPU"


def step_bytes(shape: ModelShape, stored: dict[str, int], depth: int, steps: int,
               batch: int = 1) -> float:
    """Bytes a decode step reads, averaged over `steps` steps from `depth`: every tensor of
    the file once (of an untied embedding table only the token's row, left out; of a
    mixture's stacked experts, the share its tokens chose) and the float16 KV cache, one
    position longer each step."""
    return tensors_step_bytes(shape, stored, KV_DTYPE, batch, depth, steps)


class Engine:
    """The llm workload's engine on llama.cpp: the shape written as a GGUF file of the type
    (models.model_file), loaded with llama-bench's offload, contexts and threads (GgufModel),
    timed as llama-bench's pp and tg tests."""
    DTYPES, LOOPS = DTYPES, LOOPS
    DTYPE_HINTS = {"q4": " (llama.cpp's 4-bit type is q4_0, or q4_k_m)",
                   "q8": " (llama.cpp's 8-bit type is q8_0)"}
    LOAD_STEPS = 2               # the model file, then loading it
    TTFT_NOTE = "the prompt's decode with its last token's logits on the host (no sampling)"
    PREFILL_DEPTHS = True        # llama-bench's -d applies to its pp tests as well

    def __init__(self, ctx, shape: ModelShape, params: dict) -> None:
        self.ctx, self.shape, self.params, self.dtype = ctx, shape, params, params["dtype"]
        self.on_cpu = ctx.device.type == "cpu"
        asked = params.get("gpu_layers")
        self.gpu_layers = 0 if self.on_cpu else (shape.layers + 1 if asked is None else asked)
        self.model: GgufModel | None = None
        self.path, self.stored, self.threads, self._file_bytes = None, {}, None, None
        # the user's GGUF file, if given, as the run's plan read it
        self.own = run_own_model(ctx, params)
        if self.own is not None:
            self._file_bytes = self.own.file.size

    def check(self) -> None:
        if self.params["batch"] != 1:
            raise ParamError("--batch: llama.cpp runs one sequence here, as llama-bench does; "
                             "use --batch 1.")
        if self.on_cpu and self.params.get("gpu_layers"):
            raise ParamError("--gpu-layers offloads to a GPU: the cpu device runs none; choose "
                             "a GPU device or leave it out.")

    def products_dtype(self) -> str | None:
        return None              # llama.cpp's own kernels: no framework product speaks for them

    def gemm_dtype(self) -> str | None:
        return FLOP_DTYPE.get(self.dtype)

    def memory_needed(self, batch: int, tokens: int) -> float:
        """The file's bytes, and the float16 KV cache and activations of `tokens` positions."""
        if self._file_bytes is None:
            from siliconbench.core.frameworks.llamacpp import models
            self._file_bytes = models.expected_bytes(self.shape, self.dtype)
        held = self.attention_bytes(self.shape, self.dtype, self.ctx.device.type, batch,
                                    tokens)
        return memory_needed(self.shape, KV_DTYPE, batch, tokens, held) \
            - weight_bytes(self.shape, KV_DTYPE) + self._file_bytes

    @staticmethod
    def attention_bytes(shape: ModelShape, dtype: str, device: str, batch: int,
                        tokens: int) -> float:
        """llama.cpp computes attention n_ubatch queries at a time. Flash attention on auto
        is turned on or off when the context is made (llama_context: off where a layer's
        attention would not run on its KV cache's device), after this is asked, so this
        counts what it holds off: a ubatch's float32 scores of every head against all the
        keys (KQ) and its float32 mask of the same queries and keys."""
        rows = min(N_UBATCH, tokens)
        return score_bytes(shape, batch, rows, tokens) + batch * rows * tokens * 4

    def settings(self) -> dict:
        """What llama.cpp says of the model it loaded, and how it runs it; nothing before."""
        lm = self.model
        if lm is None:
            return {}
        from siliconbench.core.frameworks.llamacpp.adapter import commit
        from siliconbench.core.frameworks.llamacpp.models import FTYPES
        own = {} if self.own is None else {"model_file": self.own.record()}
        return dict(
            model=lm.desc, shape=describe_shape(self.shape), parameters=lm.parameters,
            weight_bytes=lm.size, **own,
            # a user's file by its name only: a record never carries the folders it sits in
            gguf_file=self.path.name if self.own else str(self.path),
            gguf_type=self.own.file.quantisation if self.own else FTYPES[self.dtype][1],
            backend=backend(self.ctx), n_gpu_layers=self.gpu_layers, threads=self.threads,
            op_offload=not self.on_cpu, placement=self.placement(),
            threadpool=(f"attached: {self.threads} threads, ggml's default parameters, as "
                        "llama-bench attaches one to each test's context")
            if lm.pool_api else "none: this build lacks ggml's thread pool functions, so "
                                "ggml makes its own threads",
            repack=lm.repack, extra_buffers=lm.extra_buffers, weight_buffers=lm.weight_buffers,
            **({} if lm.repack or not self.on_cpu else {"llama_bench_comparable": (
                f"no: weights not repacked ({NO_REPACK}), where llama-bench's CPU rows "
                "repack them")}),
            devices="none (the CPU alone), as llama-bench -dev none" if self.on_cpu
            else f"{backend(self.ctx)}, the run's device alone",
            swa_full=SWA_FULL, n_batch=N_BATCH, n_ubatch=N_UBATCH, flash_attn="auto",
            kv_cache=KV_DTYPE,
            llama_cpp_commit=commit(),
            method="llama-bench's: pp = the prompt in n_batch chunks from an empty KV "
                   "memory, then synchronise; tg = single-token decodes each synchronised")

    def load(self, say) -> None:
        """The model file (written and quantised once, then reused), then llama.cpp loading
        it; each said first (ctx.inside), so a crash in it names the file."""
        from siliconbench.core.frameworks.llamacpp import models
        from siliconbench.core.frameworks.llamacpp.adapter import threads
        ctx, self.threads = self.ctx, threads()
        say(0, "the model file")
        if self.own is not None:
            self.path = path = Path(self.own.file.path)
        else:
            self.path = path = models.model_file(self.shape, self.params["preset"], self.dtype,
                                                 self.threads, say=lambda text: say(0, text),
                                                 warn=ctx.warn)   # a damaged file, rebuilt
        # a user's file's tensors as the run's plan read them from its header; a preset's
        # file (written here) from its own
        own = self.own.tensor_bytes if self.own is not None else None
        self.stored = dict(own) if own is not None else models.tensor_bytes(path)
        say(1, "loading the model")
        quant = self.own.file.quantisation if self.own else models.FTYPES[self.dtype][1]
        ctx.inside(f"llama.cpp loading {path.name} ({quant})", REPORT)
        self.model = GgufModel(path, ctx.device, self.gpu_layers, self.threads,
                               self.shape.vocab)
        ctx.inside(f"llama.cpp running {path.name} ({quant}) on {backend(ctx)}", REPORT)

    def mismatch(self) -> str | None:
        if self.own is not None or self.model.parameters == self.shape.parameters:
            return None
        return (f"The GGUF model has {self.model.parameters:,} parameters where the shape has "
                f"{self.shape.parameters:,}.")

    def default_loop(self) -> str:
        return "eager"

    def placement(self) -> str:
        """Where the model ran, as llama-bench's options say it: on the cpu device it is given
        no device but the CPU (llama-bench -dev none), so no layer and no operation is
        offloaded (-ngl 0 on a GPU build would still offload large operations); and where its
        weights were not repacked, that its rows are not llama-bench's."""
        if self.on_cpu:
            said = "the CPU alone (llama-bench -dev none): no layer or operation offloaded"
            repack = self.model is None or self.model.repack
            return said if repack else (f"{said}; weights not repacked ({NO_REPACK}): not "
                                        "comparable with llama-bench's CPU rows")
        return f"ngl {self.gpu_layers} on {backend(self.ctx)}, op offload on"

    def cache_check(self, tolerance: float) -> str | None:
        """The next token, as llama-bench's users read it; the logits' gap is only said."""
        same, gap = self.model.next_token_check(min(16, self.shape.max_positions - 1))
        if same:
            return None
        return (f"Decoding with the KV cache picks another next token than decoding the whole "
                f"sequence (logits differ by {gap:.2e}): the results are wrong.")

    def prefill(self, batch: int, prompt: int, depth: int):
        self.model.open(prompt + depth)
        return self.model.prompt_call(prompt, depth)

    def decoder(self, batch: int, depth: int, steps: int, loop: str):
        self.model.open(depth + steps)
        return plain_decoder(self.model.gen_call(depth, steps))

    def step_bytes(self, batch: int, depth: int, steps: int) -> float:
        return step_bytes(self.shape, self.stored, depth, steps, batch)

    def prefill_label(self, prompt: int) -> str:
        return f"pp{prompt}"

    def decode_label(self, depth: int, steps: int) -> str:
        return f"tg{steps}" + (f" @ d{depth}" if depth else "")

    def decode_note(self, loop: str) -> str:
        return "llama-bench's tg: single-token decodes, each synchronised"

    def bound_note(self, loop: str) -> str:
        return "the GGUF file's tensors and the float16 KV cache"

    def release(self) -> None:
        if self.model is not None:
            self.model.release()

    @staticmethod
    def bench_columns(settings: dict) -> list[str]:
        """llama-bench's, chosen as its markdown table chooses them: ngl where the backend is
        not the CPU's (nor BLAS), threads where it is (the threads are its default); dev where
        the model was given the CPU alone (-dev none); and where weights were not repacked,
        a column llama-bench has not (no-repack: llama-cli's switch), since a build whose AMX
        kernels crash runs so (CRASHING_BUFFERS)."""
        backend = str(settings.get("backend", ""))
        on_cpu = "CPU" in backend or "BLAS" in backend
        repack = settings.get("repack", True)   # records before it was said repacked by default
        # -dev none where operations could not be offloaded: the cpu device (records before
        # it was said were CPU or GPU runs alike: no column)
        alone = settings.get("op_offload", True) is False
        return ([] if on_cpu else ["ngl"]) + (["threads"] if on_cpu else []) + \
            (["dev"] if alone else []) + ([] if repack else ["no-repack"])

    @staticmethod
    def bench_cells(rec, point: dict) -> dict[str, str]:
        s = rec.settings
        return {"model": s.get("model") or f"{point['preset']} {point['dtype']}",
                "backend": str(s.get("backend", rec.device)),
                "ngl": str(s.get("n_gpu_layers", "")), "threads": str(s.get("threads", "")),
                "dev": "none", "no-repack": "yes"}
