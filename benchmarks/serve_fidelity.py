"""Fidelity of the serve workload's client, in one run: SiliconBench's (asyncio + h11,
siliconbench.core.kit.serving_apis.one_request) against an independent client on the same
server and requests, the official `openai` client where it is installed, else `requests`
streaming in a plain loop (the lines timed as they arrive). Requests alternate between the two,
one at a time, so drift in the machine hits both alike. Targets: the medians of time to first
token and of per-request decode rate within 3% (ratios 0.97-1.03).

Servers: the stand-in (tests/helpers/serving_standin.py, in a process of its own: chunks at fixed
time points), mlx_lm.server on the tiny preset (CPU), llama-cpp-python's server on it where
its extra is installed. Then the client's own cost: against the stand-in at --gap-ms per
token and --concurrency requests at once, the median gap SiliconBench measures against the
stand-in's (target within 5%).

    .venv/bin/python benchmarks/serve_fidelity.py [--requests 20] [--tokens 64]
        [--gap-ms 1] [--concurrency 64] [--only standin|mlx|llamacpp]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from siliconbench.core.kit.serving_apis import Ask, one_request  # noqa: E402
from siliconbench.core.kit.serving_http import Limits, Target, parse_target  # noqa: E402
from siliconbench.core.kit.serving_load import Plan, Prompts, run_level  # noqa: E402
from siliconbench.core.kit.serving_metrics import per_request  # noqa: E402

LIMITS = Limits(stall_s=120, stream_s=600)


def reference_openai(base: str, body: dict) -> tuple[float, float] | None:
    import openai
    client = openai.OpenAI(base_url=base + "/v1", api_key="none")
    t0 = time.perf_counter()
    first = last = None
    n = 0
    extra = {k: body[k] for k in ("ignore_eos", "min_tokens") if k in body}
    stream = client.chat.completions.create(
        model=body["model"], messages=body["messages"], max_tokens=body["max_tokens"],
        temperature=0, stream=True, stream_options={"include_usage": True}, extra_body=extra)
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            last = time.perf_counter() - t0
            first = first if first is not None else last
        if chunk.usage:
            n = chunk.usage.completion_tokens
    return (first, (n - 1) / (last - first)) if n > 1 and last > first else None


def reference_requests(base: str, body: dict) -> tuple[float, float] | None:
    import requests
    t0 = time.perf_counter()
    first = last = None
    n, chunks, buf = 0, 0, b""
    with requests.post(base + "/v1/chat/completions", json=body, stream=True,
                       timeout=120) as r:
        r.raise_for_status()
        # read1: what has arrived, at once (iter_content(None) reads a body ended by closing,
        # mlx_lm.server's HTTP/1.0, whole before it yields)
        while data := r.raw.read1(65536):
            now = time.perf_counter() - t0
            buf += data
            while b"\n\n" in buf:
                event, buf = buf.split(b"\n\n", 1)
                text = event.decode().removeprefix("data: ").strip()
                if not text or text == "[DONE]" or text.startswith(":"):
                    continue
                obj = json.loads(text)
                for c in obj.get("choices") or []:
                    if (c.get("delta") or {}).get("content"):
                        chunks += 1
                        last = now
                        first = first if first is not None else now
                if obj.get("usage"):
                    n = obj["usage"]["completion_tokens"]
    n = n or chunks
    return (first, (n - 1) / (last - first)) if n > 1 and last > first else None


def ours(target: Target, body: dict) -> tuple[float, float] | None:
    line = asyncio.run(one_request(target, "openai", Ask(
        body["messages"][0]["content"], body["max_tokens"], "ignore_eos" in body, "chat",
        body["model"]), LIMITS))
    m = per_request(line)
    return (m.ttft_ms / 1000, m.decode_tok_s) if line.ok and m.decode_tok_s else None


def compare(name: str, base: str, model: str, requests_n: int, tokens: int,
            force: bool = True) -> None:
    try:
        import openai  # noqa: F401
        reference, which = reference_openai, "openai client"
    except ImportError:
        reference, which = reference_requests, "requests, plain loop"
    target = parse_target(base, False)
    prompts = Prompts(64, 0, "fidelity")
    theirs_, ours_ = [], []
    def body() -> dict:
        # A prompt of its own for each request and side: a server's prompt cache (llama.cpp's
        # keeps the last prompt) must not serve one side the other's.
        out = {"model": model, "messages": [{"role": "user", "content": prompts.cold()}],
               "max_tokens": tokens, "temperature": 0, "stream": True,
               "stream_options": {"include_usage": True}}
        if force:
            out.update(ignore_eos=True, min_tokens=tokens)
        return out
    for _ in range(requests_n):
        a, b = reference(base, body()), ours(target, body())
        if not (a and b):
            print(f"  left out: reference {a}, ours {b}")
        if a and b:
            theirs_.append(a)
            ours_.append(b)
    if not ours_:
        print(f"{name}: no request answered on both sides")
        return
    t_ref = statistics.median(x[0] for x in theirs_)
    t_our = statistics.median(x[0] for x in ours_)
    d_ref = statistics.median(x[1] for x in theirs_)
    d_our = statistics.median(x[1] for x in ours_)
    print(f"{name} ({len(ours_)} requests each side; reference: {which}):")
    print(f"  time to first token  ours {t_our * 1000:8.2f} ms   reference "
          f"{t_ref * 1000:8.2f} ms   ratio {t_our / t_ref:.3f}")
    print(f"  decode tok/s         ours {d_our:8.1f}      reference {d_ref:8.1f}      "
          f"ratio {d_our / d_ref:.3f}")


def standin(gap_ms: float, ttft_ms: float = 20.0):
    p = subprocess.Popen([sys.executable, str(ROOT / "tests" / "helpers" / "serving_standin.py"),
                          "--gap-ms", str(gap_ms), "--ttft-ms", str(ttft_ms)],
                         stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return p, p.stdout.readline().strip()


def gaps(gap_ms: float, concurrency: int, tokens: int) -> None:
    p, url = standin(gap_ms)
    try:
        lines, stopped = asyncio.run(run_level(
            parse_target(url, False), "openai", Plan(concurrency, concurrency, 0, "cold"),
            Prompts(16, 0, "gaps"), lambda x: Ask(x, tokens, model="standin-1"), LIMITS,
            None))
    finally:
        p.terminate()
        p.wait()
    ok = [x for x in lines if x.ok]
    if not ok:
        print(f"gaps: no request answered ({stopped})")
        return
    tpot = statistics.median(per_request(x).tpot_ms for x in ok)
    print(f"stand-in at {gap_ms:g} ms a token, {concurrency} at once, {tokens} tokens: "
          f"median time per output token {tpot:.3f} ms, ratio to the stand-in's "
          f"{tpot / gap_ms:.3f} ({len(ok)} of {len(lines)} answered)")


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--requests", type=int, default=20)
    a.add_argument("--tokens", type=int, default=64)
    a.add_argument("--gap-ms", type=float, default=1.0)
    a.add_argument("--concurrency", type=int, default=64)
    a.add_argument("--only", choices=("standin", "mlx", "llamacpp", "gaps"))
    args = a.parse_args()
    if args.only in (None, "standin"):
        p, url = standin(5.0)
        try:
            compare("stand-in, 5 ms a token", url, "standin-1", args.requests, args.tokens)
        finally:
            p.terminate()
            p.wait()
    if args.only in (None, "gaps"):
        gaps(args.gap_ms, args.concurrency, args.tokens)
    for fw in ("mlx", "llamacpp"):
        if args.only not in (None, fw):
            continue
        server(fw, args)


def server(fw: str, args) -> None:
    import importlib
    import importlib.util
    need = {"mlx": ("mlx_lm",), "llamacpp": ("llama_cpp", "fastapi", "uvicorn")}[fw]
    if any(importlib.util.find_spec(m) is None for m in need):
        print(f"{fw}: not installed, left out")
        return
    import os

    from siliconbench.core.kit.serving_process import ServerProcess, free_port
    from siliconbench.core.workloads.llm import PRESETS
    os.environ.setdefault("SILICONBENCH_HOME", tempfile.mkdtemp(prefix="serve-fidelity-"))
    part = importlib.import_module(f"siliconbench.core.frameworks.{fw}.serve")
    params = {"prompt_tokens": 64, "output_tokens": args.tokens, "model_path": None}
    model, about = part.model(PRESETS["tiny"], "tiny", params, print)
    port = free_port()
    target = Target("http", "127.0.0.1", port)
    with ServerProcess(part.command(model, port, params, "cpu", about), name=part.NAME) as s:
        s.wait_ready(target, part.READY_PATH, 300, part.FAILED_STATUS)
        compare(f"{part.NAME}, tiny preset, CPU", target.origin, model, args.requests,
                args.tokens)


if __name__ == "__main__":
    main()
