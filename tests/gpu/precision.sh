#!/bin/bash
# `train --device cuda --precision P` through the real CLI, for each precision:
#   cnn in fp32, tf32, bf16 and fp16 (synthetic data, 2 epochs of 40 steps, CUDA graphs on): every
#       run trains (finite losses, the JSON's precision says what ran, no step skipped after the
#       first epoch), and no other precision ends with a loss more than 25% above fp32's or a test
#       accuracy more than 5 points below it (such short runs part ways; better is allowed);
#   mlp in bf16 with CUDA graphs on and off: the epochs' losses IDENTICAL (the graph replays the
#       16-bit casts and products as they ran);
#   resnet in bf16: one error line naming the layer that has no 16-bit kernels, exit 2.
# Skipped (77) where --device cuda cannot train (no GPU, or a build without CUDA).
# usage: precision.sh SCALELAB
set -u
scalelab=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(train --device cuda --dataset synthetic --epochs 2 --max-steps 40 --batch-size 64 --quiet)
if ! "$scalelab" "${common[@]}" --model cnn --precision fp32 --json "$tmp/cnn_fp32.json" > "$tmp/log" 2>&1; then
  if grep -q -E 'no usable GPU|no GPU on this node|built without CUDA' "$tmp/log"; then
    echo "SKIP: no usable GPU here: $(grep -m1 error "$tmp/log")"
    exit 77
  fi
  echo "FAIL: cnn in fp32:"; cat "$tmp/log"; exit 1
fi
for run in "cnn tf32 on" "cnn bf16 on" "cnn fp16 on" "mlp bf16 on" "mlp bf16 off"; do
  set -- $run
  if ! "$scalelab" "${common[@]}" --model "$1" --precision "$2" --cuda-graphs "$3" --json "$tmp/$1_$2_$3.json" \
      > "$tmp/log" 2>&1; then
    echo "FAIL: $1 in $2 with CUDA graphs $3:"; cat "$tmp/log"; exit 1
  fi
done
"$scalelab" "${common[@]}" --model resnet --precision bf16 > "$tmp/resnet.log" 2>&1
rc=$?
if [ "$rc" != 2 ] || [ "$(grep -c '^error:' "$tmp/resnet.log")" != 1 ] || \
   ! grep -q '^error: --precision bf16: model resnet has a BatchNormalization layer' "$tmp/resnet.log"; then
  echo "FAIL: resnet in bf16 gave exit $rc:"; cat "$tmp/resnet.log"; exit 1
fi
python3 - "$tmp" <<'PY'
import json, math, sys
d = sys.argv[1]
def load(name):
    return json.load(open(f"{d}/{name}.json"))
ref = load("cnn_fp32")
runs = {"tf32": load("cnn_tf32_on"), "bf16": load("cnn_bf16_on"), "fp16": load("cnn_fp16_on")}
bad = []
for p, r in [("fp32", ref)] + list(runs.items()):
    if not r.get("precision", "").startswith(p + ":"):
        bad.append(f"cnn {p}: the JSON's precision is {r.get('precision')!r}")
    for e in r["epochs"]:
        if not math.isfinite(e["loss"]):
            bad.append(f"cnn {p} epoch {e['epoch']}: loss {e['loss']}")
    if r["epochs"][-1].get("skipped_steps", 0) != 0:
        bad.append(f"cnn {p}: {r['epochs'][-1]['skipped_steps']} steps skipped in the second epoch")
    last, want = r["epochs"][-1], ref["epochs"][-1]
    if last["loss"] > 1.25 * want["loss"]:
        bad.append(f"cnn {p} loss {last['loss']:.4f} against fp32's {want['loss']:.4f} (more than 25% above)")
    if last["test_accuracy"] < want["test_accuracy"] - 0.05:
        bad.append(f"cnn {p} test accuracy {last['test_accuracy']:.4f} against fp32's {want['test_accuracy']:.4f}")
on, off = load("mlp_bf16_on"), load("mlp_bf16_off")
for a, b in zip(on["epochs"], off["epochs"]):
    if a["loss"] != b["loss"]:
        bad.append(f"mlp bf16 epoch {a['epoch']} loss: {b['loss']!r} graphs off, {a['loss']!r} on (must be identical)")
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
print("ok: cnn last loss " + ", ".join(f"{p} {r['epochs'][-1]['loss']:.4f}" for p, r in [("fp32", ref)] + list(runs.items())) +
      f"; fp16 skipped {sum(e['skipped_steps'] for e in runs['fp16']['epochs'])} steps; mlp bf16 identical with graphs on and off")
PY
