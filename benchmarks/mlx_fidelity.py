"""Fidelity of the llm workload's MLX prefill and time to first token, in one run:
SiliconBench's (the real path: a child process, the measure protocol) against mlx-lm's own
figures, the prompt_tps that mlx_lm.generate.stream_generate reports and the prompt time it
is computed from (prompt tokens / prompt_tps), on the same random-weight model, at each
--prompts length. Target: every ratio between 0.97 and 1.03. The sides alternate, --rounds
rounds each, so drift in the machine's speed hits both alike.

    .venv/bin/python benchmarks/mlx_fidelity.py [--prompts 128,2048] [--layers 4]
        [--hidden 256] [--dtype float32] [--device cpu] [--rounds 3]

SiliconBench's prefill makes generate_step's calls up to its first token but one: the decode
step generate_step queues before it waits for that token (MlxLM.prefill says why). Where
building a step takes longer than computing one token, as on this small model on a CPU, that
build is in mlx_lm's time and not in SiliconBench's: a short prompt's ratio then reads a few
percent above 1 at most.

The model is the tiny preset made larger (--layers, --hidden) so that a prompt's time is the
model's, not Python's. Each side runs in a process of its own session (see
benchmarks/llm_fidelity.py: on a shared machine a process in another session can run several
times slower). On a machine busier than its cores the ratios say little, and the script says
so.
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="sb-bench-"))

from benchmarks.sides import child_json, rounds, sides, verdict  # noqa: E402

LOW, HIGH = 0.97, 1.03
TRIALS = 5      # generations per reference process after a warm-up; their median


def params(args) -> dict:
    return {"preset": "tiny", "dtype": args.dtype, "layers": args.layers,
            "hidden": args.hidden, "prompts": args.prompts}


def siliconbench(args) -> dict[int, tuple[float, float]]:
    """{prompt: (prefill tok/s, TTFT ms)} of the real run."""
    from siliconbench.core.runner import RunSpec, execute
    rec = execute(RunSpec("llm", "mlx", args.device,
                          {**params(args), "depths": [0], "gen_tokens": 1}))
    assert rec.status == "ok", rec.reason
    rows = {(r.metric, r.params.get("prompt")): r.value for r in rec.rows}
    return {p: (rows[("prefill_tokens_per_s", p)], rows[("ttft_ms", p)])
            for p in args.prompts}


def reference_child(args) -> None:
    """In a child: stream_generate's prompt_tps at each prompt, warm-up then TRIALS, as
    mlx_lm.benchmark runs it; one JSON line."""
    import json

    import mlx.core as mx
    from mlx_lm.generate import stream_generate

    from benchmarks.llm_fidelity import token_ids
    from siliconbench.core.frameworks.mlx.llm import MlxLM
    from siliconbench.core.workloads import llm

    mx.set_default_device(mx.gpu if args.device == "gpu" else mx.cpu)
    shape = llm.shape_for(params(args))
    model = MlxLM(shape, args.dtype).model
    out = {}
    for length in args.prompts:
        prompt = mx.random.randint(0, shape.vocab, (length,))

        def prompt_tps() -> float:
            for response in stream_generate(model, token_ids(), prompt, max_tokens=1):
                pass
            return response.prompt_tps
        prompt_tps()
        tps = statistics.median(prompt_tps() for _ in range(TRIALS))
        out[length] = (tps, length / tps * 1e3)
    print(json.dumps(out))


def reference(args) -> dict[int, tuple[float, float]]:
    found = child_json(os.path.abspath(__file__), [
        f"--prompts={','.join(map(str, args.prompts))}", f"--layers={args.layers}",
        f"--hidden={args.hidden}", f"--dtype={args.dtype}", f"--device={args.device}"])
    return {int(k): tuple(v) for k, v in found.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=lambda s: [int(x) for x in s.split(",")],
                   default=[128, 2048])
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--dtype", default="float32")
    p.add_argument("--device", default="cpu", help="cpu, or gpu (MLX's GPU)")
    args, ours, theirs = sides(p, reference_child, siliconbench, reference, lambda a: (
        f"tiny preset with {a.layers} layers of {a.hidden}, {a.dtype}, device {a.device}"))
    if ours is None:
        return 0
    ok = True
    for length in args.prompts:
        for i, (what, unit) in enumerate((("prefill", "tok/s"), ("TTFT", "ms"))):
            a = statistics.median(r[length][i] for r in ours)
            b = statistics.median(r[length][i] for r in theirs)
            ratio = a / b if i == 0 else b / a      # > 1: SiliconBench reads faster
            good = LOW <= ratio <= HIGH
            ok &= good
            print(f"{what} {length} tokens: SiliconBench {a:.4g} {unit} (rounds "
                  f"{rounds(r[length][i] for r in ours)}), mlx_lm stream_generate {b:.4g} "
                  f"{unit} (rounds {rounds(r[length][i] for r in theirs)}): ratio "
                  f"{ratio:.3f} (target {LOW}-{HIGH}) {'PASS' if good else 'FAIL'}")
    return verdict(ok)


if __name__ == "__main__":
    sys.exit(main())
