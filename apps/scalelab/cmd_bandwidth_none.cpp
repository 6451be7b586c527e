// `scalelab bandwidth` and calibrate's GPU figures for builds without CUDA (cmd_bandwidth.cpp is
// the real command): --help says what the command needs; anything else is one line and exit 1,
// as any missing GPU is; the profile records why it has no GPU figures.
#include <iostream>

#include "commands.h"
#include "core/error.h"
#include "model/profile.h"

namespace scalelab::cli {

namespace {

constexpr const char* kNoCuda =
    "scalelab bandwidth: this scalelab was built without CUDA (no CUDA compiler at configure time); "
    "rebuild with the CUDA toolkit installed (cmake -DSCALELAB_CUDA=ON) to measure GPU copies";

}  // namespace

int cmd_bandwidth(const Args& args) {
  for (const auto& a : args.argv) {
    if (a == "--help" || a == "-h") {
      std::cout << "usage: scalelab bandwidth [--cuda-device N] [-b 1K -e 1G -f 2] [--mode pinned|pageable|both] "
                   "[--warmup_iters 2] [--iters 20] [--repeats 5] [--peers] [--peer-bytes 64M] [--json FILE]\n\n"
                << kNoCuda << "\n"
                << "(GPU status (scalelab bandwidth): ran on one GPU only, docs/gpu-status.md)\n";
      return 0;
    }
  }
  throw_runtime(kNoCuda);
}

model::GpuCopies gpu_copies_for_profile(bool /*quick*/) {
  model::GpuCopies g;
  g.reason = "this scalelab was built without CUDA";
  return g;
}

}  // namespace scalelab::cli
