"""The serve workload's sweep, once its server answers: the model chosen, the record told
what was asked of whom, a first request that finds whether the server takes the forced
length, then each cache mode and level of concurrency measured and turned into rows.

Rows, at each point {concurrency, cache, prompt_tokens, output_tokens} (formulas:
serving_metrics): output_tok_s (the headline), requests_per_s, goodput_req_s (with --slo);
per request, a median with its spread and every request's value as samples: ttfb_ms,
ttft_ms, ttfr_ms (reasoning models), tpot_ms, e2e_ms, decode_tok_s (per user), chunk_gap_ms,
tokens_per_chunk; their p90 and p99 (ttft_p90_ms, decode_p99_tok_s, ...), chunk_gap_max_ms;
and the server's own figures where it gives them (server_decode_tok_s, server_ttft_ms)."""

from __future__ import annotations

import asyncio
import secrets

from siliconbench.core.kit.serving_apis import Ask, Timeline, one_request
from siliconbench.core.kit.serving_http import Limits, Target
from siliconbench.core.kit.serving_load import (
    Plan,
    Prompts,
    Server,
    choose_model,
    prime,
    run_level,
)
from siliconbench.core.kit.serving_metrics import (
    Level,
    failure_reasons,
    level_wall,
    parse_slo,
    percentile,
    server_differences,
)
from siliconbench.core.results import Row
from siliconbench.core.stats import summarize

# What the record keeps of the requests' chunk times, in all (each request: KEPT_CHUNKS).
KEPT_REQUESTS = 1024
KEPT_TIMES = 50_000
WARNINGS = 60
FIRST_STALL_S = 300.0       # the first request's wait for a model the server loads then
MAX_SAMPLES = 20_000        # a row's samples (chunk gaps of every request): evenly thinned


class RunFailed(RuntimeError):
    """The server answered no request: the message says why."""


# The known traps of Ollama's own figures, said on the rows they touch.
OLLAMA_ONE_TOKEN = ("Ollama counted one token or none in {n} of {of} answers: its eval rate "
                    "from such an answer means nothing")
OLLAMA_CACHED = ("Ollama gave no prompt count (prompt_eval_count) for {n} of {of} answers: "
                 "it leaves it out when the prompt came from its cache, so its prompt "
                 "figures there are not a prefill")

def thinned(xs: list[float], limit: int = MAX_SAMPLES) -> list[float]:
    if len(xs) <= limit:
        return list(xs)
    step = len(xs) / limit
    return [xs[int(i * step)] for i in range(limit)]


class Sweep:
    def __init__(self, ctx, params: dict, target: Target, server: Server,
                 api_key: str | None, started: dict | None, shown: str | None = None
                 ) -> None:
        self.ctx, self.p, self.target, self.server = ctx, params, target, server
        self.key, self.started = api_key, started
        self.shown = shown           # the model's name in the record, where not its path
        self.slo = parse_slo(params.get("slo"))
        self.limits = Limits(stall_s=params["stall_s"], stream_s=params["request_s"])
        self.force = bool(params["force_length"])
        self.kept: list[dict] = []
        self.kept_times = 0
        self.model = ""
        self.warned: set[str] = set()

    def warn(self, text: str) -> None:
        """Each sentence once, and at most WARNINGS in all (a record keeps 100)."""
        if text not in self.warned and len(self.warned) < WARNINGS:
            self.warned.add(text)
            self.ctx.warn(text)

    def ask(self, prompt: str) -> Ask:
        return Ask(prompt, self.p["output_tokens"], self.force, self.p["endpoint"], self.model)

    def request(self, prompt: str, limits: Limits | None = None) -> Timeline:
        return asyncio.run(one_request(self.target, self.server.api, self.ask(prompt),
                                       limits or self.limits, self.key))

    def run(self) -> None:
        ctx, p, server = self.ctx, self.p, self.server
        self.model = choose_model(server, p.get("model"))
        shown = self.shown or self.model
        name = server.name or {"openai": "OpenAI-compatible server", "ollama": "Ollama",
                               "lmstudio": "LM Studio"}[server.api]
        software = dict(self.started or {})
        if server.version:
            software["server_version"] = server.version
        settings = {"api": server.api, "server": name, "model": shown,
                    "remote": self.target.remote, "address": self.target.origin,
                    "slo": ",".join(f"{k}={v:g}ms" for k, v in self.slo.items()) or None,
                    "started_by_siliconbench": self.started is not None}
        started = {"event": "started", "device_name": f"{name} · {shown}"[:200],
                   "software": software, "settings": settings}
        if self.started is None:        # --url: the server measured, not --framework's
            started["framework"] = name
        ctx.pass_on(started, set())
        if self.target.remote:
            self.warn(f"The requests went to another host ({self.target.host}, allowed by "
                     "--allow-remote): the times include its network.")
        prompts = Prompts(p["prompt_tokens"], p["seed"], secrets.token_hex(4))
        self.first(prompts)
        caches = ["cold", "warm"] if p["cache"] == "both" else [p["cache"]]
        levels = p["concurrency"]
        total, done, measured = len(caches) * len(levels), 0, 0
        for cache in caches:
            if cache == "warm":
                self.primed(prompts)
            for c in levels:
                ctx.progress(done, total, f"{cache} cache, {c} at once")
                plan = Plan(c, p["requests"] or max(8, 4 * c),
                            c if p["warmup"] is None else p["warmup"], cache,
                            p.get("rate"), p["seed"])
                lines, stopped = asyncio.run(run_level(
                    self.target, server.api, plan, prompts, self.ask, self.limits, self.key))
                done += 1
                if stopped:
                    self.warn(f"The level of {c} at once ({cache} cache) {stopped}.")
                level = Level(lines, level_wall(lines), p["output_tokens"])
                for row in self.rows(level, c, cache):
                    ctx.row(row)
                measured += len(level.ok)
                self.keep(lines, c, cache)
        ctx.record_settings(serve_requests=self.kept)
        ctx.progress(total, total, "done")
        if not measured:
            raise RunFailed("the server answered none of the measured requests; see the "
                            "warnings and settings.serve_requests for each one's reason")

    def first(self, prompts: Prompts) -> None:
        """One request before any level: a server that refuses the forced length (HTTP 400
        or 422) is asked again without it, and said; one that fails otherwise ends the run
        with its reason now, not after every level's requests."""
        # A server that loads its model at its first request (mlx_lm.server, Ollama) is
        # silent meanwhile: the first request may wait FIRST_STALL_S for it.
        first = Limits(max(self.limits.stall_s, FIRST_STALL_S),
                       max(self.limits.stream_s, FIRST_STALL_S), self.limits.max_body)
        line = self.request(prompts.cold(), first)
        if not line.ok and self.force and line.status in (400, 422):
            self.force = False
            self.warn(f"The server refused the forced answer length ({line.reason}); "
                          "answers may stop before --output-tokens.")
            self.ctx.record_settings(forced_length=False)
            line = self.request(prompts.cold(), first)
        if not line.ok:
            raise RunFailed(f"the first request failed: {line.reason}")
        self.ctx.record_settings(forced_length=self.force)

    def primed(self, prompts: Prompts) -> None:
        line = asyncio.run(prime(self.target, self.server.api, prompts, self.ask,
                                 self.limits, self.key))
        if not line.ok:
            self.warn(f"Priming the warm cache's shared prefix failed: {line.reason}.")
        self.keep([line], 0, "primer")

    def keep(self, lines: list[Timeline], c: int, cache: str) -> None:
        for x in lines:
            if len(self.kept) >= KEPT_REQUESTS or self.kept_times >= KEPT_TIMES:
                return
            d = x.to_dict()
            d["chunks"] = d["chunks"][:KEPT_TIMES - self.kept_times]
            self.kept_times += len(d["chunks"])
            self.kept.append({"concurrency": c, "cache": cache, **d})

    def rows(self, level: Level, c: int, cache: str) -> list[Row]:
        p = self.p
        point = {"concurrency": c, "cache": cache, "prompt_tokens": p["prompt_tokens"],
                 "output_tokens": p["output_tokens"]}
        if p.get("rate"):
            point["rate"] = p["rate"]        # Poisson arrivals: an open loop, capped at c
        failed = failure_reasons(level.lines)
        said = "; ".join(f"{n} failed: {why}" for why, n in failed.items())
        counts = f"{len(level.ok)} of {len(level.lines)} requests answered" + \
            (f" ({said})" if said else "")
        early = level.early_stops()
        if early:
            counts += (f"; {len(early)} stopped before {p['output_tokens']} tokens "
                       f"({'the server ignored the forced length' if self.force else 'length not forced'})")
            self.warn(f"At {c} at once ({cache} cache), {len(early)} of {len(level.ok)} "
                          f"answers stopped before {p['output_tokens']} tokens.")
        if not level.ok:
            return [Row("output_tok_s", None, "tok/s", point, note=f"nothing measured: "
                        f"{counts}")]
        ms = level.metrics()
        sources = {x.tokens_from for x in level.ok}
        rows = [Row("output_tok_s", level.output_tok_s(), "tok/s", point,
                    note=f"output tokens of answered requests / the level's "
                         f"{level.wall_s:.3g} s; {counts}; tokens from "
                         f"{', '.join(sorted(sources))}"),
                Row("requests_per_s", level.requests_per_s(), "req/s", point, note=counts)]
        if self.slo:
            rows.append(Row("goodput_req_s", level.goodput(self.slo), "req/s", point,
                            note="requests within " + ", ".join(
                                f"{k} <= {v:g} ms" for k, v in self.slo.items())))
        cached = [x.cached_tokens for x in level.ok if x.cached_tokens is not None]
        ttft_note = "first non-empty answer text"
        if cached:
            ttft_note += f"; cached prompt tokens (server's count): median " \
                         f"{percentile(cached, 50):g}"
        if self.server.api == "ollama" and (
                uncounted := sum(x.prompt_tokens is None for x in level.ok)):
            ttft_note += f"; {OLLAMA_CACHED.format(n=uncounted, of=len(level.ok))}"
        per = [("ttfb_ms", "ms", [m.ttfb_ms for m in ms], "the response's first byte"),
               ("ttft_ms", "ms", [m.ttft_ms for m in ms], ttft_note),
               ("ttfr_ms", "ms", [m.ttfr_ms for m in ms], "first non-empty reasoning text"),
               ("tpot_ms", "ms", [m.tpot_ms for m in ms],
                "(t_last - t_first) / (n - 1), n the server's count"),
               ("e2e_ms", "ms", [m.e2e_ms for m in ms], "the last output chunk's arrival"),
               ("decode_tok_s", "tok/s", [m.decode_tok_s for m in ms],
                "per user: (n - 1) / (t_last - t_first)"),
               ("tokens_per_chunk", "tok", [m.tokens_per_chunk for m in ms],
                "n / output chunks")]
        for metric, unit, values, note in per:
            rows += self.spread_rows(metric, unit, [v for v in values if v is not None],
                                     point, note)
        gaps = [g for m in ms for g in m.gaps_ms]
        rows += self.spread_rows("chunk_gap_ms", "ms", gaps, point,
                                 "between consecutive output chunks", with_max=True)
        rows += self.server_rows(level, point)
        return rows

    def spread_rows(self, metric: str, unit: str, values: list[float], point: dict,
                    note: str, with_max: bool = False) -> list[Row]:
        if not values:
            return []
        stem = metric.removesuffix("_ms").removesuffix("_tok_s")
        out = [Row(metric, percentile(values, 50), unit, point, summarize(values), [], note,
                   None, thinned(values))]
        if unit not in ("ms", "tok/s"):
            return out
        suffix = "_ms" if unit == "ms" else "_tok_s"
        for q in (90, 99):
            out.append(Row(f"{stem}_p{q}{suffix}", percentile(values, q), unit, point,
                           note=f"{q}th percentile of {len(values)}"))
        if with_max:
            out.append(Row(f"{stem}_max{suffix}", max(values), unit, point,
                           note=f"the longest of {len(values)}"))
        return out

    def server_rows(self, level: Level, point: dict) -> list[Row]:
        out = []
        differ = server_differences(level.lines)
        for key, metric, unit in (("decode_tok_s", "server_decode_tok_s", "tok/s"),
                                  ("ttft_ms", "server_ttft_ms", "ms")):
            values = [x.server[key] for x in level.ok if key in x.server]
            if values:
                source = next(x.server.get("from") for x in level.ok if key in x.server)
                words = [d for d in differ if ("decode" in d) == (key == "decode_tok_s")]
                note = f"the server's own figure (its {source})"
                if words:
                    note += "; " + words[0]
                if key == "decode_tok_s" and self.server.api == "ollama" and (
                        short := sum((x.tokens or 0) <= 1 for x in level.ok)):
                    note += f"; {OLLAMA_ONE_TOKEN.format(n=short, of=len(level.ok))}"
                out.append(Row(metric, percentile(values, 50), unit, point,
                               summarize(values), [], note, None, thinned(values)))
        for d in differ:
            self.warn(f"At {point['concurrency']} at once ({point['cache']} cache), {d}.")
        n = len(level.ok)
        if self.server.api == "ollama" and (k := sum((x.tokens or 0) <= 1 for x in level.ok)):
            self.warn(f"At {point['concurrency']} at once ({point['cache']} cache), "
                      f"{OLLAMA_ONE_TOKEN.format(n=k, of=n)}.")
        if self.server.api == "ollama" and (k := sum(x.prompt_tokens is None
                                                     for x in level.ok)):
            self.warn(f"At {point['concurrency']} at once ({point['cache']} cache), "
                      f"{OLLAMA_CACHED.format(n=k, of=n)}.")
        return out
