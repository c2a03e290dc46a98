"""`siliconbench run serve --framework mlx`: mlx_lm.server started on the tiny preset (random
weights written as an mlx-lm folder) on the CPU, measured, and stopped; and no server left
behind when the command is killed or the run fails."""

from __future__ import annotations

import json
import signal
import time

import pytest

from siliconbench.core.results import RunRecord
from tests.helpers.cli_processes import processes_under, run_cli, start_cli, wait_until_gone

pytest.importorskip("mlx_lm")

SMALL = ["--framework", "mlx", "--device", "cpu", "--concurrency", "1,2", "--requests", "4",
         "--output-tokens", "8", "--prompt-tokens", "16"]


def servers(home) -> list:
    return [p for p in processes_under(home)
            if "siliconbench.core.frameworks.mlx.serve" in " ".join(p.cmdline())]


def test_mlx_lm_server_is_started_measured_and_stopped(siliconbench_home):
    r = run_cli("run", "serve", *SMALL, "--json", timeout=300)
    assert r.returncode == 0, r.stderr
    rec = RunRecord.from_dict(json.loads(r.stdout), validate_schema=True)
    assert rec.status == "ok"
    assert rec.device_name == "mlx_lm.server · tiny (random weights)"
    assert rec.settings["started_by_siliconbench"] is True and rec.settings["server_ready_s"] > 0
    assert rec.software["mlx_lm"]
    assert str(siliconbench_home) not in rec.settings["server_command"]
    tok = {r.params["concurrency"]: r for r in rec.rows if r.metric == "output_tok_s"}
    assert set(tok) == {1, 2} and all(r.value > 0 for r in tok.values())
    ttft = [r for r in rec.rows if r.metric == "ttft_ms"]
    assert len(ttft) == 2 and all(r.stats.n == 4 for r in ttft)
    kept = rec.settings["serve_requests"]
    # mlx_lm.server reports usage: n is its count, and the answer ran its full length
    # (the tokenizer's end-of-sequence lies past the model's vocabulary).
    assert all(k["tokens_from"] == "usage" and k["tokens"] == 8 for k in kept)
    assert wait_until_gone(siliconbench_home) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_no_server_is_left_when_the_command_is_ended(siliconbench_home, sig):
    cli = start_cli("run", "serve", *SMALL, "--requests", "1000", "--output-tokens", "256")
    try:
        deadline = time.monotonic() + 240
        while not servers(siliconbench_home) and time.monotonic() < deadline:
            assert cli.poll() is None, cli.communicate()
            time.sleep(0.2)
        assert servers(siliconbench_home), "the server never started"
        cli.send_signal(sig)
        cli.wait(60)
        assert wait_until_gone(siliconbench_home, 20) == []
    finally:
        if cli.poll() is None:
            cli.kill()


def test_a_server_that_cannot_start_fails_the_run_and_is_gone(siliconbench_home, tmp_path):
    bad = tmp_path / "not-a-model"
    bad.mkdir()
    (bad / "config.json").write_text('{"model_type": "no_such_family"}')
    r = run_cli("run", "serve", *SMALL, "--model-path", str(bad), "--json", timeout=300)
    assert r.returncode == 1
    rec = json.loads(r.stdout)
    assert rec["status"] == "failed" and "cannot serve" in rec["reason"]
    assert "No safetensors found" in rec["reason"]
    assert wait_until_gone(siliconbench_home) == []
