"""Fidelity of the serve workload's client, and its own cost, in one run each.

1. The same server measured by SiliconBench's client (asyncio + h11,
   siliconbench.core.kit.serving_apis.one_request) and by independent clients, on the same
   requests (one body, prompts of one length from one seed, a unique salt first so no
   prompt cache serves one side the other's prompt), alternated A B B A so a drift in the
   machine's load hits every side alike, warm-up requests (--warmup a side) left out of
   every side alike. The independent clients:
   - the official `openai` client in a plain loop (the reference, where AIPerf is not
     given), its time to first token from just before `create()`;
   - a blocking socket in a plain loop, no HTTP library: the least a client can cost; it
     runs twice a round, and the ratio of its two series is the round's noise floor;
   - AIPerf (`aiperf profile`, in a venv of its own: --aiperf PATH, or `aiperf` on PATH),
     run as a subprocess on a file of the same prompts, each sent once, in --aiperf-blocks
     blocks, each between two halves of the other sides' rounds (AIPerf starts a dozen
     processes, so it cannot alternate per request), its per-request export
     (profile_export.jsonl) read back. It runs offline on loopback with
     the model folder's own tokenizer (--tokenizer); on the stand-in it has none, and is
     left out there.
   Target: the medians of time to first token and of per-request decode rate
   ((n - 1) / (t_last - t_first), n from the server's usage) within 3% of the reference's.
   Servers: the stand-in (tests/helpers/serving_standin.py, its own process), mlx_lm.server
   (CPU) and llama-cpp-python's server where its extra is installed, on the tiny preset or,
   with --model small, a model slow enough a token that the clients' own costs are small
   beside it (SMALL).

2. The client's own cost: against the stand-in at --gap-ms a token and --concurrency
   requests at once (or each level of --sweep), the median time per output token
   SiliconBench measures against the stand-in's nominal gap (target within 5%), beside
   what the stand-in really sent (its own record of each stream's first and last write:
   a stand-in that cannot keep up drifts, and that is not the client's error), and the
   client's CPU a chunk (user + system, from getrusage), which bounds the chunks a second
   one core can take: concurrency x 1000 / gap_ms chunks a second must fit in it.

Each ratio ends in one line `PASS|FAIL ...`, the noise floor in one `INFO ...` (the lines
`SUMMARY` gathers at the end).

    .venv/bin/python benchmarks/serve_fidelity.py [--requests 30] [--warmup 2] [--tokens 64]
        [--gap-ms 1] [--concurrency 64] [--sweep 1,4,16,64] [--aiperf PATH]
        [--only standin|gaps|mlx|llamacpp] [--cores apart|shared] [--model tiny|small]
        [--aiperf-blocks 5] [--prompt-tokens 64]

A server the script starts runs on a core of its own, the clients on the others (--cores
apart, where there are 2 or more): what one client spends per chunk is then not taken from
the server the others time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from siliconbench.core.frameworks.llamacpp.serve import BYTES_PER_WORD  # noqa: E402
from siliconbench.core.kit.llm_shapes import ModelShape  # noqa: E402
from siliconbench.core.kit.serving_apis import Ask, one_request, request_body  # noqa: E402
from siliconbench.core.kit.serving_http import Limits, Target, parse_target  # noqa: E402
from siliconbench.core.kit.serving_load import Plan, Prompts, run_level, words  # noqa: E402
from siliconbench.core.kit.serving_metrics import per_request  # noqa: E402

LIMITS = Limits(stall_s=120, stream_s=600)
TTFT_DECODE_TOLERANCE = 0.03
GAP_TOLERANCE = 0.05
SUMMARY: list[str] = []

# One request's result: (time to first token s, decode tok/s, output chunks seen)
Result = tuple[float, float, int]


def verdict(what: str, ratio: float | None, tolerance: float, detail: str = "") -> None:
    ok = ratio is not None and abs(ratio - 1) <= tolerance
    text = "n/a" if ratio is None else f"{ratio:.3f}"
    line = (f"{'PASS' if ok else 'FAIL'}  {what}: ratio {text} (target "
            f"{1 - tolerance:.2f}-{1 + tolerance:.2f}){'  ' + detail if detail else ''}")
    print(line, flush=True)
    SUMMARY.append(line)


def cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def body_of(ask: Ask) -> dict:
    """The one body every side sends (SiliconBench's own request_body)."""
    return request_body("openai", ask)[1]


class Ours:
    name = "SiliconBench"

    def __init__(self, target: Target) -> None:
        self.target = target
        self.loop = asyncio.new_event_loop()
        self.counted_by: set[str] = set()     # usage | chunks: where n came from

    def __call__(self, ask: Ask) -> Result | None:
        line = self.loop.run_until_complete(one_request(self.target, "openai", ask, LIMITS))
        m = per_request(line)
        self.counted_by.add(line.tokens_from)
        if not (line.ok and m.decode_tok_s):
            print(f"  SiliconBench left a request out: {line.reason or 'no decode rate'}")
            return None
        return m.ttft_ms / 1000, m.decode_tok_s, m.chunks

    def close(self) -> None:
        self.loop.close()


class OpenAIClient:
    name = "openai client"

    def __init__(self, base: str) -> None:
        import openai
        try:                    # the HTTP library under it: httpx2 (openai 3), else httpx
            import httpx2 as httpx
        except ImportError:
            import httpx
        # A connection a request, as every other side has (httpx would keep one alive)
        self.client = openai.OpenAI(base_url=base + "/v1", api_key="none", max_retries=0,
                                    http_client=openai.DefaultHttpxClient(
                                        limits=httpx.Limits(max_keepalive_connections=0)))

    def __call__(self, ask: Ask) -> Result | None:
        body = body_of(ask)
        extra = {k: body[k] for k in ("ignore_eos", "min_tokens") if k in body}
        first = last = None
        n = chunks = 0
        t0 = time.perf_counter()
        stream = self.client.chat.completions.create(
            model=body["model"], messages=body["messages"], max_tokens=body["max_tokens"],
            temperature=body["temperature"], stream=True,
            stream_options=body["stream_options"], extra_body=extra)
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                last = time.perf_counter() - t0
                first = first if first is not None else last
                chunks += 1
            if chunk.usage:
                n = chunk.usage.completion_tokens
        n = n or chunks          # a server without usage (llama-cpp-python's): its chunks
        return (first, (n - 1) / (last - first), chunks) if n > 1 and first is not None \
            and last > first else None

    def close(self) -> None:
        self.client.close()


class SocketClient:
    """A blocking socket, the request written by hand, SSE split by hand, each read timed
    as it returns: no HTTP library, no event loop."""

    def __init__(self, target: Target, name: str = "plain socket") -> None:
        self.target, self.name = target, name

    def __call__(self, ask: Ask) -> Result | None:
        data = json.dumps(body_of(ask)).encode()
        head = (f"POST {self.target.prefix}/v1/chat/completions HTTP/1.1\r\n"
                f"Host: {self.target.host}:{self.target.port}\r\nConnection: close\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        reads: list[tuple[float, bytes]] = []
        t0 = time.perf_counter()
        with socket.create_connection((self.target.host, self.target.port), 30) as s:
            s.sendall(head.encode() + data)
            while piece := s.recv(65536):
                reads.append((time.perf_counter() - t0, piece))
        first = last = None
        n = chunks = 0
        buf = b""
        for t, piece in reads:         # chunked framing's size lines carry no "data: {"
            buf += piece
            *events, buf = buf.split(b"\n\n")
            for ev in events:
                i = ev.find(b"data: {")
                if i < 0:
                    continue
                obj = json.loads(ev[i + 6:].split(b"\r\n")[0])
                for c in obj.get("choices") or []:
                    if (c.get("delta") or {}).get("content"):
                        last, chunks = t, chunks + 1
                        first = first if first is not None else t
                if obj.get("usage"):
                    n = obj["usage"]["completion_tokens"]
        n = n or chunks
        return (first, (n - 1) / (last - first), chunks) if n > 1 and first is not None \
            and last > first else None

    def close(self) -> None:
        pass


def alternate(sides: list, asks: Callable[[], Ask], requests_n: int, warmup: int,
              kept: dict[str, list[Result]], cpu: dict[str, list[float]]) -> None:
    """Each side `warmup` requests first (left out), then `requests_n` rounds, one request a
    side each, in the order A B C, C B A, ...; a round is kept (into `kept`) only where every
    side answered. Each side's CPU seconds and chunks add to `cpu[name]`."""
    for side in sides:
        for _ in range(warmup):
            side(asks())
    for i in range(requests_n):
        got = {}
        for side in (sides if i % 2 == 0 else sides[::-1]):
            c0 = cpu_s()
            got[side.name] = side(asks())
            spent = cpu.setdefault(side.name, [0.0, 0])
            spent[0] += cpu_s() - c0
            spent[1] += got[side.name][2] if got[side.name] else 0
        if all(got.values()):
            for name, r in got.items():
                kept.setdefault(name, []).append(r)


def medians(results: list[Result]) -> tuple[float, float]:
    return (statistics.median(r[0] for r in results),
            statistics.median(r[1] for r in results))


def report(server: str, ours: list[Result], name: str, theirs: list[Result],
           paired: bool = True) -> None:
    """The issue's ratio, of the medians; and, where the sides alternated request by
    request, the median of each round's own ratio, which a drift of the machine's load
    between rounds does not move (on a loaded machine the rates can be bimodal, and two
    medians may then fall in different modes)."""
    (t_o, d_o), (t_r, d_r) = medians(ours), medians(theirs)
    print(f"  {name:14s} time to first token {t_r * 1000:8.2f} ms   decode {d_r:8.1f} tok/s"
          f"   ({len(theirs)} requests)")
    verdict(f"{server}: time to first token, SiliconBench/{name}, of the medians "
            f"({t_o * 1000:.2f}/{t_r * 1000:.2f} ms)", t_o / t_r, TTFT_DECODE_TOLERANCE)
    verdict(f"{server}: decode tok/s, SiliconBench/{name}, of the medians "
            f"({d_o:.1f}/{d_r:.1f})", d_o / d_r, TTFT_DECODE_TOLERANCE)
    if paired:
        for i, what in ((0, "time to first token"), (1, "decode tok/s")):
            ratio = statistics.median(a[i] / b[i] for a, b in zip(ours, theirs, strict=True))
            verdict(f"{server}: {what}, SiliconBench/{name}, median of each round's ratio",
                    ratio, TTFT_DECODE_TOLERANCE)


def compare(server: str, base: str, model: str, args, tokenizer: str | None = None) -> None:
    target = parse_target(base, False)
    prompts = Prompts(args.prompt_tokens, 0, f"fidelity-{time.time_ns()}")
    more = random.Random(1)
    chars = args.prompt_tokens * BYTES_PER_WORD

    def ask() -> Ask:
        """A cold prompt cut to `chars` characters: every prompt is as long as every other
        (in the byte vocabularies of the models the script starts, one token a character).
        Random words' lengths otherwise vary a prompt's prefill by several %, and every
        client's time to first token with it, which only widens the noise."""
        text = prompts.cold()
        while len(text) < chars:
            text += " " + words(more, 8)
        return Ask(text[:chars], args.tokens, True, "chat", model)
    ours = Ours(target)
    # The plain socket twice: the ratio of its two series is the noise floor of a round
    # on this machine (no client can be held to a tighter ratio than that)
    sides: list = [ours, SocketClient(target), SocketClient(target, "plain socket 2")]
    try:
        sides.append(OpenAIClient(base))
    except ImportError:
        print("  the openai client is not installed: left out")
    aiperf = aiperf_path(args.aiperf) if tokenizer else None
    if args.aiperf and not tokenizer:
        print("  AIPerf: left out here (it needs a tokenizer; the stand-in has none)")
    # AIPerf starts a dozen processes, so it runs apart, in blocks: each between two halves of
    # the other sides' rounds, so a drift of the machine's load between blocks (several % on
    # this VM) hits both sides of a block alike; each block's ratio is kept.
    blocks = max(1, min(args.aiperf_blocks, args.requests)) if aiperf else 1
    sizes = [args.requests // blocks + (i < args.requests % blocks) for i in range(blocks)]
    kept: dict[str, list[Result]] = {s.name: [] for s in sides}
    cpu: dict[str, list[float]] = {}
    ap: list[Result] = []
    paired_blocks: list[tuple[list[Result], list[Result]]] = []
    try:
        for i, size in enumerate(sizes):
            start = len(kept[ours.name])
            alternate(sides, ask, size // 2 if aiperf else size, args.warmup if i == 0 else 0,
                      kept, cpu)
            if aiperf:
                got = run_aiperf(aiperf, base, model, tokenizer,
                                 [ask() for _ in range(args.warmup + size)], args,
                                 ours.counted_by == {"usage"})
                alternate(sides, ask, size - size // 2, 0, kept, cpu)
                if got:
                    ap += got
                    paired_blocks.append((kept[ours.name][start:], got))
    finally:
        for side in sides:
            side.close()
    cpu = {k: v[0] / v[1] * 1e6 for k, v in cpu.items() if v[1]}
    if not kept[ours.name]:
        print(f"{server}: no request answered on every side")
        return
    t, d = medians(kept[ours.name])
    print(f"{server} ({len(kept[ours.name])} rounds, A B B A; warm-up {args.warmup} a side "
          "left out):")
    print(f"  {'SiliconBench':14s} time to first token {t * 1000:8.2f} ms   decode {d:8.1f} "
          "tok/s")
    for side in sides[1:]:
        if side.name == "plain socket 2":
            (t1, d1), (t2, d2) = medians(kept["plain socket"]), medians(kept[side.name])
            floor = [statistics.median(a[i] / b[i] for a, b in zip(
                kept["plain socket"], kept[side.name], strict=True)) for i in (0, 1)]
            line = (f"INFO  {server}: noise floor, plain socket/plain socket 2: time to "
                    f"first token {t1 / t2:.3f} of the medians, {floor[0]:.3f} of each "
                    f"round's; decode {d1 / d2:.3f} and {floor[1]:.3f}")
            print(line)
            SUMMARY.append(line)
            continue
        report(server, kept[ours.name], side.name, kept[side.name])
    if ap:
        report(server, kept[ours.name], "AIPerf", ap, paired=False)
        if len(paired_blocks) > 1:
            for i, what in ((0, "time to first token"), (1, "decode tok/s")):
                ratios = [medians(o)[i] / medians(a)[i] for o, a in paired_blocks if o and a]
                verdict(f"{server}: {what}, SiliconBench/AIPerf, median of each block's ratio "
                        f"({len(ratios)} blocks: " + ", ".join(f"{r:.3f}" for r in ratios)
                        + ")", statistics.median(ratios), TTFT_DECODE_TOLERANCE)
    print("  client CPU a chunk (user + system): " + ", ".join(
        f"{k} {v:.0f} µs" for k, v in cpu.items()))


def aiperf_path(given: str | None) -> str | None:
    if given:
        return given if Path(given).is_file() else None
    return shutil.which("aiperf")


def run_aiperf(aiperf: str, base: str, model: str, tokenizer: str, asks: list[Ask],
               args, server_counts: bool) -> list[Result] | None:
    """AIPerf on the same prompts and body (max_tokens, ignore_eos, min_tokens, temperature,
    usage), its warm-up on the first `args.warmup` of them: its per-request export ->
    [(ttft s, 1000 / its ITL, output chunks)]; AIPerf's
    "inter token latency" is (latency - ttft) / (n - 1), vLLM's TPOT. Where the server
    gives no usage (`server_counts` False), AIPerf counts with the tokenizer."""
    work = Path(tempfile.mkdtemp(prefix="serve-fidelity-aiperf-"))
    try:
        with open(work / "prompts.jsonl", "w") as f:
            for a in asks:
                f.write(json.dumps({"text": a.prompt}) + "\n")
        body = body_of(asks[0])
        command = [aiperf, "profile", "--model", model, "--url", base, "--endpoint-type",
                   "chat", "--streaming", "--input-file", str(work / "prompts.jsonl"),
                   "--custom-dataset-type", "single_turn", "--tokenizer", tokenizer,
                   # each prompt once, in order: by default AIPerf samples the file with
                   # replacement, and a prompt sent twice is served from the server's prompt
                   # cache (mlx_lm.server: 43 ms to the first token against 860 cold)
                   "--dataset-sampling-strategy", "sequential",
                   "--use-legacy-max-tokens",
                   *(["--use-server-token-count"] if server_counts else []),
                   "--extra-inputs", f"max_tokens:{body['max_tokens']}",
                   "--extra-inputs", "ignore_eos:true",
                   "--extra-inputs", f"min_tokens:{body['min_tokens']}",
                   "--extra-inputs", "temperature:0", "--concurrency", "1",
                   "--request-count", str(len(asks) - args.warmup),
                   "--warmup-request-count", str(args.warmup),
                   "--connection-reuse-strategy", "never",
                   "--output-artifact-dir", str(work / "out"), "--ui", "none"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        export = work / "out" / "profile_export.jsonl"
        if done.returncode != 0 or not export.is_file():
            print(f"  AIPerf failed (exit {done.returncode}): "
                  f"{(done.stderr or done.stdout).strip()[-300:]}")
            return None
        out = []
        trace: dict[str, list[float]] = {}
        for text in export.read_text().splitlines():
            record = json.loads(text)
            if (record.get("metadata") or {}).get("benchmark_phase", "profiling") \
                    != "profiling":
                continue                    # its warm-up, left out as ours is
            m = record.get("metrics", {})
            for key in ("http_req_connecting", "http_req_sending", "http_req_waiting"):
                if isinstance((m.get(key) or {}).get("value"), (int, float)):
                    trace.setdefault(key, []).append(m[key]["value"])
            ttft, itl = (m.get(k, {}).get("value") for k in ("time_to_first_token",
                                                             "inter_token_latency"))
            if ttft and itl:
                out.append((ttft / 1000, 1000 / itl,
                            m.get("http_req_chunks_received", {}).get("value", 0)))
        print(f"  AIPerf: {len(out)} of {len(asks) - args.warmup} requests read from its "
              "export; its own HTTP trace, medians: " + ", ".join(
                  f"{k.removeprefix('http_req_')} {statistics.median(v):.2f} ms"
                  for k, v in trace.items()))
        return out
    except subprocess.TimeoutExpired:
        print("  AIPerf did not end within 900 s: left out")
        return None
    finally:
        if args.keep_aiperf:
            print(f"  AIPerf's files kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def standin(gap_ms: float, ttft_ms: float = 20.0) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([sys.executable, str(ROOT / "tests" / "helpers" / "serving_standin.py"),
                          "--gap-ms", str(gap_ms), "--ttft-ms", str(ttft_ms)],
                         stdout=subprocess.PIPE, text=True, cwd=ROOT)
    return p, p.stdout.readline().strip()


def stop(p: subprocess.Popen) -> None:
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def gaps(gap_ms: float, concurrency: int, tokens: int) -> None:
    from siliconbench.core.kit.serving_apis import get_json
    p, url = standin(gap_ms)
    target = parse_target(url, False)
    try:
        loop = asyncio.new_event_loop()
        c0, w0 = cpu_s(), time.perf_counter()
        lines, stopped = loop.run_until_complete(run_level(
            target, "openai", Plan(concurrency, concurrency, 0, "cold"),
            Prompts(16, 0, "gaps"), lambda x: Ask(x, tokens, model="standin-1"), LIMITS,
            None))
        cpu, wall = cpu_s() - c0, time.perf_counter() - w0
        sent = loop.run_until_complete(get_json(target, "/standin/sent"))
        loop.close()
    finally:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        stop(p)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    standin_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    ok = [x for x in lines if x.ok]
    what = f"stand-in at {gap_ms:g} ms a token, {concurrency} at once, {tokens} tokens"
    if not ok:
        verdict(f"{what}: SiliconBench's tpot / the stand-in's gap", None, GAP_TOLERANCE,
                f"no request answered ({stopped})")
        return
    ms = [per_request(x) for x in ok]
    tpot = statistics.median(m.tpot_ms for m in ms if m.tpot_ms)
    chunks = sum(m.chunks for m in ms)
    per_chunk = cpu / chunks * 1e6
    streams = (sent or {}).get("streams") or []
    real = [(s["last"] - s["first"]) / (s["n"] - 1) * 1000 for s in streams
            if s.get("n", 0) > 1 and s.get("last") and s.get("first")]
    real_tpot = statistics.median(real) if real else None
    late = max((s.get("late_max_ms", 0.0) for s in streams), default=0.0)
    standin_chunk = standin_cpu / max(1, sum(s.get("n", 0) for s in streams)) * 1e6
    gap_p50 = statistics.median(g for m in ms for g in m.gaps_ms) if any(
        m.gaps_ms for m in ms) else float("nan")
    print(f"{what}: SiliconBench's median tpot {tpot:.3f} ms, median chunk gap "
          f"{gap_p50:.3f} ms; the stand-in really sent one every "
          + (f"{real_tpot:.3f} ms (latest chunk {late:.1f} ms past its point)"
             if real_tpot else "? ms") + f"; {len(ok)} of {len(lines)} answered; "
          f"client CPU {per_chunk:.0f} µs a chunk, {cpu / wall * 100:.0f}% of one core "
          f"over {wall:.2f} s; the stand-in's CPU {standin_chunk:.0f} µs a chunk (its "
          "start included)")
    if real_tpot:
        verdict(f"{what}: SiliconBench's tpot / what the stand-in sent "
                f"({tpot:.3f}/{real_tpot:.3f} ms)", tpot / real_tpot, GAP_TOLERANCE)
    verdict(f"{what}: SiliconBench's tpot / the stand-in's nominal gap "
            f"({tpot:.3f}/{gap_ms:g} ms)", tpot / gap_ms, GAP_TOLERANCE,
            f"(the client needs {concurrency * 1000 / gap_ms * per_chunk / 1e6 * 100:.0f}% "
            "of one core at its cost a chunk)")


def scratch(prefix: str) -> str:
    """A folder of this run's, removed when the script ends."""
    import atexit
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, True)
    return path


def server(fw: str, args) -> None:
    import importlib
    import importlib.util
    need = {"mlx": ("mlx_lm",), "llamacpp": ("llama_cpp", "fastapi", "uvicorn")}[fw]
    if any(importlib.util.find_spec(m) is None for m in need):
        print(f"{fw}: not installed, left out")
        return
    from siliconbench.core.kit.serving_process import ServerProcess, free_port
    from siliconbench.core.workloads.llm import PRESETS
    if "SILICONBENCH_HOME" not in os.environ:     # the preset's files: gone at the end
        os.environ["SILICONBENCH_HOME"] = scratch("serve-fidelity-")
    part = importlib.import_module(f"siliconbench.core.frameworks.{fw}.serve")
    params = {"prompt_tokens": args.prompt_tokens, "output_tokens": args.tokens,
              "model_path": None}
    shape = PRESETS["tiny"] if args.model == "tiny" else SMALL
    model, about = part.model(shape, args.model, params, print)
    printable_answers(fw, model)
    # AIPerf's tokenizer (it makes no prompt here, the server counts the tokens): the MLX
    # folder's own, for llama.cpp's GGUF the same byte-level one written apart
    tokenizer = model
    if fw != "mlx":
        from siliconbench.core.frameworks.mlx.serve import tokenizer as write_tokenizer
        tokenizer = scratch("serve-fidelity-tokenizer-")
        write_tokenizer(shape.vocab, Path(tokenizer))
    port = free_port()
    target = Target("http", "127.0.0.1", port)
    every = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    cores = apart(args.cores)
    try:
        with ServerProcess(part.command(model, port, params, "cpu", about),
                           name=part.NAME) as s:
            if cores:       # the server (and every thread it starts) inherits its core
                os.sched_setaffinity(0, cores)
            s.wait_ready(target, part.READY_PATH, 300, part.FAILED_STATUS)
            where = "on cores of its own" if cores else "sharing every core with the clients"
            compare(f"{part.NAME}, {args.model} model, CPU, {where}", target.origin, model, args,
                    tokenizer)
    finally:        # every core again, for the next server's split
        if cores:
            os.sched_setaffinity(0, every)


# --model small: the tiny preset's vocabulary in a model wide enough that a token takes
# milliseconds on one core, as a laptop's larger models do, where the tiny preset takes half of
# one. A client's own cost a request (its connection, its HTTP library: 2-8 ms for openai's and
# AIPerf's here) and a chunk (0.07-1 ms of CPU) is then a small part of what it times, as it is
# for a user's model; on the tiny preset it is what the clients differ by. Untied, so that its output
# rows can be set apart from its input ones (printable_answers). 256 wide, so that MLX writes it
# in float32 (bfloat16 from 512: 14 tokens a second on this CPU).
SMALL = ModelShape("llama", layers=8, hidden=256, heads=4, kv_heads=2, head_dim=64, ffn=1024,
                   vocab=256, tied=False, rope_theta=10000.0, rms_eps=1e-5,
                   max_positions=4096)
PRINTABLE = {chr(c) for c in range(ord("!"), ord("~") + 1)}


def printable_answers(fw: str, model: str) -> None:
    """Random weights answer in any byte; a byte that is not whole UTF-8 gives a chunk of no
    text, or none at all, and a client counting the text's tokens (AIPerf, where the server
    reports no usage, as llama-cpp-python's does not when streaming) counts fewer tokens than
    the server made. Every output row but those of the printable ASCII characters (not the
    space, which the byte vocabulary's one merge would join) is set to zero here: greedy
    decoding then picks one of those, each token is one character of text, and every client
    counts what the server made. Where the output matrix is the input's (tied), nothing is
    changed, and the answers stay as they were."""
    if fw == "llamacpp":
        import gguf
        reader = gguf.GGUFReader(model, "r+")
        field = reader.get_field("tokenizer.ggml.tokens")
        tokens = [bytes(field.parts[i]).decode("utf-8", "replace") for i in field.data]
        out = [t for t in reader.tensors if t.name == "output.weight"]
        if out:
            rows = out[0].data            # (vocab, hidden), the file's own bytes (a memmap)
            for i, text in enumerate(tokens):
                if text not in PRINTABLE:
                    rows[i] = 0
            reader.data.flush()
        return
    import mlx.core as mx
    folder = Path(model)
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    weights = mx.load(str(folder / "model.safetensors"))
    if "lm_head.weight" in weights:
        keep = [0.0] * weights["lm_head.weight"].shape[0]
        for text, i in vocab.items():
            if text in PRINTABLE:
                keep[i] = 1.0
        head = weights["lm_head.weight"]
        weights["lm_head.weight"] = (head * mx.array(keep, dtype=head.dtype)[:, None])
        mx.save_safetensors(str(folder / "model.safetensors"), weights)


def apart(how: str) -> set[int] | None:
    """--cores apart: the server on the last core, the clients on the others. On a machine of
    few cores a client's own CPU per chunk is otherwise taken from the server it times, and
    the costlier client sees a slower server (on 2 shared cores: 4-7% between a blocking
    socket, ours and openai's on mlx_lm.server). Called before the server starts: it pins
    this process to the server's core, which the server inherits, and returns the clients'
    cores, which the caller takes back once the server is started. None where the cores stay
    shared: asked to, one core, or a system without CPU affinity (macOS)."""
    if how != "apart" or not hasattr(os, "sched_setaffinity"):   # macOS has no affinity
        return None
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        return None
    os.sched_setaffinity(0, {mine[-1]})
    return set(mine[:-1])


def main() -> None:
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--requests", type=int, default=30)
    a.add_argument("--warmup", type=int, default=2)
    a.add_argument("--tokens", type=int, default=64)
    a.add_argument("--prompt-tokens", type=int, default=64)
    a.add_argument("--gap-ms", type=float, default=1.0)
    a.add_argument("--concurrency", type=int, default=64)
    a.add_argument("--sweep", help="concurrency levels for the gaps, e.g. 1,4,16,64")
    a.add_argument("--aiperf", help="the aiperf command (a venv of its own)")
    a.add_argument("--aiperf-blocks", type=int, default=5, help="AIPerf runs in this many "
                   "blocks, each between two halves of the other sides' rounds")
    a.add_argument("--keep-aiperf", action="store_true", help="keep AIPerf's files "
                   "(inputs.json, profile_export.jsonl, logs) and say where")
    a.add_argument("--only", choices=("standin", "gaps", "mlx", "llamacpp"))
    a.add_argument("--model", choices=("tiny", "small"), default="tiny",
                   help="what the started servers load: the tiny preset (half a millisecond "
                   "a token on one core) or a small model (milliseconds a token)")
    a.add_argument("--cores", choices=("apart", "shared"), default="apart",
                   help="a started server on a core of its own, the clients on the rest "
                   "(default), or every process on every core")
    args = a.parse_args()
    if args.aiperf and not aiperf_path(args.aiperf):
        a.error(f"--aiperf {args.aiperf} is not a file")
    if args.only in (None, "standin"):
        p, url = standin(5.0)
        try:
            compare("stand-in, 5 ms a token", url, "standin-1", args)
        finally:
            stop(p)
    if args.only in (None, "gaps"):
        levels = [int(x) for x in args.sweep.split(",")] if args.sweep else \
            [args.concurrency]
        for level in levels:
            gaps(args.gap_ms, level, args.tokens)
    for fw in ("mlx", "llamacpp"):
        if args.only in (None, fw):
            server(fw, args)
    print("\nSUMMARY")
    for line in SUMMARY:
        print(line)


if __name__ == "__main__":
    main()
