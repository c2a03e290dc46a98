#!/bin/bash
# Every CUDA check the issues ask for, in one go on a machine with one NVIDIA GPU (a lent
# H100/H200 has 15 minutes; this takes about 9): the GPU's name and limits, the devices
# SiliconBench lists, the energy rows of a GEMM sweep against the board's counter read around
# the whole run with each point's throttle flags (gpu_energy_check.py), ResNet50 inference's
# latency percentiles and power, the quick suite's time and headline against full sweeps on the
# GPU (quick_suite_fit.py), and the LLM decode loop against transformers' generate
# (llm_fidelity.py). Each step has its own time limit, so one that hangs costs only itself.
# Every run lands in one store, exported at the end as run records (siliconbench import).
#
#     bash benchmarks/gpu_checks.sh OUT_FOLDER      (python3 = the one with torch; PYTHON=...)

out=${1:-gpu-checks}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export SILICONBENCH_HOME
SILICONBENCH_HOME=$(mktemp -d /tmp/sb-gpu-XXXX)
py=${PYTHON:-python3}

step() {  # step NAME SECONDS COMMAND...: run it under a limit, its output into the log too
    local name=$1 limit=$2
    shift 2
    echo "=== $name: $* ($(date +%T))"
    timeout -k 10 "$limit" "$@" 2>&1
    echo "=== $name exit $? ($(date +%T))"
}

{
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,memory.total \
        --format=csv
    nproc
    step devices 90 "$py" -m siliconbench.core.cli devices
    step energy 180 "$py" benchmarks/gpu_energy_check.py --sizes 4096,8192,16384 \
        --dtypes bfloat16,float32
    step infer 150 "$py" -m siliconbench.core.cli run infer --framework torch --device cuda \
        --model resnet50 --batch-size 256 --precision mixed --channels-last
    step quick 300 "$py" benchmarks/quick_suite_fit.py --frameworks torch \
        --max-product-s 0.3 --max-batch 512 --sweep-devices cuda
    step llm 240 "$py" benchmarks/llm_fidelity.py --device gpu --only torch \
        --preset llama-3.2-1b --dtype bfloat16 --prompt 128 --gen 128 --rounds 2
    step export 60 "$py" -m siliconbench.core.cli export -o "$out/records.json"
} 2>&1 | tee "$out/checks.log"
