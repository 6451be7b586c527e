#!/bin/bash
# End-to-end cases for `scalelab data make-jpeg` and `scalelab pipeline`, run by CTest:
#   cases.sh CASE SCALELAB FIXTURE_TOOL WORKDIR
# Exit 77 (CTest's skip) with a one-line reason where Fashion-MNIST is not installed.
set -u -o pipefail  # `scalelab ... | tee f || fail` must fail with scalelab, not with tee
CASE=$1 SCALELAB=$2 FIXTURE=$3 WORK=$4/$1
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

# expect_error CODE PATTERN -- command...: exit CODE, and stderr is one line matching PATTERN.
expect_error() {
  local code=$1 pattern=$2; shift 3
  "$@" > out.txt 2> err.txt
  local rc=$?
  cat out.txt err.txt
  [ "$rc" = "$code" ] || fail "exit code $rc, expected $code: $*"
  [ "$(wc -l < err.txt)" = 1 ] || fail "stderr is not one line: $*"
  grep -q -- "$pattern" err.txt || fail "error line does not match '$pattern'"
}

json() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

# A JPEG set from the IDX fixture (64 train samples of 28x28), upsampled to 64x64 in colour.
fixture_set() {
  "$FIXTURE" idx 64 16 > /dev/null || fail "fixture"
  "$SCALELAB" data make-jpeg --from idx --size 64 --quality 85 --colour --out set || fail "make-jpeg from the fixture"
}

case $CASE in
  make_and_measure)
    fm=${SCALELAB_DATA_DIR:-/usr/share/datasets/fashion-mnist}
    if ! ls "$fm"/train-images-idx3-ubyte* > /dev/null 2>&1; then
      echo "skipped: Fashion-MNIST is not installed (install dataset-fashion-mnist or set SCALELAB_DATA_DIR)"; exit 77
    fi
    "$SCALELAB" data make-jpeg --from fashion-mnist --size 96 --quality 90 --colour --limit 40 --out fm | tee make.txt || fail "make-jpeg"
    grep -q "wrote fm: 40 JPEGs of 96x96 (colour, quality 90)" make.txt || fail "make-jpeg's summary"
    [ "$(json fm/manifest.json 'd["count"], d["width"], d["channels"], d["classes"]')" = "40 96 3 10" ] || fail "manifest"
    [ "$(stat -c %s fm/index.bin)" = $((32 + 40 * 16)) ] || fail "index.bin's size"
    "$SCALELAB" pipeline --dataset jpeg:fm --workers 1,2 --augment simple,complex --decode accurate,fast \
      --batch-size 8 --images 60 --json p.json | tee pipe.txt || fail "pipeline"
    grep -q "PCIe Gen4 x16" pipe.txt || fail "no PCIe line"
    [ "$(json p.json 'd["schema"], len(d["rows"])')" = "scalelab.pipeline 8" ] || fail "schema or rows"
    [ "$(json p.json 'sorted({(r["workers"], r["augment"], r["decode"]) for r in d["rows"]}) == sorted({(w, a, c) for w in (1, 2) for a in ("simple", "complex") for c in ("accurate", "fast")})')" = True ] || fail "configurations"
    [ "$(json p.json 'all(r["images"] == 60 and r["skipped"] == 0 and r["images_per_s"] > 0 and r["stage_seconds"]["decode"] > 0 and r["stage_seconds"]["augment"] > 0 for r in d["rows"])')" = True ] || fail "rows' figures"
    [ "$(json p.json '[round(r["decoded_MBps"] / (r["images_per_s"] * 3 * 84 * 84 * 4 / 1e6), 6) for r in d["rows"]] == [1.0] * 8')" = True ] || fail "decoded MB/s is not images/s x the 84x84x3 float tensor"
    [ "$(json p.json '[h["link"] for h in d["host_to_device"]]')" = "['PCIe Gen3 x16', 'PCIe Gen4 x16', 'PCIe Gen5 x16']" ] || fail "links"
    ;;
  fixture_set)
    fixture_set
    [ "$(json set/manifest.json 'd["count"], d["source"]')" = "64 idx train" ] || fail "manifest"
    "$SCALELAB" pipeline --dataset jpeg:set --workers 2 --augment complex --decode fast --crop 48 --cold --images 100 --json p.json || fail "pipeline"
    [ "$(json p.json 'd["rows"][0]["images"], d["cold"]')" = "100 True" ] || fail "row"
    ;;
  bad_input)
    fixture_set
    expect_error 2 "give --dataset jpeg:DIR" -- "$SCALELAB" pipeline
    expect_error 2 "\-\-dataset set: give jpeg:DIR" -- "$SCALELAB" pipeline --dataset set
    expect_error 2 "\-\-dataset jpeg:nope: no such folder" -- "$SCALELAB" pipeline --dataset jpeg:nope
    expect_error 2 "\-\-workers 1,x: 'x' is not a count" -- "$SCALELAB" pipeline --dataset jpeg:set --workers 1,x
    expect_error 2 "\-\-augment fancy: 'fancy' is not simple or complex" -- "$SCALELAB" pipeline --dataset jpeg:set --augment fancy
    expect_error 2 "\-\-decode slow: 'slow' is not accurate or fast" -- "$SCALELAB" pipeline --dataset jpeg:set --decode slow
    expect_error 2 "\-\-on-bad-sample maybe: give stop or skip" -- "$SCALELAB" pipeline --dataset jpeg:set --on-bad-sample maybe
    expect_error 2 "\-\-batch-size 0" -- "$SCALELAB" pipeline --dataset jpeg:set --batch-size 0
    expect_error 2 "\-\-prefetch -1" -- "$SCALELAB" pipeline --dataset jpeg:set --prefetch -1
    expect_error 2 "\-\-crop 65: the crop must fit the data set's 64x64 images" -- "$SCALELAB" pipeline --dataset jpeg:set --crop 65
    expect_error 2 "^error: \-\-crop 2: the model cnn does not fit inputs of 2x2 .*give a larger crop" \
      -- "$SCALELAB" train --dataset jpeg:set --model cnn --crop 2 --batch-size 8 --no-eval --max-steps 1
    expect_error 2 "give --out DIR" -- "$SCALELAB" data make-jpeg
    expect_error 2 "unknown action 'make-png'" -- "$SCALELAB" data make-png --out x
    expect_error 2 "\-\-quality 0: give 1..100" -- "$SCALELAB" data make-jpeg --from idx --quality 0 --out x
    expect_error 2 "\-\-size 0: give 1..16384" -- "$SCALELAB" data make-jpeg --from idx --size 0 --out x
    rm set/index.bin
    expect_error 2 "jpeg:set: index.bin is missing" -- "$SCALELAB" pipeline --dataset jpeg:set
    printf 'NOTANINDEX-but-long-enough-for-a-header' > set/index.bin
    expect_error 2 "set/index.bin: not a JPEG data set index" -- "$SCALELAB" pipeline --dataset jpeg:set
    ;;
  bad_samples)
    fixture_set
    "$SCALELAB" data make-jpeg --from idx --size 32 --limit 1 --colour --out small > /dev/null || fail "make-jpeg --size 32"
    # corrupt N HOW: sample N of set/ becomes truncated (its size halved in the index), not a JPEG
    # (its bytes overwritten) or the 32x32 JPEG of small/ (appended to images.bin).
    corrupt() {
      python3 - "$1" "$2" <<'PY' || fail "corrupting sample $1"
import struct, sys
n, how = int(sys.argv[1]), sys.argv[2]
idx = bytearray(open("set/index.bin", "rb").read())
img = bytearray(open("set/images.bin", "rb").read())
off, size, label = struct.unpack_from("<QII", idx, 32 + 16 * n)
if how == "truncated":
    size //= 2
elif how == "not-jpeg":
    img[off:off + size] = b"x" * size
else:
    s_off, s_size, _ = struct.unpack_from("<QII", open("small/index.bin", "rb").read(), 32)
    off, size = len(img), s_size
    img += open("small/images.bin", "rb").read()[s_off:s_off + s_size]
struct.pack_into("<QII", idx, 32 + 16 * n, off, size, label)
open("set/index.bin", "wb").write(idx)
open("set/images.bin", "wb").write(img)
PY
    }
    run=("$SCALELAB" pipeline --dataset jpeg:set --workers 2 --batch-size 8 --images 64)
    corrupt 9 wrong-size
    expect_error 2 "^error: --on-bad-sample stop: set/images.bin sample 9 (.*a 32x32 image in a set of 64x64 images; .*skip bad samples" -- "${run[@]}"
    corrupt 5 truncated
    expect_error 2 "^error: --on-bad-sample stop: set/images.bin sample 5 (.*cannot decode it" -- "${run[@]}"
    corrupt 2 not-jpeg
    expect_error 2 "^error: --on-bad-sample stop: set/images.bin sample 2 (.*not a JPEG" -- "${run[@]}"
    "${run[@]}" --on-bad-sample skip --json p.json || fail "skip"
    [ "$(json p.json '[(r["images"], r["skipped"]) for r in d["rows"]] == [(61, 3)] * 4')" = True ] || fail "skipped samples not counted"
    # Every sample bad: skipping them all measured nothing, an input error as in train.
    cp -r set allbad
    python3 - <<'PY' || fail "corrupting every sample"
import struct
idx = open("allbad/index.bin", "rb").read()
img = bytearray(open("allbad/images.bin", "rb").read())
for n in range(64):
    off, size, label = struct.unpack_from("<QII", idx, 32 + 16 * n)
    img[off:off + size] = b"x" * size
open("allbad/images.bin", "wb").write(img)
PY
    expect_error 2 "^error: allbad/images.bin: every sample is bad (64 skipped, none delivered)" -- \
      "$SCALELAB" pipeline --dataset jpeg:allbad --workers 1 --augment simple --decode fast --images 64 --batch-size 8 \
      --on-bad-sample skip
    # Training stops at the first bad sample it meets, naming it, or with skip trains on: each bad
    # sample's place goes to the next good one, and every epoch counts the 3 (summed over ranks).
    "$SCALELAB" data make-jpeg --from idx --split test --size 64 --colour --out set/test > /dev/null || fail "make-jpeg --split test"
    train=(train --dataset jpeg:set --model mlp --crop 28 --batch-size 8 --no-eval)
    expect_error 2 "^error: --on-bad-sample stop: set/images.bin sample [259] (.*or skip bad samples" -- \
      "$SCALELAB" "${train[@]}" --epochs 1
    expect_error 2 "^error: --on-bad-sample maybe: give stop or skip" -- "$SCALELAB" "${train[@]}" --on-bad-sample maybe
    expect_error 2 "^error: --on-bad-sample applies to JPEG data sets only" -- \
      "$SCALELAB" train --dataset synthetic --on-bad-sample skip
    "$SCALELAB" "${train[@]}" --epochs 2 --on-bad-sample skip --json t1.json > t1.txt || { cat t1.txt; fail "train, skip"; }
    grep -q "skipped 3 bad samples this epoch" t1.txt || fail "the epoch line does not count the skipped samples"
    [ "$(json t1.json '[e["skipped_samples"] for e in d["epochs"]]')" = "[3, 3]" ] || fail "t1.json skipped_samples"
    "$SCALELAB" run -np 2 -- "${train[@]}" --epochs 1 --loader-workers 2 --on-bad-sample skip --json t2.json > t2.txt 2>&1 \
      || { cat t2.txt; fail "train on 2 ranks, skip"; }
    [ "$(json t2.json '[e["skipped_samples"] for e in d["epochs"]]')" = "[3]" ] || fail "t2.json skipped_samples"
    ;;
  train)
    # `train --dataset jpeg:DIR`: the loader decodes and augments as it trains, at 1 and 2 ranks;
    # --synthetic-data prepares one batch once; bad options and a set without its test split are
    # one line, exit 2, unless nothing is evaluated (--no-eval).
    fixture_set
    expect_error 2 "jpeg:set: no test set in set/test; make one with .scalelab data make-jpeg --split test.*or train without evaluation" -- \
      "$SCALELAB" train --dataset jpeg:set --model cnn --crop 28 --epochs 1 --batch-size 8
    expect_error 2 "no train-images-idx3-ubyte\[.gz\] for set; it holds a JPEG data set: name it jpeg:set" -- \
      "$SCALELAB" train --dataset set --model mlp --epochs 1 --batch-size 8
    "$SCALELAB" train --dataset jpeg:set --model mlp --crop 28 --epochs 1 --batch-size 8 --no-eval > noeval.txt \
      || { cat noeval.txt; fail "train --no-eval on a set without its test split"; }
    grep -q "on jpeg:set (64 training, no test samples)" noeval.txt || fail "the set without a test split is not named so"
    # A test set made from the training split would measure accuracy on trained images: refused.
    "$SCALELAB" data make-jpeg --from idx --split train --size 64 --quality 85 --colour --limit 16 --out set/test > /dev/null \
      || fail "make-jpeg --split train into set/test"
    expect_error 2 "set/test: made from the training split (its manifest.json: source .* train.*--split test" -- \
      "$SCALELAB" train --dataset jpeg:set --model cnn --crop 28 --epochs 1 --batch-size 8
    rm -rf set/test
    "$SCALELAB" data make-jpeg --from idx --split test --size 64 --quality 85 --colour --out set/test > /dev/null \
      || fail "make-jpeg --split test"
    "$SCALELAB" train --dataset jpeg:set --model cnn --crop 28 --epochs 1 --batch-size 8 --json one.json | tee one.txt \
      || fail "train on the JPEG set"
    grep -q "on jpeg:set (64 training, 16 test samples)" one.txt || fail "the set is not named with its sizes"
    # Evaluated on the set's 16 test samples (a fraction, not null), and the run complete.
    [ "$(json one.json 'd["config"]["dataset"], d["config"]["crop"], d["complete"], 0 <= d["epochs"][0]["test_accuracy"] <= 1')" = "jpeg:set 28 True True" ] \
      || fail "one.json"
    "$SCALELAB" run -np 2 -- train --dataset jpeg:set --model mlp --crop 28 --epochs 1 --batch-size 8 --loader-workers 2 \
      --augment complex --decode fast --json two.json > two.txt 2>&1 || { cat two.txt; fail "train on 2 ranks"; }
    [ "$(json two.json 'd["ranks"], d["complete"], d["config"]["augment"], d["config"]["decode"]')" = "2 True complex fast" ] \
      || fail "two.json"
    "$SCALELAB" train --dataset jpeg:set --model mlp --crop 28 --epochs 1 --batch-size 8 --synthetic-data --json syn.json > syn.txt \
      || fail "--synthetic-data"
    [ "$(json syn.json 'd["config"]["synthetic_data"]')" = "True" ] || fail "syn.json"
    expect_error 2 "^error: --augment applies to JPEG data sets only" -- "$SCALELAB" train --dataset synthetic --augment complex
    expect_error 2 "^error: --crop 80: the crop must fit set's 64x64 images" -- \
      "$SCALELAB" train --dataset jpeg:set --model mlp --crop 80 --epochs 1
    expect_error 2 "^error: --augment fancy: give simple or complex" -- "$SCALELAB" train --dataset jpeg:set --augment fancy
    echo PASS
    ;;
  predict)
    # pipeline --predict: per-core rates first, then a prediction beside every row; simulate reads
    # the measured per-core rate from the record (--decode-rate FILE).
    fixture_set
    "$SCALELAB" pipeline --dataset jpeg:set --workers 1,2 --batch-size 8 --images 64 --predict --json p.json | tee p.txt \
      || fail "pipeline --predict"
    grep -q "^# per core, complex augmentation, accurate IDCT: [0-9.]* images/s" p.txt || fail "no per-core rate line"
    grep -q "^resnet50's gradients: 102.2 MB of float32 per step; a GPU training at the pipeline's pace" p.txt || fail "no gradient line"
    [ "$(json p.json 'd["gradients"]["workload"], round(d["gradients"]["MB_per_step"], 1)')" = "resnet50 102.2" ] || fail "p.json gradients"
    expect_error 2 "^error: --workload 'nosuch': not a catalog workload" -- \
      "$SCALELAB" pipeline --dataset jpeg:set --workers 1 --images 8 --batch-size 8 --workload nosuch
    [ "$(json p.json 'len(d["per_core_images_per_s"]), all(r["predicted_images_per_s"] > 0 for r in d["rows"])')" = "4 True" ] \
      || fail "p.json lacks the per-core rates or the predictions"
    "$SCALELAB" simulate --workload resnet50 --machine dgx1 --gpus 4 --batch-size 64 --decode-rate p.json --json s.json | tee s.txt \
      || fail "simulate --decode-rate FILE"
    grep -q "^# host decoding: [0-9.]* samples/s per core, measured by scalelab pipeline (p.json)" s.txt || fail "simulate does not say where the rate came from"
    [ "$(json s.json 'd["decode_rate_from"]')" = p.json ] || fail "s.json"
    [ "$(python3 -c "import json; p=json.load(open('p.json')); s=json.load(open('s.json')); print([r['images_per_s'] for r in p['per_core_images_per_s'] if r['augment']=='complex' and r['decode']=='accurate'] == [s['decode_per_core_per_s']])")" = True ] \
      || fail "simulate did not take the complex, accurate per-core rate"
    expect_error 2 "^error: --decode-rate nosuch.json: neither a number nor a file" -- \
      "$SCALELAB" simulate --workload resnet50 --machine dgx1 --gpus 4 --decode-rate nosuch.json
    expect_error 2 "^error: --decode-rate set/manifest.json: not a number, nor a pipeline record" -- \
      "$SCALELAB" simulate --workload resnet50 --machine dgx1 --gpus 4 --decode-rate set/manifest.json
    ;;
  *) fail "unknown case $CASE" ;;
esac
echo "PASS $CASE"
