#!/bin/bash
# `scalelab train --device cuda` where no GPU is usable (no driver, or a build without CUDA): it must
# exit non-zero within seconds, alone and under mpiexec -n 2, with one error line naming the cause
# (the CUDA error, or the missing CUDA build). Where a GPU is usable the run succeeds: skip (77).
# usage: device_cuda_error.sh SCALELAB
set -u
scalelab=$1
args=(train --device cuda --dataset synthetic --epochs 1 --max-steps 2 --batch-size 8 --no-eval --quiet)
check() {  # $1: label; the rest: the command
  local label=$1
  shift
  local start=$SECONDS err
  err=$(timeout 60 "$@" 2>&1 >/dev/null)
  local rc=$?
  if [ $rc -eq 0 ]; then
    echo "SKIP ($label): --device cuda trained, so a GPU is usable here"
    exit 77
  fi
  if [ $rc -eq 124 ]; then
    echo "FAIL ($label): still running after 60 s (hang)"
    exit 1
  fi
  # Under mpiexec the ranks' lines may interleave on stderr: look for the message, not line starts.
  local cause='--device cuda: (no usable GPU: cudaGetDeviceCount failed|no GPU on this node|this scalelab was built without CUDA)'
  if ! printf '%s\n' "$err" | grep -q 'error: ' || ! printf '%s\n' "$err" | grep -q -E -- "$cause"; then
    echo "FAIL ($label): no 'error: --device cuda: <cause>' message; stderr was:"
    printf '%s\n' "$err"
    exit 1
  fi
  echo "ok ($label): exit $rc after $((SECONDS - start)) s: $(printf '%s\n' "$err" | grep -m1 -o -E -- "$cause")"
}
check "one rank" "$scalelab" "${args[@]}"
check "mpiexec -n 2" mpiexec --allow-run-as-root --oversubscribe -n 2 "$scalelab" "${args[@]}"
