// Gradescope's autograder package (grade/package.h).
#include "grade/package.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/process.h"

namespace scalelab::grade {
namespace fs = std::filesystem;

std::string setup_script() {
  return R"sh(#!/usr/bin/env bash
# Gradescope's setup.sh (its Ubuntu image, as root, once per assignment): the packages scalelab
# needs (tools/install-deps.sh's list, less the test-only ones), a CMake >= 3.25 and a GCC >= 12
# where the image's are older, then scalelab built from source/ and installed into /opt/scalelab:
# the API the submissions build against, and the scalelab binary that grades them.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
here=$(cd "$(dirname "$0")" && pwd)
apt-get update -qq
apt-get install -y -qq --no-install-recommends build-essential cmake pkg-config libopenmpi-dev openmpi-bin \
  libeigen3-dev libboost-program-options-dev libgtest-dev libgmock-dev nlohmann-json3-dev libfmt-dev \
  zlib1g-dev libhwloc-dev libopenblas-dev dataset-fashion-mnist python3-pip
if ! cmake -P /dev/stdin <<< 'if(CMAKE_VERSION VERSION_LESS 3.25)
  message(FATAL_ERROR old)
endif()' 2>/dev/null; then
  pip3 install -q 'cmake>=3.25'
  hash -r
fi
if [ "$(gcc -dumpversion | cut -d. -f1)" -lt 12 ]; then
  apt-get install -y -qq --no-install-recommends g++-12
  export CC=gcc-12 CXX=g++-12
fi
cmake -S "$here/source" -B "$here/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$here/build" -j"$(nproc)" --target scalelab scalelab_api
cmake --install "$here/build" --prefix /opt/scalelab
install -D "$here/build/bin/scalelab" /opt/scalelab/bin/scalelab
)sh";
}

std::string run_autograder_script(const PackageOptions& o) {
  std::ostringstream ranks;
  for (std::size_t i = 0; i < o.ranks.size(); ++i) ranks << (i ? "," : "") << o.ranks[i];
  std::ostringstream s;
  s << R"sh(#!/usr/bin/env bash
# Gradescope's run_autograder (once per submission): scalelab grade writes results.json.
# AUTOGRADER_ROOT and SCALELAB_HOME move /autograder and /opt/scalelab (for trying it elsewhere).
root=${AUTOGRADER_ROOT:-/autograder}
home=${SCALELAB_HOME:-/opt/scalelab}
mkdir -p "$root/results"
exec "$home/bin/scalelab" grade "$root/submission" --prefix "$home" --out "$root/results/results.json" \
  --ranks )sh" << ranks.str() << " --time-limit " << o.time_limit << " --memory-limit " << o.memory_limit << " --disk-limit " << o.disk_limit
    << " --target " << o.target
    << "\n";
  return s.str();
}

void write_autograder_zip(const std::string& out, const PackageOptions& o) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::path(o.source_dir) / "CMakeLists.txt", ec) || !fs::is_directory(fs::path(o.source_dir) / "lib" / "grade", ec)) {
    throw_parameter(ErrorKind::input, "source_dir", o.source_dir + ": not scalelab's source tree (no CMakeLists.txt and lib/grade there): "
                                                    "package from a scalelab built from its sources");
  }
  const char* t = std::getenv("TMPDIR");
  std::string templ = std::string(t && *t ? t : "/tmp") + "/scalelab-package-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw_runtime("cannot create a folder " + templ + ": " + std::strerror(errno));
  const fs::path stage = templ;
  // The source tree, without build folders or hidden ones (.git).
  fs::create_directories(stage / "source");
  for (const auto& e : fs::directory_iterator(o.source_dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind('.', 0) == 0 || name.rfind("build", 0) == 0) continue;
    fs::copy(e.path(), stage / "source" / name, fs::copy_options::recursive | fs::copy_options::skip_symlinks);
  }
  auto script = [&](const char* name, const std::string& text) {
    std::ofstream(stage / name) << text;
    fs::permissions(stage / name, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
  };
  script("setup.sh", setup_script());
  script("run_autograder", run_autograder_script(o));
  const std::string zip = fs::absolute(out).string();
  fs::remove(zip, ec);
  const int rc = run_process({find_in_path("cmake").empty() ? "cmake" : find_in_path("cmake"), "-E", "tar", "cf", zip, "--format=zip",
                              "setup.sh", "run_autograder", "source"},
                             stage.string());
  fs::remove_all(stage, ec);
  if (rc != 0) throw_runtime("cmake -E tar could not write " + zip + " (exit status " + std::to_string(rc) + "): check the folder and free space");
}

}  // namespace scalelab::grade
