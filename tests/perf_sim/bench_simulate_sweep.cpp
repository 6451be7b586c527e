// Benchmark program: how long the step simulator takes to sweep ResNet-50 on superpod-a100 over
// 1, 2, 4, ... 4096 GPUs (one collective model per count, every bucket priced), the size of
// question HPC support staff ask before a job is submitted. Prints the median of 5 sweeps and the
// last sweep's scaling efficiency at each count. Not a test: run it on a quiet machine,
//   build/ci/tests/perf_sim/bench_simulate_sweep
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "sim/scaling.h"

int main() {
  scalelab::sim::ScalingRequest q;
  q.workload = "resnet50";
  q.machine = "superpod-a100";
  q.step.batch = 256;
  q.step.precision = scalelab::sim::Precision::amp;
  q.decode_per_core_per_s = 0;  // data already on the GPUs: the step and its allreduce alone
  q.counts.clear();
  for (int c = 1; c <= 4096; c *= 2) q.counts.push_back(c);
  std::vector<double> seconds;
  scalelab::sim::ScalingResult last;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    last = scalelab::sim::simulate_scaling(q);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  std::printf("resnet50 on superpod-a100, 1..4096 GPUs (%zu counts): median %.3f s per sweep (min %.3f, max %.3f)\n",
              q.counts.size(), seconds[2], seconds.front(), seconds.back());
  for (const auto& row : last.rows) {
    std::printf("  %5d GPUs  %10.0f images/s  efficiency %5.1f%%\n", row.devices, row.step.samples_per_s,
                100.0 * row.scaling_efficiency);
  }
  return 0;
}
