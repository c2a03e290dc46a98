"""The serve workload's HTTP: one request on its own connection (asyncio streams, h11 for the
protocol), each piece of the response body handed on with the time it arrived, and every
way a server can misbehave bounded: the connection, a stall between bytes, the whole
stream's length and the bytes it may send. Addresses are checked here too: loopback unless
the user allows another host, decided from the URL's text alone (no name is looked up)."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import AsyncIterator
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
READ_SIZE = 65536


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


async def open_connection(target: Target, timeout: float):
    ssl = target.scheme == "https" or None
    try:
        return await asyncio.wait_for(asyncio.open_connection(target.host, target.port,
                                                              ssl=ssl,
                                                              limit=MAX_HEADER_BYTES),
                                      timeout)
    except TimeoutError:
        raise ServerFault(f"no connection to {target.origin} within {timeout:g} s") from None
    except OSError as e:
        raise ServerFault(f"cannot connect to {target.origin}: {e.strerror or e}") from None


async def stream(target: Target, method: str, path: str, body: bytes | None,
                 headers: list[tuple[str, str]], limits: Limits,
                 response: Response) -> AsyncIterator[tuple[float, bytes]]:
    """Sends one request and yields (arrival time, bytes) for each piece of the body as it
    arrives; `response` gets the status, the headers and the times. Raises ServerFault for
    every failure of the server's making, after what came before it was yielded."""
    clock = time.perf_counter
    deadline = response.t0 + limits.stream_s
    reader, writer = await open_connection(target, min(CONNECT_S, limits.stream_s))
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)
    closed = False
    try:
        all_headers = [("Host", target.host if target.port in (80, 443) else
                        f"{target.host}:{target.port}"), ("Connection", "close"),
                       ("User-Agent", "siliconbench")] + headers
        if body is not None:
            all_headers.append(("Content-Length", str(len(body))))
        out = conn.send(h11.Request(method=method, target=target.prefix + path,
                                    headers=all_headers))
        if body is not None:
            out += conn.send(h11.Data(data=body))
        out += conn.send(h11.EndOfMessage())
        writer.write(out)
        await writer.drain()
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as e:
                if closed:       # h11: the close came before the body's end
                    raise ServerFault("the server closed the connection before its answer "
                                      "ended") from None
                raise ServerFault(f"the server's answer is not valid HTTP ({e})") from None
            if event is h11.NEED_DATA:
                left = deadline - clock()
                if left <= 0:
                    raise ServerFault(f"the stream went on past the {limits.stream_s:g} s "
                                      "a request may take")
                wait = min(limits.stall_s, left)
                try:
                    # asyncio.timeout, not wait_for: no task made per read (the client's own
                    # cost between a token's arrival and its time)
                    async with asyncio.timeout(wait):
                        data = await reader.read(READ_SIZE)
                except TimeoutError:
                    if wait < limits.stall_s:
                        raise ServerFault(f"the stream went on past the "
                                          f"{limits.stream_s:g} s a request may take") from None
                    raise ServerFault(f"the server sent nothing for {limits.stall_s:g} s "
                                      "(stalled)") from None
                except ConnectionError as e:
                    raise ServerFault(f"the connection broke: {e.strerror or e}") from None
                now = clock()
                if response.t_first_byte is None and data:
                    response.t_first_byte = now - response.t0
                closed = not data
                try:
                    conn.receive_data(data)
                except h11.RemoteProtocolError as e:
                    raise ServerFault(f"the server's answer is not valid HTTP ({e})") from None
                arrived = now
                continue
            if isinstance(event, h11.Response):
                response.status = event.status_code
                response.headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                                    for k, v in event.headers}
            elif isinstance(event, h11.Data):
                response.body_bytes += len(event.data)
                if response.body_bytes > limits.max_body:
                    raise ServerFault(f"the response passed {limits.max_body:,} bytes")
                yield arrived - response.t0, bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                response.t_end = clock() - response.t0
                return
            elif isinstance(event, h11.ConnectionClosed):
                raise ServerFault("the server closed the connection before the answer "
                                  "ended")
    finally:
        writer.close()
        try:
            await asyncio.wait_for(writer.wait_closed(), 1.0)
        except (OSError, TimeoutError, asyncio.CancelledError):
            pass


async def fetch(target: Target, method: str, path: str, body: bytes | None = None,
                headers: list[tuple[str, str]] | None = None,
                limits: Limits | None = None) -> tuple[Response, bytes]:
    """A whole (small) answer: the model list, a version, one non-streamed request."""
    limits = limits or Limits(stall_s=10.0, stream_s=30.0, max_body=4 * 2**20)
    response = Response(t0=time.perf_counter())
    parts = [data async for _, data in stream(target, method, path, body, headers or [],
                                              limits, response)]
    return response, b"".join(parts)
