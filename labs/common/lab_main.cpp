// lab_main (lab_main.h): Boost.Program_options over lab::LabOptions, and the flag of each of its
// members for error lines.
#include "lab_main.h"

#include <array>
#include <filesystem>
#include <iostream>
#include <utility>

#include <boost/program_options.hpp>

#include "core/file_lock.h"
#include "core/option_error.h"
#include "core/output_path.h"
#include "core/standard_output.h"

namespace scalelab::labs {
namespace po = boost::program_options;

namespace {

// LabOptions member -> flag. One table: the options below and the error lines both use it.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kFlags{{
    {"quick", "--quick"},
    {"only_step", "--step"},
    {"ranks", "--ranks"},
    {"dataset", "--dataset"},
    {"out_dir", "--out"},
    {"json", "--json"},
}};

}  // namespace

std::string lab_flag_for(std::string_view parameter) {
  for (const auto& [name, flag] : kFlags) {
    if (name == parameter) return std::string(flag);
  }
  return {};
}

std::string lab_message(const Error& e) {
  const std::string flag = lab_flag_for(e.parameter());
  return flag.empty() ? std::string(e.what()) : e.message_as(flag);
}

int lab_main(const lab::Lab& lab, int argc, char** argv) {
  const std::string& name = lab.name();
  // Before anything is made: with standard output closed, the first file opened would receive it.
  if (!standard_output_open()) {
    std::cerr << "error: " << name << ": standard output is closed; run it with an open standard output (> /dev/null to discard it)\n";
    return 2;
  }
  lab::LabOptions o;
  const lab::LabOptions defaults;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("list", "list the steps and exit")(
      "quick", po::bool_switch(&o.quick), "the short variant (CI-affordable): fewer steps per epoch, same lessons")(
      "step", po::value<int>(&o.only_step)->default_value(defaults.only_step), "run only step N (1-based; 0: all)");
  // Only the shared options this lab's steps read: another is an "unrecognised option", not ignored.
  std::string usage = name + " [--quick] [--step N]";
  if (lab.uses("ranks")) {
    desc.add_options()("ranks", po::value<int>(&o.ranks)->default_value(defaults.ranks), "N, the rank count of the multi-rank steps");
    usage += " [--ranks N]";
  }
  if (lab.uses("dataset")) {
    desc.add_options()("dataset", po::value<std::string>(&o.dataset)->default_value(defaults.dataset),
                       "dataset of the training steps: fashion-mnist, synthetic or a folder of IDX files");
    usage += " [--dataset NAME]";
  }
  desc.add_options()("out", po::value<std::string>(&o.out_dir)->default_value(name + "-out"), "folder for the steps' files")(
      "json", po::value<std::string>(&o.json), "write the lab's record here (default <out>/<lab>.json)");
  usage += " [--out DIR] [--json FILE]";
  const std::vector<std::string> command(argv, argv + argc);
  try {
    po::variables_map vm;
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(desc).run();
    for (const po::option& opt : parsed.options) {  // a stray word would otherwise be dropped silently
      if (opt.string_key.empty() && !opt.original_tokens.empty()) {
        throw po::error("unexpected argument '" + opt.original_tokens.front() + "'");
      }
    }
    po::store(parsed, vm);
    po::notify(vm);
    // What was printed (the help, the step list, a run's steps) must have reached standard output:
    // a full disk or a closed pipe is not a success.
    const auto delivered = [&name](int rc) {
      if (const std::string why = rc == 0 ? standard_output_error() : ""; !why.empty()) {
        std::cerr << "error: " << name << ": its output could not be written to standard output (" << why
                  << "); check the disk or the pipe it goes to\n";
        return 1;
      }
      return rc;
    };
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n"
                << lab.title() << "\n\n" << desc << "\n";
      return delivered(0);
    }
    if (vm.count("list")) {
      const auto& steps = lab.steps();
      for (std::size_t i = 0; i < steps.size(); ++i) std::cout << i + 1 << ". " << steps[i].title << "\n";
      return delivered(0);
    }
    // The output places, checked before the first step rather than by the step that writes there.
    if (vm.count("json") && o.json.empty()) throw_usage("--json '': give a file name, or leave --json out for <out>/" + name + ".json");
    if (o.out_dir.empty()) throw_usage("--out '': give a folder, or leave --out out for " + name + "-out");
    prepare_output_folder("out_dir", o.out_dir);  // the record's path is checked by Lab::run, the default one too
    // One lab run per folder: two would remove each other's step files as they start their commands.
    const FileLock out_lock((std::filesystem::path(o.out_dir) / ".lab-lock").string(), "out_dir", o.out_dir,
                            "wait for it to finish, or give this run another --out folder");
    return delivered(lab.run(o, command, lab_message));
  } catch (po::error& e) {
    std::cerr << "error: " << name << ": " << option_error_message(e) << "; see '" << name << " --help'\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "error: " << name << ": " << lab_message(e) << "\n";
    return e.exit_code();
  }
}

}  // namespace scalelab::labs
