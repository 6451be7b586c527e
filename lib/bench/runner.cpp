// The benchmark harness's timing loop and checking (runner.h).
#include "bench/runner.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/buffer.h"
#include "bench/shared_arena.h"
#include "bench/pattern.h"
#include "collectives/choice.h"
#include "comm/consistency.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/stats.h"
#include "core/timer.h"

namespace scalelab::bench {
namespace {

using collectives::Algorithm;
using collectives::Collective;
using comm::DataType;
using comm::ReduceOp;

// One thing timed at one size: an algorithm, out-of-place or in-place, with its output buffer.
struct Variant {
  Algorithm* algo = nullptr;
  bool in_place = false;
  Buffer out;                 // out-of-place: the receive buffer; in-place: the one buffer
  std::vector<double> times;  // this rank's time per timed iteration, seconds
};

// Buffers and shapes of one (type, op, size) case on this rank.
class Case {
 public:
  Case(comm::Communicator& comm, const BenchOptions& o, DataType type, ReduceOp op, std::uint64_t size,
       SharedArena* arena)
      : comm_(comm), o_(o), type_(type), op_(op),
        shape_(case_shape(o.collective, size, comm::size_of(type), comm.size())),
        tsize_(comm::size_of(type)), arena_(arena) {
    const std::size_t send_bytes = shape_.send_elems * tsize_, recv_bytes = shape_.recv_elems * tsize_;
    host_.resize(std::max(send_bytes, recv_bytes) + 1);
    fill_input(o.collective, type, comm.rank(), comm.size(), shape_.call_count, host_.data());
    if (arena_ != nullptr) arena_->reset();
    send_ = arena_ != nullptr ? arena_->take(send_bytes) : Buffer(comm.memory_space(), send_bytes);
    send_.upload(host_.data(), send_bytes);
  }

  [[nodiscard]] const CaseShape& shape() const { return shape_; }

  // Output buffer size of a variant: in-place reduce-scatter works in its (larger) input buffer.
  [[nodiscard]] std::size_t out_bytes(bool in_place) const {
    const bool rs_in_place = in_place && o_.collective == Collective::reduce_scatter;
    return (rs_in_place ? shape_.send_elems : shape_.recv_elems) * tsize_;
  }

  [[nodiscard]] std::unique_ptr<Variant> make_variant(Algorithm* algo, bool in_place) {
    auto v = std::make_unique<Variant>();
    v->algo = algo;
    v->in_place = in_place;
    v->out = arena_ != nullptr ? arena_->take(out_bytes(in_place)) : Buffer(comm_.memory_space(), out_bytes(in_place));
    v->times.assign(static_cast<std::size_t>(o_.iters), 0.0);
    return v;
  }

  // Untimed preparation: poison the output (before the checked iteration), then for in-place
  // runs restore this rank's input where the call expects it.
  void prepare(Variant& v, bool poison_output) {
    if (poison_output) {
      poison(type_, out_bytes(v.in_place) / tsize_, host_.data());
      v.out.upload(host_.data(), out_bytes(v.in_place));
    }
    if (v.in_place) v.out.copy_from(send_, send_.bytes(), in_place_input_offset());
  }

  void call(Variant& v) {
    const std::size_t count = shape_.call_count;
    if (!v.in_place) {
      v.algo->run(comm_, send_.data(), v.out.data(), count, type_, op_, o_.root);
      return;
    }
    const std::size_t block = count * tsize_ * static_cast<std::size_t>(comm_.rank());
    switch (o_.collective) {
      case Collective::allgather: v.algo->run(comm_, v.out.at(block), v.out.data(), count, type_, op_, o_.root); break;
      case Collective::reduce_scatter: v.algo->run(comm_, v.out.data(), v.out.at(block), count, type_, op_, o_.root); break;
      default: v.algo->run(comm_, v.out.data(), v.out.data(), count, type_, op_, o_.root); break;
    }
  }

  // Wrong elements of this rank's result in `v` (after the last iteration).
  [[nodiscard]] std::uint64_t wrong(const Variant& v) {
    const std::size_t offset = v.in_place && o_.collective == Collective::reduce_scatter
                                   ? shape_.call_count * tsize_ * static_cast<std::size_t>(comm_.rank())
                                   : 0;
    v.out.download(host_.data(), shape_.recv_elems * tsize_, offset);
    return count_wrong(o_.collective, type_, op_, comm_.rank(), comm_.size(), o_.root, shape_.call_count,
                       host_.data());
  }

 private:
  [[nodiscard]] std::size_t in_place_input_offset() const {
    return o_.collective == Collective::allgather ? shape_.call_count * tsize_ * static_cast<std::size_t>(comm_.rank())
                                                  : 0;
  }

  comm::Communicator& comm_;
  const BenchOptions& o_;
  DataType type_;
  ReduceOp op_;
  CaseShape shape_;
  std::size_t tsize_;
  std::vector<unsigned char> host_;  // staging for inputs, poison and checks
  SharedArena* arena_;               // -R 1: where the buffers come from; nullptr: their own memory
  Buffer send_;                      // this rank's input, never written by a call
};

// The stall watchdog's name for a call of `c` (a string literal, as StallWatchdog::beat needs).
const char* phase_of(Collective c) {
  switch (c) {
    case Collective::allreduce: return "allreduce";
    case Collective::broadcast: return "broadcast";
    case Collective::allgather: return "allgather";
    case Collective::reduce_scatter: return "reduce-scatter";
  }
  return "collective";
}

// Warm-up, then timed iterations of every variant, alternating which goes first. The watchdog is
// told of every call and barrier; `step` counts the calls of the whole run.
void run_loop(comm::Communicator& comm, const BenchOptions& o, Case& c, const std::vector<Variant*>& variants,
              comm::StallWatchdog& watchdog, std::int64_t& step) {
  const char* phase = phase_of(o.collective);
  for (int w = 0; w < o.warmup_iters; ++w) {
    for (Variant* v : variants) {
      c.prepare(*v, false);
      watchdog.beat(phase, ++step);
      c.call(*v);
    }
  }
  const std::size_t nv = variants.size();
  for (int it = 0; it < o.iters; ++it) {
    const bool checked = o.check && it == o.iters - 1;
    for (std::size_t k = 0; k < nv; ++k) {
      Variant& v = *variants[(static_cast<std::size_t>(it) + k) % nv];
      if (v.in_place || checked) c.prepare(v, checked);
      watchdog.beat("barrier", step);
      comm.barrier();
      watchdog.beat(phase, ++step);
      const double t0 = now_seconds();
      c.call(v);
      v.times[static_cast<std::size_t>(it)] = now_seconds() - t0;
    }
  }
}

// Exchanges the per-iteration times and wrong counts and reduces them to a Measurement.
Measurement measure(comm::Communicator& comm, const BenchOptions& o, Case& c, Variant& v) {
  const std::size_t iters = v.times.size();
  std::vector<double> all(iters * static_cast<std::size_t>(comm.size()));
  comm.host_allgather(v.times.data(), all.data(), iters * sizeof(double));
  std::vector<double> slowest(iters, 0.0);
  for (int r = 0; r < comm.size(); ++r) {
    for (std::size_t i = 0; i < iters; ++i) {
      slowest[i] = std::max(slowest[i], all[static_cast<std::size_t>(r) * iters + i]);
    }
  }
  Measurement m;
  m.algorithm = std::string(v.algo->name());
  m.in_place = v.in_place;
  m.time_us = median(slowest) * 1e6;
  m.min_us = *std::min_element(slowest.begin(), slowest.end()) * 1e6;
  m.max_us = *std::max_element(slowest.begin(), slowest.end()) * 1e6;
  if (m.time_us > 0) {
    m.algbw_GBps = static_cast<double>(c.shape().size_bytes) / m.time_us / 1e3;
    m.busbw_GBps = m.algbw_GBps * busbw_factor(o.collective, comm.size());
  }
  if (o.check) {
    const double local = static_cast<double>(c.wrong(v));
    double total = 0;
    for (const double w : comm.gather_values(local)) total += w;
    m.wrong = static_cast<std::uint64_t>(total);
  }
  return m;
}

Row run_case(comm::Communicator& comm, const BenchOptions& o, Algorithm& algo, Algorithm* library, DataType type,
             ReduceOp op, std::uint64_t size, SharedArena* arena, comm::StallWatchdog& watchdog, std::int64_t& step) {
  Case c(comm, o, type, op, size, arena);
  Row row;
  row.shape = c.shape();
  row.type = type;
  if (has_reduction(o.collective)) row.op = op;
  row.root = has_root(o.collective) ? o.root : -1;
  if (library != nullptr) {
    auto ours = c.make_variant(&algo, false);
    auto lib = c.make_variant(library, false);
    run_loop(comm, o, c, {ours.get(), lib.get()}, watchdog, step);
    watchdog.beat("result exchange", step);
    row.out_of_place = measure(comm, o, c, *ours);
    row.library = measure(comm, o, c, *lib);
    if (row.library->busbw_GBps > 0) row.busbw_ratio = row.out_of_place.busbw_GBps / row.library->busbw_GBps;
  } else {
    auto oop = c.make_variant(&algo, false);
    run_loop(comm, o, c, {oop.get()}, watchdog, step);
    watchdog.beat("result exchange", step);
    row.out_of_place = measure(comm, o, c, *oop);
    auto ip = c.make_variant(&algo, true);
    run_loop(comm, o, c, {ip.get()}, watchdog, step);
    watchdog.beat("result exchange", step);
    row.in_place = measure(comm, o, c, *ip);
  }
  const CaseKey key{o.collective, o.algorithm, row.shape.size_bytes, row.shape.call_count, type, op, comm.size(),
                    o.shared_buffers};
  if (o.predictor) row.predicted_us = o.predictor(key);
  if (o.limit) row.limit_us = o.limit(key);
  return row;
}

Summary summarize(const std::vector<Row>& rows) {
  Summary s;
  std::vector<double> ours, lib, ratios;
  auto add = [&](const Measurement& m, std::vector<double>& into) {
    into.push_back(m.busbw_GBps);
    s.wrong_total += m.wrong.value_or(0);
  };
  for (const Row& r : rows) {
    add(r.out_of_place, ours);
    if (r.in_place) add(*r.in_place, ours);
    if (r.library) add(*r.library, lib);
    if (r.busbw_ratio) ratios.push_back(*r.busbw_ratio);
  }
  if (!ours.empty()) s.avg_busbw_GBps = mean(ours);
  if (!lib.empty()) s.avg_library_busbw_GBps = mean(lib);
  if (!ratios.empty()) {
    s.min_ratio = *std::min_element(ratios.begin(), ratios.end());
    double log_sum = 0;
    for (const double x : ratios) log_sum += std::log(x);
    s.geomean_ratio = std::exp(log_sum / static_cast<double>(ratios.size()));
  }
  return s;
}

// Refuses sizes whose buffers the ranks on this machine could not all allocate (host memory),
// before any is allocated: one error naming -e instead of std::bad_alloc in the middle of the
// table. Per rank and case: the staging copy, the input and one output per variant.
void check_host_memory(comm::Communicator& comm, const BenchOptions& o, const std::vector<std::vector<std::uint64_t>>& sizes) {
  if (comm.memory_space() != comm::MemorySpace::host) return;
  const std::uint64_t available = limits::available_memory_bytes();
  double per_rank = 0;
  for (std::size_t t = 0; t < o.types.size(); ++t) {
    if (sizes[t].empty()) continue;
    const std::size_t tsize = comm::size_of(o.types[t]);
    const CaseShape s = case_shape(o.collective, sizes[t].back(), tsize, comm.size());
    const double send = static_cast<double>(s.send_elems * tsize), recv = static_cast<double>(s.recv_elems * tsize);
    const double variants = o.compare ? 4 : 2;
    per_rank = std::max(per_rank, std::max(send, recv) + send + variants * std::max(send, recv));
  }
  const double needed = per_rank * comm.local_size();
  const bool fits = available == 0 || needed <= static_cast<double>(available);
  comm::require_same(comm, fits ? 1 : 0, "max_bytes", "ranks disagree whether the largest size fits in memory");
  if (!fits) {
    constexpr double GiB = 1024.0 * 1024 * 1024;
    throw_parameter(ErrorKind::usage, "max_bytes",
                    fmt::format("{}: the largest size needs about {:.1f} GiB of buffers on this machine ({} rank(s) x {:.1f} GiB) "
                                "but {:.1f} GiB is available; give a smaller maximum size",
                                o.sweep.max_bytes, needed / GiB, comm.local_size(), per_rank / GiB,
                                static_cast<double>(available) / GiB));
  }
}

}  // namespace

void require_same_options(comm::Communicator& comm, const BenchOptions& o) {
  std::string types, ops;
  for (const DataType t : o.types) {
    if (!types.empty()) types += ',';
    types += comm::name_of(t);
  }
  for (const ReduceOp op : o.ops) {
    if (!ops.empty()) ops += ',';
    ops += comm::name_of(op);
  }
  // Named as BenchOptions names them; ranks launched with different command lines are a usage
  // problem the user fixes (exit 2).
  comm::require_same_fields(comm,
                            {
                                {"collective", std::string(collectives::name_of(o.collective))},
                                {"min_bytes", std::to_string(o.sweep.min_bytes)},
                                {"max_bytes", std::to_string(o.sweep.max_bytes)},
                                {"step_factor", std::to_string(o.sweep.step_factor)},
                                {"step_bytes", std::to_string(o.sweep.step_bytes)},
                                {"types", types},
                                {"ops", ops},
                                {"root", std::to_string(o.root)},
                                {"iters", std::to_string(o.iters)},
                                {"warmup_iters", std::to_string(o.warmup_iters)},
                                {"check", o.check ? "1" : "0"},
                                {"compare", o.compare ? "on" : "off"},
                                {"shared_buffers", o.shared_buffers ? "1" : "0"},
                                {"algorithm", o.algorithm},
                            },
                            ErrorKind::usage);
  // The same options on every rank: a root beyond the ranks is found by each alike, here, where
  // the caller can let one rank say it (cmd_bench), before any output.
  if (has_root(o.collective) && (o.root < 0 || o.root >= comm.size())) {
    throw_parameter(ErrorKind::usage, "root",
                    std::to_string(o.root) + ": no such rank; give 0.." + std::to_string(comm.size() - 1));
  }
  // Likewise the iteration counts, the sizes and the memory they need (each rank alike on one
  // machine; checked together across ranks), so that one rank says them before the table starts.
  if (o.iters < 1) throw_parameter(ErrorKind::usage, "iters", std::to_string(o.iters) + ": give at least 1 iteration");
  if (o.warmup_iters < 0) throw_parameter(ErrorKind::usage, "warmup_iters", std::to_string(o.warmup_iters) + ": give 0 or more");
  // Every timed iteration keeps its time per variant; warm-up is as long as timing at most.
  for (const auto& [n, parameter] : {std::pair{o.iters, "iters"}, std::pair{o.warmup_iters, "warmup_iters"}}) {
    if (n > limits::kMaxBenchIters) {
      throw_parameter(ErrorKind::usage, parameter, std::to_string(n) + ": at most " + std::to_string(limits::kMaxBenchIters) + " per size");
    }
  }
  // Every size must suit every type before anything runs.
  std::vector<std::vector<std::uint64_t>> sizes;
  for (const DataType t : o.types) sizes.push_back(size_sweep(o.sweep, comm::size_of(t)));
  check_host_memory(comm, o, sizes);
}

BenchResult run_benchmark(comm::Communicator& comm, const BenchOptions& o, const RowCallback& on_row,
                          std::optional<SharedArena>* arena_slot) {
  require_same_options(comm, o);  // the iteration counts, the sizes and the memory they need too
  std::vector<std::vector<std::uint64_t>> sizes;
  for (const DataType t : o.types) sizes.push_back(size_sweep(o.sweep, comm::size_of(t)));

  // --algo auto: per size, rank 0's chooser names the algorithm (collectives/choice.h); each
  // algorithm is made once, at its first size.
  const bool choose = o.algorithm == "auto";
  std::map<std::string, std::unique_ptr<Algorithm>> made;
  auto algorithm_for = [&](std::uint64_t size) -> Algorithm& {
    std::string name = o.algorithm;
    if (choose) {
      collectives::ChoiceQuery q{o.collective, static_cast<double>(size)};
      q.shared_buffers = o.shared_buffers;  // priced out of place, as the prediction column is
      name = collectives::choose_algorithm(comm, q, o.chooser);
      if (name.empty()) name = "library";
    }
    std::unique_ptr<Algorithm>& a = made[name];
    if (!a) a = collectives::make_algorithm(o.collective, name);
    return *a;
  };
  if (!choose) (void)algorithm_for(0);  // an unknown name is a usage error before anything runs
  std::unique_ptr<Algorithm> library;
  if (o.compare) {
    if (o.algorithm == "library") {
      throw_parameter(ErrorKind::usage, "algorithm", "library: a comparison times an algorithm against library; choose another");
    }
    library = collectives::make_algorithm(o.collective, "library");
  }
  const std::vector<ReduceOp> ops = has_reduction(o.collective) ? o.ops : std::vector<ReduceOp>{o.ops.front()};

  if (!(o.stall_timeout_s >= 0) || !std::isfinite(o.stall_timeout_s)) {
    throw_parameter(ErrorKind::usage, "stall_timeout_s", std::to_string(o.stall_timeout_s) + ": give seconds >= 0 (0: never)");
  }
  // -R 1: the shared buffer, made once the sizes are known to fit (check_host_memory above counts
  // what it holds) and kept in the caller's slot for the next algorithm of the run.
  std::optional<SharedArena> own_arena;
  if (arena_slot == nullptr) arena_slot = &own_arena;
  SharedArena* arena = nullptr;
  if (o.shared_buffers) {
    if (!arena_slot->has_value()) arena_slot->emplace(comm, SharedArena::bytes_for(o, comm.size()));
    arena = &**arena_slot;
  }
  comm::StallWatchdog watchdog(o.stall_timeout_s, comm.rank(), comm.size(), "the benchmark");
  std::int64_t step = 0;  // calls so far, for the watchdog's report

  BenchResult result;
  result.nranks = comm.size();
  result.backend = comm.backend();
  for (std::size_t t = 0; t < o.types.size(); ++t) {
    for (const ReduceOp op : ops) {
      for (const std::uint64_t size : sizes[t]) {
        result.rows.push_back(run_case(comm, o, algorithm_for(size), library.get(), o.types[t], op, size, arena, watchdog, step));
        if (on_row) on_row(result.rows.back());
      }
    }
  }
  result.summary = summarize(result.rows);
  return result;
}

}  // namespace scalelab::bench
