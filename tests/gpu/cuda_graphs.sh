#!/bin/bash
# `train --device cuda` with CUDA graphs on against off (the same command otherwise): the graph
# replays each step with that step's learning rate, bias corrections and Dropout keys.
#   mlp (no convolution, no atomics in its gradients): the epochs' losses and test accuracies
#       must be IDENTICAL, over a cosine schedule (a new learning rate every step);
#   cnn (Dropout; convolution bias gradients summed with float atomics, so not bit for bit):
#       losses within 1% and test accuracies within 1 point (a coarse check: the device-model
#       test's CapturedGraphReplaysWithEachForwardsDropoutKeys checks the keys themselves).
# Synthetic data (no data set needed), so that a machine without a GPU skips here.
# Skipped (77) where --device cuda cannot train (no GPU, or a build without CUDA).
# usage: cuda_graphs.sh SCALELAB
set -u
scalelab=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(train --device cuda --dataset synthetic --epochs 2 --max-steps 40 --batch-size 64 --quiet --lr-schedule cosine)
if ! "$scalelab" "${common[@]}" --model mlp --cuda-graphs off --json "$tmp/mlp_off.json" > "$tmp/log" 2>&1; then
  if grep -q -E 'no usable GPU|no GPU on this node|built without CUDA' "$tmp/log"; then
    echo "SKIP: no usable GPU here: $(grep -m1 error "$tmp/log")"
    exit 77
  fi
  echo "FAIL: mlp with CUDA graphs off:"; cat "$tmp/log"; exit 1
fi
for run in "mlp on" "cnn off" "cnn on"; do
  set -- $run
  if ! "$scalelab" "${common[@]}" --model "$1" --cuda-graphs "$2" --json "$tmp/$1_$2.json" > "$tmp/log" 2>&1; then
    echo "FAIL: $1 with CUDA graphs $2:"; cat "$tmp/log"; exit 1
  fi
done
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
def load(name):
    return json.load(open(f"{d}/{name}.json"))
mlp_off, mlp_on, cnn_off, cnn_on = (load(n) for n in ("mlp_off", "mlp_on", "cnn_off", "cnn_on"))
bad = []
if "one CUDA graph" not in mlp_on.get("execution", ""):
    bad.append(f"mlp with graphs on says it ran {mlp_on.get('execution')!r}")
if "kernel by kernel" not in mlp_off.get("execution", ""):
    bad.append(f"mlp with graphs off says it ran {mlp_off.get('execution')!r}")
for off, on in zip(mlp_off["epochs"], mlp_on["epochs"]):
    for key in ("loss", "test_loss", "test_accuracy"):
        if off[key] != on[key]:
            bad.append(f"mlp epoch {off['epoch']} {key}: {off[key]!r} off, {on[key]!r} on (must be identical)")
for off, on in zip(cnn_off["epochs"], cnn_on["epochs"]):
    if abs(off["loss"] - on["loss"]) > 0.01 * off["loss"]:
        bad.append(f"cnn epoch {off['epoch']} loss: {off['loss']} off, {on['loss']} on (more than 1% apart)")
    if abs(off["test_accuracy"] - on["test_accuracy"]) > 0.01:
        bad.append(f"cnn epoch {off['epoch']} test accuracy: {off['test_accuracy']} off, {on['test_accuracy']} on")
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
e = mlp_on["epochs"][-1]
print(f"ok: mlp identical with graphs on and off (loss {e['loss']:.6f}); cnn loss "
      f"{cnn_off['epochs'][-1]['loss']:.4f} off, {cnn_on['epochs'][-1]['loss']:.4f} on; "
      f"images/sec cnn {cnn_off['epochs'][-1]['images_per_second']:.0f} off, {cnn_on['epochs'][-1]['images_per_second']:.0f} on")
PY
