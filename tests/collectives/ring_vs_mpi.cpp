// ring_vs_mpi: times scalelab's ring allreduce against the MPI library's own MPI_Allreduce, side
// by side in one run, and prints the bus bandwidth of each and their ratio per size. A timing
// program (not a CTest test): the evidence for the goal of at least 0.9x Open MPI from 1 to 64 MiB.
//
//   mpirun --allow-run-as-root --oversubscribe -np 2 build/<dir>/tests/collectives/ring_vs_mpi
//       [-b 1M] [-e 64M] [-n 20] [-w 5] [--algo ring] [--inplace]
//
// Per size, the two are interleaved iteration by iteration (so a disturbance on this shared
// machine hits both alike); an iteration's time is the slowest rank's, and the figure is the
// median over iterations. busbw = bytes / time * 2 (p-1) / p (nccl-tests' allreduce factor).
// The last column is the ratio of the fastest iterations: on a loaded machine the medians carry
// the scheduler's noise, the best times less so.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "comm/factory.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "core/size_parse.h"
#include "core/stats.h"
#include "core/timer.h"

namespace {

using scalelab::comm::Communicator;

// One timed call: barrier, run, the slowest rank's seconds.
template <typename F>
double timed(Communicator& comm, F&& call) {
  comm.barrier();
  const double t0 = scalelab::now_seconds();
  call();
  return comm.max_over_ranks(scalelab::now_seconds() - t0);
}

int run(int argc, char** argv) {
  std::size_t min_bytes = 1 << 20, max_bytes = 64 << 20;
  int iters = 20, warmup = 5;
  std::string algo_name = "ring";
  bool in_place = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) scalelab::throw_usage(a + ": needs a value");
      return argv[++i];
    };
    if (a == "-b") min_bytes = scalelab::parse_size(value(), "-b");
    else if (a == "-e") max_bytes = scalelab::parse_size(value(), "-e");
    else if (a == "-n") iters = std::stoi(value());
    else if (a == "-w") warmup = std::stoi(value());
    else if (a == "--algo") algo_name = value();
    else if (a == "--inplace") in_place = true;
    else scalelab::throw_usage(a + ": unknown flag; use -b -e -n -w --algo --inplace");
  }
  auto comm = scalelab::comm::make_communicator("mpi");
  using scalelab::collectives::Collective;
  auto ours = scalelab::collectives::make_algorithm(Collective::allreduce, algo_name);
  auto library = scalelab::collectives::make_algorithm(Collective::allreduce, "library");
  const int p = comm->size();
  const double factor = 2.0 * (p - 1) / p;
  const std::size_t max_count = max_bytes / sizeof(float);
  std::vector<float> send(max_count, 1.0f), recv(max_count, 0.0f);  // touched once, reused
  if (comm->rank() == 0) {
    std::printf("# allreduce float sum, %d ranks, %s, median of %d iterations (after %d warm-up), time = slowest rank\n",
                p, in_place ? "in place" : "out of place", iters, warmup);
    std::printf("# %10s %12s %10s %12s %10s %8s %10s\n", "size(B)", (algo_name + "(us)").c_str(), "busbw", "MPI(us)",
                "busbw", "ratio", "best-ratio");
  }
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const std::size_t count = bytes / sizeof(float);
    float* out = in_place ? send.data() : recv.data();
    const auto call = [&](scalelab::collectives::Algorithm& a) {
      a.run(*comm, send.data(), out, count, scalelab::comm::DataType::f32, scalelab::comm::ReduceOp::sum, 0);
    };
    for (int w = 0; w < warmup; ++w) {
      call(*ours);
      call(*library);
    }
    std::vector<double> t_ours, t_lib;
    for (int it = 0; it < iters; ++it) {
      t_ours.push_back(timed(*comm, [&] { call(*ours); }));
      t_lib.push_back(timed(*comm, [&] { call(*library); }));
    }
    const double mo = scalelab::median(t_ours), ml = scalelab::median(t_lib);
    const double best = scalelab::percentile(t_lib, 0) / scalelab::percentile(t_ours, 0);
    const double bo = static_cast<double>(bytes) / mo * factor / 1e9, bl = static_cast<double>(bytes) / ml * factor / 1e9;
    if (comm->rank() == 0) {
      std::printf("  %10zu %12.1f %10.2f %12.1f %10.2f %8.2f %10.2f\n", bytes, mo * 1e6, bo, ml * 1e6, bl, bo / bl, best);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    scalelab::comm::ensure_mpi_initialized();
    const int rc = run(argc, argv);
    scalelab::comm::finalize_mpi();
    return rc;
  } catch (const scalelab::Error& e) {
    std::fprintf(stderr, "ring_vs_mpi: %s\n", e.what());
    scalelab::comm::fail_job(e.exit_code());
    return e.exit_code();
  }
}
