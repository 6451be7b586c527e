#!/usr/bin/env bash
# The GPU checks of docs/gpu-status.md in one go, on a machine with an NVIDIA GPU and the CUDA 13
# runtime libraries (cuBLAS, cuDNN, NCCL) but perhaps without this build's other dependencies.
#   tests/gpu/on_gpu.sh KIT OUT [STEP...]
# KIT holds bin/ (scalelab and the test_gpu_* binaries of a CUDA build), lib/ (shared libraries
# the machine may lack: each is used only where the machine has none of that name) and data/ (the
# four Fashion-MNIST IDX files). Every step writes its log (and JSON) under OUT and prints one
# summary line at the end. Steps (default: tests graphs resnet cnn):
#   tests   scalelab info, then every test_gpu_* binary in KIT/bin
#   graphs  tests/gpu/cuda_graphs.sh (CUDA graphs on against off through the CLI)
#   resnet  train --device cuda --model resnet --epochs 5 (JSON: resnet_cuda_5ep.json)
#   cnn     train --device cuda --model cnn --epochs 5 (JSON: cnn_cuda_5ep.json)
#   kernels ncu's kernel times of some four cnn steps at batch 1024, kernel by kernel (ncu.csv and
#           tests/gpu/kernel_times.py's table, kernels.txt)
#   compare tests/perf/compare_torch_gpu.py on resnet (batch 128), then cnn (batches 128, 1024),
#           each against PyTorch eager and torch.compile; COMPARE_RESNET_ARGS and COMPARE_CNN_ARGS
#           replace the default options
set -u
kit=$(cd "$1" && pwd); out=$2; shift 2
steps=("$@"); [ ${#steps[@]} -eq 0 ] && steps=(tests graphs resnet cnn)
mkdir -p "$out" /tmp/kitlib
for f in "$kit"/lib/*; do
  [ -e "$f" ] || continue
  ldconfig -p | grep -q "$(basename "$f") " || ln -sf "$f" /tmp/kitlib/
done
cuda_libs=$(python3 - <<'PY' 2>/dev/null
import glob, os
dirs = sorted({os.path.dirname(p) for p in glob.glob('/opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib/*.so*')})
print(':'.join(dirs))
PY
)
export LD_LIBRARY_PATH=/tmp/kitlib:/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${cuda_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 SCALELAB_DATA_DIR="$kit/data"
bin=$kit/bin
summary=()
note() { summary+=("$1"); echo "== $1"; }
for step in "${steps[@]}"; do
  case $step in
    tests)
      nvidia-smi -L > "$out/gpu.txt" 2>&1; nvidia-smi >> "$out/gpu.txt" 2>&1
      "$bin/scalelab" info > "$out/info.txt" 2>&1; note "info rc=$?"
      for t in "$bin"/test_gpu_*; do
        [ -x "$t" ] || continue
        "$t" --gtest_brief=1 > "$out/$(basename "$t").log" 2>&1; rc=$?
        note "$(basename "$t") rc=$rc $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/$(basename "$t").log" | tr '\n' ' ')"
        grep -E '^\[  FAILED  \]|Failure|Expected|Which is|rel_error|actual' "$out/$(basename "$t").log" | head -20
      done ;;
    resnet|cnn)
      "$bin/scalelab" train --device cuda --model "$step" --epochs 5 --json "$out/${step}_cuda_5ep.json" \
        > "$out/${step}_cuda_5ep.log" 2>&1; rc=$?
      note "train $step cuda rc=$rc $(grep -E 'test accuracy|images/s' "$out/${step}_cuda_5ep.log" | tail -2 | tr '\n' ' ')"
      tail -4 "$out/${step}_cuda_5ep.log" ;;
    graphs)
      "$(dirname "$0")/cuda_graphs.sh" "$bin/scalelab" > "$out/cuda_graphs.log" 2>&1
      note "cuda_graphs.sh rc=$? $(tail -3 "$out/cuda_graphs.log" | tr '\n' ' ')" ;;
    kernels)
      ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      [ -n "$ncu_bin" ] || { note "kernels: no ncu on this machine"; continue; }
      # About 45 launches a step (cnn, CUDA graphs off): skip some 9 steps, profile 4-5.
      "$ncu_bin" --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 400 --launch-count 200 \
        "$bin/scalelab" train --device cuda --cuda-graphs off --model cnn --batch-size 1024 --max-steps 20 --epochs 1 \
        --no-eval --quiet > "$out/ncu.csv" 2> "$out/ncu.err"
      note "ncu rc=$?"
      python3 "$(dirname "$0")/kernel_times.py" "$out/ncu.csv" | tee "$out/kernels.txt" ;;
    compare)
      here=$(cd "$(dirname "$0")/../perf" && pwd)
      peers="--peers eager,reduce-overhead,max-autotune --rounds 2 --steps 200 --peer-timeout 150"
      PYTHONUNBUFFERED=1 python3 "$here/compare_torch_gpu.py" --scalelab "$bin/scalelab" --data-dir "$kit/data" \
        ${COMPARE_RESNET_ARGS:---model resnet --batches 128 $peers} --json "$out/compare_resnet.json" \
        2>&1 | tee "$out/compare_resnet.log" | grep -E '^(round|  )' | tail -3
      note "compare resnet rc=${PIPESTATUS[0]}"; tail -14 "$out/compare_resnet.log"
      PYTHONUNBUFFERED=1 python3 "$here/compare_torch_gpu.py" --scalelab "$bin/scalelab" --data-dir "$kit/data" \
        ${COMPARE_CNN_ARGS:---model cnn --batches 128,1024 $peers} --json "$out/compare_cnn.json" \
        2>&1 | tee "$out/compare_cnn.log" | grep -E '^(round|  )' | tail -3
      note "compare cnn rc=${PIPESTATUS[0]}"; tail -22 "$out/compare_cnn.log" ;;
    *) note "unknown step $step" ;;
  esac
done
echo "== summary"; printf '%s\n' "${summary[@]}"
