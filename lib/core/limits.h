// Upper bounds of the counts a user gives (compute threads, loader threads, batches prefetched,
// ranks launched on this machine): a value past them is a typo or a misunderstanding, and
// trying it exhausts the process table or the memory before any error could name the flag.
// Bounds tied to the machine are multiples of its hardware threads; the others are fixed.
// docs/user-guide.md lists them.
//
//   if (threads > limits::max_threads()) throw_parameter(ErrorKind::usage, "threads", ...);
#pragma once
#include <cstdint>
#include <string>

namespace scalelab::limits {

// Threads per hardware thread a rank may start for one purpose (compute, data loading).
inline constexpr int kThreadsPerHardwareThread = 4;
// Ranks per hardware thread one machine may run (mpirun --oversubscribe beyond one).
inline constexpr int kRanksPerHardwareThread = 4;
// Floor of both machine-derived bounds, so that small machines can still try a course's settings.
inline constexpr int kMinMachineBound = 16;
// Ranks one `scalelab run` may launch across hosts (-H): larger jobs need a batch system.
inline constexpr int kMaxRanksAcrossHosts = 4096;
// Devices (GPUs, or CPU ranks) one prediction prices: simulate --gpus, predict --ranks.
inline constexpr int kMaxModelledDevices = 1 << 20;
// Batches a loader may prepare ahead of the step that uses them.
inline constexpr int kMaxPrefetch = 256;
// Micro-batches accumulated per optimizer step; epochs one run may train.
inline constexpr int kMaxBackwardPasses = 65536;
inline constexpr int kMaxEpochs = 1'000'000;
// Timed (and warm-up) iterations of a benchmark per size.
inline constexpr int kMaxBenchIters = 1'000'000;

// This machine's hardware threads (1 when unknown).
[[nodiscard]] int hardware_threads();
// kThreadsPerHardwareThread x hardware_threads(), at least kMinMachineBound.
[[nodiscard]] int max_threads();
// kRanksPerHardwareThread x hardware_threads(), at least kMinMachineBound: ranks on one machine.
[[nodiscard]] int max_local_ranks();

// Memory this machine can still give (MemAvailable of /proc/meminfo), in bytes; 0 when unknown.
[[nodiscard]] std::uint64_t available_memory_bytes();

// How those bounds are derived, for error lines: "the larger of 16 and 4 per hardware thread, 2 here".
[[nodiscard]] std::string machine_bound_basis(int per_hardware_thread);

}  // namespace scalelab::limits
