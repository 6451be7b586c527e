#!/usr/bin/env bash
# gnuplot exits 0 when the disk fills under it. A stand-in gnuplot that writes half a chart and
# exits 0 must not pass for a chart: scalelab plot exits 1 naming the incomplete file.
#   truncated_chart_check.sh SCALELAB RECORD WORK
set -uo pipefail
scalelab=$1 record=$2 work=$3
rm -rf "$work" && mkdir -p "$work/bin"
cat > "$work/bin/gnuplot" <<'GP'
#!/bin/sh
stem=$(basename "$1" .gp)
printf '<svg xmlns="http://www.w3.org/2000/svg">' > "$stem.svg"
printf '\211PNG\r\n\032\n' > "$stem.png"
exit 0
GP
chmod +x "$work/bin/gnuplot"
PATH="$work/bin:$PATH" "$scalelab" plot "$record" --output "$work/chart" > "$work/out.txt" 2> "$work/err.txt"
rc=$?
cat "$work/out.txt" "$work/err.txt"
[ "$rc" = 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q "chart.svg: gnuplot left it incomplete" "$work/err.txt" || { echo "FAIL: the incomplete SVG is not named"; exit 1; }
echo "PASS: a chart cut short is an error"
