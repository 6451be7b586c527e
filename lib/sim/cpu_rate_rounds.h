// Several timings of this machine's layers (measure_cpu_rates, cpu_rates.h) made into one:
// `scalelab calibrate` times the layers in rounds, alternately on one rank alone and on every
// rank of the node at once, because a machine's speed can change from one minute to the next (a
// VM whose host moves or shares its cores: on one such 2-core VM the cnn's fused convolutions took
// 0.75-0.80 ms per image in some minutes and 0.95-1.35 ms in others, alone or not), and one
// timing of each catches one state only.
//   - median_rates: every figure's median over the rounds.
//   - shared_from_rounds: the rates with every rank computing, as the median alone times the
//     median over the rounds of each round's shared figure over the alone figure taken beside it.
//     Pairing each shared timing with the alone one of the same minutes keeps a change of the
//     machine's speed between the two out of what they say about sharing the caches and memory.
//   - spread: how far one figure (the conv kind's rate) moved between the rounds, max / min - 1.
//   - speeds / set_speeds: every figure as a speed (a rate as it is, a fused run's seconds per
//     sample inverted), in one fixed order, and back: the ranks computing together take the
//     slowest rank's figures with one allreduce (min), since each training step waits for the
//     slowest rank.
// Every round must come from measure_cpu_rates with the same options (the same figures in the same
// order); a mismatch is a runtime error.
//
//   std::vector<CpuRates> alone, shared;  // round i: alone[i], then shared[i]
//   CpuRates solo = median_rates(alone), both = shared_from_rounds(alone, shared);
#pragma once
#include <vector>

#include "sim/cpu_rates.h"

namespace scalelab::sim {

[[nodiscard]] CpuRates median_rates(const std::vector<CpuRates>& rounds);
[[nodiscard]] CpuRates shared_from_rounds(const std::vector<CpuRates>& alone, const std::vector<CpuRates>& shared);
[[nodiscard]] double spread(const std::vector<CpuRates>& rounds, LayerKind kind);
[[nodiscard]] std::vector<double> speeds(const CpuRates& r);
void set_speeds(CpuRates& r, const std::vector<double>& speeds);

}  // namespace scalelab::sim
