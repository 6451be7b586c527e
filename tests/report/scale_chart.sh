#!/bin/bash
# End-to-end check of `scalelab scale`'s chart, run by CTest: scale_chart.sh SCALELAB WORKDIR.
# A 1- and 2-rank run must write a gnuplot script whose x tics are exactly the rank counts, and
# gnuplot must draw those labels only (no 1.2, 1.4 ... between the measured counts); its title
# names the efficiency, the machine and the load.
set -u
SCALELAB=$1 WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
fail() { echo "FAIL: $*"; exit 1; }

"$SCALELAB" scale --rank-counts 1,2 --dataset synthetic --model mlp --max-steps 20 --batch-size 64 --no-eval \
    --out s > out.txt 2>&1 || { cat out.txt; fail "scalelab scale"; }
cat s/scaling.gp
grep -qx 'set xtics (1, 2)' s/scaling.gp || fail "s/scaling.gp does not set the x tics to the rank counts 1, 2"
# The key figure and the machine in the title: efficiency, CPU, logical CPUs and load.
grep -Eq "^set title .Scaling efficiency [0-9.]+% at 2 ranks \(.*[0-9]+ logical CPUs, load average up to [0-9.]+\)" s/scaling.gp \
  || fail "s/scaling.gp's title lacks the efficiency, the machine or the load"
[ -f s/scaling.svg ] || fail "no s/scaling.svg (is gnuplot installed?)"
labels=$(python3 -c '
import re, sys
svg = open("s/scaling.svg").read()
print(" ".join(re.findall(r"text-anchor=\"middle\">\s*<text><tspan[^>]*>\s*([-+0-9.e]+)</tspan>", svg)))')
echo "x tic labels drawn: $labels"
[ "$labels" = "1 2" ] || fail "x tic labels are '$labels', expected '1 2'"
echo "OK"
