"""The serve workload's HTTP: one request on its own connection (asyncio streams, h11 for the
protocol), each piece of the response body handed on with the time it arrived, and every
way a server can misbehave bounded: the connection, a stall between bytes, the whole
stream's length and the bytes it may send. Addresses are checked here too: loopback unless
the user allows another host, decided from the URL's text alone (no name is looked up)."""

from __future__ import annotations

import asyncio
import ipaddress
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import h11

from siliconbench.core.params import ParamError

LOOPBACK_NAMES = ("localhost", "localhost.")
# Bounds on what a server may send: a response body (a 4,096-token answer streamed one token
# an event is ~1 MB), a response's headers, and the wait for more bytes.
MAX_BODY_BYTES = 32 * 2**20
MAX_HEADER_BYTES = 64 * 2**10
CONNECT_S = 10.0


class ServerFault(Exception):
    """A request failed because of the server (refused, stalled, died, too big, not HTTP):
    the message is the reason its request is counted failed with."""


@dataclass(frozen=True)
class Target:
    """Where the server is: scheme, host, port and the path prefix the URL gave."""
    scheme: str
    host: str
    port: int
    prefix: str = ""
    remote: bool = False        # not this machine: allowed only with --allow-remote

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + self.prefix + path


def is_loopback(host: str) -> bool:
    """From the host's text alone: 127.0.0.0/8, ::1, localhost. Any other name is another
    host (a name could resolve anywhere, and looking it up would already reach out)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_target(url: str, allow_remote: bool) -> Target:
    """--url's text -> a Target; ParamError (one sentence) for anything else, including a
    host other than this machine without --allow-remote, and a URL with a password in it."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ParamError("--url is not a URL SiliconBench can read; give one like "
                         "http://127.0.0.1:8080.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ParamError("--url must be an http:// or https:// address with a host, e.g. "
                         "http://127.0.0.1:8080.")
    if parts.username or parts.password:
        raise ParamError("--url must not carry a user name or password; name the environment "
                         "variable that holds the API key with --api-key-env instead.")
    if parts.query or parts.fragment:
        raise ParamError("--url takes the server's address without a query or fragment.")
    host = parts.hostname
    remote = not is_loopback(host)
    if remote and not allow_remote:
        raise ParamError(f"--url names {host}, which is not this machine; SiliconBench sends "
                         "requests to another host only with --allow-remote.")
    port = port or (443 if parts.scheme == "https" else 80)
    return Target(parts.scheme, host, port, parts.path.rstrip("/"), remote)


@dataclass
class Response:
    """What arrived of one request: times are seconds from `t0` (just before connecting)."""
    t0: float
    status: int | None = None
    headers: dict[str, str] | None = None
    t_first_byte: float | None = None     # the response's first byte (its status line)
    t_end: float | None = None            # the body's last byte
    body_bytes: int = 0


class Limits:
    """The bounds of one request: a stall (no byte for `stall_s`), the whole stream
    (`stream_s`), the body's size."""

    def __init__(self, stall_s: float = 30.0, stream_s: float = 600.0,
                 max_body: int = MAX_BODY_BYTES) -> None:
        self.stall_s, self.stream_s, self.max_body = stall_s, stream_s, max_body


CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")
MAX_CHUNK_LINE = 1024


def bad_http(what: str) -> ServerFault:
    return ServerFault(f"the server's answer is not valid HTTP ({what})")


class Body:
    """A response body's framing, decoded as its bytes come: chunked, a Content-Length, or
    until the server closes (HTTP/1.0's way). h11 reads the head; the body, a stream's
    every chunk, takes this much less Python (the client's cost a chunk is its bound on
    how many streams it can time at once). feed(b"") is the server's close."""

    def __init__(self, mode: str, length: int = 0) -> None:
        self.mode, self.left = mode, length      # none | chunked | length | close
        self.ended = mode == "none" or (mode == "length" and length == 0)
        self.state = "size"                      # chunked: size | data | crlf | trailer
        self.buffer = b""

    @classmethod
    def of(cls, method: str, status: int, headers: dict[str, str]) -> Body:
        if method == "HEAD" or status in (204, 304) or status < 200:
            return cls("none")
        coding = headers.get("transfer-encoding")
        if coding is not None:
            last = coding.split(",")[-1].strip().lower()
            return cls("chunked") if last == "chunked" else cls("close")
        if "content-length" in headers:
            text = headers["content-length"].strip()
            if not text.isdigit() or len(text) > 18:
                raise bad_http(f"Content-Length {text[:20]!r}")
            return cls("length", int(text))
        return cls("close")

    def feed(self, data: bytes) -> list[bytes]:
        if self.ended:
            return []
        if self.mode == "close":
            self.ended = not data
            return [data] if data else []
        if not data:
            raise ServerFault("the server closed the connection before its answer ended")
        if self.mode == "length":
            piece = data[:self.left]
            self.left -= len(piece)
            self.ended = self.left == 0
            return [piece]
        return self._chunked(self.buffer + data if self.buffer else data)

    def _chunked(self, buf: bytes) -> list[bytes]:
        out: list[bytes] = []
        pos, n = 0, len(buf)
        while pos < n and not self.ended:
            if self.state == "data":
                take = min(self.left, n - pos)
                out.append(buf[pos:pos + take])
                pos += take
                self.left -= take
                if not self.left:
                    self.state = "crlf"
            elif self.state == "crlf":
                if n - pos < 2:
                    break
                if buf[pos:pos + 2] != b"\r\n":
                    raise bad_http("a chunk does not end in CRLF")
                pos += 2
                self.state = "size"
            elif self.state == "size":
                i = buf.find(b"\r\n", pos)
                if i < 0:
                    if n - pos > MAX_CHUNK_LINE:
                        raise bad_http("a chunk size line past 1,024 bytes")
                    break
                size = buf[pos:i].split(b";", 1)[0].strip()
                if not CHUNK_SIZE.fullmatch(size):
                    raise bad_http(f"chunk size {size[:20]!r}")
                pos = i + 2
                self.left = int(size, 16)
                self.state = "data" if self.left else "trailer"
            else:                                 # trailer: lines up to an empty one
                if buf.startswith(b"\r\n", pos):
                    pos, self.ended = pos + 2, True
                    break
                i = buf.find(b"\r\n\r\n", pos)
                if i < 0:
                    if n - pos > MAX_HEADER_BYTES:
                        raise bad_http("trailers past 64 KiB")
                    break
                pos, self.ended = i + 4, True
        self.buffer = buf[pos:]
        return out


class Exchange(asyncio.Protocol):
    """One request's connection. Each piece of bytes is stamped with perf_counter first
    thing in data_received (the first code that runs once the event loop learns it
    arrived), then parsed there and then (h11) and handed, body pieces with their stamp, to
    `on_data`: no task wakes per piece, so a chunk costs the client as little as it can and
    no other stream's parsing comes between a piece's arrival and its stamp. A stall (no
    byte for `stall_s`) and the stream's deadline are kept by one timer, re-armed only when
    it fires, not per piece."""

    def __init__(self, limits: Limits, response: Response,
                 on_data: Callable[[float, bytes], None]) -> None:
        self.limits, self.response, self.on_data = limits, response, on_data
        self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)
        self.last = response.t0
        self.deadline = response.t0 + limits.stream_s
        self.fault: ServerFault | None = None
        self.done = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None
        self.body: Body | None = None
        self.method = "GET"
        self._timer: asyncio.TimerHandle | None = None

    def request(self, method: str, target: Target, path: str, body: bytes | None,
                headers: list[tuple[str, str]]) -> bytes:
        all_headers = [("Host", target.host if target.port in (80, 443) else
                        f"{target.host}:{target.port}"), ("Connection", "close"),
                       ("User-Agent", "siliconbench")] + headers
        if body is not None:
            all_headers.append(("Content-Length", str(len(body))))
        self.method = method
        out = self.conn.send(h11.Request(method=method, target=target.prefix + path,
                                         headers=all_headers))
        if body is not None:
            out += self.conn.send(h11.Data(data=body))
        return out + self.conn.send(h11.EndOfMessage())

    def connection_made(self, transport) -> None:
        self.transport = transport
        self._watch()

    def data_received(self, data: bytes) -> None:
        t = time.perf_counter()
        self.last = t
        if self.response.t_first_byte is None:
            self.response.t_first_byte = t - self.response.t0
        self._feed(t, data)

    def eof_received(self) -> bool:
        self._feed(time.perf_counter(), b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if not self.done.done():
            self._feed(time.perf_counter(), b"")

    def _feed(self, t: float, data: bytes) -> None:
        if self.done.done():
            return
        try:
            self._parse(t, data)
        except ServerFault as e:
            self._finish(e)
        except h11.RemoteProtocolError as e:
            self._finish(ServerFault("the server closed the connection before its answer "
                                     "ended" if not data else
                                     f"the server's answer is not valid HTTP ({e})"))
        except Exception as e:          # a fault of ours: raised where the request waits
            if not self.done.done():
                self.done.set_exception(e)
            self.close(abort=True)

    def _parse(self, t: float, data: bytes) -> None:
        response = self.response
        if self.body is not None:
            for piece in self.body.feed(data):
                response.body_bytes += len(piece)
                if response.body_bytes > self.limits.max_body:
                    raise ServerFault(f"the response passed {self.limits.max_body:,} bytes")
                if piece:
                    self.on_data(t - response.t0, piece)
            if self.body.ended:
                response.t_end = t - response.t0
                self._finish(None)
            return
        conn = self.conn
        conn.receive_data(data)
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                return
            if isinstance(event, h11.Response):
                response.status = event.status_code
                response.headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                                    for k, v in event.headers}
                self.body = Body.of(self.method, event.status_code, response.headers)
                rest, closed = conn.trailing_data
                if rest or self.body.ended:
                    self._parse(t, rest)
                if closed and not self.done.done():
                    self._parse(t, b"")
                return
            if isinstance(event, h11.ConnectionClosed):
                raise ServerFault("the server closed the connection before the answer "
                                  "ended")
            # an informational (1xx) response: the real one follows

    def _finish(self, fault: ServerFault | None) -> None:
        if not self.done.done():
            self.fault = fault
            self.done.set_result(None)
        self.close(abort=fault is not None)

    def _watch(self) -> None:
        now = time.perf_counter()
        if now >= self.deadline:
            return self._finish(ServerFault(f"the stream went on past the "
                                            f"{self.limits.stream_s:g} s a request may take"))
        if now - self.last >= self.limits.stall_s:
            return self._finish(ServerFault(f"the server sent nothing for "
                                            f"{self.limits.stall_s:g} s (stalled)"))
        due = min(self.last + self.limits.stall_s, self.deadline)
        self._timer = asyncio.get_running_loop().call_later(max(0.0, due - now) + 1e-3,
                                                            self._watch)

    def close(self, abort: bool = False) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.transport is not None:
            self.transport.abort() if abort else self.transport.close()


async def exchange(target: Target, method: str, path: str, body: bytes | None,
                   headers: list[tuple[str, str]], limits: Limits, response: Response,
                   on_data: Callable[[float, bytes], None]) -> None:
    """Sends one request and calls on_data(arrival time, bytes) for each piece of the body,
    inside the event loop's callback for its arrival (Exchange); `response` gets the status,
    the headers and the times, t0 being set here just before connecting (the request's
    bytes are made before it). Raises ServerFault for every failure of the server's making
    (on_data may raise it too), after what came before it was handed on."""
    loop = asyncio.get_running_loop()
    ex = Exchange(limits, response, on_data)
    out = ex.request(method, target, path, body, headers)
    ssl = target.scheme == "https" or None
    timeout = min(CONNECT_S, limits.stream_s)
    response.t0 = ex.last = time.perf_counter()
    ex.deadline = response.t0 + limits.stream_s
    try:
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(lambda: ex, target.host, target.port, ssl=ssl)
        except TimeoutError:
            raise ServerFault(f"no connection to {target.origin} within {timeout:g} s"
                              ) from None
        except OSError as e:
            raise ServerFault(f"cannot connect to {target.origin}: {e.strerror or e}"
                              ) from None
        ex.transport.write(out)         # one write: Nagle has nothing to hold back
        await ex.done
        if ex.fault is not None:
            raise ex.fault
    finally:
        ex.close()


async def fetch(target: Target, method: str, path: str, body: bytes | None = None,
                headers: list[tuple[str, str]] | None = None,
                limits: Limits | None = None) -> tuple[Response, bytes]:
    """A whole (small) answer: the model list, a version, one non-streamed request."""
    limits = limits or Limits(stall_s=10.0, stream_s=30.0, max_body=4 * 2**20)
    response = Response(t0=time.perf_counter())
    parts: list[bytes] = []
    await exchange(target, method, path, body, headers or [], limits, response,
                   lambda _, data: parts.append(data))
    return response, b"".join(parts)
