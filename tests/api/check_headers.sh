#!/usr/bin/env bash
# Each public header (include/scalelab/*.h) compiles alone, with nothing but include/ on the
# include path: no MPI, Eigen, JSON or other scalelab header leaks into programs built on it.
#   check_headers.sh CXX INCLUDE_DIR
set -euo pipefail
cxx=$1 include=$2
compile() { printf '%s\n' "$1" | "$cxx" -std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I "$include" -x c++ -; }
# The check itself: a library header must NOT be reachable this way.
if compile '#include "nn/model.h"' 2>/dev/null; then echo "FAIL: lib/ is on the default include path: the check proves nothing"; exit 1; fi
n=0
for h in "$include"/scalelab/*.h; do
  compile "#include <scalelab/$(basename "$h")>" ||
    { echo "FAIL: $h does not compile alone with only $include on the include path"; exit 1; }
  n=$((n + 1))
done
[[ $n -gt 0 ]] || { echo "FAIL: no headers in $include/scalelab"; exit 1; }
echo "PASS: $n public headers compile alone"
