// What a benchmark run measures (the flags of `scalelab bench`, parsed) and what it produces:
// one Row per (data type, operator, size), each holding the measurements of the algorithm
// out-of-place and in-place, or, with --compare, of the algorithm and the library interleaved.
//
// A prediction hook: set BenchOptions::predictor (e.g. from the cost model for --predict) and
// every Row carries predicted_us; the table printer then adds a predicted-time and an error
// column, and the JSON record a "predicted_us" field. Nothing else changes.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/sweep.h"
#include "collectives/algorithm.h"
#include "collectives/choice.h"
#include "comm/types.h"

namespace scalelab::bench {

// One measured case, as the predictor sees it.
struct CaseKey {
  collectives::Collective collective = collectives::Collective::allreduce;
  std::string algorithm;
  std::uint64_t size_bytes = 0;  // as printed (sweep.h)
  std::size_t call_count = 0;    // elements per call (per rank for allgather/reduce-scatter)
  comm::DataType type = comm::DataType::f32;
  comm::ReduceOp op = comm::ReduceOp::sum;
  int nranks = 1;
  bool shared_buffers = false;  // -R 1
};
// Predicted time of one call in microseconds, or nullopt where the model has no answer.
using Predictor = std::function<std::optional<double>(const CaseKey&)>;

struct BenchOptions {
  collectives::Collective collective = collectives::Collective::allreduce;
  std::string algorithm = "ring";                             // --algo (auto: chooser's pick per size)
  // --algo auto: what names the algorithm for each size (rank 0's answer counts, collectives/choice.h);
  // empty, or no answer: library.
  collectives::Chooser chooser;
  std::vector<comm::DataType> types{comm::DataType::f32};     // -d (several with -d all)
  std::vector<comm::ReduceOp> ops{comm::ReduceOp::sum};       // -o (several with -o all)
  int root = 0;                                               // -r
  SweepSpec sweep;                                            // -b -e -f -i
  int iters = 20;                                             // -n
  int warmup_iters = 5;                                       // -w
  bool check = true;                                          // -c
  bool compare = false;                                       // --compare: algorithm vs library
  // -R 1: buffers in node memory (Communicator::shared_buffer), which shm reads on the peers in
  // place, as nccl-tests -R registers its buffers with NCCL; false: ordinary memory.
  bool shared_buffers = false;
  double stall_timeout_s = 300;                               // --stall-timeout: end a rank after so long without a call finishing; 0: never (per rank, not compared)
  Predictor predictor;                                        // empty: no prediction column
  // The time no implementation can beat on this machine (the memory-traffic limit of CPU ranks,
  // model/predict.h), in microseconds: each row's `limit_us`, and a column of the share of it the
  // out-of-place measurement reached. Empty: no such column.
  Predictor limit;
};

// One variant of one case: medians etc. over the timed iterations, where each iteration's time
// is the slowest rank's (see runner.h).
struct Measurement {
  std::string algorithm;
  bool in_place = false;
  double time_us = 0;      // median over iterations
  double min_us = 0;       // fastest iteration
  double max_us = 0;       // slowest iteration
  double algbw_GBps = 0;   // size / time_us
  double busbw_GBps = 0;   // algbw * busbw_factor
  std::optional<std::uint64_t> wrong;  // summed over ranks; nullopt with -c 0
};

struct Row {
  CaseShape shape;
  comm::DataType type = comm::DataType::f32;
  std::optional<comm::ReduceOp> op;  // nullopt for broadcast and allgather ("none")
  int root = -1;                     // -1 for collectives without a root
  Measurement out_of_place;          // --algo, out-of-place
  std::optional<Measurement> in_place;  // --algo, in-place (not with --compare)
  std::optional<Measurement> library;   // --compare: the library, out-of-place
  std::optional<double> busbw_ratio;    // --compare: out_of_place.busbw / library.busbw
  std::optional<double> predicted_us;   // when a predictor is set
  std::optional<double> limit_us;       // when a limit is set and has an answer for this case
};

struct Summary {
  std::uint64_t wrong_total = 0;      // over every measurement and rank (0 with -c 0)
  double avg_busbw_GBps = 0;          // mean busbw of --algo's measurements (nccl-tests' footer)
  std::optional<double> avg_library_busbw_GBps;  // --compare
  std::optional<double> min_ratio;               // --compare: the worst size
  std::optional<double> geomean_ratio;           // --compare
};

struct BenchResult {
  int nranks = 1;
  std::string backend;
  std::vector<Row> rows;
  Summary summary;
};

}  // namespace scalelab::bench
