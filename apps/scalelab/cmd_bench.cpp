// `scalelab bench allreduce|broadcast|allgather|reduce-scatter [options]`: the nccl-tests-style
// collective benchmark. Parses nccl-tests' flags into bench::BenchOptions, checks them before MPI
// starts (so a typo is one line, exit 2), then runs lib/bench's harness on every rank; rank 0
// prints the table and writes --json. Exit 1 when any element is wrong.
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/printer.h"
#include "bench/ranks.h"
#include "bench/record.h"
#include "bench/runner.h"
#include "bench_predict.h"  // --predict (cost model)
#include "algorithm_help.h"
#include "collectives/algorithm.h"
#include "comm/factory.h"
#include "commands.h"
#include "core/error.h"
#include "core/results.h"
#include "core/size_parse.h"
#include "load_report.h"
#include "model/predict.h"
#include "model/profile.h"

namespace scalelab::cli {
namespace {

using comm::DataType;
using comm::ReduceOp;

constexpr const char* kUsage =
    "scalelab bench allreduce|broadcast|allgather|reduce-scatter [options]\n\n"
    "Times a collective over a range of sizes and checks every result, as nccl-tests does:\n"
    "columns size count type redop root, then time algbw busbw #wrong out-of-place and in-place.\n"
    "A size's time is the median over iterations of the slowest rank's time (barrier before each\n"
    "iteration); GB = 1e9 bytes; busbw = algbw * 2(n-1)/n (allreduce), (n-1)/n (allgather,\n"
    "reduce-scatter; their size is the whole gathered/scattered buffer), 1 (broadcast).\n"
    "Launch ranks with `scalelab run -np N -- bench ...` or mpirun.\n"
    "GPU status (bench --backend nccl): ran on one GPU only (docs/gpu-status.md).\n\n"
    "examples:\n"
    "  scalelab run -np 2 -- bench allreduce -b 1K -e 16M -f 4\n"
    "  scalelab run -np 2 -- bench allreduce -b 1M -e 64M -f 2 --compare\n"
    "  scalelab run -np 2 -- bench allreduce -b 64K -e 64M -f 2 --algo auto --predict\n"
    "  scalelab run -np 3 -- bench reduce-scatter --algo all -d all -o all -b 8 -e 1M -f 4";

const std::vector<DataType> kAllTypes{DataType::f32, DataType::f64, DataType::f16, DataType::i32};
const std::vector<ReduceOp> kAllOps{ReduceOp::sum, ReduceOp::avg, ReduceOp::min, ReduceOp::max};

// A whole number of at least `least` (a count, a size factor, a rank).
std::uint64_t int_at_least(const std::string& text, const char* what, std::int64_t least = 0) {
  const std::int64_t v = parse_int(text, what);
  if (v < least) throw_usage(std::string(what) + " " + text + ": give " + std::to_string(least) + " or more");
  return static_cast<std::uint64_t>(v);
}

// The algorithms --algo names: one, or every one with "all". Unknown names are usage errors.
// The default is ring, or library on the nccl backend (the point-to-point algorithms reduce on
// the CPU and need host memory).
std::vector<std::string> chosen_algorithms(collectives::Collective c, const std::string& algo,
                                           const std::string& backend) {
  const auto names = collectives::algorithm_names(c);
  if (algo == "all") return names;
  if (algo == "auto") {
    if (backend == "nccl") {
      throw_usage("--algo auto: chooses among the CPU ranks' algorithms by this machine's calibration; with "
                  "--backend nccl use library (NCCL's own tuner chooses)");
    }
    return {algo};
  }
  if (!algo.empty()) {
    (void)collectives::find_algorithm(c, algo);  // validates the name
    return {algo};
  }
  if (backend == "nccl") return {"library"};
  for (const auto& n : names) {
    if (n == "ring") return {n};
  }
  return {names.front()};
}

struct Parsed {
  bench::BenchOptions options;
  std::vector<std::string> algorithms;
  std::string backend;
  std::string json_path;
  PredictRequest predict;  // --predict (cost model)
};

std::optional<Parsed> parse_bench(const Args& args) {
  po::options_description opts("options (nccl-tests' names)");
  opts.add_options()
      ("collective", po::value<std::string>(), "allreduce, broadcast, allgather or reduce-scatter")
      ("minbytes,b", po::value<std::string>()->default_value("32M"), "smallest size (bytes; K, M, G = 1024^n)")
      ("maxbytes,e", po::value<std::string>()->default_value("32M"), "largest size")
      ("stepfactor,f", po::value<std::string>()->default_value("1"), "multiply the size by this (1: step by -i)")
      ("stepbytes,i", po::value<std::string>()->default_value("1M"), "add this to the size when -f is 1")
      ("iters,n", po::value<std::string>()->default_value("20"), "timed iterations per size")
      ("warmup_iters,w", po::value<std::string>()->default_value("5"), "untimed iterations per size")
      ("check,c", po::value<std::string>()->default_value("1"), "1: check every result and count #wrong; 0: skip")
      ("datatype,d", po::value<std::string>()->default_value("float"), "float, double, half, int32 (or float32, float64, float16, int), or all")
      ("op,o", po::value<std::string>()->default_value("sum"), "sum, avg, min, max, or all")
      ("root,r", po::value<std::string>()->default_value("0"), "root rank (broadcast)")
      ("algo", po::value<std::string>()->default_value(""), "algorithm (default ring, library with --backend nccl; library = the backend's own collective; all = each in turn; auto = per size, the fastest the calibrated cost model predicts)")
      ("backend", po::value<std::string>()->default_value("mpi"), "mpi or nccl")
      ("compare", po::bool_switch(), "time --algo and library interleaved, print their busbw ratio")
      ("register,R", po::value<std::string>()->default_value("0"),
       "1: buffers in node memory, which shm reads on the peers in place (nothing staged), as nccl-tests -R 1 "
       "registers them with NCCL; 0: ordinary memory")
      ("stall-timeout", po::value<double>()->default_value(300, "300"),
       "end a rank after this many seconds without a finished call (a peer stopped or died); 0: never")
      ("json", po::value<std::string>()->default_value(""), "write the results as JSON records to this file")
      ("nthreads,t", po::value<std::string>()->default_value("1"), "threads per process: only 1")
      ("ngpus,g", po::value<std::string>()->default_value("1"), "GPUs per thread: only 1");
  add_predict_options(opts);  // --predict [--machine this|NAME|FILE] [--profile FILE]
  po::positional_options_description pos;
  pos.add("collective", 1);
  const auto vm = parse(args, std::string(kUsage) + "\n\n" + algorithms_help(), opts, &pos);
  if (!vm) return std::nullopt;
  check_output_files(*vm, {"json"});
  const auto str = [&](const char* key) { return (*vm)[key].as<std::string>(); };
  if (!vm->count("collective")) usage_error(args, "give the collective to time (allreduce, broadcast, allgather, reduce-scatter)");

  Parsed p;
  bench::BenchOptions& o = p.options;
  o.collective = collectives::parse_collective(str("collective"), "scalelab bench");
  for (const char* key : {"nthreads", "ngpus"}) {
    if (str(key) != "1") {
      usage_error(args, std::string("--") + key + " " + str(key) +
                            ": only 1 is supported (one thread and one device per rank); launch more ranks "
                            "with 'scalelab run -np N -- bench ...'");
    }
  }
  o.sweep.min_bytes = parse_size(str("minbytes"), "-b/--minbytes");
  o.sweep.max_bytes = parse_size(str("maxbytes"), "-e/--maxbytes");
  o.sweep.step_factor = int_at_least(str("stepfactor"), "-f/--stepfactor");
  o.sweep.step_bytes = parse_size(str("stepbytes"), "-i/--stepbytes");
  o.iters = static_cast<int>(int_at_least(str("iters"), "-n/--iters", 1));
  o.warmup_iters = static_cast<int>(int_at_least(str("warmup_iters"), "-w/--warmup_iters"));
  const std::string check = str("check");
  if (check != "0" && check != "1") throw_usage("-c/--check '" + check + "': give 1 (check results) or 0 (skip)");
  o.check = check == "1";
  o.types = str("datatype") == "all" ? kAllTypes : std::vector<DataType>{comm::parse_datatype(str("datatype"), "-d/--datatype")};
  o.ops = str("op") == "all" ? kAllOps : std::vector<ReduceOp>{comm::parse_reduce_op(str("op"), "-o/--op")};
  o.root = static_cast<int>(int_at_least(str("root"), "-r/--root"));
  // A root or an operation the collective never reads would be timed without a word: say so.
  const bool reduces = o.collective == collectives::Collective::allreduce ||
                       o.collective == collectives::Collective::reduce_scatter;
  const std::string collective_name(collectives::name_of(o.collective));
  if (!(*vm)["root"].defaulted() && o.collective != collectives::Collective::broadcast) {
    throw_usage("-r/--root " + str("root") + ": " + collective_name +
                " has no root (only broadcast has one); leave it out");
  }
  if (!(*vm)["op"].defaulted() && str("op") != "all" && !reduces) {
    throw_usage("-o/--op " + str("op") + ": " + collective_name +
                " reduces nothing (only allreduce and reduce-scatter do); leave it out");
  }
  o.compare = (*vm)["compare"].as<bool>();
  const std::string reg = str("register");
  if (reg != "0" && reg != "1") throw_usage("-R/--register '" + reg + "': give 1 (buffers in node memory) or 0 (ordinary memory)");
  o.shared_buffers = reg == "1";
  if (o.shared_buffers && str("backend") == "nccl") {
    throw_usage("-R/--register 1: the nccl backend has no node memory to place buffers in; give -R 0");
  }
  o.stall_timeout_s = (*vm)["stall-timeout"].as<double>();
  if (!(o.stall_timeout_s >= 0) || !std::isfinite(o.stall_timeout_s)) {
    throw_usage(fmt::format("--stall-timeout {:g}: give seconds >= 0 (0: never)", o.stall_timeout_s));
  }
  p.algorithms = chosen_algorithms(o.collective, str("algo"), str("backend"));
  if (o.compare) {
    std::erase(p.algorithms, std::string("library"));
    if (p.algorithms.empty()) throw_usage("--compare times --algo against library; choose an --algo other than library");
  }
  p.backend = str("backend");
  p.json_path = str("json");
  p.predict = predict_request(*vm, p.backend == "nccl");
  if (!p.predict.profile.empty() && !p.predict.enabled && p.algorithms != std::vector<std::string>{"auto"}) {
    throw_usage("--profile " + p.predict.profile + ": the calibration that --predict and --algo auto price by; add one of them, "
                "or leave it out");
  }
  if (p.algorithms == std::vector<std::string>{"auto"}) {
    // --algo auto: rank 0's calibration (--profile, or the default) picks per size; no profile: library.
    const std::string path = p.predict.profile.empty() ? model::default_profile_path() : p.predict.profile;
    if (const auto profile = model::try_load_profile(path)) {
      o.chooser = [profile = *profile](const collectives::ChoiceQuery& q) {
        return model::Predictor(profile, q.ranks).choose(q);
      };
    }
  }
  // Sizes against every type now, before any rank starts: a bad size is one line, not one per rank.
  for (const DataType t : o.types) (void)bench::size_sweep(o.sweep, comm::size_of(t));
  return p;
}

}  // namespace

int cmd_bench(const Args& args) {
  auto parsed = parse_bench(args);
  if (!parsed) return 0;
  auto communicator = comm::make_communicator(parsed->backend);
  comm::Communicator& c = *communicator;
  const bool printer_rank = c.rank() == 0;
  std::ostream null_stream(nullptr);
  std::ostream& out = printer_rank ? std::cout : null_stream;

  try {
    bench::require_same_options(c, parsed->options);
  } catch (const Error&) {
    if (c.rank() == 0) throw;
    // Every rank found the same disagreement; rank 0 reports it and brings the job down. The
    // others stay quiet (one line, not one per rank) and exit on their own if that takes long.
    std::this_thread::sleep_for(std::chrono::seconds(5));
    return 2;
  }
  const auto places = bench::gather_rank_places(c);
  // --predict: the cost model beside the measurements (bench_predict.h).
  const auto prediction = BenchPrediction::make(parsed->predict, c.size());
  std::vector<nlohmann::json> runs;
  std::uint64_t wrong = 0;
  const LoadReport load;  // did every rank get its core while it timed (load_report.h)
  // -R 1: one shared buffer for every algorithm of the run (node memory is freed only with the job),
  // made by the first run_benchmark once the sizes are known to fit.
  std::optional<bench::SharedArena> arena;
  for (const std::string& algo : parsed->algorithms) {
    bench::BenchOptions o = parsed->options;
    o.algorithm = algo;
    if (prediction) {
      o.predictor = prediction->hook();
      if (o.collective == collectives::Collective::allreduce) o.limit = prediction->limit_hook();
    }
    bench::BenchPrinter printer(out, o, c.size(), c.backend());
    printer.preamble(places);
    if (const std::string note = bench::sweep_end_note(o.sweep, bench::size_sweep(o.sweep, comm::size_of(o.types.front())));
        !note.empty()) {
      out << note << "\n";
    }
    printer.header();
    // The flag round when this sweep begins and when it ends: the machine's state on either side.
    if (prediction) prediction->check_machine_state(c);
    const auto result =
        bench::run_benchmark(c, o, [&](const bench::Row& row) { printer.row(row); }, &arena);
    if (prediction) prediction->check_machine_state_after(c);
    printer.footer(result.summary);
    if (prediction) prediction->print_summary(out, result);
    wrong += result.summary.wrong_total;
    runs.push_back(bench::bench_run(o, result, places));
    if (prediction) runs.back()["prediction"] = prediction->summary_json(result);
  }
  const nlohmann::json load_record = load.finish(c);
  if (printer_rank && !parsed->json_path.empty()) {
    nlohmann::json doc = bench::bench_document(runs, args.full);
    doc["load"] = load_record;
    write_json_file(parsed->json_path, doc);
  }
  if (wrong > 0) {
    if (printer_rank) {
      std::cerr << "error: scalelab bench: " << wrong << " wrong elements (see #wrong); the algorithm or backend is broken\n";
    }
    return 1;
  }
  return 0;
}

}  // namespace scalelab::cli
