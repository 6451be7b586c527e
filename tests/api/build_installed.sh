#!/usr/bin/env bash
# Installs scalelab from BUILD_DIR into WORK/prefix (cmake --install) and builds each PROJECT
# folder out of tree against it (find_package(scalelab)), into WORK/<folder name>.
#   build_installed.sh BUILD_DIR WORK PROJECT...
# Exits non-zero, saying which step failed, when the install or any build fails.
set -euo pipefail
build_dir=$1 work=$2
shift 2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log" ||
  { cat "$work/install.log"; echo "FAIL: cmake --install $build_dir"; exit 1; }
for project in "$@"; do
  name=$(basename "$project")
  cmake -S "$project" -B "$work/$name" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" > "$work/$name.configure.log" 2>&1 ||
    { cat "$work/$name.configure.log"; echo "FAIL: configuring $project against $work/prefix"; exit 1; }
  cmake --build "$work/$name" -j2 > "$work/$name.build.log" 2>&1 ||
    { cat "$work/$name.build.log"; echo "FAIL: building $project against $work/prefix"; exit 1; }
done
