// `scalelab calibrate`: measures this machine for the cost model (model/calibrate.h) on 2 MPI
// ranks and saves the profile that predictions for "this machine" use (default
// ~/.cache/scalelab/this-machine.json, or $SCALELAB_PROFILE, or --profile FILE). Started
// without a launcher it starts itself under mpirun through `scalelab run -np 2` (printing the
// command). --json FILE also writes the profile in the "scalelab.calibration" envelope. A profile
// measured while a rank did not get its core (load_report.h) is refused unless --force. Rank 0
// also runs the GPU bandwidth test's pinned copies (gpu_copies_for_profile) and times the nn
// engine's layers on one thread (sim/cpu_rates.h: "this machine" for the simulator) for the profile.
#include <algorithm>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/output_path.h"
#include "comm/factory.h"
#include "comm/watchdog.h"
#include "core/launch_env.h"
#include "core/process.h"
#include "core/error.h"
#include "core/results.h"
#include "load_report.h"
#include "model/calibrate.h"
#include "model/profile.h"
#include "sim/cpu_rate_rounds.h"
#include "sim/cpu_rates.h"

namespace scalelab::cli {

namespace {

// Waits for every rank without spinning: a blocking MPI barrier polls at full speed, and a rank
// waiting that way while rank 0 times the nn layers would take a core from the timing on a
// 2-core machine. Polling every 2 ms leaves the core to rank 0.
void quiet_barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  for (MPI_Test(&request, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&request, &done, MPI_STATUS_IGNORE)) usleep(2000);
}

}  // namespace

int cmd_calibrate(const Args& args) {
  po::options_description opts("scalelab calibrate options");
  opts.add_options()
      ("profile", po::value<std::string>()->default_value(model::default_profile_path()), "where to save the profile")
      ("quick", "fewer sizes and repetitions (a rough profile, for tests)")
      ("json", po::value<std::string>(), "also write the profile in the scalelab.calibration envelope")
      ("force", "save the profile even when a rank did not get its core while measuring (a busy machine)")
      ("stall-timeout", po::value<double>()->default_value(300, "300"),
       "end a rank after this many seconds without a finished measurement (a peer stopped or died); 0: never");
  const auto vm = parse(args, "scalelab calibrate [--profile FILE] [--quick] [--json FILE] [--force]   (2 ranks: scalelab run -np 2 -- calibrate)", opts);
  if (!vm) return 0;
  if ((*vm)["profile"].defaulted() && (*vm)["profile"].as<std::string>().empty()) throw_parameter(ErrorKind::usage, "profile", model::kNoDefaultProfile);
  // Before minutes of measurement, not after: the profile's folder (created, as the default's is
  // on a first calibration) and both files.
  if (const auto dir = std::filesystem::path((*vm)["profile"].as<std::string>()).parent_path();
      !dir.empty() && read_launch_env().rank == 0 && !std::filesystem::is_directory(dir)) {
    prepare_output_folder("profile", dir.string());
  }
  check_output_files(*vm, {"profile", "json"});
  check_distinct_files(*vm, {"profile", "json"});
  const LaunchEnv env = read_launch_env();
  if (env.launcher == "none") {
    // Not under a launcher: start the 2 ranks ourselves, the way a student would.
    std::vector<std::string> argv{scalelab_binary(), "run", "-np", "2", "--", "calibrate"};
    argv.insert(argv.end(), args.argv.begin(), args.argv.end());
    return run_process(argv, "", /*forward_signals=*/true);  // a signal to calibrate ends its ranks too
  }
  const double stall_s = (*vm)["stall-timeout"].as<double>();
  if (!(stall_s >= 0) || !std::isfinite(stall_s)) {
    throw_usage("--stall-timeout " + std::to_string(stall_s) + ": give seconds >= 0 (0: never)");
  }
  auto comm = comm::make_communicator("mpi");
  // A rank stopped or killed mid-measurement would leave its peer spinning at a flag forever.
  comm::StallWatchdog watchdog(stall_s, comm->rank(), comm->size(), "calibration");
  std::int64_t measured = 0;
  model::CalibrateOptions o;
  o.quick = vm->count("quick") > 0;
  o.progress = [](const std::string& line) { std::printf("# %s\n", line.c_str()); std::fflush(stdout); };
  o.beat = [&] { watchdog.beat("calibration", ++measured); };
  if (comm->rank() == 0) std::printf("# scalelab calibrate: measuring this machine on %d ranks\n", comm->size());
  const LoadReport load;  // did every rank get its core while it measured (load_report.h)
  model::Profile prof = model::calibrate(*comm, o);
  o.beat();
  // The nn engine's layers on one thread, while rank 1 waits quietly: "this machine" for the
  // simulator. Then the same layers with both ranks computing at once, as the ranks of a node
  // train: they share the caches and the memory bandwidth, and each figure is the slowest rank's,
  // since a training step waits for that rank. Only when the two ranks are on one node (every
  // rank knows: the flag round is measured there alone).
  // In rounds, alone and together by turns (sim/cpu_rate_rounds.h): a machine whose speed changes
  // from minute to minute is timed in more than one of its states, and each together-timing is
  // compared with the alone-timing beside it.
  const bool together = prof.shm_sync_s > 0;
  // Five rounds of five timings per figure (one round of three with --quick), the two timings of
  // a pair seconds apart: 25 timings of each figure alone and 25 together, where one round of
  // nine each took a third as long (the whole calibration: 70-85 s on a 2-core VM).
  const int rounds = o.quick ? 1 : 5;
  const sim::CpuRateOptions rate_options{.quick = o.quick, .repeats = o.quick ? 0 : 5};
  std::vector<sim::CpuRates> alone, shared;
  for (int round = 0; round < rounds; ++round) {
    if (comm->rank() == 0) alone.push_back(sim::measure_cpu_rates(rate_options));
    quiet_barrier();
    o.beat();
    if (!together) continue;
    sim::CpuRates both = sim::measure_cpu_rates(rate_options);
    const std::vector<double> mine = sim::speeds(both);
    std::vector<double> slowest(mine.size());
    comm->allreduce(mine.data(), slowest.data(), mine.size(), comm::DataType::f64, comm::ReduceOp::min);
    sim::set_speeds(both, slowest);
    shared.push_back(std::move(both));
    quiet_barrier();
    o.beat();
  }
  if (comm->rank() == 0) {
    prof.compute = sim::to_compute_rates(sim::median_rates(alone));
    if (together) prof.compute_shared = sim::to_compute_rates(sim::shared_from_rounds(alone, shared));
  }
  if (!together) {
    prof.compute_shared.reason = "the calibration's ranks were on different nodes, which share no caches or memory";
  }
  const bool force = vm->count("force") > 0;
  const nlohmann::json load_record = load.finish(*comm, 1, /*warn=*/force);
  if (comm->rank() == 0) {
    if (contended(load_record) && !force) {
      // A profile measured on a busy machine would price every later prediction for "this
      // machine" with the other processes' share of it.
      throw_runtime("scalelab calibrate: " + load_record["warning"].get<std::string>() +
                    "; the profile was not saved: calibrate again when the machine is quiet, or save it anyway "
                    "with --force");
    }
    // The GPU's copies (the bandwidth test's pinned figures, cmd_bandwidth.cpp), or why there are none.
    prof.gpu = gpu_copies_for_profile(o.quick);
    const model::GpuCopies& g = prof.gpu;
    if (g.measured) {
      std::printf("# GPU %s, pinned copies: H2D %.1f GB/s, D2H %.1f GB/s, D2D %.0f GB/s (read+write) at %.0f MiB; "
                  "%.0f B: %.1f / %.1f / %.1f us\n",
                  g.device.c_str(), g.h2d_GBps, g.d2h_GBps, g.d2d_GBps, g.large_bytes / (1 << 20), g.small_bytes,
                  g.h2d_latency_us, g.d2h_latency_us, g.d2d_latency_us);
    } else {
      std::printf("# no GPU figures: %s\n", g.reason.c_str());
    }
    // The range a kind's measured shapes or sizes span, for the summary ("78-197").
    const auto span = [](const model::ComputeRates& c, const char* kind) {
      double lo = 0, hi = 0;
      const auto take = [&](double v) {
        lo = lo == 0 ? v : std::min(lo, v);
        hi = std::max(hi, v);
      };
      for (const auto& x : c.shapes) {
        if (x.kind == kind) take(x.flops_per_s);
      }
      for (const auto& x : c.traffic) {
        if (x.kind == kind) take(x.bytes_per_s);
      }
      char text[48];
      std::snprintf(text, sizeof text, "%.0f-%.0f", lo * 1e-9, hi * 1e-9);
      return std::string(text);
    };
    const auto summary = [&](const model::ComputeRates& c) {
      char text[640];
      std::snprintf(text, sizeof text,
                    "conv %.1f GFLOP/s, dense %.1f GFLOP/s, elementwise %.1f GB/s, max-pool %.1f GB/s, batch norm %.1f GB/s; "
                    "the lab models' layers one by one: conv %s and dense %s GFLOP/s (%zu shapes), elementwise %s, "
                    "pool %s, norm %s GB/s (%zu sizes)",
                    c.conv_flops_per_s * 1e-9, c.matmul_flops_per_s * 1e-9, c.elementwise_bytes_per_s * 1e-9,
                    c.pool_bytes_per_s * 1e-9, c.norm_bytes_per_s * 1e-9, span(c, "conv").c_str(),
                    span(c, "matmul").c_str(), c.shapes.size(), span(c, "elementwise").c_str(), span(c, "pool").c_str(),
                    span(c, "norm").c_str(), c.traffic.size());
      std::string out = text;
      for (const auto& f : c.fused) {
        std::string kinds;
        for (const auto& l : f.layers) kinds += (kinds.empty() ? "" : "+") + l.kind;
        char one[160];
        std::snprintf(one, sizeof one, "; fused %s at batch %.0f: %.3f ms per image", kinds.c_str(), f.batch,
                      f.seconds_per_image * 1e3);
        out += one;
      }
      return out;
    };
    std::printf("# nn layers on 1 thread, batch %d (%s): %s\n", prof.compute.batch, prof.compute.blas.c_str(),
                summary(prof.compute).c_str());
    const model::ComputeRates& sh = prof.compute_shared;
    if (sh.measured) {
      std::printf("# the same with %d ranks computing at once (each): %s\n", comm->size(), summary(sh).c_str());
    } else {
      std::printf("# not timed with the ranks computing at once: %s\n", sh.reason.c_str());
    }
    // The rounds, one or two figures each: how steady the machine was while it was timed.
    const auto rounds_line = [](const std::vector<sim::CpuRates>& rs, const char* what) {
      std::string conv, fused;
      for (const sim::CpuRates& r : rs) {
        char one[32];
        std::snprintf(one, sizeof one, "%s%.1f", conv.empty() ? "" : ", ", r.rate[static_cast<std::size_t>(sim::LayerKind::conv)] * 1e-9);
        conv += one;
        if (!r.fused.empty()) {
          std::snprintf(one, sizeof one, "%s%.3f", fused.empty() ? "" : ", ", r.fused.front().seconds_per_sample * 1e3);
          fused += one;
        }
      }
      std::printf("# %zu rounds %s: conv %s GFLOP/s%s\n", rs.size(), what, conv.c_str(),
                  fused.empty() ? "" : ("; the first fused run " + fused + " ms per image").c_str());
    };
    if (alone.size() > 1) {
      rounds_line(alone, "alone (the profile keeps each figure's median)");
      if (!shared.empty()) rounds_line(shared, "together (the slowest rank's)");
      if (const double apart = sim::spread(alone, sim::LayerKind::conv); apart > 0.10) {
        std::printf("# this machine's speed changed while it was timed: the conv rate of the rounds %.0f%% apart; predictions "
                    "for this machine are no surer than that\n",
                    100 * apart);
      }
    }
    // schema_version 2 adds the profile's "gpu" section, 3 its "working_set" table, 4 its
    // "compute" rates; older profiles still load.
    nlohmann::json doc = make_envelope("calibration", model::kProfileSchemaVersion, args.full);
    doc["profile"] = model::to_json(prof);
    doc["load"] = load_record;
    const std::string path = (*vm)["profile"].as<std::string>();
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir);
    write_json_file(path, doc);
    std::printf("# profile saved to %s (predictions for --machine this read it)\n", path.c_str());
    if (vm->count("json")) write_json_file((*vm)["json"].as<std::string>(), doc);
  }
  comm->barrier();
  return 0;
}

}  // namespace scalelab::cli
