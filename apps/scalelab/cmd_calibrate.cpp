// `scalelab calibrate`: measures this machine for the cost model (model/calibrate.h) on 2 MPI
// ranks and saves the profile that predictions for "this machine" use (default
// ~/.cache/scalelab/this-machine.json, or $SCALELAB_PROFILE, or --profile FILE). Started
// without a launcher it starts itself under mpirun through `scalelab run -np 2` (printing the
// command). --json FILE also writes the profile in the "scalelab.calibration" envelope.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "comm/factory.h"
#include "core/launch_env.h"
#include "core/results.h"
#include "lab/process.h"
#include "model/calibrate.h"
#include "model/profile.h"

namespace scalelab::cli {

namespace {

std::string self_exe() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scalelab") : p.string();
}

}  // namespace

int cmd_calibrate(const Args& args) {
  po::options_description opts("scalelab calibrate options");
  opts.add_options()
      ("profile", po::value<std::string>()->default_value(model::default_profile_path()), "where to save the profile")
      ("quick", "fewer sizes and repetitions (a rough profile, for tests)")
      ("json", po::value<std::string>(), "also write the profile in the scalelab.calibration envelope");
  const auto vm = parse(args, "scalelab calibrate [--profile FILE] [--quick] [--json FILE]   (2 ranks: scalelab run -np 2 -- calibrate)", opts);
  if (!vm) return 0;
  const LaunchEnv env = read_launch_env();
  if (env.launcher == "none") {
    // Not under a launcher: start the 2 ranks ourselves, the way a student would.
    std::vector<std::string> argv{self_exe(), "run", "-np", "2", "--", "calibrate"};
    argv.insert(argv.end(), args.argv.begin(), args.argv.end());
    return lab::run_process(argv);
  }
  auto comm = comm::make_communicator("mpi");
  model::CalibrateOptions o;
  o.quick = vm->count("quick") > 0;
  o.progress = [](const std::string& line) { std::printf("# %s\n", line.c_str()); std::fflush(stdout); };
  if (comm->rank() == 0) std::printf("# scalelab calibrate: measuring this machine on %d ranks\n", comm->size());
  model::Profile prof = model::calibrate(*comm, o);
  if (comm->rank() == 0) {
    nlohmann::json doc = make_envelope("calibration", 1, args.full);
    doc["profile"] = model::to_json(prof);
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
