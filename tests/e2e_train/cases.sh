#!/bin/bash
# End-to-end cases for `scalelab train`, `scalelab scale` and lab1, run by CTest:
#   cases.sh CASE SCALELAB FIXTURE_TOOL LAB1 WORKDIR
# Each case runs the real binaries and checks exit codes, the one-line errors and the --json files.
set -u
CASE=$1 SCALELAB=$2 FIXTURE=$3 LAB1=$4 WORK=$5/$1
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; exit 1; }

# expect_error CODE PATTERN -- command...: exit CODE, and stderr's error is one line matching PATTERN.
expect_error() {
  local code=$1 pattern=$2; shift 3
  "$@" > out.txt 2> err.txt
  local rc=$?
  cat out.txt err.txt
  [ "$rc" = "$code" ] || fail "exit code $rc, expected $code: $*"
  local lines; lines=$(grep -c '^error:' err.txt)
  [ "$lines" -ge 1 ] || fail "no 'error:' line"
  grep '^error:' err.txt | head -1 | grep -q -- "$pattern" || fail "error line does not match '$pattern'"
  [ "$(grep '^error:' err.txt | sort -u | wc -l)" = 1 ] || fail "more than one distinct error line"
}

json() { python3 -c "import json,math,sys; d=json.load(open('$1')); print($2)"; }

# busy_loops: two busy shell loops on two of this process's cores, and $PIN, the prefix that runs a
# command on the same two (its ranks inherit it: mpirun binds to none), so every rank shares its
# core with a loop on any machine, whatever its core count. The loops are killed when the case
# ends, however it ends (and stop by themselves after 280 s regardless).
busy_loops() {
  local cpus i
  cpus=$(python3 -c "import os; print(','.join(str(c) for c in sorted(os.sched_getaffinity(0))[:2]))")
  PIN="taskset -c $cpus"
  BUSY=""
  for i in 1 2; do timeout 280 $PIN sh -c 'while :; do :; done' & BUSY="$BUSY $!"; done
  trap 'kill $BUSY 2>/dev/null' EXIT INT TERM
}
# The load warning: "warning: rank R received P% of a core ... these timings do not describe this machine".
LOAD_WARNING='^warning: rank [0-9]* received [0-9]*% of a core.*these timings do not describe this machine'

case $CASE in
  bad_model) expect_error 2 "unknown model" -- "$SCALELAB" train --model nosuch ;;
  bad_dataset) expect_error 2 "unknown dataset" -- "$SCALELAB" train --dataset nosuch ;;
  batch_zero) expect_error 2 "batch-size 0" -- "$SCALELAB" train --batch-size 0 ;;
  bad_cuda_graphs) expect_error 2 "cuda-graphs sometimes: use on or off" -- "$SCALELAB" train --cuda-graphs sometimes ;;
  bad_precision)
    expect_error 2 "precision fp8: unknown precision; use fp32, tf32, bf16 or fp16" -- "$SCALELAB" train --precision fp8
    # The CPU engine computes in float32 only: refused by name, for converge and scale too.
    expect_error 2 "precision bf16: the CPU engine computes in float32 only; use fp32, or the cuda device for bf16" -- \
        "$SCALELAB" train --precision bf16
    expect_error 2 "precision fp16: the CPU engine computes in float32 only" -- "$SCALELAB" scale --precision fp16 --rank-counts 1
    expect_error 2 "precision tf32: the CPU engine computes in float32 only" -- "$SCALELAB" converge --precision tf32 ;;
  missing_dataset) expect_error 2 "apt-get install dataset-fashion-mnist\|not found" -- \
      env -u SCALELAB_DATA_DIR "$SCALELAB" train --data-dir /nonexistent/fmnist ;;
  corrupt_idx)
    "$FIXTURE" data 64 16 || fail "fixture"
    gzip -dc data/train-images-idx3-ubyte.gz | head -c 5000 > data/train-images-idx3-ubyte
    rm data/train-images-idx3-ubyte.gz
    expect_error 2 "train-images-idx3-ubyte: truncated" -- "$SCALELAB" train --dataset data
    printf '\x00\x00\x09\x03' | dd of=data/train-images-idx3-ubyte bs=1 count=4 conv=notrunc 2>/dev/null
    expect_error 2 "bad magic" -- "$SCALELAB" train --dataset data
    "$FIXTURE" data2 64 16 && "$FIXTURE" other 65 16 && cp other/train-labels-idx1-ubyte.gz data2/
    expect_error 2 "64 images but .* 65 labels" -- "$SCALELAB" train --dataset data2
    # Images too small for the model: named as the model's problem for that data set, with a fix.
    "$FIXTURE" small 64 16 2 || fail "fixture"
    expect_error 2 "^error: --model cnn: does not fit the 2x2 images of data set small (.*); use --model mlp" -- \
      "$SCALELAB" train --dataset small --model cnn --batch-size 8 --max-steps 3 ;;
  more_ranks_than_samples)
    "$FIXTURE" tiny 2 2 || fail "fixture"
    expect_error 2 "more ranks (3) than training samples (2)" -- "$SCALELAB" run -np 3 -- train --dataset tiny ;;
  train_shm)
    # Gradients averaged through node shared memory: at 2 ranks a sum of two numbers is the same
    # whichever rank adds, so the run matches the library's to the last digit; at 3 ranks (two
    # phases) it trains too.
    for algo in library shm; do
      "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 2 --max-steps 20 --batch-size 32 \
          --seed 5 --algo $algo --json $algo.json > $algo.txt 2>&1 || { cat $algo.txt; fail "train --algo $algo"; }
    done
    [ "$(json library.json "[e['loss'] for e in d['epochs']]")" = "$(json shm.json "[e['loss'] for e in d['epochs']]")" ] \
        || fail "shm's losses differ from the library's"
    "$SCALELAB" run -np 3 -- train --dataset synthetic --model mlp --epochs 1 --max-steps 10 --batch-size 32 \
        --algo shm --json three.json > three.txt 2>&1 || { cat three.txt; fail "train --algo shm at 3 ranks"; }
    json three.json "d['complete']" | grep -q True || fail "3-rank run incomplete" ;;
  train_overlap)
    # Gradient buckets averaged on a communication thread while backward runs: the same
    # collectives on the same bytes in the same order, so the losses equal those of averaging
    # after backward to the last digit, at 2 and at 3 ranks; the timeline shows the buckets on the
    # communication lane, and the start-up line says which mode and why.
    for ranks in 2 3; do
      for mode in off on; do
        "$SCALELAB" run -np $ranks -- train --dataset synthetic --model cnn --epochs 2 --max-steps 8 --batch-size 16 \
            --seed 9 --bucket-cap 64K --overlap $mode --json $mode-$ranks.json --timeline tl-$mode-$ranks.json \
            > $mode-$ranks.txt 2>&1 || { cat $mode-$ranks.txt; fail "train --overlap $mode at $ranks ranks"; }
      done
      [ "$(json off-$ranks.json "[e['loss'] for e in d['epochs']]")" = "$(json on-$ranks.json "[e['loss'] for e in d['epochs']]")" ] \
          || fail "overlap changed the losses at $ranks ranks"
      grep -q "on a communication thread as backward produces them" on-$ranks.txt || fail "overlap on: start-up line"
      grep -q "after backward (overlap off)" off-$ranks.txt || fail "overlap off: start-up line"
      json tl-on-$ranks.json "len([e for e in d['traceEvents'] if e['ph']=='X' and e['tid']==1 and e['name']=='allreduce']) > 0" \
          | grep -q True || fail "no allreduce on the communication lane at $ranks ranks"
      json tl-off-$ranks.json "len([e for e in d['traceEvents'] if e['ph']=='X' and e['tid']==1])" | grep -qx 0 \
          || fail "a communication lane without overlap"
    done
    expect_error 2 "^error: --overlap sometimes: use auto, on or off" -- \
        "$SCALELAB" train --dataset synthetic --model mlp --epochs 1 --max-steps 2 --overlap sometimes ;;
  train_two_ranks)
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 2 --max-steps 20 --batch-size 32 \
        --json t.json --timeline tl.json --checkpoint ck.bin --algo ring --fusion-threshold 64K || fail "train"
    [ "$(json t.json "d['complete'] and len(d['epochs'])")" = 2 ] || fail "two complete epochs"
    [ "$(json t.json "d['epochs'][1]['global_batch']")" = 64 ] || fail "global batch 64"
    json t.json "d['epochs'][1]['test_accuracy'] > 0.5" | grep -q True || fail "synthetic data learnt"
    json t.json "d['epochs'][1]['peak_rss_mib'] < 512" | grep -q True || fail "peak RSS under 512 MiB"
    json tl.json "sorted({e['pid'] for e in d['traceEvents'] if e['ph']=='X'})" | grep -q "\[0, 1\]" || fail "two tracks"
    json tl.json "sorted({e['name'] for e in d['traceEvents'] if e['ph']=='X'})" | grep -q "allreduce" || fail "phases"
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 3 --max-steps 20 --batch-size 32 \
        --json r.json --resume ck.bin --algo ring > resume.txt 2>&1 || { cat resume.txt; fail "resume"; }
    grep -q "resumed from ck.bin: 2 epochs done" resume.txt || fail "resume message"
    grep -q "note:" resume.txt && fail "a note although the rank count and batch are the checkpoint's"
    # At another rank count the run goes on, and says how it differs from the one saved.
    "$SCALELAB" run -np 3 -- train --dataset synthetic --model mlp --epochs 3 --max-steps 20 --batch-size 32 \
        --resume ck.bin --algo ring > resume3.txt 2>&1 || { cat resume3.txt; fail "resume at 3 ranks"; }
    grep -q "note: ck.bin was written by 2 ranks at global batch 64; this run has 3 at 96" resume3.txt \
      || { cat resume3.txt; fail "no note of the other rank count"; }
    [ "$(json r.json "[e['epoch'] for e in d['epochs']]")" = "[3]" ] || fail "only epoch 3 trained"
    # --epochs not above the epochs the checkpoint holds has nothing to train: an error naming both.
    expect_error 2 "^error: --epochs 2: ck.bin already holds 2 epochs; give a total above 2 to train on$" -- \
        "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 2 --max-steps 20 --batch-size 32 \
        --resume ck.bin --json e.json
    [ "$(json e.json "d['complete']")" = False ] || fail "the record of a run that trained nothing says complete" ;;
  diverged)
    # A learning rate far too high: every rank stops at the step the loss turns NaN, the record
    # does not say complete, and the checkpoint of the last good epoch is kept.
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 1 --max-steps 10 --batch-size 32 \
        --no-eval --optimizer sgd --lr 0.01 --checkpoint ck.bin > good.txt 2>&1 || { cat good.txt; fail "a good epoch"; }
    cp ck.bin good.bin
    start=$(date +%s)
    expect_error 2 "^error: --lr: the loss became NaN at step [0-9]* (epoch 2): the learning rate 1e+09 is probably too high; lower it$" -- \
        "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 3 --max-steps 10 --batch-size 32 \
        --no-eval --optimizer sgd --lr 1e9 --resume ck.bin --checkpoint ck.bin --json nan.json
    [ $(( $(date +%s) - start )) -le 60 ] || fail "took over 60 s to stop (a rank hung?)"
    cmp -s ck.bin good.bin || fail "the good checkpoint was overwritten"
    [ "$(json nan.json "(d['complete'], len(d['epochs']))")" = "(False, 0)" ] || fail "the record says complete"
    expect_error 2 "^error: --lr: the loss became NaN at step [0-9]* (epoch 1)" -- \
        "$SCALELAB" train --dataset synthetic --model mlp --max-steps 20 --batch-size 32 --no-eval --optimizer sgd --lr 1e9 ;;
  resume_cnn_exact)
    # The cnn's dropout masks and the data order continue across --resume: 2 epochs, then resumed
    # to 3, writes the same checkpoint (parameters, optimizer state, counters) as 3 uninterrupted.
    A="--dataset synthetic --model cnn --max-steps 4 --batch-size 16 --no-eval --quiet"
    "$SCALELAB" run -np 2 -- train $A --epochs 3 --checkpoint straight.bin --json s.json > out.txt 2>&1 || { cat out.txt; fail "3 epochs"; }
    "$SCALELAB" run -np 2 -- train $A --epochs 2 --checkpoint part.bin > out.txt 2>&1 || { cat out.txt; fail "2 epochs"; }
    "$SCALELAB" run -np 2 -- train $A --epochs 3 --resume part.bin --checkpoint resumed.bin --json r.json > out.txt 2>&1 \
        || { cat out.txt; fail "resume to 3"; }
    [ "$(json s.json "repr(d['epochs'][2]['loss'])")" = "$(json r.json "repr(d['epochs'][0]['loss'])")" ] || fail "epoch 3 losses differ"
    cmp straight.bin resumed.bin || fail "the resumed run's checkpoint differs from the uninterrupted run's"
    expect_error 2 "^error: --seed 7: part.bin was trained with seed 42; resume with the same seed" -- \
        "$SCALELAB" train $A --epochs 3 --resume part.bin --seed 7 ;;
  checkpoint_in_use)
    # A second job given a checkpoint file that a running job writes is refused at once.
    "$SCALELAB" train --dataset synthetic --model cnn --batch-size 16 --max-steps 100000 --no-eval --quiet \
        --checkpoint ck.bin > first.txt 2>&1 &
    first=$!
    for i in $(seq 1 60); do [ -f ck.bin.lock ] && break; sleep 0.5; done
    [ -f ck.bin.lock ] || { kill $first; fail "the first job never took the lock"; }
    expect_error 2 "^error: --checkpoint ck.bin: in use by another job (pid $first); give each job its own checkpoint file$" -- \
        "$SCALELAB" train --dataset synthetic --model mlp --max-steps 2 --no-eval --checkpoint ck.bin
    kill $first; wait $first
    ;;
  schedule_bad_input)
    expect_error 2 "^error: --lr-schedule nosuch: unknown value; use one of constant, step, cosine, polynomial$" -- \
        "$SCALELAB" train --dataset synthetic --lr-schedule nosuch
    expect_error 2 "^error: --warmup-epochs 2: the warm-up is longer than training (1 epochs)" -- \
        "$SCALELAB" train --dataset synthetic --epochs 1 --warmup-epochs 2
    expect_error 2 "^error: --lr 0: the learning rate must be a positive finite number" -- \
        "$SCALELAB" train --dataset synthetic --lr 0 --lr-schedule cosine
    expect_error 2 "^error: --lr-steps: step decay needs at least one milestone" -- \
        "$SCALELAB" train --dataset synthetic --lr-schedule step
    expect_error 2 "^error: --lr-steps 3x: not a number of epochs" -- \
        "$SCALELAB" train --dataset synthetic --lr-schedule step --lr-steps 3x
    expect_error 2 "^error: --lr-gamma 2: give a decay factor in (0, 1]" -- "$SCALELAB" train --lr-gamma 2
    # The same checks, in the same words, for converge and scale: one validation in the library.
    expect_error 2 "^error: --warmup-epochs 9: the warm-up is longer than training (5 epochs)" -- \
        "$SCALELAB" converge --epochs 5 --warmup-epochs 9
    expect_error 2 "^error: --lr 0: the learning rate must be a positive finite number" -- \
        "$SCALELAB" scale --rank-counts 1 --lr 0 ;;
  option_ranges)
    # Every numeric training option is range-checked before anything starts, naming the flag.
    expect_error 2 "^error: --momentum 1: give a momentum in \[0, 1)" -- "$SCALELAB" train --optimizer sgd --momentum 1
    expect_error 2 "^error: --momentum nan: give a momentum in \[0, 1)" -- "$SCALELAB" train --optimizer sgd --momentum nan
    expect_error 2 "^error: --momentum -5: give a momentum in \[0, 1)" -- "$SCALELAB" train --optimizer sgd --momentum -5
    expect_error 2 "^error: --momentum 5: give a momentum in \[0, 1)" -- "$SCALELAB" train --optimizer sgd --momentum 5
    expect_error 2 "^error: --momentum 0.99999999999: rounds to 1 in float32" -- \
        "$SCALELAB" train --optimizer sgd --momentum 0.99999999999
    expect_error 2 "^error: --momentum applies to --optimizer sgd and lars; adam takes no momentum" -- \
        "$SCALELAB" train --optimizer adam --momentum 0.5
    expect_error 2 "^error: --momentum applies to --optimizer sgd and lars; lamb takes no momentum" -- \
        "$SCALELAB" scale --rank-counts 1 --optimizer lamb --momentum 0.5
    expect_error 2 "^error: --weight-decay -0.1: give 0 or more" -- "$SCALELAB" train --weight-decay -0.1
    expect_error 2 "^error: --weight-decay nan: give 0 or more" -- "$SCALELAB" train --weight-decay nan
    expect_error 2 "^error: --lr nan: the learning rate must be a positive finite number" -- "$SCALELAB" train --lr nan
    expect_error 2 "^error: --lr inf: the learning rate must be a positive finite number" -- "$SCALELAB" train --lr inf
    expect_error 2 "^error: --threads 0: use at least one compute thread" -- "$SCALELAB" train --threads 0
    expect_error 2 "^error: --epochs 0: train at least one epoch" -- "$SCALELAB" train --epochs 0
    expect_error 2 "^error: --stall-timeout -1: give seconds >= 0" -- "$SCALELAB" train --stall-timeout -1
    expect_error 2 "^error: --prefetch 0: prepare at least one batch ahead" -- "$SCALELAB" train --prefetch 0
    expect_error 2 "^error: --max-steps -3: must not be negative" -- "$SCALELAB" train --max-steps -3
    expect_error 2 "^error: --base-batch 0: the reference batch must be at least 1" -- "$SCALELAB" train --base-batch 0
    expect_error 2 "^error: --device gpu: unknown device; use cpu or cuda$" -- "$SCALELAB" train --device gpu
    expect_error 2 "^error: --device gpu: unknown device; use cpu or cuda$" -- "$SCALELAB" converge --device gpu
    expect_error 2 "^error: --device gpu: unknown device; use cpu or cuda$" -- "$SCALELAB" scale --rank-counts 1 --device gpu
    expect_error 2 "^error: --batch-size 0: a batch needs at least one sample per rank$" -- \
        "$SCALELAB" scale --rank-counts 1 --batch-size 0
    expect_error 2 "^error: --momentum 1.5: give a momentum in \[0, 1)" -- "$SCALELAB" converge --momentum 1.5
    expect_error 2 "^error: --bucket-cap: unknown size suffix" -- "$SCALELAB" train --bucket-cap 12Q ;;
  renamed_flags)
    # --fusion-threshold is the deprecated spelling of --bucket-cap: it still works, with a notice.
    "$SCALELAB" train --dataset synthetic --model trivial --epochs 1 --max-steps 2 --no-eval --quiet \
        --fusion-threshold 1K --json f.json > out.txt 2> err.txt || { cat out.txt err.txt; fail "--fusion-threshold"; }
    cat err.txt
    grep -qx "scalelab train: --fusion-threshold is deprecated; use --bucket-cap" err.txt || fail "no deprecation notice"
    [ "$(json f.json "d['config']['bucket_cap_bytes']")" = 1024 ] || fail "--fusion-threshold 1K sets 1024 bytes"
    "$SCALELAB" train --dataset synthetic --model trivial --epochs 1 --max-steps 2 --no-eval --quiet \
        --bucket-cap=2K --json b.json > out.txt 2> err.txt || { cat out.txt err.txt; fail "--bucket-cap"; }
    # Nothing on stderr but, on a busy host, the load warning.
    ! grep -v "these timings do not describe this machine" err.txt | grep -q . || fail "--bucket-cap printed on stderr"
    [ "$(json b.json "d['config']['bucket_cap_bytes']")" = 2048 ] || fail "--bucket-cap=2K sets 2048 bytes"
    expect_error 2 "^error: --bucket-cap: unknown size suffix" -- "$SCALELAB" train --fusion-threshold=12Q
    grep -qx "scalelab train: --fusion-threshold is deprecated; use --bucket-cap" err.txt || fail "notice with ="
    # scale's --ranks (a list of rank counts) is now --rank-counts: --ranks is a count elsewhere.
    expect_error 2 "^error: --lr 0" -- "$SCALELAB" scale --ranks 1 --lr 0
    grep -qx "scalelab scale: --ranks is deprecated; use --rank-counts" err.txt || fail "no --ranks notice" ;;
  train_schedule)
    # 2 ranks x batch 16 = global batch 32 = 2 x --base-batch: linear scaling doubles the lr, reached
    # by a 1-epoch gradual warm-up (10 steps), then cosine decay to 0 at step 30.
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --epochs 3 --max-steps 10 --batch-size 16 \
        --optimizer sgd --lr 0.01 --lr-scaling linear --base-batch 16 --warmup-epochs 1 --lr-schedule cosine \
        --no-eval --json s.json > out.txt 2>&1 || { cat out.txt; fail "train with a schedule"; }
    cat out.txt
    grep -q "^lr schedule: base 0.01 at batch 16, scaling linear (x2) -> peak 0.02" out.txt || fail "schedule table"
    json s.json "d['lr_schedule']['peak_lr']" | grep -qx "0.02" || fail "peak lr 0.02"
    [ "$(json s.json "(d['lr_schedule']['warmup'], d['lr_schedule']['warmup_steps'], d['lr_schedule']['decay'])")" = \
      "('gradual', 10, 'cosine')" ] || fail "warm-up and decay recorded"
    # The lr each epoch ended with (steps 9, 19, 29) is the schedule's: 0.01 + 0.01*9/10 at the end
    # of warm-up, then 0.02 * (1 + cos(pi * (t-10)/20)) / 2.
    json s.json "len(d['epochs']) == 3 and all(abs(r['lr'] - w) < 1e-9 for r, w in zip(d['epochs'], \
        [0.019, 0.01 * (1 + math.cos(math.pi * 9 / 20)), 0.01 * (1 + math.cos(math.pi * 19 / 20))]))" \
        | grep -q True || fail "per-epoch lr follows the schedule"
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model resnet --epochs 1 --max-steps 3 --batch-size 8 \
        --no-eval --sync-batchnorm --json bn.json > bn.txt 2>&1 || { cat bn.txt; fail "train --sync-batchnorm"; }
    json bn.json "d['sync_batchnorm'] and d['complete'] and math.isfinite(d['epochs'][0]['loss'])" | grep -q True \
        || fail "sync-batchnorm run recorded" ;;
  rank_killed)
    # 50 epochs: still training 2 s after the first began, however fast the engine gets.
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model cnn --epochs 50 --no-eval > out.txt 2>&1 &
    launcher=$!
    for i in $(seq 1 60); do
      victim=$(for p in $(pgrep -f "scalelab train --dataset synthetic --model cnn"); do
                 tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && echo $p; done)
      [ -n "$victim" ] && grep -q "^Epoch 1/50" out.txt && break
      sleep 0.5
    done
    [ -n "$victim" ] || fail "rank 1 never started"
    sleep 2
    start=$(date +%s)
    kill -9 "$victim"
    wait $launcher
    rc=$?
    took=$(( $(date +%s) - start ))
    cat out.txt
    [ "$rc" != 0 ] || fail "the job exited 0 after losing a rank"
    [ "$took" -le 30 ] || fail "took $took s to exit"
    grep -q "rank 1" out.txt || fail "no message naming rank 1"
    if pgrep -f "scalelab train --dataset synthetic --model cnn" > /dev/null; then fail "a rank survived"; fi ;;
  rank_stopped)
    # A peer that stops without dying (SIGSTOP): mpirun sees nothing; the stall watchdog ends rank 0.
    # Many epochs (an epoch of 3,750 steps takes about a second on a fast core), so that the job is
    # still training when rank 1 is stopped.
    "$SCALELAB" run -np 2 -- train --dataset synthetic --model mlp --batch-size 8 --epochs 200 --no-eval \
        --stall-timeout 5 > out.txt 2>&1 &
    launcher=$!
    for i in $(seq 1 60); do
      victim=$(for p in $(pgrep -f "scalelab train --dataset synthetic --model mlp --batch-size 8"); do
                 tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && echo $p; done)
      [ -n "$victim" ] && grep -q "^Epoch 1/200" out.txt && break
      sleep 0.5
    done
    [ -n "$victim" ] || fail "rank 1 never started"
    sleep 1
    start=$(date +%s)
    kill -STOP "$victim"
    wait $launcher
    rc=$?
    took=$(( $(date +%s) - start ))
    kill -9 "$victim" 2>/dev/null
    cat out.txt
    [ "$rc" != 0 ] || fail "the job exited 0 with a stopped rank"
    [ "$took" -le 30 ] || fail "took $took s to exit"
    grep -q "rank 0: no progress in training for .*rank 1 stopped making progress" out.txt || fail "no watchdog message naming rank 1" ;;
  scale)
    "$SCALELAB" scale --rank-counts 1,2 --dataset synthetic --model mlp --max-steps 30 --batch-size 64 --no-eval --bucket-cap 1M \
        --out s --json scale.json > out.txt 2>&1 || { cat out.txt; fail "scale"; }
    cat out.txt
    grep -q "efficiency" out.txt || fail "no table"
    [ "$(json scale.json "[r['ranks'] for r in d['rows']]")" = "[1, 2]" ] || fail "rows"
    # The figures come from the runs' own records: with --repeat 1 and one epoch, each row's
    # images/sec is that epoch's in the train record it names, and the 2-rank row's speed-up and
    # efficiency are the ratios of those.
    json scale.json "all(len(json.load(open(r['json_file']))['epochs']) == 1 and abs(r['images_per_second'] - json.load(open(r['json_file']))['epochs'][0]['images_per_second']) < 1e-6 * r['images_per_second'] and r['images_per_second'] > 0 for r in d['rows'])" \
        | grep -q True || fail "images/sec not the train records'"
    json scale.json "abs(d['rows'][1]['speedup'] - d['rows'][1]['images_per_second'] / d['rows'][0]['images_per_second']) < 1e-9 and abs(d['rows'][1]['efficiency'] - d['rows'][1]['speedup'] / 2) < 1e-9" \
        | grep -q True || fail "speed-up and efficiency not the ratios of the rows' images/sec"
    [ -f s/scaling.dat ] && [ -f s/scaling.gp ] || fail "chart data"
    # The training options given reach every run as given (here --max-steps and --bucket-cap).
    json scale.json "'--max-steps' in d['train_args'] and '--bucket-cap' in d['train_args']" | grep -q True \
        || fail "train options passed on"
    # One run per rank count: no spread, and no runs column.
    json scale.json "all(r['images_per_second_spread_pct'] == 0 for r in d['rows'])" | grep -q True || fail "spread of one run"
    ! grep -q "(+/-)" out.txt || fail "a runs column with one run" ;;
  scale_repeat)
    # With --repeat 2 each row says how far its runs lie apart: half their range over the median.
    "$SCALELAB" scale --rank-counts 1,2 --repeat 2 --dataset synthetic --model mlp --max-steps 20 --batch-size 64 --no-eval \
        --out s --json scale.json > out.txt 2>&1 || { cat out.txt; fail "scale --repeat 2"; }
    cat out.txt
    grep -q "(+/-)" out.txt || fail "no runs column"
    grep -q "^# runs (+/-): half the range of the 2 runs" out.txt || fail "no legend of the runs column"
    json scale.json "all(len(r['images_per_second_runs']) == 2 and abs(r['images_per_second_spread_pct'] - 50 * (max(r['images_per_second_runs']) - min(r['images_per_second_runs'])) / r['images_per_second']) < 1e-9 for r in d['rows'])" \
        | grep -q True || fail "spread not half the runs' range over the median" ;;
  lab_bad_input)
    # The lab's output places are checked before its first step; stray words are refused.
    expect_error 2 "^error: lab1: --out /proc/x: cannot create the folder" -- "$LAB1" --out /proc/x
    touch afile
    expect_error 2 "^error: lab1: --out afile: is a file, not a folder" -- "$LAB1" --out afile
    expect_error 2 "^error: lab1: --json /proc/x.json: cannot create files in /proc" -- "$LAB1" --json /proc/x.json --out lab
    expect_error 2 "^error: lab1: unexpected argument 'extra'" -- "$LAB1" extra
    # A step's command that refuses its input (a truncated data set): the lab exits 2 as it did,
    # naming the step once.
    "$FIXTURE" cut 64 16 || fail "fixture"
    gzip -dc cut/train-images-idx3-ubyte.gz | head -c 5000 > cut/train-images-idx3-ubyte && rm cut/train-images-idx3-ubyte.gz
    "$LAB1" --dataset cut --step 1 --quick --out lab > out.txt 2> err.txt
    rc=$?
    cat err.txt
    [ "$rc" = 2 ] || fail "lab1 on a truncated data set exited $rc, expected 2"
    grep -q "^error: lab1 step 1: 'scalelab train .*' exited with code 2" err.txt || fail "the lab's line"
    grep -q "step 1: step 1" err.txt && fail "the step named twice"
    true ;;
  train_contended)
    busy_loops
    # 150 steps: several seconds measured (a load verdict needs 1 s), however fast the engine gets.
    $PIN "$SCALELAB" run -np 2 -- train --dataset synthetic --model cnn --max-steps 150 --batch-size 64 --no-eval \
        --json t.json > out.txt 2> err.txt || { cat out.txt err.txt; fail "train"; }
    cat out.txt err.txt
    [ "$(grep -c "$LOAD_WARNING" err.txt)" = 1 ] || fail "not one load warning line"
    [ "$(json t.json "d['load']['verdict']")" = contended ] || fail "verdict not contended"
    json t.json "len(d['load']['ranks']) == 2 and d['load']['source'] in ('schedstat', 'cpu_time')" | grep -q True \
        || fail "per-rank figures"
    json t.json "max(r['run_queue_wait_fraction'] for r in d['load']['ranks']) > d['load']['threshold_wait_fraction']" \
        | grep -q True || fail "no rank above the threshold" ;;
  calibrate_contended)
    busy_loops
    $PIN "$SCALELAB" calibrate --quick --profile p.json > out.txt 2> err.txt
    rc=$?
    cat out.txt err.txt
    [ "$rc" != 0 ] || fail "calibrate saved a profile measured under contention (exit 0)"
    [ ! -e p.json ] || fail "profile written"
    [ "$(grep -c '^error:' err.txt)" = 1 ] || fail "not one error line"
    grep '^error:' err.txt | grep -q -- "--force" || fail "error line does not name --force"
    grep '^error:' err.txt | grep -q "received [0-9]*% of a core" || fail "error line does not say why" ;;
  lab1_contended)
    # Lab 1's scaling step under load: unreliable, not passed, and said so.
    busy_loops
    $PIN "$LAB1" --quick --step 4 --dataset synthetic --out lab --json lab.json > out.txt 2>&1 || { cat out.txt; fail "lab1"; }
    cat out.txt
    [ "$(json lab.json "[s['status'] for s in d['steps']]")" = "['unreliable']" ] || fail "step not unreliable"
    [ "$(json lab.json "d['status']")" = unreliable ] || fail "lab status"
    grep -q "Step 4 is unreliable, not passed" out.txt || fail "no step summary"
    grep -q "^lab1: step 4 measured while other processes took the CPU" out.txt || fail "no lab summary" ;;
  lab1_quick)
    "$LAB1" --quick --dataset synthetic --out lab --json lab.json || fail "lab1 --quick"
    # Each step passes; on a busy host a timed step may instead be unreliable, and must say why.
    json lab.json "all(s['status'] == 'passed' or (s['status'] == 'unreliable' and s['unreliable']) for s in d['steps'])" \
        | grep -q True || fail "steps"
    [ "$(json lab.json "len(d['steps'])")" = 5 ] || fail "five steps"
    # The untimed steps have no reason to be unreliable: they pass.
    json lab.json "all(s['status'] == 'passed' for s in d['steps'] if not s['timed']) and any(not s['timed'] for s in d['steps'])" | grep -q True \
        || fail "an untimed step did not pass" ;;
  *) fail "unknown case $CASE" ;;
esac
echo "PASS: $CASE"
