"""A stand-in LLM server for the serve workload's tests: asyncio, on 127.0.0.1, speaking the
OpenAI-compatible API (/v1), Ollama's (/api: NDJSON, durations in nanoseconds) and LM
Studio's (/api/v0: OpenAI's shape with `stats`), as their documentation gives them.

Each output chunk k of a stream is sent at a fixed time point from the stream's start,
start + ttft_s + k * gap_s (sleeping until that point, never a fixed sleep between chunks,
which drifts on a busy machine), so a test knows what a client should measure. Faults on
request: an HTTP status, death or a stall mid-stream, malformed SSE, an error event inside a
200 stream, an endless body, a drip of bytes that never ends.

Run it by hand: python tests/helpers/serving_standin.py [--port N] [--gap-ms G]"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field


@dataclass
class Behaviour:
    ttft_s: float = 0.02           # the first output chunk's time from the stream's start
    gap_s: float = 0.005           # between output chunks
    tokens_per_chunk: int = 1
    role_chunk_s: float | None = 0.001   # an empty role chunk first (OpenAI chat), at this time
    usage_delay_s: float = 0.0     # the usage chunk this long after the last token
    reasoning_chunks: int = 0      # thinking chunks before the answer's
    stop_after: int | None = None  # an answer that ends early (finish_reason "stop")
    fault: str | None = None       # status | die | stall | malformed | error_event | huge | drip
    fault_after: int = 2           # output chunks sent before the fault
    status: int = 500
    report_usage: bool = True
    server_rate: float | None = None     # the server's own decode tok/s it reports
    refuse_force: bool = False     # 400 for ignore_eos / min_tokens (OpenAI's own API does)
    quote_auth: bool = False       # a 401 that quotes the key it got
    http10: bool = False           # HTTP/1.0, bodies ended by closing (mlx_lm.server's way)
    prompt_cached: bool = False    # Ollama: no prompt_eval_count, as when its cache held it
    requests: list[dict] = field(default_factory=list)   # the bodies received
    # Each stream's output chunks as they were written: loop.time() of the first and last,
    # their count and the latest one's lateness past its time point (a busy stand-in
    # drifts: the fidelity script tells that apart from the client's own cost).
    sent: list[dict] = field(default_factory=list)
    models: list = field(default_factory=lambda: list(MODELS))  # what the lists say


MODELS = ["standin-1", "standin-2"]


class StandIn:
    """start() -> port; stop(). The loop runs in a thread of its own."""

    def __init__(self, behaviour: Behaviour | None = None) -> None:
        self.b = behaviour or Behaviour()
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="standin")
        self._server = None
        self._tasks: set = set()

    def __enter__(self) -> StandIn:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> int:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the stand-in server did not start")
        return self.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def serve() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
        self.loop.run_until_complete(serve())
        self.loop.run_forever()

    def stop(self) -> None:
        async def close() -> None:
            self._server.close()
            for t in list(self._tasks):
                t.cancel()
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)

    async def _handle(self, reader, writer) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.lower(): v.strip() for k, _, v in
                       (x.partition(":") for x in lines[1:] if x)}
            body = b""
            if int(headers.get("content-length", 0)):
                body = await reader.readexactly(int(headers["content-length"]))
            await self._route(method, path, headers, body, writer)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            try:
                writer.close()
            except RuntimeError:
                pass

    async def _route(self, method, path, headers, body, writer) -> None:
        if method == "GET":
            answers = {
                "/v1/models": {"object": "list", "data": [{"id": m, "object": "model"}
                                                          for m in self.b.models]},
                "/api/tags": {"models": [{"name": m, "model": m} for m in self.b.models]},
                "/api/version": {"version": "0.0.0-standin"},
                "/api/v0/models": {"object": "list",
                                   "data": [{"id": m, "object": "model", "type": "llm",
                                             "state": "loaded"} for m in self.b.models]},
                "/health": {"status": "ok"},
                "/standin/sent": {"streams": self.b.sent},
            }
            if path in answers:
                return await self._whole(writer, 200, answers[path])
            return await self._whole(writer, 404, {"error": "not found"})
        request = json.loads(body or b"{}")
        request["_path"] = path
        request["_auth"] = headers.get("authorization")
        self.b.requests.append(request)
        if self.b.quote_auth:
            return await self._whole(writer, 401, {"error": {
                "message": f"Incorrect API key provided: {headers.get('authorization')}"}})
        if self.b.refuse_force and ("ignore_eos" in request or "min_tokens" in request):
            return await self._whole(writer, 400, {"error": {
                "message": "Unrecognized request argument supplied: ignore_eos"}})
        if self.b.fault == "status":
            return await self._whole(writer, self.b.status,
                                     {"error": {"message": "the stand-in was told to fail"}})
        if path in ("/api/generate", "/api/chat"):
            return await self._stream(writer, request, "ollama", chat=path.endswith("chat"))
        if path in ("/v1/chat/completions", "/v1/completions", "/api/v0/chat/completions",
                    "/api/v0/completions"):
            api = "lmstudio" if path.startswith("/api/v0") else "openai"
            return await self._stream(writer, request, api, chat="chat" in path)
        return await self._whole(writer, 404, {"error": "not found"})

    async def _whole(self, writer, status: int, obj) -> None:
        data = json.dumps(obj).encode()
        if self.b.http10:
            writer.write(f"HTTP/1.0 {status} X\r\nContent-Type: application/json\r\n"
                         "Server: standin/1.0\r\n\r\n".encode() + data)
            await writer.drain()
            return
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                     f"Server: standin/1.0\r\nContent-Length: {len(data)}\r\n"
                     f"Connection: close\r\n\r\n".encode() + data)
        await writer.drain()

    async def _stream(self, writer, request: dict, api: str, chat: bool) -> None:
        b = self.b
        loop = asyncio.get_running_loop()
        start = loop.time()
        ndjson = api == "ollama"
        kind = "application/x-ndjson" if ndjson else "text/event-stream"
        if b.http10:
            writer.write(f"HTTP/1.0 200 OK\r\nContent-Type: {kind}\r\n\r\n".encode())
        else:
            writer.write(f"HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\n"
                         "Server: standin/1.0\r\nTransfer-Encoding: chunked\r\n\r\n".encode())

        async def until(at: float) -> None:
            await asyncio.sleep(max(0.0, start + at - loop.time()))

        async def send(payload: bytes, at: float | None = None) -> None:
            if at is not None:
                await until(at)
            if b.http10:
                writer.write(payload)     # an empty payload ends nothing: closing does
            else:
                writer.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
            if writer.transport.get_write_buffer_size() > 65536:
                await writer.drain()      # a client that reads slowly holds the stand-in
            elif writer.transport.is_closing():
                raise ConnectionError("the client went")

        def event(obj) -> bytes:
            text = json.dumps(obj)
            return (text + "\n").encode() if ndjson else f"data: {text}\n\n".encode()

        if ndjson:
            wanted = (request.get("options") or {}).get("num_predict", 16)
        else:
            wanted = request.get("max_tokens", 16)
        if b.stop_after is not None:
            wanted = min(wanted, b.stop_after)
        chunks = -(-wanted // b.tokens_per_chunk)
        model = request.get("model", MODELS[0])
        # The stream's plan, made before its first chunk: (time point or None for "at
        # once", what to send, whether it is output). It is played by timer callbacks, not a
        # task sleeping per chunk: a chunk then costs the stand-in a timer and a write, so
        # it keeps its time points with more streams at once.
        plan: list[tuple[float | None, object, bool]] = []
        if chat and not ndjson and b.role_chunk_s is not None:
            plan.append((b.role_chunk_s, {"model": model, "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}}]}, False))
        total = b.reasoning_chunks + chunks
        fault_at = None
        for k in range(total):
            at = b.ttft_s + k * b.gap_s
            if b.fault and b.fault != "status" and k == b.fault_after:
                fault_at = at
                break
            thinking = k < b.reasoning_chunks
            n = b.tokens_per_chunk if thinking or k < total - 1 else \
                wanted - (chunks - 1) * b.tokens_per_chunk
            plan.append((at, (k, n, thinking), True))
        if fault_at is None:
            last = b.ttft_s + (total - 1) * b.gap_s
            finish = "length" if b.stop_after is None else "stop"
            tokens = wanted + b.reasoning_chunks * b.tokens_per_chunk
            finals = self._final(api, chat, model, request, finish, tokens)
            plan.append((last, finals[0], False))
            for extra in finals[1:]:     # OpenAI's usage chunk, after the finish chunk
                plan.append((last + b.usage_delay_s, extra, False))
            if not ndjson:
                plan.append((None, b"data: [DONE]\n\n", False))
            plan.append((None, b"", False))
        def encode(item) -> bytes:      # at its time point: the cost spread as it goes
            if isinstance(item, bytes):
                return item
            if isinstance(item, tuple):
                k, n, thinking = item
                text = "".join(f" t{k}_{i}" for i in range(n))
                item = self._chunk(api, chat, model, text, thinking)
            return event(item)
        sent = {"n": 0, "first": None, "last": None, "late_max_ms": 0.0}
        b.sent.append(sent)       # filled in as it goes: whole once the client has it all
        await self._play(writer, plan, start, sent, encode)
        if fault_at is not None:
            return await self._fault(writer, send, until, fault_at, event)
        await writer.drain()

    def _frame(self, payload: bytes) -> bytes:
        if self.b.http10:
            return payload            # an empty payload ends nothing: closing does
        return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"

    async def _play(self, writer, plan, start: float, sent: dict, encode) -> None:
        """Writes each payload of `plan` at its time point from `start`, from timer
        callbacks; a late one goes at once, with every other one due by then."""
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        handle = None
        i = 0

        def step() -> None:
            nonlocal i, handle
            if done.done():
                return
            transport = writer.transport
            if transport.is_closing():
                done.set_exception(ConnectionError("the client went"))
                return
            if transport.get_write_buffer_size() > 1 << 20:   # a client reading slowly
                handle = loop.call_later(0.01, step)
                return
            now = loop.time()
            while i < len(plan):
                at, payload, output = plan[i]
                if at is not None and start + at > now:
                    handle = loop.call_at(start + at, step)
                    return
                writer.write(self._frame(encode(payload)))
                i += 1
                if output:
                    sent["n"] += 1
                    sent["first"] = sent["first"] or now
                    sent["last"] = now
                    sent["late_max_ms"] = max(sent["late_max_ms"], (now - start - at) * 1000)
            done.set_result(None)
        step()
        try:
            await done
        finally:
            if handle is not None:
                handle.cancel()

    def _chunk(self, api, chat, model, text, thinking) -> dict:
        if api == "ollama":
            key = "thinking" if thinking else ("message" if chat else "response")
            if chat:
                msg = {"role": "assistant", "content": "" if thinking else text}
                if thinking:
                    msg["thinking"] = text
                return {"model": model, "message": msg, "done": False}
            return {"model": model, key: text, "done": False,
                    **({"response": ""} if thinking else {})}
        if chat:
            delta = {"reasoning_content": text} if thinking else {"content": text}
            return {"model": model, "choices": [{"index": 0, "delta": delta,
                                                 "finish_reason": None}]}
        return {"model": model, "choices": [{"index": 0, "text": text,
                                             "finish_reason": None}]}

    def _final(self, api, chat, model, request, finish, tokens) -> list[dict]:
        b = self.b
        rate = b.server_rate or (1 / b.gap_s * b.tokens_per_chunk if b.gap_s else 0.0)
        if api == "ollama":
            eval_ns = int((tokens - 1) / rate * 1e9) if rate and tokens > 1 else 0
            out = {"model": model, "done": True, "done_reason": finish,
                   "total_duration": int((b.ttft_s + eval_ns / 1e9) * 1e9),
                   "load_duration": 1000, "prompt_eval_count": 8,
                   "prompt_eval_duration": int(b.ttft_s * 1e9),
                   "eval_count": tokens, "eval_duration": eval_ns}
            if b.prompt_cached:
                del out["prompt_eval_count"]
            out["message" if chat else "response"] = \
                {"role": "assistant", "content": ""} if chat else ""
            return [out]
        out = {"model": model, "choices": [{"index": 0, "finish_reason": finish,
                                            **({"delta": {}} if chat else {"text": ""})}]}
        if api == "lmstudio":
            out["stats"] = {"tokens_per_second": rate, "time_to_first_token": b.ttft_s,
                            "generation_time": tokens / rate if rate else 0.0,
                            "stop_reason": "maxPredictedTokensReached"}
            return [out]
        wants_usage = (request.get("stream_options") or {}).get("include_usage")
        if b.report_usage and wants_usage:
            return [out, {"model": model, "choices": [],
                          "usage": {"prompt_tokens": 8, "completion_tokens": tokens,
                                    "total_tokens": 8 + tokens}}]
        return [out]

    async def _fault(self, writer, send, until, at, event) -> None:
        b = self.b
        if b.fault == "die":
            await until(at)
            writer.transport.abort()
        elif b.fault == "stall":
            await asyncio.sleep(3600)
        elif b.fault == "malformed":
            await send(b"data: {this is not json\n\n", at=at)
            await send(b"")
        elif b.fault == "error_event":
            await send(event({"error": {"message": "out of memory in the stand-in"}}), at=at)
            await send(b"")
        elif b.fault == "huge":
            block = b"data: " + b"x" * 60000 + b"\n"
            while True:
                await send(block)
        elif b.fault == "drip":
            while True:
                await asyncio.sleep(0.05)
                await send(b": keep-alive\n\n")


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--gap-ms", type=float, default=5.0)
    p.add_argument("--ttft-ms", type=float, default=20.0)
    a = p.parse_args()
    s = StandIn(Behaviour(ttft_s=a.ttft_ms / 1000, gap_s=a.gap_ms / 1000))
    s.start()
    print(s.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        s.stop()
