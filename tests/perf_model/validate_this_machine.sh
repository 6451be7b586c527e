#!/usr/bin/env bash
# Judges the cost model on this machine over ROUNDS calibrate-then-benchmark rounds at 2 ranks,
# 64 KiB to 64 MiB, for the ring, the library and the shared-memory allreduce (docs/validation.md).
# Each round calibrates into its own profile and benchmarks each algorithm with --predict against it;
# validation_summary then compares, per size, the median over rounds of the measured time with
# the median over rounds of the predicted time. Run it on an otherwise idle machine.
#
#   tests/perf_model/validate_this_machine.sh BUILD_DIR [ROUNDS] [OUT_DIR]
#   e.g. tests/perf_model/validate_this_machine.sh build/release 5 /tmp/validation
set -euo pipefail
build=${1:?usage: validate_this_machine.sh BUILD_DIR [ROUNDS] [OUT_DIR]}
rounds=${2:-5}
out=${3:-$(mktemp -d)}
scalelab="$build/bin/scalelab"
summary="$build/tests/perf_model/validation_summary"
for f in "$scalelab" "$summary"; do
  [[ -x $f ]] || { echo "validate_this_machine.sh: $f not found; build the scalelab and validation_summary targets in $build" >&2; exit 2; }
done
mkdir -p "$out"
echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds; files in $out"
for r in $(seq 1 "$rounds"); do
  "$scalelab" run -np 2 -- calibrate --profile "$out/profile-$r.json" > "$out/calibrate-$r.log"
  for algo in ring library shm; do
    "$scalelab" run -np 2 -- bench allreduce -b 64K -e 64M -f 2 -n 30 -w 5 --algo "$algo" \
      --predict --profile "$out/profile-$r.json" --json "$out/$algo-$r.json" > "$out/$algo-$r.log"
  done
  echo "# round $r done, load: $(cut -d' ' -f1-3 /proc/loadavg)"
done
status=0
for algo in ring library shm; do
  echo "## $algo"
  "$summary" --max-median 10 --max-max 25 "$out"/"$algo"-*.json || status=1
done
exit $status
