"""The serve workload's client and metrics against the stand-in server (tests/helpers/serving_standin.py),
whose chunks leave at fixed time points: the identities the metrics rest on, each API's own
fields, and every way a server can fail counted as a failed request in bounded time."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from siliconbench.core.kit.serving_apis import Ask, Events, one_request
from siliconbench.core.kit.serving_http import Limits, parse_target
from siliconbench.core.kit.serving_load import Plan, Prompts, detect, run_level
from siliconbench.core.kit.serving_metrics import (
    Level,
    level_wall,
    parse_slo,
    per_request,
    percentile,
    within,
)
from siliconbench.core.params import ParamError
from tests.helpers.serving_standin import Behaviour, StandIn

LIMITS = Limits(stall_s=5.0, stream_s=20.0)


def ask(api="openai", endpoint="chat", tokens=12, **kw):
    return Ask("a prompt", tokens, endpoint=endpoint, model="standin-1", **kw)


def request(behaviour: Behaviour, api="openai", endpoint="chat", tokens=12,
            limits=LIMITS, key=None):
    with StandIn(behaviour) as s:
        line = asyncio.run(one_request(parse_target(s.url, False), api,
                                       ask(api, endpoint, tokens), limits, key))
    return line, s


@pytest.mark.parametrize("api,endpoint", [("openai", "chat"), ("openai", "completions"),
                                          ("ollama", "completions"), ("ollama", "chat"),
                                          ("lmstudio", "chat")])
def test_latency_minus_first_token_is_the_sum_of_the_gaps(api, endpoint):
    line, _ = request(Behaviour(ttft_s=0.05, gap_s=0.01), api, endpoint, tokens=12)
    assert line.ok, line.reason
    m = per_request(line)
    assert m.tokens == 12 and m.chunks == 12
    assert m.e2e_ms - m.ttft_ms == pytest.approx(sum(m.gaps_ms), abs=1e-6)
    assert m.ttft_ms >= 50.0          # the stand-in's first chunk leaves at 50 ms
    if m.gaps_ms:
        # Time per output token is the decode span over n - 1, whatever the reads were.
        assert m.tpot_ms * (m.tokens - 1) == pytest.approx(m.e2e_ms - m.ttft_ms)
        assert m.decode_tok_s == pytest.approx(1000 / m.tpot_ms)
    else:
        # A client starved past the stream's 110 ms (load 12 here) reads all 12 chunks at
        # once: one arrival, no decode span, so no time per token rather than a made-up one.
        # How close the client's stamps keep to the sends: benchmarks/serve_fidelity.py.
        assert m.tpot_ms is None and m.decode_tok_s is None


def test_an_http10_answer_ended_by_closing_is_whole():
    # mlx_lm.server answers HTTP/1.0 without a length: the close ends the body, no fault.
    line, _ = request(Behaviour(ttft_s=0.01, gap_s=0.003, http10=True), tokens=5)
    assert line.ok, line.reason
    assert line.tokens == 5
    with StandIn(Behaviour(http10=True)) as s:
        assert asyncio.run(detect(parse_target(s.url, False), "openai", None)).models


def test_a_trailing_usage_chunk_does_not_lengthen_latency():
    line, _ = request(Behaviour(ttft_s=0.02, gap_s=0.005, usage_delay_s=0.4), tokens=8)
    assert line.ok and line.tokens_from == "usage"
    m = per_request(line)
    assert m.e2e_ms < 300            # 20 + 7 x 5 ms, not the 400 ms the usage came after
    assert line.t_done >= 0.4        # the stream itself ended after the usage chunk


def test_an_empty_role_chunk_is_not_the_first_token():
    line, _ = request(Behaviour(ttft_s=0.25, gap_s=0.005, role_chunk_s=0.001), tokens=4)
    assert line.ok
    assert line.t_first_byte < 0.2   # the role chunk came at once
    assert line.t_first_content >= 0.25


def test_reasoning_is_timed_apart_from_the_answer():
    line, _ = request(Behaviour(ttft_s=0.02, gap_s=0.02, reasoning_chunks=3), tokens=4)
    m = per_request(line)
    assert line.ok and line.reasoning_chunks == 3
    assert m.ttfr_ms < m.ttft_ms
    assert m.ttft_ms - m.ttfr_ms == pytest.approx(60, abs=15)


@pytest.mark.parametrize("fault,words", [
    ("error_event", "error inside its answer: out of memory in the stand-in"),
    ("die", "closed the connection before its answer ended"),
    ("malformed", "not JSON"),
])
def test_a_fault_inside_a_200_stream_fails_the_request_and_keeps_what_came(fault, words):
    line, _ = request(Behaviour(ttft_s=0.01, gap_s=0.005, fault=fault, fault_after=3))
    assert not line.ok and words in line.reason
    assert line.status == 200 and len(line.chunk_times) == 3


@pytest.mark.parametrize("status,words", [(429, "HTTP 429 (too many requests)"),
                                          (500, "HTTP 500 (server error)")])
def test_an_error_status_fails_the_request_with_the_servers_words(status, words):
    line, _ = request(Behaviour(fault="status", status=status))
    assert not line.ok and words in line.reason and "told to fail" in line.reason


@pytest.mark.parametrize("fault,limits,words", [
    ("stall", Limits(stall_s=0.3, stream_s=20), "sent nothing for 0.3 s"),
    ("drip", Limits(stall_s=5, stream_s=0.6), "past the 0.6 s"),
    ("huge", Limits(stall_s=5, stream_s=20, max_body=200_000), "passed 200,000 bytes"),
])
def test_a_stalling_dripping_or_endless_server_is_bounded(fault, limits, words):
    t0 = time.monotonic()
    line, _ = request(Behaviour(ttft_s=0.01, gap_s=0.005, fault=fault), limits=limits)
    assert not line.ok and words in line.reason
    assert time.monotonic() - t0 < 5


def test_no_server_fails_the_request_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    line = asyncio.run(one_request(parse_target(f"http://127.0.0.1:{port}", False), "openai",
                                   ask(), LIMITS))
    assert not line.ok and "cannot connect" in line.reason


def test_servers_own_figures_are_read():
    ollama, _ = request(Behaviour(ttft_s=0.01, gap_s=0.005, server_rate=123.0), "ollama",
                        "completions", tokens=6)
    assert ollama.tokens_from == "server counters" and ollama.tokens == 6
    # eval_count / eval_duration (nanoseconds), as Ollama's docs compute the rate
    assert ollama.server["decode_tok_s"] == pytest.approx(6 / (5 / 123.0), rel=1e-3)
    lms, _ = request(Behaviour(ttft_s=0.01, gap_s=0.005, server_rate=77.0), "lmstudio")
    assert lms.server["decode_tok_s"] == 77.0 and lms.server["ttft_ms"] == pytest.approx(10)


def test_forced_length_is_asked_for():
    line, s = request(Behaviour(ttft_s=0.01, gap_s=0.002), tokens=5)
    body = s.b.requests[0]
    assert body["ignore_eos"] is True and body["min_tokens"] == 5 and body["max_tokens"] == 5
    assert body["stream_options"] == {"include_usage": True}
    _, s = request(Behaviour(ttft_s=0.01, gap_s=0.002), "ollama", "completions", tokens=5)
    assert s.b.requests[0]["options"]["num_predict"] == 5


def test_an_api_key_is_sent_and_never_repeated():
    key = "sk-test-0123456789abcdef"
    line, s = request(Behaviour(quote_auth=True), key=key)
    assert s.b.requests[0]["_auth"] == f"Bearer {key}"
    assert not line.ok and "401" in line.reason
    assert key not in line.reason and key[:12] not in line.reason


def test_events_split_sse_and_ndjson_as_they_arrive():
    ev = Events(ndjson=False)
    assert ev.feed(1.0, b"data: {\"a\"") == []
    assert ev.feed(2.0, b": 1}\r\n\r\n: keep-alive\n\nevent: error\ndata: x\n\n") == [
        (2.0, None, '{"a": 1}'), (2.0, "error", "x")]
    nd = Events(ndjson=True)
    assert nd.feed(3.0, b'{"x": 1}\n{"y"') == [(3.0, None, '{"x": 1}')]
    assert nd.rest() == '{"y"'


def test_only_loopback_unless_allowed_and_no_name_is_looked_up(monkeypatch):
    def no_lookup(*a, **k):
        raise AssertionError("a name was looked up")
    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    assert parse_target("http://127.0.0.1:8080", False).remote is False
    assert parse_target("localhost:11434", False).port == 11434
    assert parse_target("http://[::1]:1234/v1", False).prefix == "/v1"
    with pytest.raises(ParamError, match="not this machine.*--allow-remote"):
        parse_target("http://example.com:8080", False)
    with pytest.raises(ParamError, match="not this machine"):
        parse_target("http://127.0.0.1.example.com", False)
    assert parse_target("https://example.com", True).remote is True
    with pytest.raises(ParamError, match="password"):
        parse_target("http://user:secret@127.0.0.1:8080", False)
    with pytest.raises(ParamError, match="http"):
        parse_target("ftp://127.0.0.1", False)


def test_slo_and_goodput():
    assert parse_slo("ttft=500ms,tpot=50ms") == {"ttft": 500.0, "tpot": 50.0}
    assert parse_slo("e2e=2s") == {"e2e": 2000.0}
    for bad in ("ttft=fast", "speed=5ms", "ttft=0ms"):
        with pytest.raises(ParamError, match="--slo"):
            parse_slo(bad)
    line, _ = request(Behaviour(ttft_s=0.03, gap_s=0.005), tokens=6)
    m = per_request(line)
    assert within(m, {"ttft": 1000, "tpot": 100}) and not within(m, {"ttft": 1})


def test_an_answer_that_arrived_in_one_read_breaks_no_tpot_limit():
    # A busy client reads all six chunks at once: no gap between them, no tpot to measure,
    # and no tpot limit it could break (goodput had counted it as missing every one).
    from siliconbench.core.kit.serving_apis import Timeline
    line = Timeline(ok=True, t_first_content=0.05, chunk_times=[0.05] * 6, tokens=6)
    m = per_request(line)
    assert m.tpot_ms is None and m.gaps_ms == ()
    assert within(m, {"ttft": 1000, "tpot": 1}) and not within(m, {"ttft": 1})


def test_detect_lists_models_and_names_the_api():
    with StandIn() as s:
        t = parse_target(s.url, False)
        assert asyncio.run(detect(t, "auto", None)).api == "lmstudio"
        ollama = asyncio.run(detect(t, "ollama", None))
        assert ollama.version == "0.0.0-standin" and ollama.models == ["standin-1",
                                                                        "standin-2"]
        openai = asyncio.run(detect(t, "openai", None))
        assert openai.name == "standin/1.0"
    with pytest.raises(ParamError, match="No openai API answers"):
        asyncio.run(detect(t, "openai", None))


def test_a_hostile_model_list_is_not_copied():
    listed = ["\x1b[31mred", "x" * 5000, 7, None, "good-model", *[f"m{i}" for i in range(2000)]]
    with StandIn(Behaviour(models=listed)) as s:
        server = asyncio.run(detect(parse_target(s.url, False), "openai", None))
    assert server.models[0] == "good-model" and len(server.models) == 1000
    assert all(len(m) <= 200 and "\x1b" not in m for m in server.models)


def test_a_level_is_closed_loop_and_leaves_its_warmup_out():
    with StandIn(Behaviour(ttft_s=0.02, gap_s=0.004)) as s:
        t = parse_target(s.url, False)
        prompts = Prompts(32, 7, "nonce")
        lines, stopped = asyncio.run(run_level(
            t, "openai", Plan(3, requests=9, warmup=3, cache="cold"), prompts,
            lambda p: Ask(p, 6, model="standin-1"), LIMITS, None))
    assert stopped is None and len(lines) == 9 and len(s.b.requests) == 12
    level = Level(lines, level_wall(lines), 6)
    assert level.requests_per_s() == pytest.approx(9 / level.wall_s)
    assert level.output_tok_s() == pytest.approx(54 / level.wall_s)
    # Three at once: each request's start is within the level's wall, overlapping others.
    starts = sorted(x.start for x in lines)
    assert starts[2] - starts[0] < per_request(lines[0]).e2e_ms / 1000
    salts = [r["messages"][0]["content"].split(" ")[0] for r in s.b.requests]
    assert len(set(salts)) == 12           # cold: every prompt starts with its own salt


def test_warm_prompts_share_their_prefix_and_cold_ones_none():
    p = Prompts(64, 3, "n1")
    a, b = p.warm(), p.warm()
    assert a[:len(p.prefix)] == b[:len(p.prefix)] == p.prefix and a != b
    assert p.primer().startswith(p.prefix)
    c, d = p.cold(), p.cold()
    assert c.split()[0] != d.split()[0]
    # no prefix shared by the cold prompts: a prefix cache has nothing of one for another
    import os.path
    assert os.path.commonprefix([p.cold() for _ in range(8)]) == ""
    assert Prompts(64, 3, "n2").prefix == p.prefix      # the seed fixes the words


def test_a_level_against_a_dead_server_stops_early():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    t0 = time.monotonic()
    lines, stopped = asyncio.run(run_level(
        parse_target(f"http://127.0.0.1:{port}", False), "openai",
        Plan(2, requests=500, warmup=0, cache="cold"), Prompts(8, 1, "x"),
        lambda p: Ask(p, 4, model="m"), LIMITS, None))
    assert stopped and "in a row failed" in stopped and len(lines) < 10
    assert time.monotonic() - t0 < 5


def test_percentile_is_numpys_linear():
    import numpy as np
    xs = [5.0, 1.0, 9.0, 3.0, 7.5]
    for q in (50, 90, 99):
        assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)))


def test_poisson_arrivals_come_at_random_times_at_the_rate():
    with StandIn(Behaviour(ttft_s=0.005, gap_s=0.001)) as s:
        lines, stopped = asyncio.run(run_level(
            parse_target(s.url, False), "openai",
            Plan(64, requests=40, warmup=0, cache="cold", rate=100.0, seed=3),
            Prompts(8, 1, "p"), lambda p: Ask(p, 2, model="standin-1"), LIMITS, None))
    assert stopped is None and all(x.ok for x in lines)
    starts = sorted(x.start for x in lines)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    # 40 arrivals at 100/s: about 0.39 s in all, gaps anything but even
    assert 0.15 < starts[-1] - starts[0] < 1.5
    assert max(gaps) > 3 * min(gaps) + 0.005
    # closed loop, for contrast: 64 workers send all 40 at once
    with StandIn(Behaviour(ttft_s=0.005, gap_s=0.001)) as s:
        closed, _ = asyncio.run(run_level(
            parse_target(s.url, False), "openai", Plan(64, 40, 0, "cold"),
            Prompts(8, 1, "p"), lambda p: Ask(p, 2, model="standin-1"), LIMITS, None))
    closed_starts = sorted(x.start for x in closed)
    assert closed_starts[-1] - closed_starts[0] < starts[-1] - starts[0]


def test_a_chunk_costs_one_turn_of_the_event_loop():
    # Each piece is stamped and parsed in the loop's callback for its arrival: one turn of
    # the loop a chunk. Waking the request's task for each piece (an asyncio stream read)
    # took two, and the stamp waited for the second, behind every other stream's parsing.
    turns = 0

    class Counting(asyncio.SelectorEventLoop):
        def _run_once(self):
            nonlocal turns
            turns += 1
            super()._run_once()

    with StandIn(Behaviour(ttft_s=0.02, gap_s=0.02, role_chunk_s=None)) as s:
        loop = Counting()
        try:
            line = loop.run_until_complete(one_request(parse_target(s.url, False), "openai",
                                                       ask(tokens=20), LIMITS))
        finally:
            loop.close()
    reads = len(set(line.chunk_times))
    assert line.ok and reads >= 10
    assert turns <= reads + 12, (turns, reads)


def test_the_body_decoder_reads_chunked_framing_however_it_is_cut():
    from siliconbench.core.kit.serving_http import Body, ServerFault
    wire = (b"6\r\ndata: \r\n10;ext=1\r\n{\"a\": 1}\n\n......\r\n0\r\nX-T: 1\r\n\r\n")
    for cut in (1, 2, 3, 7, len(wire)):
        body = Body("chunked")
        got = b"".join(p for i in range(0, len(wire), cut) for p in body.feed(wire[i:i + cut]))
        assert got == b'data: {"a": 1}\n\n......' and body.ended, cut
    for bad, why in ((b"zz\r\n", "chunk size"), (b"0x5\r\nabcde\r\n", "chunk size"),
                     (b"3\r\nabcX\r\n", "CRLF"), (b"1" * 2000, "1,024 bytes")):
        with pytest.raises(ServerFault, match=why):
            Body("chunked").feed(bad)
    with pytest.raises(ServerFault, match="closed the connection"):
        Body("chunked").feed(b"")
    length = Body.of("POST", 200, {"content-length": "4"})
    assert length.feed(b"ab") == [b"ab"] and not length.ended
    assert length.feed(b"cdEXTRA") == [b"cd"] and length.ended
    assert Body.of("GET", 204, {}).ended
    close = Body.of("POST", 200, {})
    assert close.feed(b"x") == [b"x"] and close.feed(b"") == [] and close.ended
    with pytest.raises(ServerFault, match="Content-Length"):
        Body.of("POST", 200, {"content-length": "-1"})
