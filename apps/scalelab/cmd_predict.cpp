// `scalelab predict allreduce --machine dgx1 --gpus 8 -b 8 -e 512M -f 2`: the cost model's
// predicted time, algbw and busbw per size in nccl-tests' columns, for GPUs of a catalog machine
// (NCCL-like model over its topology) or CPU ranks of this machine (calibrated profile).
// --algo picks an algorithm (default auto: on GPUs what NCCL would choose, on CPU ranks the
// fastest; named per row). Reads model/predict.h.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "algorithm_help.h"
#include "bench/sweep.h"
#include "commands.h"
#include "machine_arg.h"
#include "comm/types.h"
#include "core/limits.h"
#include "core/results.h"
#include "core/size_parse.h"
#include "model/predict.h"
#include "model/profile.h"

namespace scalelab::cli {

namespace {

using collectives::Collective;


// Builds the predictor a command line asks for: GPUs of a machine, or CPU ranks of this one.
model::Predictor make_predictor(const po::variables_map& vm, const Args& args, topo::Machine& m) {
  const std::string p2p_text = vm["p2p"].as<std::string>();
  if (p2p_text != "on" && p2p_text != "off") usage_error(args, "--p2p " + p2p_text + ": use on or off");
  const std::string name = vm["machine"].as<std::string>();
  m = load_machine(name);
  const std::string gpus = gpus_arg(vm);
  if (m.gpus().empty()) {
    // CPU ranks are priced from this machine's calibration only: a machine file without GPUs
    // describes no ranks the profile measured.
    if (!gpus.empty()) usage_error(args, "--gpus " + gpus + ": chooses GPUs of a machine; this machine's CPU ranks are counted by --ranks");
    if (name != "this") {
      usage_error(args, "--machine " + name + ": has no GPUs; predict prices GPUs of a machine, or CPU ranks of this one "
                        "(--machine this)");
    }
    const std::string path = vm.count("profile") ? vm["profile"].as<std::string>() : model::default_profile_path();
    const std::int64_t ranks = parse_int(vm["ranks"].as<std::string>(), "--ranks");
    if (ranks < 2 || ranks > limits::kMaxModelledDevices) {
      usage_error(args, "--ranks " + vm["ranks"].as<std::string>() + ": give 2 to " + std::to_string(limits::kMaxModelledDevices) +
                            " ranks");
    }
    const model::Profile profile = model::load_profile(path);
    for (const std::string& w : model::profile_cautions(profile, static_cast<int>(ranks))) {
      std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    return model::Predictor(profile, static_cast<int>(ranks));
  }
  if (vm.count("profile")) {
    usage_error(args, "--profile: calibrates CPU ranks of this machine, not the GPUs of " + name + "; leave it out");
  }
  if (!vm["ranks"].defaulted()) {
    usage_error(args, "--ranks " + vm["ranks"].as<std::string>() + ": counts CPU ranks of this machine; " + name +
                          " has GPUs: choose them with --gpus");
  }
  const auto sel = topo::select_gpus(m, gpus);
  return model::Predictor(m, sel, p2p_text == "on" ? topo::P2P::on : topo::P2P::off);
}

}  // namespace

int cmd_predict(const Args& args) {
  const std::string profile_help = "calibration profile for this machine (default " + model::default_profile_path() + ")";
  po::options_description opts("scalelab predict options");
  opts.add_options()
      ("collective", po::value<std::string>()->default_value("allreduce"), "allreduce, broadcast, allgather or reduce-scatter")
      ("machine,m", po::value<std::string>()->default_value("this"), "catalog name ('scalelab topo --list'), machine file, or 'this'")
      ("gpus", po::value<std::string>()->default_value(""), "GPU count (8, or 64 across nodes) or positions (0,3); default one node's")
      ("ranks", po::value<std::string>()->default_value("2"), "CPU ranks, for a machine without GPUs (this one)")
      ("minbytes,b", po::value<std::string>()->default_value("8"), "smallest size")
      ("maxbytes,e", po::value<std::string>()->default_value("512M"), "largest size")
      ("stepfactor,f", po::value<std::string>()->default_value("2"), "multiply the size by this")
      ("stepbytes,i", po::value<std::string>(), "or add this many bytes")
      ("datatype,d", po::value<std::string>()->default_value("float"), "element type (for the count column)")
      ("algo,a", po::value<std::string>()->default_value("auto"), "auto (GPUs: what NCCL would choose; CPU ranks: the fastest), an algorithm listed below, or nvls (NCCL's NVLink SHARP, GPUs only)")
      ("protocol", po::value<std::string>(), "GPU: LL, LL128 or Simple (default: the fastest)")
      ("p2p", po::value<std::string>()->default_value("on"), "GPU: on, or off (through host memory, NCCL_P2P_DISABLE=1)")
      ("profile", po::value<std::string>(), profile_help.c_str())
      ("json", po::value<std::string>(), "write the rows as JSON (schema scalelab.predict)");
  po::positional_options_description pos;
  pos.add("collective", 1);
  const auto vm = parse(args, "scalelab predict <collective> [--machine NAME|FILE] [--gpus N|LIST] [-b -e -f] [--algo A] [--protocol P] [--p2p off] [--json FILE]\n\n" + algorithms_help(), opts, &pos);
  if (!vm) return 0;
  check_output_files(*vm, {"json"});
  const Collective c = collectives::parse_collective((*vm)["collective"].as<std::string>(), "collective");
  const comm::DataType type = comm::parse_datatype((*vm)["datatype"].as<std::string>(), "-d/--datatype");
  std::optional<topo::Protocol> proto;
  if (vm->count("protocol")) {
    proto = topo::parse_protocol((*vm)["protocol"].as<std::string>());
    if (!proto) usage_error(args, "--protocol " + (*vm)["protocol"].as<std::string>() + ": use LL, LL128 or Simple");
  }
  bench::SweepSpec spec;
  spec.min_bytes = parse_size((*vm)["minbytes"].as<std::string>(), "-b/--minbytes");
  spec.max_bytes = parse_size((*vm)["maxbytes"].as<std::string>(), "-e/--maxbytes");
  if (vm->count("stepbytes")) {
    spec.step_factor = 1;
    spec.step_bytes = parse_size((*vm)["stepbytes"].as<std::string>(), "-i/--stepbytes");
  } else {
    const std::int64_t factor = parse_int((*vm)["stepfactor"].as<std::string>(), "-f/--stepfactor");
    if (factor < 1) usage_error(args, "-f/--stepfactor " + (*vm)["stepfactor"].as<std::string>() + ": give a factor of 2 or more");
    spec.step_factor = static_cast<std::uint64_t>(factor);
  }
  topo::Machine m;
  const model::Predictor pr = make_predictor(*vm, args, m);
  const std::string algo = (*vm)["algo"].as<std::string>();
  const auto sizes = bench::size_sweep(spec, comm::size_of(type));
  // An algorithm this predictor refuses (shm on GPUs): the error before any output.
  // One NCCL does not run here (NVLS without NVSwitches or before Hopper, or with LL): the error
  // too, rather than rows of nothing.
  if (!sizes.empty() && std::isnan(pr.predict(c, algo, proto, static_cast<double>(sizes.front())).time_s)) {
    const std::string asked = "--algo " + algo + (proto ? " --protocol " + std::string(topo::name_of(*proto)) : "");
    usage_error(args, asked + ": NCCL does not run it on " + pr.where() +
                          " (NVLS needs NVSwitches, Hopper or newer GPUs and the Simple protocol); use --algo auto");
  }

  std::printf("# scalelab predict: %s on %s\n# model: %s\n# bottleneck: %s\n#\n", std::string(collectives::name_of(c)).c_str(),
              pr.where().c_str(),
              pr.on_gpus() ? "NCCL-like (latency + bytes / bandwidth) over the machine's topology (docs/cost-model.md)"
                           : "alpha-beta-gamma with calibrated shared-memory costs (scalelab calibrate)",
              pr.bottleneck().c_str());
  if (const std::string note = bench::sweep_end_note(spec, sizes); !note.empty()) std::printf("%s\n", note.c_str());
  std::printf("# %12s %12s %8s %6s %5s %12s %8s %8s  %-18s %s\n", "size", "count", "type", "redop", "root", "time(us)",
              "algbw", "busbw", "algorithm", "modelled as");
  nlohmann::json doc = make_envelope("predict", 1, args.full);
  doc["collective"] = collectives::name_of(c);
  doc["where"] = pr.where();
  doc["bottleneck"] = pr.bottleneck();
  doc["algorithm"] = algo;
  doc["protocol"] = proto ? std::string(topo::name_of(*proto)) : "auto";
  doc["rows"] = nlohmann::json::array();
  const bool reduces = bench::has_reduction(c);
  for (const auto size : sizes) {
    const auto shape = bench::case_shape(c, size, comm::size_of(type), pr.ranks());
    const auto x = pr.predict(c, algo, proto, static_cast<double>(shape.size_bytes));
    std::printf("  %12llu %12llu %8s %6s %5s %12.2f %8.2f %8.2f  %-18s %s\n", static_cast<unsigned long long>(shape.size_bytes),
                static_cast<unsigned long long>(shape.count), std::string(comm::name_of(type)).c_str(), reduces ? "sum" : "none",
                bench::has_root(c) ? "0" : "-1", x.time_s * 1e6, x.algbw_GBps, x.busbw_GBps, x.algorithm.c_str(), x.detail.c_str());
    doc["rows"].push_back({{"size_bytes", shape.size_bytes}, {"count", shape.count}, {"type", comm::name_of(type)},
                           {"time_us", x.time_s * 1e6}, {"algbw_GBps", x.algbw_GBps}, {"busbw_GBps", x.busbw_GBps},
                           {"algorithm", x.algorithm}, {"detail", x.detail}});
  }
  if (vm->count("json")) write_json_file((*vm)["json"].as<std::string>(), doc);
  return 0;
}

}  // namespace scalelab::cli
