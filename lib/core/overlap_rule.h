// When CPU ranks average gradients on a communication thread while backward goes on, if the
// user left it to `--overlap auto`: when the node has a hardware thread for each local rank's
// compute threads and for its communication thread. Otherwise the thread would take a core from
// compute and the step would slow down. The trainer decides by this rule (train/engine_cpu.cpp),
// and the step simulator predicts `--machine this` by it (sim/scaling.cpp).
//
//   if (overlap_fits(limits::hardware_threads(), local_ranks, threads)) ...
#pragma once

namespace scalelab {

[[nodiscard]] constexpr bool overlap_fits(long hardware_threads, long local_ranks, long compute_threads) {
  return hardware_threads > 0 && hardware_threads >= local_ranks * (compute_threads + 1);
}

}  // namespace scalelab
