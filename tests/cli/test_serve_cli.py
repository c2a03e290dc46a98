"""`siliconbench run serve --url` against the stand-in server (tests/helpers/serving_standin.py): the
record it keeps (rows at each concurrency, chunk times, schema-valid), what it refuses in one
sentence, an API key that goes nowhere but the request, and a failing server's run that
ends failed with its reason in bounded time."""

from __future__ import annotations

import json
import os
import time

import pytest

from siliconbench.core.results import RunRecord
from tests.helpers.cli_processes import run_cli
from tests.helpers.serving_standin import Behaviour, StandIn

FAST = ["--concurrency", "1,3", "--requests", "6", "--output-tokens", "6",
        "--prompt-tokens", "16", "--json"]


def record_of(out: str) -> RunRecord:
    return RunRecord.from_dict(json.loads(out), validate_schema=True)


def test_a_run_against_a_server_keeps_each_level_and_every_chunk():
    # Limits no request can miss however loaded the machine, so goodput is every request.
    with StandIn(Behaviour(ttft_s=0.02, gap_s=0.004)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "openai", "--slo",
                    "ttft=600s,tpot=600s", *FAST)
    assert r.returncode == 0, r.stderr
    rec = record_of(r.stdout)
    assert rec.status == "ok" and rec.device_name == "standin/1.0 · standin-1"
    # What was measured: the server at --url, not --framework's default (torch)
    assert rec.framework == "standin/1.0"
    assert rec.settings["api"] == "openai" and rec.settings["remote"] is False
    levels = {row.params["concurrency"] for row in rec.rows if row.metric == "output_tok_s"}
    assert levels == {1, 3}
    by = {(row.metric, row.params["concurrency"]): row for row in rec.rows}
    for c in (1, 3):
        assert by[("output_tok_s", c)].value > 0
        assert by[("goodput_req_s", c)].value == by[("requests_per_s", c)].value
        ttft = by[("ttft_ms", c)]
        assert ttft.stats.n == 6 and len(ttft.samples) == 6
    kept = rec.settings["serve_requests"]
    assert len(kept) == 12 and all(len(k["chunks"]) == 6 for k in kept)
    # The chunk times give the rows again: e2e is the last chunk's time.
    e2e = sorted(k["chunks"][-1] * 1000 for k in kept if k["concurrency"] == 1)
    assert by[("e2e_ms", 1)].value == pytest.approx((e2e[2] + e2e[3]) / 2, abs=1e-3)
    # warm-up left out: 1 first request + (1 + 3) warm-up + 12 measured
    assert len(s.b.requests) == 17


def test_a_goodput_of_zero_is_a_measurement_the_record_keeps():
    # No request can meet a 1 ms time to first token from a stand-in that takes 50 ms.
    with StandIn(Behaviour(ttft_s=0.05, gap_s=0.002)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "openai", "--slo", "ttft=1ms",
                    *FAST)
    assert r.returncode == 0, r.stderr
    rec = record_of(r.stdout)          # the schema and the sense checks take it
    assert {row.value for row in rec.rows if row.metric == "goodput_req_s"} == {0.0}


def test_both_caches_and_a_refused_forced_length():
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002, refuse_force=True)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "openai", "--cache", "both",
                    *FAST)
    assert r.returncode == 0, r.stderr
    rec = record_of(r.stdout)
    assert rec.settings["forced_length"] is False
    assert any("refused the forced answer length" in w for w in rec.warnings)
    assert {row.params["cache"] for row in rec.rows} == {"cold", "warm"}
    assert any(k["cache"] == "primer" for k in rec.settings["serve_requests"])


def test_early_stops_are_counted_and_said():
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002, stop_after=3)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "ollama", *FAST)
    rec = record_of(r.stdout)
    assert any("answers stopped before 6 tokens" in w for w in rec.warnings)
    note = next(row.note for row in rec.rows if row.metric == "output_tok_s")
    assert "6 stopped before 6 tokens" in note


def test_ollamas_missing_prompt_count_is_said_on_the_row():
    # Ollama leaves prompt_eval_count out when the prompt came from its cache: the rows it
    # touches say so (not only a warning apart from them).
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002, prompt_cached=True)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "ollama", *FAST)
    assert r.returncode == 0, r.stderr
    rec = record_of(r.stdout)
    assert rec.framework == "Ollama"
    for c in (1, 3):
        row = next(row for row in rec.rows if row.metric == "ttft_ms"
                   and row.params["concurrency"] == c)
        assert "no prompt count (prompt_eval_count) for 6 of 6 answers" in row.note
        assert "from its cache" in row.note
    assert all(k["prompt_tokens"] is None for k in rec.settings["serve_requests"])


def test_a_failing_server_ends_the_run_failed_with_its_reason():
    with StandIn(Behaviour(fault="status", status=503)) as s:
        t0 = time.monotonic()
        r = run_cli("run", "serve", "--url", s.url, "--api", "openai", *FAST)
    assert r.returncode == 1 and time.monotonic() - t0 < 60
    rec = record_of(r.stdout)
    assert rec.status == "failed" and "HTTP 503 (unavailable)" in rec.reason


def test_a_stream_that_dies_midway_keeps_the_levels_measured_before():
    # Each request dies after 2 chunks: counted failed with its reason, none measured.
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002, fault="die", fault_after=2)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "openai", *FAST)
    rec = record_of(r.stdout)
    assert rec.status == "failed" and "closed the connection" in rec.reason


def test_another_host_is_refused_in_one_sentence():
    r = run_cli("run", "serve", "--url", "http://192.0.2.1:8080", *FAST)
    assert r.returncode == 2 and "--allow-remote" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_started_server_needs_a_framework_that_has_one(siliconbench_home):
    # Refused before any run starts: one sentence, exit 2, no failed run in the store.
    r = run_cli("run", "serve", "--framework", "torch", *FAST)
    assert r.returncode == 2 and "--url" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (siliconbench_home / "results.sqlite3").exists()


def test_the_api_key_goes_only_into_the_request(tmp_path):
    key = "sk-siliconbench-test-9f8e7d6c5b4a"
    env = {**os.environ, "MY_SERVER_KEY": key}
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002)) as s:
        import subprocess
        import sys

        from tests.helpers.cli_processes import _env
        r = subprocess.run([sys.executable, "-m", "siliconbench.core.cli", "run", "serve",
                            "--url", s.url, "--api", "openai", "--api-key-env",
                            "MY_SERVER_KEY", *FAST], capture_output=True, text=True,
                           timeout=120, env=_env(env))
    assert r.returncode == 0, r.stderr
    assert all(x["_auth"] == f"Bearer {key}" for x in s.b.requests)
    assert key not in r.stdout and key not in r.stderr
    rec = record_of(r.stdout)
    assert rec.params["api_key_env"] == "MY_SERVER_KEY"
    out = tmp_path / "all.json"
    assert run_cli("export", "-o", str(out)).returncode == 0
    assert key not in out.read_text()
    home = os.environ["SILICONBENCH_HOME"]
    for root, _, names in os.walk(home):
        for n in names:
            assert key.encode() not in open(os.path.join(root, n), "rb").read()


def test_ctrl_c_during_a_stalled_request_ends_the_run_at_once(siliconbench_home):
    import signal

    from tests.helpers.cli_processes import start_cli, wait_until_gone
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002, fault="stall", fault_after=1)) as s:
        cli = start_cli("run", "serve", "--url", s.url, "--api", "openai", "--stall-s",
                        "3600", "--request-s", "7200", *FAST)
        try:
            deadline = time.monotonic() + 60
            while not s.b.requests and time.monotonic() < deadline:
                assert cli.poll() is None
                time.sleep(0.05)
            assert s.b.requests, "no request reached the stand-in"
            t0 = time.monotonic()
            cli.send_signal(signal.SIGINT)
            out, err = cli.communicate(timeout=30)
        finally:
            if cli.poll() is None:
                cli.kill()
    assert time.monotonic() - t0 < 15 and cli.returncode == 130
    assert "cancelled" in err and "Traceback" not in err
    assert wait_until_gone(siliconbench_home) == []


def test_poisson_arrivals_are_a_point_of_their_own():
    with StandIn(Behaviour(ttft_s=0.01, gap_s=0.002)) as s:
        r = run_cli("run", "serve", "--url", s.url, "--api", "openai", "--rate", "40", *FAST)
    assert r.returncode == 0, r.stderr
    rec = record_of(r.stdout)
    assert {row.params.get("rate") for row in rec.rows} == {40.0}
    assert rec.params["rate"] == 40.0


def test_a_url_run_is_titled_by_the_server_it_measures(monkeypatch):
    # The progress line named --framework's default ("serve on torch:cpu") for a run that
    # measures the server at --url.
    from siliconbench.core import runner
    from siliconbench.core.child import RunSpec
    from siliconbench.core.cli import commands
    titles = []

    class Bar:
        def __init__(self, title):
            titles.append(title)

        def __call__(self, event):
            pass

        def close(self):
            pass
    monkeypatch.setattr(commands, "ProgressBar", Bar)
    monkeypatch.setattr(runner, "execute_kept", lambda spec, on_event: ("record", None))
    commands._run_one(RunSpec("serve", "torch", "cpu", {"url": "http://127.0.0.1:8080"}))
    commands._run_one(RunSpec("serve", "mlx", "cpu", {}))
    assert titles == ["serve at http://127.0.0.1:8080", "serve on mlx:cpu"]
