"""What an NVIDIA H100 wrote (tests/data/h100, its README gives the commands and what was
measured beside them): power from the board's energy counter over each point's timed blocks,
the power cap named on the rows it held, ResNet50's latency without a tail, the LLM decode
before and after the cache-keyword fix, and the quick suite sized to the GPU. Numbers and
views are checked on these records, as a person would read them."""

from __future__ import annotations

from pathlib import Path

import pytest

from siliconbench.core.results import RunRecord, records_from_file
from siliconbench.core.suites import summary_lines
from siliconbench.core.telemetry import power_trusted

FOLDER = Path(__file__).parent.parent / "data" / "h100"
POWER_LIMIT_W = 700.0       # the board's, read by gpu_energy_check.py beside the run


def h100(stem: str) -> list[RunRecord]:
    return records_from_file(FOLDER / f"{stem}.json")


def table_rows(panel) -> list[dict]:
    panel.setCurrentWidget(panel.table)
    table = panel.table
    header = [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())]
    return [{h: table.item(i, j).text() for j, h in enumerate(header)}
            for i in range(table.rowCount())]


def test_gemm_power_is_the_board_counter_over_each_point_and_adds_up(panel):
    (rec,) = h100("h100-gemm")
    tel = rec.telemetry
    idle = tel["summary"]["idle_power_w"]
    power = [r for r in rec.rows if r.metric == "power"]
    assert len(power) == 6
    for r in power:
        assert r.flags == ["energy_counter"] and power_trusted(r)
        assert "energy counter" in r.note and "of timed blocks" in r.note
        assert idle < r.value <= 1.1 * POWER_LIMIT_W
    # The points' blocks are inside the run: their joules are less than the run's.
    points_j = sum(e["joules"] for e in tel["energy"])
    assert 0.5 * tel["summary"]["energy_j"] < points_j < tel["summary"]["energy_j"]
    # Efficiency is throughput over that power: about 1 TFLOPS/W in bfloat16, never the
    # one-sample 4.59 TFLOPS/W the H200 records showed.
    tflops = {(r.params["size"], r.params["dtype"]): r.value for r in rec.rows
              if r.metric == "tflops"}
    for r in rec.rows:
        if r.metric == "tflops_per_watt":
            key = (r.params["size"], r.params["dtype"])
            watts = next(p.value for p in power if (p.params["size"], p.params["dtype"]) == key)
            assert r.value == pytest.approx(tflops[key] / watts)
            assert r.value < 1.1
    # The app's table shows them, with their source, in watts.
    panel.show_records([rec])
    shown = [r for r in table_rows(panel) if r["Metric"] == "Power"]
    assert len(shown) == 6 and all(r["Value"].endswith(" W") and r["Value"] != "—"
                                   for r in shown)
    assert all(r["Flags"] == "energy counter" for r in shown)


def test_points_held_at_the_power_cap_say_so_with_their_clock(panel):
    (rec,) = h100("h100-gemm")
    bf16_4096 = next(r for r in rec.rows if r.metric == "tflops" and
                     r.params == {"size": 4096, "dtype": "bfloat16"})
    assert bf16_4096.flags == ["power_capped"]
    assert bf16_4096.note.startswith("measured at the board's power cap (software power cap); "
                                     "SM clock ")
    assert bf16_4096.note.endswith(" MHz of 1,980 max")
    panel.show_records([rec])
    throughput = [r for r in table_rows(panel) if r["Metric"] == "Throughput"]
    assert len(throughput) == 6 and all(r["Flags"] == "power capped" for r in throughput)


def test_resnet50_latency_has_no_tail_once_only_whole_batches_count():
    """The H200's p99 was 3.6x its p50, from one partial batch; the H100's four whole batches
    of 256 read within 0.5% of each other, and the rows say how few they are."""
    (rec,) = h100("h100-infer")
    lat = {r.params["percentile"]: r for r in rec.rows if r.metric == "batch_latency"}
    assert lat[99].value / lat[50].value < 1.005
    assert lat[50].note.startswith("from 4 synchronised batches of 256; fewer than 100")
    watts = next(r for r in rec.rows if r.metric == "power")
    per_watt = next(r for r in rec.rows if r.metric == "samples_per_watt")
    img_s = next(r for r in rec.rows if r.metric == "samples_per_s")
    assert watts.flags == ["energy_counter"] and 400 < watts.value <= 1.1 * POWER_LIMIT_W
    assert per_watt.value == pytest.approx(img_s.value / watts.value)


def test_an_llm_run_whose_cache_was_dropped_says_its_numbers_are_wrong(panel):
    """transformers 5.17 dropped the cache we passed as `cache=`: the run's own check caught
    it, and every place its decode figure is read says so."""
    (before,) = h100("h100-llm1b-t517-before")
    assert before.software["transformers"] == "5.17.0"
    assert before.settings["decode_loop"] == "eager"
    assert any("differs from running the whole sequence by 1.36e+00" in w
               for w in before.warnings)
    decode = next(r for r in before.rows if r.metric == "decode_tokens_per_s")
    assert "wrong_result" in decode.flags
    panel.show_records([before])
    shown = next(r for r in table_rows(panel) if r["Metric"].startswith("Decode")
                 and "tok/s" in r["Value"] and "bound" not in r["Metric"])
    assert "wrong result" in shown["Flags"]
    line = next(s for s in summary_lines([before]) if s.startswith("  LLM"))
    assert "not to be trusted: the result differs from its reference" in line


def test_with_the_cache_passed_the_decode_is_compiled_and_five_times_faster():
    (before,) = h100("h100-llm1b-t517-before")
    (after,) = h100("h100-llm1b")
    (big,) = h100("h100-llm8b-quick")

    def decode(rec):
        return next(r for r in rec.rows if r.metric == "decode_tokens_per_s")
    for rec in (after, big):
        assert rec.settings["decode_loop"] == "compiled" and not rec.warnings
        assert not any("wrong_result" in r.flags for r in rec.rows)
        compile_row = next(r for r in rec.rows if r.metric == "decode_compile_s")
        assert compile_row.value > 1          # compiled, and not counted in the decode
    assert decode(after).value > 5 * decode(before).value
    # Against the H100's published 3,350 GB/s over the weights and cache read per step.
    assert 30 < decode(after).pct_of_peak < 50 and 50 < decode(big).pct_of_peak < 75


def test_the_quick_suite_on_the_h100_reads_the_gpu_at_its_size():
    """The H200's quick suite said '210 TFLOPS (size 1024...)' and ran the tiny LLM; on the
    H100 the sizes grew to the GPU: bfloat16 N=4096, batch 512, Llama-3.1-8B."""
    runs = h100("h100-quick-suite")
    assert len(runs) == 9 and all(r.status == "ok" for r in runs)
    lines = summary_lines(runs)
    gpu = lines[lines.index("NVIDIA H100 80GB HBM3 (torch cuda:0)"):]
    assert gpu[1] == ("  Matrix multiply (TFLOPS): 685 TFLOPS (dtype bfloat16, size 4096; "
                      "69% of peak)")
    assert gpu[2].startswith("  Inference throughput: 18,868 img/s (batch_size 512,")
    assert "preset llama-3.1-8b" in gpu[4]
    gemm = next(r for r in runs if r.workload == "gemm" and r.device == "cuda:0")
    assert "sizes doubled up to" in gemm.settings["grow_bfloat16"]


def test_a_trusted_powers_mark_is_not_painted_as_a_warning(panel):
    """'energy counter' says the power is right: it was painted in the warning colour of
    'power not trusted'. Only doubts are painted now."""
    from PySide6.QtGui import QColor
    (rec,) = h100("h100-gemm")
    from tests.helpers.h200_records import h200
    panel.show_records([rec, h200("h200-gemmtf32")])
    table = panel.table
    alarm = {QColor(table.theme.warning).name(), QColor(table.theme.error).name()}
    rows = table_rows(panel)
    flags = [table.horizontalHeaderItem(j).text()
             for j in range(table.columnCount())].index("Flags")
    painted = {i: table.item(i, flags).foreground().color().name() in alarm
               for i in range(len(rows))}
    trusted = [i for i, r in enumerate(rows) if r["Flags"] == "energy counter"]
    doubted = [i for i, r in enumerate(rows) if r["Flags"] == "power not trusted"]
    assert trusted and not any(painted[i] for i in trusted)
    assert doubted and all(painted[i] for i in doubted)


def test_a_skipped_point_is_captioned_skipped_with_its_reason(panel):
    """The quick suite skipped N=16384 for time: the caption said 'Not measured
    (unsupported)'."""
    gemm = next(r for r in h100("h100-quick-suite") if r.workload == "gemm"
                and any("skipped" in row.flags for row in r.rows))
    skipped = next(row for row in gemm.rows if "skipped" in row.flags)
    panel.show_records([gemm])
    caption = panel.curves["tflops"].caption.text()
    assert "unsupported" not in caption
    assert f"size=16384 (skipped: {skipped.note[:40]}" in caption
