#!/bin/bash
# The CUDA checks the issues ask for, in one go on a machine with one NVIDIA GPU. A lent
# H100/H200 has 15 minutes in all, its start included; the default steps take about 9 and
# stop within 10 whatever hangs (each step has its own time limit, so one that hangs costs
# only itself; the step times below were measured on an H100 on 2026-11-27). Every run lands in one store, exported as run records (siliconbench import)
# before the last step and again at the end.
#
#     bash benchmarks/gpu_checks.sh OUT_FOLDER [STEP...]   (python3 = the one with torch;
#                                                          PYTHON=... for another)
#
# Steps (default: those still unmeasured, in this order, most wanted first):
#   bandwidth   STREAM's four kernels at 1 and 4 GB: the measured triad every decode row
#               below is held to (its % of roofline); 15 s
#   llm8b       Llama-3.1-8B bf16 on the fast and the compiled loop at depth 0: decode
#               against the measured triad (goal >= 0.75), and beside the 1B's depth-0 rows
#               each loop's fixed per-token cost from two model sizes; the fast one 47 s
#   loops       Llama-3.2-1B bf16 on each loop (eager, compiled, fast) at depths 0 and 8192:
#               each loop's fixed per-token cost from two depths (the decode_fixed_ms row);
#               40-50 s each at one depth, more than 52 s at depths 0 and 16384
#   quick       the quick suite, whole, on every device (its total time): more than 150 s
# Measured on 2026-11-27 (tests/data/h100/README.md), by name only:
#   fidelity    SiliconBench's CUDA decode against transformers' compiled generate
#               (benchmarks/llm_fidelity.py, goal >= 0.97); 105 s
#   nccl        the TCP sockets a local NCCL all-reduce opens (benchmarks/local_sockets.py),
#               one rank, then two on the one GPU; 30 s
# Earlier rounds' steps, by name only: energy (GEMM energy against the board's counter),
# infer (ResNet50 latency percentiles and power), quickfit (the quick suite against full
# sweeps, about 5 minutes).

out=${1:-gpu-checks}
shift
steps=${*:-bandwidth llm8b loops quick}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export SILICONBENCH_HOME
SILICONBENCH_HOME=$(mktemp -d /tmp/sb-gpu-XXXX)
py=${PYTHON:-python3}
sb=("$py" -m siliconbench.core.cli)
cuda=(--framework torch --device cuda -y)
llm=("${sb[@]}" run llm "${cuda[@]}" --dtype bfloat16 --prompts 128 --gen-tokens 64)

step() {  # step NAME SECONDS COMMAND...: run it under a limit, its output into the log too
    local name=$1 limit=$2
    shift 2
    echo "=== $name: $* ($(date +%T))"
    timeout -k 10 "$limit" "$@" 2>&1
    echo "=== $name exit $? ($(date +%T))"
}

export_records() {
    "${sb[@]}" export -o "$out/records.json" >/dev/null 2>&1 || echo "export failed"
}

run_step() {
    case $1 in
    bandwidth) step bandwidth 60 "${sb[@]}" run bandwidth "${cuda[@]}" --sizes-mb 1024,4096 ;;
    llm8b)
        for loop in fast compiled; do
            step "llm8b-$loop" 80 "${llm[@]}" --preset llama-3.1-8b --depths 0 \
                --decode-loop "$loop"
        done ;;
    loops)
        for loop in fast compiled eager; do
            step "llm1b-$loop" 80 "${llm[@]}" --preset llama-3.2-1b --depths 0,8192 \
                --decode-loop "$loop"
        done ;;
    fidelity) step fidelity 150 "$py" benchmarks/llm_fidelity.py --device gpu --only torch \
        --preset llama-3.2-1b --dtype bfloat16 --prompt 128 --gen 128 --rounds 1 ;;
    nccl)
        for ranks in 1 2; do
            step "nccl-$ranks" 45 \
                "$py" benchmarks/local_sockets.py run allreduce "${cuda[@]}" --backend nccl \
                --processes "$ranks" --sizes 1048576,67108864 --dtypes float32 --quick
        done ;;
    quick)
        export_records
        step quick 240 "${sb[@]}" quick ;;
    energy) step energy 180 "$py" benchmarks/gpu_energy_check.py --sizes 4096,8192,16384 \
        --dtypes bfloat16,float32 ;;
    infer) step infer 150 "${sb[@]}" run infer "${cuda[@]}" --model resnet50 --batch-size 256 \
        --precision mixed --channels-last ;;
    quickfit) step quickfit 300 "$py" benchmarks/quick_suite_fit.py --frameworks torch \
        --max-product-s 0.3 --max-batch 512 --sweep-devices cuda ;;
    *) echo "no step $1" ;;
    esac
}

{
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,memory.total \
        --format=csv
    echo "cores: $(nproc)"
    "$py" -c "import torch, transformers; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'cuda', torch.version.cuda, \
'nccl', '.'.join(map(str, torch.cuda.nccl.version())))"
    for s in $steps; do
        run_step "$s"
    done
    export_records
    echo "=== done ($(date +%T))"
} 2>&1 | tee "$out/checks.log"
