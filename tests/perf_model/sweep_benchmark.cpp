// How fast the cost model is: predicts allreduce on a 4,096-GPU cluster (512 DGX A100 nodes on
// HDR InfiniBand, catalog "superpod-a100") for every size from 8 B to 8 GiB (factor 2), for
// every algorithm (auto: the model evaluates each one and keeps the fastest), and prints the
// wall time, including building the machine, its routes and its rings.
//
//   build/.../tests/perf_model/perf_model_sweep [--machine NAME] [--gpus N] [--require-under SECONDS]
//
// The requirement is one second for the whole sweep; --require-under makes the exit code say
// whether it held (CTest runs it without, since a loaded machine times anything slowly).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/timer.h"
#include "model/predict.h"
#include "topo/catalog.h"

int main(int argc, char** argv) {
  using namespace scalelab;
  std::string machine = "superpod-a100", gpus = "4096";
  double require = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--machine") machine = argv[i + 1];
    else if (k == "--gpus") gpus = argv[i + 1];
    else if (k == "--require-under") require = std::atof(argv[i + 1]);
    else {
      std::fprintf(stderr, "perf_model_sweep: unknown option %s; use --machine, --gpus, --require-under\n", k.c_str());
      return 2;
    }
  }
  const Stopwatch total;
  const topo::Machine m = topo::resolve_machine(machine);
  const model::Predictor pr(m, topo::select_gpus(m, gpus), topo::P2P::on);
  const double setup_s = total.elapsed().value;
  const Stopwatch sweep;
  int sizes = 0;
  double checksum = 0;
  model::Prediction last;
  for (double n = 8; n <= 8.0 * (1ull << 30); n *= 2, ++sizes) {
    last = pr.predict(collectives::Collective::allreduce, "auto", std::nullopt, n);
    checksum += last.time_s;
  }
  const double sweep_s = sweep.elapsed().value, total_s = total.elapsed().value;
  std::printf("perf_model_sweep: allreduce on %s, %d sizes (8 B .. 8 GiB, x2), every algorithm per size\n",
              pr.where().c_str(), sizes);
  std::printf("  machine, routes and rings: %.3f ms\n  sweep: %.3f ms (%.2f us per size)\n  total: %.3f ms (requirement: under 1000 ms)\n",
              setup_s * 1e3, sweep_s * 1e3, sweep_s / sizes * 1e6, total_s * 1e3);
  std::printf("  8 GiB: %.1f ms, busbw %.1f GB/s, %s (%s); bottleneck: %s\n", last.time_s * 1e3, last.busbw_GBps,
              last.algorithm.c_str(), last.detail.c_str(), pr.bottleneck().c_str());
  if (!(checksum > 0)) return 1;
  return (require > 0 && total_s > require) ? 1 : 0;
}
