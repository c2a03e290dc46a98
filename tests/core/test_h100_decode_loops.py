"""The decode loops as a real H100 ran them (tests/data/h100/h100-llm-loops.json: Llama-3.2-1B
bf16 on the eager, compiled and fast loops, Llama-3.1-8B bf16 on the fast loop; and
h100-stream.json, the two STREAM runs of those sessions; the README gives the commands): each
decode row is held to the triad measured in its own session, on every surface, and Compare
puts each loop on a side of its own, named by its loop."""

from __future__ import annotations

import pytest

from siliconbench.core import cli
from siliconbench.core.compare_words import compared, sides_for
from siliconbench.core.kit.ceilings import MEASURED_TRIAD
from tests.helpers.h200_records import H100, h100


def loops() -> list:
    return h100("h100-llm-loops")


def decode_and_bound(rec, depth: int = 0) -> tuple:
    [decode] = [r for r in rec.rows if r.metric == "decode_tokens_per_s"
                and r.params["depth"] == depth]
    [bound] = [r for r in rec.rows if r.metric == "decode_roofline"
               and r.params["depth"] == depth]
    return decode, bound


def test_every_decode_row_is_held_to_the_largest_triad_of_its_session():
    streams = h100("h100-stream")
    for rec in loops():
        bound = rec.settings["memory_bound"]
        [stream] = [s for s in streams if s.id[:8] in bound["detail"]]
        triads = [r for r in stream.rows if r.params.get("op") == "triad"]
        largest = max(triads, key=lambda r: r.params["size_mb"])
        assert bound["source"] == MEASURED_TRIAD and bound["gb_per_s"] == largest.value
        decode, roofline = decode_and_bound(rec)
        # the bound is that triad over the bytes a step reads, and the decode row says so
        assert f"{largest.value:.0f} GB/s measured here by run {stream.id[:8]}" \
            in roofline.note and f"% of {roofline.value:.4g} tok/s" in decode.note
        assert decode.value < roofline.value


def test_results_show_gives_each_decode_its_share_of_the_measured_bound(tmp_path,
                                                                       monkeypatch, capsys):
    monkeypatch.setenv("SILICONBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")
    assert cli.main(["import", str(H100 / "h100-llm-loops.json")]) == 0
    for rec in loops():
        decode, bound = decode_and_bound(rec)
        capsys.readouterr()
        assert cli.main(["results", "--show", rec.id[:8]]) == 0
        shown = capsys.readouterr().out
        assert f"{round(100 * decode.value / bound.value)}% of memory bound" in shown
        assert rec.settings["decode_loop"] + " decode loop" in shown


def test_compare_puts_each_loop_on_its_own_side_named_by_it():
    runs = [r for r in loops() if r.params["preset"] == "llama-3.2-1b"]
    sides = sides_for(runs)
    assert sorted(s.label.rsplit("decode loop ", 1)[1] for s in sides) == \
        ["compiled", "eager", "fast"]
    cmp = compared(sides)
    [row] = [r for r in cmp.rows if r.metric == "decode_tokens_per_s"
             and r.params.get("depth") == 0]
    by_loop = {s.records[0].settings["decode_loop"]: c.value
               for s, c in zip(cmp.sides, row.cells)}
    for rec in runs:
        assert by_loop[rec.settings["decode_loop"]] == \
            pytest.approx(decode_and_bound(rec)[0].value)
