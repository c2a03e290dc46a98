"""Training throughput of the models people quote (tf-metal-experiments' table): ResNet50 and
MobileNetV2 with SGD, DistilBERT and BERT-Large with Adam, on synthetic data made on the device."""

from __future__ import annotations

from core.params import Param
from core.workloads import Workload
from core.workloads.shared import CHECK_BATCH, ROTATING_BATCHES

TRANSFORMER_MODELS = ("distilbert", "bert-large")
TRAIN_MODELS = ("resnet50", "mobilenet_v2") + TRANSFORMER_MODELS
# The published M1 Max table's batch sizes (reference-results.md).
PUBLISHED_BATCH = {"resnet50": 64, "mobilenet_v2": 128, "distilbert": 64, "bert-large": 32}

# What the model and its data are; the memory workload sweeps the batch size of the same.
MODEL_PARAMS = (
    Param("model", "choice", "resnet50", "The model to train.", choices=TRAIN_MODELS),
    Param("precision", "choice", "fp32", "fp32, or mixed: autocast to float16 or bfloat16 "
          "where the device supports it (the run says so where it does not).",
          choices=("fp32", "mixed")),
    Param("channels_last", "bool", False, "CNNs: NHWC memory layout."),
    Param("image_size", "int", 224, "CNNs: image height and width in pixels.", min=16,
          max=1024),
    Param("seq_len", "int", 128, "Transformers: tokens per sequence.", min=1, max=512),
    Param("layers", "int", None, "Transformers: number of layers.", min=1, max=48,
          auto="the model's own: 6 for distilbert, 24 for bert-large"),
)
BATCH_PARAM = Param("batch_size", "int", None, "Samples per training step.", min=1,
                    max=100_000, auto="the published table's: 64 for resnet50 and distilbert, "
                                      "128 for mobilenet_v2, 32 for bert-large")
# Sustained mode, shared with infer.
DURATION_PARAM = Param("duration", "float", None, "Sustained mode: run this many minutes and "
                       "report throughput per minute and the last/first-minute ratio "
                       "(thermal throttling).", min=0.05, max=600,
                       auto="the normal protocol (until the timing is stable)")

WORKLOAD = Workload(
    name="train",
    title="Training throughput",
    summary="Training samples per second of ResNet50, MobileNetV2, DistilBERT and BERT-Large "
            "on synthetic data.",
    frameworks=("torch", "tensorflow", "mlx"),
    metric="samples_per_s",
    module=__name__,
    params=MODEL_PARAMS[:1] + (BATCH_PARAM,) + MODEL_PARAMS[1:] + (
        Param("compile", "bool", False, "Compile the training step: torch.compile, or "
                                        "mx.compile on MLX (on TensorFlow use --xla); the "
                                        "run says so where it cannot."),
        Param("check", "bool", False, "Also train the same seeded model on the same data on the "
                                      "CPU and compare the loss curves."),
        Param("check_steps", "int", 5, "Training steps the --check comparison takes.", min=2,
              max=1000),
        Param("xla", "bool", False, "TensorFlow: compile the training step with XLA "
                                    "(jit_compile), as the published RTX 3090 runs did."),
        DURATION_PARAM,
    ),
)


def task_for(params: dict, dropout: bool = True):
    """The models.Task the parameters name (CNN at image_size, transformer at seq_len)."""
    from core.frameworks.torch import models
    name = params["model"]
    if name in TRANSFORMER_MODELS:
        return models.transformer_task(name, params["seq_len"], params["layers"], dropout)
    return models.vision_task(name, params["image_size"], models.NUM_CLASSES, dropout)


def run(ctx, params: dict) -> None:
    if ctx.framework != "torch":     # Keras and MLX build their own models; same rows
        from core.workloads.shared import models_for
        return models_for(ctx.framework).train(ctx, params)
    import torch
    import torch.nn.functional as F

    from core.frameworks.torch import models

    dev = ctx.device
    batch_size = params["batch_size"] or PUBLISHED_BATCH[params["model"]]
    task = task_for(params)
    channels_last = params["channels_last"] and task.is_image
    if params["channels_last"] and not task.is_image:
        ctx.warn("--channels-last applies to CNNs only; ignored.")
    if params["layers"] and task.is_image:
        ctx.warn("--layers applies to transformers only; ignored.")
    total = 4 if params["check"] else 3
    watch = models.FallbackWatch()
    with watch.watching(), models.out_of_memory_at(batch_size):
        ctx.progress(0, total, "building the model")
        amp = models.resolve_precision(ctx, params["precision"])
        torch.manual_seed(0)
        model = task.build().to(dev).train()
        batches = [task.batch(batch_size, dev) for _ in range(ROTATING_BATCHES)]
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
            batches = [(x.contiguous(memory_format=torch.channels_last), y) for x, y in batches]
        step = models.TrainStep(model, task.optimizer, F.cross_entropy, batches, amp)
        ctx.progress(1, total, "counting FLOPs")
        flops = models.count_flops(step)
        if params["compile"]:
            models.compile_or_eager(ctx, step)
        ctx.record_settings(channels_last=channels_last, flops_per_step=flops)
        ctx.progress(2, total, "measuring")
        ctx.adapter.reset_peak_memory(dev)
        m = models.measure_run(ctx, step, params["duration"])
        watch.check_output(step(), dev)
        # The point as the published tables give it (resources/reference), so runs compare
        # with them; image size, layers and the like are the run's parameters.
        point = {"model": params["model"], "batch_size": batch_size,
                 "precision": "fp32" if amp is None else "mixed"}
        rows = models.throughput_rows(ctx, m, batch_size, task.unit, point, flops, amp,
                                      watch.flags, watch.note)
        rows.append(models.memory_row(ctx, point, watch.flags))
        rows += models.sustained_rows(m, batch_size, task.unit, point)
        for row in rows:
            ctx.row(row)
        del step, model, batches
        ctx.adapter.empty_cache(dev)

        if params["check"]:
            ctx.progress(3, total, "comparing with the CPU")
            torch.manual_seed(0)
            reference = task_for(params, dropout=False)
            cpu = torch.device("cpu")
            check_batches = [reference.batch(min(batch_size, CHECK_BATCH), cpu)
                             for _ in range(ROTATING_BATCHES)]
            ctx.row(models.compare_with_cpu(
                ctx, reference.build(), reference.optimizer, F.cross_entropy, check_batches,
                amp, params["check_steps"], {**point, "batch_size": len(check_batches[0][1])},
                channels_last))
    watch.report(ctx)
    ctx.progress(total, total, "done")
