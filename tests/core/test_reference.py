"""Published reference results: they load and validate, say where they come from, use the
workload names and parameters measured runs use (so compare matches them), compare by value
only, and never enter the store."""

import json

import pytest

from siliconbench.core import cli, reference
from siliconbench.core.compare_stats import PUBLISHED_VERDICT, Side, compare, resolve_sides
from siliconbench.core.results import records_from_json
from siliconbench.core.store import Store
from tests.helpers.sample_records import infer_run

# What the measured workloads call their points and metrics.
POINTS = {"train": {"model", "batch_size", "precision"},
          "infer": {"model", "batch_size", "data"},
          "gemm": {"size", "dtype"}}
MODELS = {"resnet50", "mobilenet_v2", "distilbert", "bert-large", "densenet121"}


def test_references_load_validate_and_carry_provenance():
    refs = reference.references()
    assert len(refs) == 109 and len({r.id for r in refs}) == len(refs)   # 79 of llama.cpp
    for r in refs:
        assert r.id.startswith("pub-") and r.source == "published" and r.status == "ok"
        assert {"source", "hardware", "software", "settings"} <= set(r.provenance), r.id
        assert r.telemetry is None and r.rows
        for row in r.rows:
            assert row.stats is None and row.samples == [] and row.value is not None


def test_reference_files_are_export_files_that_validate():
    from importlib import resources
    folder = resources.files("siliconbench.resources").joinpath("reference")
    names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".json"))
    assert names == ["llamacpp-apple-silicon.json", "m1-tensorflow-benchmark.json",
                     "m1-tensorflow-mlp.json", "mlx-lm-benchmarks.json", "pytorch-mps-inference.json",
                     "tf-metal-experiments.json", "woolfel-coreml-densenet121.json",
                     "wwdc22-horovod-scaling.json"]
    for name in names:
        assert records_from_json(folder.joinpath(name).read_text(encoding="utf-8"))


def test_references_use_the_measured_workloads_names_and_points():
    for r in reference.references():
        for row in r.rows:
            if row.params and r.workload in POINTS:
                assert set(row.params) == POINTS[r.workload], (r.id, row.params)
            if r.workload in ("train", "infer") and row.params:
                assert row.params["model"] in MODELS
            if r.workload == "mlp":
                assert row.params["preset"] in ("3000-1000", "depth-sweep")
                if row.params["preset"] == "depth-sweep":
                    assert row.metric == "train_seconds" and row.params["depth"] in (5, 10, 15, 20)
                else:
                    assert row.metric in ("epoch_seconds", "us_per_sample", "final_accuracy")


def value(ref_id: str, metric: str, **point):
    [rec] = reference.find(ref_id)
    return next(r.value for r in rec.rows if r.metric == metric
                and all(r.params.get(k) == v for k, v in point.items()))


def test_the_published_figures():
    assert value("pub-tfmetal-train-m1max32", "samples_per_s", model="resnet50") == 135
    assert value("pub-tfmetal-train-m1max32", "power", model="bert-large") == 36
    assert value("pub-tfmetal-train-rtx3090", "samples_per_s", model="mobilenet_v2",
                 batch_size=256) == 2197
    assert value("pub-tfmetal-train-rtx3090", "samples_per_s", model="resnet50",
                 precision="mixed", batch_size=64) == 957
    assert value("pub-tfmetal-gemm-m1max32", "tflops", size=8192) == 8.0
    assert value("pub-infer-mbp14-m1max", "samples_per_s") == 247.2
    assert value("pub-infer-studio-m1max", "max_temperature") == 57.0
    assert value("pub-mlp3000-a100", "us_per_sample") == 97
    assert value("pub-mlpdepth-m1-cpu", "train_seconds", depth=20) == 215.8
    assert value("pub-mlpdepth-k80", "train_seconds", depth=15) == 69.7
    assert value("pub-mlxlm-qwen3-4b-bf16", "prefill_tokens_per_s", prompt=2048) == 1780.63
    assert value("pub-mlxlm-qwen3-4b-bf16", "decode_tokens_per_s", depth=2048) == 52.47
    assert value("pub-mlxlm-qwen3-4b-q4", "decode_tokens_per_s", gen_tokens=128) == 134.52
    assert value("pub-mlxlm-qwen3-4b-q4", "peak_memory") == 3.35e9


def test_published_llm_rows_have_the_points_a_real_run_makes():
    """So Compare pairs a measured qwen3-4b run (prompt 2048, depth 2048, 128 tokens) with
    mlx-lm's own M4 Max figures: the same metrics, units and point keys as a real run's."""
    from tests.helpers.recorded import recorded
    measured = {(r.metric, r.unit, tuple(sorted(r.params))) for r in recorded("llm-mlx").rows
                if r.metric not in ("decode_roofline", "ttft_ms")}   # mlx-lm gives no TTFT
    for ref_id in ("pub-mlxlm-qwen3-4b-bf16", "pub-mlxlm-qwen3-4b-q8", "pub-mlxlm-qwen3-4b-q4"):
        [rec] = reference.find(ref_id)
        assert {(r.metric, r.unit, tuple(sorted(r.params))) for r in rec.rows} == measured
        assert all(r.params["preset"] == "qwen3-4b" for r in rec.rows)


def test_laptop_versus_studio_compares_by_value():
    cmp = compare(resolve_sides(["pub-infer-mbp14", "pub-infer-studio"]))
    thr, temp = cmp.rows
    assert thr.cells[1].ratio == pytest.approx(263.1 / 247.2)
    assert thr.cells[1].verdict == PUBLISHED_VERDICT
    assert (temp.metric, temp.cells[0].value, temp.cells[1].value) == ("max_temperature", 99, 57)


def test_a_measured_run_matches_its_published_counterpart():
    mine = infer_run("My MacBook Pro", 250.0)
    cmp = compare([Side("mine", [mine])] + resolve_sides(["pub-infer-studio"]))
    [row] = cmp.rows
    assert row.metric == "samples_per_s" and row.cells[1].verdict == PUBLISHED_VERDICT
    assert row.cells[0].ci_low is not None and row.cells[1].ci_low is None


def test_reference_command_lists_and_never_stores(capsys):
    assert cli.main(["reference"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "pub-infer-studio-m1max" in out and "tlkh/tf-metal-experiments" in out
    assert cli.main(["reference", "--json"]) == cli.EXIT_OK
    assert len(records_from_json(capsys.readouterr().out)) == 109
    assert cli.main(["reference", "--show", "pub-tfmetal-gemm"]) == cli.EXIT_OK
    assert "tflops_sweep.py" in capsys.readouterr().out
    assert cli.main(["reference", "--show", "pub-"]) == cli.EXIT_USAGE
    assert cli.main(["compare", "pub-infer-mbp14", "pub-infer-studio", "--json"]) == cli.EXIT_OK
    assert json.loads(capsys.readouterr().out)["rows"]
    assert Store().runs() == []
