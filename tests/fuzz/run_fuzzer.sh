#!/usr/bin/env bash
# Runs one libFuzzer target for a fixed time from its seed corpus (read only) into a working
# corpus in the build tree; crashing inputs are written beside it (crash-*, leak-*, timeout-*).
# RANDOM_SEED fixes libFuzzer's choice of mutations, so that a run can be repeated; 0 lets libFuzzer
# pick one (a new search each run).
# usage: run_fuzzer.sh FUZZER SEED_FOLDER WORK_FOLDER SECONDS [RANDOM_SEED]
set -euo pipefail
fuzzer=$1 seeds=$2 work=$3 seconds=$4 random_seed=${5:-0}
mkdir -p "$work/corpus"
exec "$fuzzer" -seed="$random_seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$work/" "$work/corpus" "$seeds"
