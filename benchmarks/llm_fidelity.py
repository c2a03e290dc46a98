"""Fidelity of the llm workload's decode tokens/s, in one run: SiliconBench's (the real path:
a child process, the measure protocol) against mlx-lm's own figure, the generation_tps that
mlx_lm.generate.stream_generate reports, and against a plain transformers model.generate with
a static cache, on the same model and settings (decode of --gen tokens after a --prompt token
prompt, as mlx_lm.benchmark does). Target: each ratio at least 0.97. The sides alternate,
--rounds rounds each, so drift in the machine's speed hits both alike.

    .venv/bin/python benchmarks/llm_fidelity.py [--preset tiny] [--prompt 128] [--gen 128]
        [--dtype float32] [--device cpu] [--rounds 5] [--threads N] [--only mlx|torch]
        [--decode-loop auto|eager|compiled]

The reference is what the engine does by default on the device, never a setting chosen to
match SiliconBench: generate as it runs there, which compiles its decode forward on CUDA
(torch.compile, CUDA graphs) and runs it eager on a CPU and MPS. The script prints which loop
each side ran and fails where they differ: SiliconBench's default (--decode-loop auto) must be
generate's. On a CPU generate runs eager, so this CPU cannot show the problem the H200 showed
(an eager loop at 0.21 of a compiled generate); `--device gpu` on CUDA can, and
`--decode-loop eager` there must fail.

Each side runs in a process of its own session, as SiliconBench's runs do: with Linux's
autogroup scheduling a session is a scheduling group, and on a machine shared with other work
a process in a new session was found to decode several times slower than one in the calling
shell's session, which alone made a first version of this script read 0.19.

mlx-lm counts its generation_tps as N tokens over the time from the first token to the last,
N - 1 steps, so it reads (N / (N - 1)) higher than N tokens over N steps: printed beside the
ratio, not corrected. On a machine busier than its cores the ratios say little, and the script
says so.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from benchmarks.machine_load import warn_if_busy  # noqa: E402
from siliconbench.core.runner import RunSpec, execute  # noqa: E402
from siliconbench.core.workloads import llm  # noqa: E402

TARGET = 0.97


def siliconbench(framework: str, args) -> tuple[float, str]:
    """Decode tokens/s of the real run (the workload in its child process) and its loop."""
    device = "cuda" if framework == "torch" and args.device == "gpu" else args.device
    rec = execute(RunSpec("llm", framework, device,
                          {"preset": args.preset, "dtype": args.dtype,
                           "prompts": [args.prompt], "depths": [args.prompt],
                           "gen_tokens": args.gen, "decode_loop": args.decode_loop}))
    assert rec.status == "ok", rec.reason
    [row] = [r for r in rec.rows if r.metric == "decode_tokens_per_s"]
    return row.value, rec.settings["decode_loop"]


def token_ids():
    """A tokenizer for stream_generate: token ids in, nothing out (no tokenizer is
    downloaded, none is needed), never stopping early, as mlx_lm.benchmark."""
    from mlx_lm.tokenizer_utils import TokenizerWrapper

    class TokenIds(TokenizerWrapper):
        def __init__(self) -> None:
            self._eos_token_ids = set()
            self._detokenizer = Silent()

    class Silent:
        last_segment = ""

        def reset(self) -> None: ...
        def add_token(self, token) -> None: ...
        def finalize(self) -> None: ...
    return TokenIds()


def mlx_lm_generation_tps(args) -> "callable":
    """A call giving stream_generate's generation_tps for one generation of the same model
    (built by SiliconBench's MLX part: mlx-lm's classes, the same weights and dtype)."""
    import mlx.core as mx
    from mlx_lm.generate import stream_generate

    from siliconbench.core.frameworks.mlx.llm import MlxLM

    device = mx.gpu if args.device == "gpu" else mx.cpu
    mx.set_default_device(device)
    model = MlxLM(llm.PRESETS[args.preset], args.dtype).model
    prompt = mx.random.randint(0, llm.PRESETS[args.preset].vocab, (args.prompt,))
    tokens = token_ids()

    def call() -> float:
        for response in stream_generate(model, tokens, prompt, max_tokens=args.gen):
            pass
        assert response.generation_tokens == args.gen
        return response.generation_tps
    call()   # warm-up, as mlx_lm.benchmark does
    return call


def generate_tps(args) -> "callable":
    """A call giving decode tokens/s of model.generate with a static cache, as it runs on the
    device by default (compiled where transformers compiles): generating gen + 1 tokens less
    generating 1 (the prefill and its first token), gen steps. Its .loop says which loop
    generate ran."""
    import torch

    from siliconbench.core.frameworks.torch.llm import TorchLM

    device = torch.device("cuda" if args.device == "gpu" else args.device)
    lm = TorchLM(llm.PRESETS[args.preset], args.dtype, device)
    prompt = torch.randint(0, llm.PRESETS[args.preset].vocab, (1, args.prompt), device=device)

    def seconds(new: int) -> float:
        t0 = time.perf_counter()
        out = lm.model.generate(prompt, max_new_tokens=new, min_new_tokens=new,
                                do_sample=False, cache_implementation="static",
                                pad_token_id=0)
        out.tolist()
        assert out.shape[1] == args.prompt + new
        return time.perf_counter() - t0

    def call() -> float:
        return args.gen / (seconds(args.gen + 1) - seconds(1))
    call()      # warm-up; where generate compiles, this compiles
    # What generate did: it compiles through model.get_compiled_call, which keeps the
    # compiled forward on the model.
    call.loop = "compiled" if hasattr(lm.model, "_compiled_call") else "eager"
    return call


TRIALS = 3      # generations per reference process, averaged as mlx_lm.benchmark does


def reference(framework: str, args) -> tuple[float, str]:
    """The reference's tokens/s and loop, from a child process in a session of its own (see
    above)."""
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "--reference", framework,
           *[f"--{k}={v}" for k in ("preset", "prompt", "gen", "dtype", "device")
             for v in [getattr(args, k)]]]
    done = subprocess.run(cmd, capture_output=True, text=True, start_new_session=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    tps, loop = done.stdout.strip().splitlines()[-1].split()
    return float(tps), loop


def compare(framework: str, args) -> bool:
    ours, theirs, loops = [], [], set()
    for _ in range(args.rounds):
        tps, ours_loop = siliconbench(framework, args)
        ours.append(tps)
        tps, their_loop = reference(framework, args)
        theirs.append(tps)
        loops.add((ours_loop, their_loop))
    a, b = statistics.median(ours), statistics.median(theirs)
    name = {"mlx": "mlx_lm stream_generate generation_tps",
            "torch": "transformers model.generate (static cache, its default here)"}[framework]
    [(ours_loop, their_loop)] = loops
    print(f"{framework}: SiliconBench {a:.2f} tok/s, {ours_loop} loop (rounds "
          f"{', '.join(f'{v:.2f}' for v in ours)}), {name} {b:.2f} tok/s, {their_loop} loop "
          f"(rounds {', '.join(f'{v:.2f}' for v in theirs)})")
    same = ours_loop == their_loop
    ok = a / b >= TARGET and same
    extra = (f"; mlx-lm's N/(N-1) count alone makes it {args.gen / (args.gen - 1):.4f}x "
             "higher" if framework == "mlx" else "")
    if not same:
        extra += (f"; SiliconBench ran the {ours_loop} loop where the engine runs "
                  f"{their_loop}: not the engine's figure")
    print(f"{framework} fidelity ratio {a / b:.3f} (target >= {TARGET}){extra}: "
          f"{'PASS' if ok else 'FAIL'}")
    return ok


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="tiny", choices=sorted(llm.PRESETS))
    p.add_argument("--prompt", type=int, default=128)
    p.add_argument("--gen", type=int, default=128)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--device", default="cpu", help="cpu, or gpu (MLX's GPU, torch's CUDA)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, help="CPU threads for both (default: their own)")
    p.add_argument("--only", choices=("mlx", "torch"))
    p.add_argument("--decode-loop", default="auto", choices=llm.LOOPS,
                   help="SiliconBench's decode loop (default auto: the engine's own choice)")
    p.add_argument("--reference", choices=("mlx", "torch"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)   # the child processes too
    if args.reference:   # a child: one reference figure on the last line
        call = (mlx_lm_generation_tps if args.reference == "mlx" else generate_tps)(args)
        print(statistics.fmean(call() for _ in range(TRIALS)), getattr(call, "loop", "eager"))
        return 0
    print(f"{args.preset} {args.dtype}, prompt {args.prompt}, {args.gen} generated tokens, "
          f"device {args.device}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ok = True
    if args.only in (None, "mlx"):
        ok &= compare("mlx", args)
    if args.only in (None, "torch"):
        ok &= compare("torch", args)
    warn_if_busy()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
