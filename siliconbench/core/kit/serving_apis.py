"""The serving APIs the serve workload speaks, and one streamed request through them: the
OpenAI-compatible one (/v1/chat/completions, /v1/completions: llama-server, mlx_lm.server,
vLLM, LM Studio, Ollama's /v1), Ollama's own (/api/generate, /api/chat: NDJSON, durations in
nanoseconds) and LM Studio's (/api/v0: OpenAI's shape with `stats`). Each request becomes a
Timeline: when each piece of output arrived, the server's counts and its own figures, and
why it failed if it did. The metrics made of it are serving_metrics'."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from siliconbench.core.kit.serving_http import (
    Limits,
    Response,
    ServerFault,
    Target,
    exchange,
    fetch,
)

APIS = ("openai", "ollama", "lmstudio")
# Where each API's paths start, as `--url` may give them (detection tries them in turn).
PREFIXES = {"openai": "/v1", "ollama": "/api", "lmstudio": "/api/v0"}
# An event (an SSE block or an NDJSON line) longer than this is not one a server sends.
MAX_EVENT_BYTES = 1 * 2**20
# What a request's record keeps of its chunks' arrival times (the rest are counted).
KEPT_CHUNKS = 2048


@dataclass
class Timeline:
    """One request as it went: times in seconds from just before it connected."""
    start: float = 0.0                   # perf_counter at t=0, to place it in its level
    ok: bool = False
    reason: str | None = None            # why it failed
    status: int | None = None
    t_first_byte: float | None = None    # the response's first byte
    t_first_content: float | None = None    # first non-empty answer text
    t_first_reasoning: float | None = None  # first non-empty thinking text
    t_done: float | None = None          # the stream's end (after any usage chunk)
    chunk_times: list[float] = field(default_factory=list)   # pieces with output, in order
    reasoning_chunks: int = 0
    tokens: int | None = None            # output tokens as the server counted them
    tokens_from: str = ""                # usage | server counters | chunks
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    finish: str | None = None            # stop | length | ...
    server: dict[str, float] = field(default_factory=dict)   # the server's own figures
    model: str | None = None

    @property
    def t_first_output(self) -> float | None:
        return self.chunk_times[0] if self.chunk_times else None

    @property
    def t_last(self) -> float | None:
        """The last output's arrival: the end-to-end latency (a usage chunk after it, or the
        stream's closing, does not lengthen it)."""
        return self.chunk_times[-1] if self.chunk_times else None

    def to_dict(self) -> dict:
        kept = [round(t, 6) for t in self.chunk_times[:KEPT_CHUNKS]]
        return {"ok": self.ok, "reason": self.reason, "status": self.status,
                "t_first_byte": self.t_first_byte, "t_first_content": self.t_first_content,
                "t_first_reasoning": self.t_first_reasoning, "t_done": self.t_done,
                "chunks": kept, "chunks_left_out": len(self.chunk_times) - len(kept),
                "reasoning_chunks": self.reasoning_chunks, "tokens": self.tokens,
                "tokens_from": self.tokens_from, "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens, "finish": self.finish,
                "server": self.server}


@dataclass(frozen=True)
class Ask:
    """What one request asks for: the prompt, the answer's length and how it is forced."""
    prompt: str
    max_tokens: int
    force: bool = True            # ignore_eos and min_tokens (OpenAI), num_predict (Ollama)
    endpoint: str = "chat"        # chat | completions
    model: str = ""


def request_body(api: str, ask: Ask) -> tuple[str, dict]:
    """(path under the API's prefix, JSON body) of one streamed request."""
    if api == "ollama":
        options: dict[str, Any] = {"num_predict": ask.max_tokens, "temperature": 0}
        body: dict[str, Any] = {"model": ask.model, "stream": True, "options": options}
        if ask.endpoint == "chat":
            body["messages"] = [{"role": "user", "content": ask.prompt}]
            return "/chat", body
        body["prompt"] = ask.prompt
        body["raw"] = True            # the prompt as it is: no template around it
        return "/generate", body
    body = {"model": ask.model, "stream": True, "max_tokens": ask.max_tokens,
            "temperature": 0}
    if api == "openai":               # LM Studio's /api/v0 has its stats instead
        body["stream_options"] = {"include_usage": True}
    if ask.force:
        body.update(ignore_eos=True, min_tokens=ask.max_tokens)
    if ask.endpoint == "chat":
        body["messages"] = [{"role": "user", "content": ask.prompt}]
        return "/chat/completions", body
    body["prompt"] = ask.prompt
    return "/completions", body


class Events:
    """Splits a body into events as the bytes arrive: SSE blocks (their `data:` lines
    joined) or NDJSON lines. Each event carries the arrival time of the bytes that ended it."""

    def __init__(self, ndjson: bool) -> None:
        self.ndjson = ndjson
        self.buffer = b""

    def feed(self, t: float, data: bytes) -> list[tuple[float, str | None, str]]:
        """[(t, SSE event name or None, payload)]; ServerFault on an event past the bound."""
        self.buffer += data
        out = []
        sep = b"\n" if self.ndjson else None
        while True:
            if sep is not None:
                i, n = self.buffer.find(sep), 1
            else:
                i, n = _block_end(self.buffer)
            if i < 0:
                break
            raw, self.buffer = self.buffer[:i], self.buffer[i + n:]
            event = self._event(raw)
            if event is not None:
                out.append((t, *event))
        if len(self.buffer) > MAX_EVENT_BYTES:
            raise ServerFault(f"an event of the stream passed {MAX_EVENT_BYTES:,} bytes")
        return out

    def _event(self, raw: bytes) -> tuple[str | None, str] | None:
        if raw.startswith(b"data: ") and b"\n" not in raw and b"\r" not in raw \
                and not self.ndjson:
            return None, raw[6:].decode("utf-8", errors="replace")   # the usual event
        text = raw.decode("utf-8", errors="replace")
        if self.ndjson:
            return (None, text) if text.strip() else None
        name, data = None, []
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            if line.startswith(":"):
                continue                      # an SSE comment (a keep-alive)
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "data":
                data.append(value)
            elif key == "event":
                name = value.strip()
        return (name, "\n".join(data)) if data or name else None

    def rest(self) -> str:
        return self.buffer.decode("utf-8", errors="replace").strip()


def _block_end(buf: bytes) -> tuple[int, int]:
    if b"\r" not in buf:                # the usual stream: blocks end in a blank line
        return buf.find(b"\n\n"), 2
    ends = [(i, len(s)) for s in (b"\r\n\r\n", b"\n\n", b"\r\r") if (i := buf.find(s)) >= 0]
    return min(ends) if ends else (-1, 0)


class Tracker:
    """Reads one request's events into its Timeline."""

    def __init__(self, api: str, line: Timeline) -> None:
        self.api, self.line, self.ended = api, line, False

    def event(self, t: float, name: str | None, payload: str) -> None:
        """One event; ServerFault where the server says the request failed."""
        line = self.line
        if payload.strip() == "[DONE]":
            self.ended = True
            return
        try:
            obj = json.loads(payload)
        except ValueError:
            raise ServerFault(f"the stream held an event that is not JSON: "
                              f"{_clipped(payload)!r}") from None
        if not isinstance(obj, dict):
            raise ServerFault(f"the stream held an event that is not a JSON object: "
                              f"{_clipped(payload)!r}")
        if name == "error" or "error" in obj:
            err = obj.get("error", obj)
            text = err.get("message") if isinstance(err, dict) else err
            raise ServerFault(f"the server sent an error inside its answer: "
                              f"{_clipped(str(text))}")
        line.model = line.model or obj.get("model")
        if self.api == "ollama":
            self._ollama(t, obj)
        else:
            self._openai(t, obj)

    def _output(self, t: float, content: Any, reasoning: Any) -> None:
        line = self.line
        has_content = isinstance(content, str) and content != ""
        has_reasoning = isinstance(reasoning, str) and reasoning != ""
        if not (has_content or has_reasoning):
            return                      # a role chunk, an empty delta: no token
        line.chunk_times.append(t)
        if has_content and line.t_first_content is None:
            line.t_first_content = t
        if has_reasoning:
            line.reasoning_chunks += 1
            if line.t_first_reasoning is None:
                line.t_first_reasoning = t

    def _openai(self, t: float, obj: dict) -> None:
        line = self.line
        for choice in obj.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
            content = delta.get("content", choice.get("text"))
            reasoning = delta.get("reasoning_content", delta.get("reasoning"))
            self._output(t, content, reasoning)
            if choice.get("finish_reason"):
                line.finish = str(choice["finish_reason"])
        usage = obj.get("usage")
        if isinstance(usage, dict):
            if _count(usage.get("completion_tokens")) is not None:
                line.tokens, line.tokens_from = _count(usage["completion_tokens"]), "usage"
            line.prompt_tokens = _count(usage.get("prompt_tokens"))
            details = usage.get("prompt_tokens_details")
            if isinstance(details, dict) and _count(details.get("cached_tokens")) is not None:
                line.cached_tokens = _count(details["cached_tokens"])
        timings = obj.get("timings")          # llama-server's (llama.cpp's tools/server)
        if isinstance(timings, dict):
            _put(line.server, "decode_tok_s", timings.get("predicted_per_second"))
            _put(line.server, "prompt_ms", timings.get("prompt_ms"))
            _put(line.server, "tokens", timings.get("predicted_n"))
            _put(line.server, "cached_tokens", timings.get("cache_n"))
            line.server["from"] = "timings"
            if line.cached_tokens is None and _count(timings.get("cache_n")) is not None:
                line.cached_tokens = _count(timings["cache_n"])
        stats = obj.get("stats")              # LM Studio's /api/v0
        if isinstance(stats, dict):
            _put(line.server, "decode_tok_s", stats.get("tokens_per_second"))
            ttft = stats.get("time_to_first_token")
            if _number(ttft) is not None:
                line.server["ttft_ms"] = float(ttft) * 1000
            line.server["from"] = "stats"
            if stats.get("stop_reason"):
                line.finish = line.finish or str(stats["stop_reason"])

    def _ollama(self, t: float, obj: dict) -> None:
        line = self.line
        message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
        content = obj.get("response", message.get("content"))
        reasoning = obj.get("thinking", message.get("thinking"))
        self._output(t, content, reasoning)
        if obj.get("done") is True:
            self.ended = True
            line.finish = obj.get("done_reason") or line.finish
            n = _count(obj.get("eval_count"))
            if n is not None:
                line.tokens, line.tokens_from = n, "server counters"
            line.prompt_tokens = _count(obj.get("prompt_eval_count"))
            cached = _count(obj.get("prompt_eval_cached_count"))
            if cached is not None:
                line.cached_tokens = cached
            eval_ns = _number(obj.get("eval_duration"))
            if n and eval_ns:
                line.server["decode_tok_s"] = n / (eval_ns / 1e9)
            for key in ("total_duration", "load_duration", "prompt_eval_duration",
                        "eval_duration"):
                if _number(obj.get(key)) is not None:
                    line.server[key.replace("duration", "ms")] = float(obj[key]) / 1e6
            line.server["from"] = "durations"


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _number(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and v >= 0:
        return float(v)
    return None


def _put(d: dict, key: str, v: Any) -> None:
    if _number(v) is not None:
        d[key] = float(v)


def _clipped(text: str, limit: int = 160) -> str:
    from siliconbench.core.text import without_controls
    text = without_controls(text, keep="")
    return text if len(text) <= limit else text[:limit] + "…"


def redacted(text: str, secret: str | None) -> str:
    """`text` with the API key taken out (a server's 401 may quote the key it refused)."""
    if secret:
        for part in {secret, secret[:12], secret[-12:]}:
            if len(part) >= 6:
                text = text.replace(part, "***")
    return text


def auth_headers(api_key: str | None) -> list[tuple[str, str]]:
    return [("Authorization", f"Bearer {api_key}")] if api_key else []


async def one_request(target: Target, api: str, ask: Ask, limits: Limits,
                      api_key: str | None = None) -> Timeline:
    """One streamed request, measured; never raises for the server's faults: the Timeline
    says what failed, with everything that arrived before it."""
    path, body = request_body(api, ask)
    headers = [("Content-Type", "application/json"),
               ("Accept", "application/x-ndjson" if api == "ollama" else "text/event-stream")]
    response = Response(t0=time.perf_counter())
    line = Timeline(start=response.t0)
    tracker = Tracker(api, line)
    events = Events(ndjson=api == "ollama")
    error_body = bytearray()

    def on_data(t: float, data: bytes) -> None:
        # In the event loop's callback for the bytes' arrival: parse them at once (a
        # ServerFault raised here ends the request).
        if response.status != 200:
            error_body.extend(data[: 4096 - len(error_body)])
            return
        for ev in events.feed(t, data):
            tracker.event(*ev)
    try:
        await exchange(target, "POST", PREFIXES[api] + path, json.dumps(body).encode(),
                       headers + auth_headers(api_key), limits, response, on_data)
        line.status = response.status
        if response.status != 200:
            raise ServerFault(_status_reason(response.status, bytes(error_body)))
        if (rest := events.rest()) and api == "ollama":
            tracker.event(response.t_end or 0.0, None, rest)
        elif rest:
            raise ServerFault(f"the stream ended inside an event: {_clipped(rest)!r}")
        if not line.chunk_times:
            raise ServerFault("the answer held no output")
        line.ok = True
    except ServerFault as e:
        line.reason = redacted(str(e), api_key)
    line.start = response.t0
    line.status = response.status
    line.t_first_byte = response.t_first_byte
    line.t_done = response.t_end
    if line.tokens is None and line.chunk_times:
        line.tokens, line.tokens_from = len(line.chunk_times), "chunks"
    return line


def _status_reason(status: int | None, body: bytes) -> str:
    said = ""
    try:
        obj = json.loads(body)
        err = obj.get("error", obj) if isinstance(obj, dict) else obj
        said = err.get("message", "") if isinstance(err, dict) else str(err)
    except ValueError:
        said = body.decode("utf-8", errors="replace")
    words = {429: "too many requests", 500: "server error", 502: "bad gateway",
             503: "unavailable", 504: "gateway timeout", 401: "unauthorised",
             403: "forbidden", 404: "not found", 400: "bad request", 422: "unprocessable"}
    head = f"the server answered HTTP {status}"
    if status in words:
        head += f" ({words[status]})"
    return f"{head}: {_clipped(said)}" if said.strip() else head


async def get_json(target: Target, path: str, api_key: str | None = None) -> Any:
    """GET a small JSON answer; None where there is none (not found, not JSON, no server)."""
    try:
        response, body = await fetch(target, "GET", path, headers=auth_headers(api_key))
    except ServerFault:
        return None
    if response.status != 200:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None
