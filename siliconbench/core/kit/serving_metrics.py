"""The serve workload's metrics, each named by its formula (README: "Serving metrics"),
from the Timelines of serving_apis: per request, then per level of concurrency.

Per request (times from just before the request connected):
- ttfb: the response's first byte;
- ttft: the first chunk with non-empty answer text (an empty role chunk is no token; a
  reasoning model's first thinking text is ttfr, timed apart);
- e2e: the last output chunk's arrival (a trailing usage chunk does not lengthen it);
- decode rate: (n - 1) / (t_last - t_first), n the server's count of output tokens;
- tpot: (t_last - t_first) / (n - 1), its inverse (vLLM's TPOT);
- chunk gaps: between consecutive arrivals of output (vLLM's ITL; chunks that came in one
  read of the socket arrived together: no gap between them); e2e - t_first = their sum;
- tokens per chunk: n / output chunks (the server's events with output).
Per level: requests/s and output tok/s over the level's wall time (first request sent to the
last one's end), and goodput: requests/s of those within the SLO."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from siliconbench.core.kit.serving_apis import Timeline
from siliconbench.core.params import ParamError

SLO_KEYS = ("ttft", "tpot", "e2e", "ttfb")
# A difference between the server's figure and the client's past this is flagged.
SERVER_DIFFERENCE = 0.10


def percentile(xs: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear between order statistics (numpy's default)."""
    s = sorted(xs)
    if not s:
        raise ValueError("no values")
    k = (len(s) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


@dataclass(frozen=True)
class RequestMetrics:
    """One request's figures, in milliseconds and tokens/s; None where not defined."""
    ttfb_ms: float | None
    ttft_ms: float | None
    ttfr_ms: float | None
    e2e_ms: float | None
    decode_tok_s: float | None
    tpot_ms: float | None
    gaps_ms: tuple[float, ...]
    tokens: int
    chunks: int
    tokens_per_chunk: float | None


def per_request(line: Timeline) -> RequestMetrics:
    def ms(t: float | None) -> float | None:
        return None if t is None else t * 1000
    times = line.chunk_times
    n = line.tokens or 0
    first, last = line.t_first_output, line.t_last
    rate = tpot = None
    if n >= 2 and first is not None and last is not None and last > first:
        rate = (n - 1) / (last - first)
        tpot = (last - first) / (n - 1) * 1000
    # Events that came in one read share its arrival time: they are one arrival, no gap.
    gaps = tuple((b - a) * 1000 for a, b in zip(times, times[1:], strict=False) if b > a)
    return RequestMetrics(ms(line.t_first_byte), ms(line.t_first_content),
                          ms(line.t_first_reasoning), ms(last), rate, tpot, gaps, n,
                          len(times), n / len(times) if times else None)


def parse_slo(text: str | None) -> dict[str, float]:
    """'ttft=500ms,tpot=50ms' -> {'ttft': 500.0, 'tpot': 50.0} (milliseconds); s or ms."""
    if not text or not text.strip():
        return {}
    out = {}
    for part in text.split(","):
        m = re.fullmatch(r"\s*([a-z0-9_]+)\s*=\s*([0-9]*\.?[0-9]+)\s*(ms|s)?\s*", part)
        if not m or m.group(1) not in SLO_KEYS:
            raise ParamError(f"--slo takes limits like ttft=500ms,tpot=50ms (of "
                             f"{', '.join(SLO_KEYS)}), not {part.strip()!r}.")
        value = float(m.group(2)) * (1000 if m.group(3) == "s" else 1)
        if value <= 0:
            raise ParamError(f"--slo's {m.group(1)} limit must be above zero.")
        out[m.group(1)] = value
    return out


def within(m: RequestMetrics, slo: dict[str, float]) -> bool:
    """Whether a request met every limit; a limit on a figure it lacks is not met, except
    tpot, which a single token cannot break, nor an answer whose output all arrived at once
    (one read of the socket: no gap between its chunks, so no tpot to measure)."""
    for key, limit in slo.items():
        value = getattr(m, f"{key}_ms")
        if value is None:
            if key == "tpot" and (m.tokens == 1 or (m.chunks and not m.gaps_ms)):
                continue
            return False
        if value > limit:
            return False
    return True


@dataclass
class Level:
    """One level's requests (warm-up left out) and their summaries."""
    lines: list[Timeline]
    wall_s: float
    asked_tokens: int

    @property
    def ok(self) -> list[Timeline]:
        return [x for x in self.lines if x.ok]

    @property
    def failed(self) -> list[Timeline]:
        return [x for x in self.lines if not x.ok]

    def metrics(self) -> list[RequestMetrics]:
        return [per_request(x) for x in self.ok]

    def early_stops(self) -> list[Timeline]:
        """Answers that ended before the asked length (by the server's count)."""
        return [x for x in self.ok if x.tokens is not None and x.tokens < self.asked_tokens]

    def requests_per_s(self) -> float | None:
        return len(self.ok) / self.wall_s if self.wall_s > 0 and self.ok else None

    def output_tok_s(self) -> float | None:
        total = sum(x.tokens or 0 for x in self.ok)
        return total / self.wall_s if self.wall_s > 0 and total else None

    def goodput(self, slo: dict[str, float]) -> float | None:
        if not slo or self.wall_s <= 0:
            return None
        return sum(within(m, slo) for m in self.metrics()) / self.wall_s


def level_wall(lines: list[Timeline]) -> float:
    """The level's wall time: the first request's start to the last one's end."""
    if not lines:
        return 0.0
    start = min(x.start for x in lines)
    ends = [x.start + (x.t_done if x.t_done is not None else (x.t_last or 0.0))
            for x in lines]
    return max(ends) - start


def failure_reasons(lines: list[Timeline]) -> dict[str, int]:
    """Each reason a request failed, with how many failed for it."""
    out: dict[str, int] = {}
    for x in lines:
        if not x.ok:
            out[x.reason or "unknown"] = out.get(x.reason or "unknown", 0) + 1
    return out


def server_differences(lines: list[Timeline]) -> list[str]:
    """Where the server's own figure and the client's differ by more than
    SERVER_DIFFERENCE (medians over the requests), one sentence each."""
    out = []
    pairs = []
    for x in lines:
        if not x.ok:
            continue
        m = per_request(x)
        if "decode_tok_s" in x.server and m.decode_tok_s:
            pairs.append(("decode tok/s", x.server["decode_tok_s"], m.decode_tok_s))
        if "ttft_ms" in x.server and m.ttft_ms:
            pairs.append(("time to first token (ms)", x.server["ttft_ms"], m.ttft_ms))
    for name in sorted({p[0] for p in pairs}):
        server = percentile([p[1] for p in pairs if p[0] == name], 50)
        client = percentile([p[2] for p in pairs if p[0] == name], 50)
        if client > 0 and abs(server / client - 1) > SERVER_DIFFERENCE:
            out.append(f"the server's own {name}, median {server:.4g}, differs from the "
                       f"client's {client:.4g} by {abs(server / client - 1):.0%}")
    return out
