"""Record the run records the view tests replay: real, tiny runs of every workload on every
framework installed here, made by the real `siliconbench run` command (CPU). Run it again
when a workload's rows change:

    PYTHONPATH=. python tests/data/records/make_records.py [FILE-STEM ...]

(with stems such as gemm-torch, only those). It writes one JSON file per run into this folder, named <workload>-<framework>[-<tag>].json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

# (workload, frameworks, tag, tiny parameters): seconds each on a laptop CPU.
RUNS = [
    ("gemm", ("torch", "tensorflow", "mlx"), "", ["--sizes", "64,128", "--dtypes", "float32"]),
    ("bandwidth", ("torch", "tensorflow", "mlx"), "", ["--sizes-mb", "1,4"]),
    ("train", ("torch", "tensorflow", "mlx"), "",
     ["--model", "distilbert", "--layers", "1", "--seq-len", "16", "--batch-size", "2"]),
    ("infer", ("torch",), "", ["--model", "resnet18", "--batch-size", "2", "--images", "4",
                               "--image-size", "32"]),
    ("mlp", ("torch", "tensorflow", "mlx"), "",
     ["--depths", "1,2", "--epochs", "1", "--samples", "256", "--batch-size", "64"]),
    ("memory", ("torch", "tensorflow", "mlx"), "", ["--model", "distilbert", "--layers", "1", "--seq-len", "16",
                                "--max-batch", "4", "--bisect-steps", "0"]),
    ("llm", ("torch", "mlx", "llamacpp"), "",
     ["--preset", "tiny", "--prompts", "16,64,256", "--depths", "0,64,256", "--gen-tokens", "8",
      "--dtype", "float32"]),
    # Two ranks over loopback, each started by the engine's own launcher.
    ("allreduce", ("mlx", "torch"), "", ["--processes", "2", "--sizes", "4096,65536",
                                         "--dtypes", "float32,bfloat16"]),
    # Data-parallel training of a small MLP by one worker, then two, each world one launch.
    ("scaling", ("mlx", "torch"), "", ["--processes", "2", "--widths", "256",
                                       "--batch-size", "64"]),
    # A second quick GEMM run for the comparison tests: quick runs time few blocks, so the
    # verdict between two of them must read "inconclusive", never "no difference".
    ("gemm", ("torch",), "second", ["--sizes", "64,128", "--dtypes", "float32"]),
    # The quick suite's inference run: the published PyTorch figures' model, batch and data
    # path, so a comparison with them has rows (about a minute on a laptop CPU).
    ("infer", ("torch",), "reference", ["--model", "resnet50", "--batch-size", "64",
                                        "--data", "host", "--images", "64"]),
    # The quick suite's last run: the published M1 Max GPU sweep's point (tf-metal-experiments,
    # float32 N=8192), which the first launch ends compared with (under a minute here).
    ("gemm", ("torch",), "quick-8192", ["--sizes", "8192", "--dtypes", "float32"]),
    # A serving run: the server SiliconBench starts (mlx_lm.server, llama.cpp's), and on the
    # frameworks that start none, the stand-in server given by --url (STANDIN below).
    ("serve", ("mlx", "llamacpp", "torch", "tensorflow"), "",
     ["--concurrency", "1,2", "--requests", "4", "--output-tokens", "8", "--prompt-tokens",
      "16"]),
]
# Workloads whose runs on these frameworks ask a running server: tests/helpers/serving_standin.py,
# started for them, its address given with --url.
STANDIN = {("serve", "torch"), ("serve", "tensorflow")}
# What a workload's records need in the store before them: llm's decode roofline divides
# the triad last measured on the device (at 256 MB, past the caches; on a CPU the read beside
# it), so its records carry the bound the LLM chart draws.
BEFORE = {"llm": ["bandwidth", "--framework", "torch", "--sizes-mb", "256", "--ops",
                   "triad,read"]}


def run(args: list[str], env: dict) -> dict | None:
    cmd = [sys.executable, "-m", "siliconbench.core.cli", "run", *args, "--device", "cpu", "--quick",
           "--json"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(done.stdout)


def with_standin(args: list[str], env: dict) -> dict | None:
    root = HERE.parent.parent.parent
    server = subprocess.Popen([sys.executable, str(root / "tests" / "helpers" / "serving_standin.py")],
                              stdout=subprocess.PIPE, text=True, cwd=root)
    try:
        return run([*args, "--url", server.stdout.readline().strip()], env)
    finally:
        server.terminate()
        server.wait()


def main() -> int:
    env = dict(os.environ, SILICONBENCH_HOME=tempfile.mkdtemp(prefix="sb-records-"))
    only = set(sys.argv[1:])
    prepared: set[str] = set()
    for name, frameworks, tag, params in RUNS:
        for framework in frameworks:
            stem = f"{name}-{framework}{'-' + tag if tag else ''}"
            if only and stem not in only:
                continue
            if name in BEFORE and name not in prepared:
                if run(BEFORE[name], env) is None:
                    return 1
                prepared.add(name)
            if (name, framework) in STANDIN:
                rec = with_standin([name, "--framework", framework, *params], env)
            else:
                rec = run([name, "--framework", framework, *params], env)
            if rec is None:
                return 1
            out = HERE / f"{stem}.json"
            out.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
            print(f"{out.name}: {len(rec['rows'])} rows, status {rec['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
