#include "cli.h"

#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <string_view>

#include "core/error.h"
#include "core/launch_env.h"
#include "core/option_error.h"
#include "core/output_path.h"

namespace scalelab::cli {
namespace {

// Renamed flags, accepted under their old spelling for one release (see docs/user-guide.md,
// "Flag glossary"). `scalelab run` parses its own command line and handles its -n itself.
struct Renamed {
  std::string_view command, old_flag, current;
};
constexpr Renamed kRenamed[] = {
    {"bandwidth", "--device", "--cuda-device"},  // --device is cpu|cuda in train and converge
    {"bandwidth", "--warmup", "--warmup_iters"},  // --warmup is the lr warm-up in train and converge
    {"converge", "--fusion-threshold", "--bucket-cap"},
    {"monitor", "-c", "--count"},                 // -c is bench's --check
    {"monitor", "-o", "--output"},                // -o is bench's --op
    {"plot", "-o", "--output"},
    {"predict", "-g", "--gpus"},                  // -g is bench's --ngpus
    {"scale", "--fusion-threshold", "--bucket-cap"},
    {"scale", "--ranks", "--rank-counts"},        // --ranks is a count elsewhere
    {"topo", "-g", "--gpus"},
    {"train", "--fusion-threshold", "--bucket-cap"},
};

}  // namespace

std::string deprecated_spelling(const std::string& command, const std::string& token) {
  for (const auto& r : kRenamed) {
    if (r.command != command) continue;
    const std::string old_flag(r.old_flag), current(r.current);
    if (token == old_flag) return current;
    const bool is_long = old_flag.starts_with("--");
    if (is_long && token.starts_with(old_flag + "=")) return current + token.substr(old_flag.size());
    if (!is_long && token.size() > 2 && token.starts_with(old_flag) && token[2] != '-') {
      return current + "=" + token.substr(2);
    }
  }
  return "";
}

void warn_deprecated(const std::string& command, const std::string& old_flag, const std::string& current) {
  static std::set<std::string> warned;
  if (read_launch_env().rank != 0 || !warned.insert(command + " " + old_flag).second) return;
  std::cerr << "scalelab " << command << ": " << old_flag << " is deprecated; use " << current << std::endl;
}

void refuse_empty_paths(const po::variables_map& vm, std::initializer_list<const char*> options) {
  for (const char* option : options) {
    // --json '' given on purpose would write nothing without a word (an empty default means "none").
    if (vm.count(option) != 0 && !vm[option].defaulted() && vm[option].as<std::string>().empty()) {
      throw_usage(std::string("--") + option + " '': give a file name, or leave --" + option + " out");
    }
  }
}

void check_output_files(const po::variables_map& vm, std::initializer_list<const char*> options) {
  refuse_empty_paths(vm, options);
  if (read_launch_env().rank != 0) return;
  for (const char* option : options) {
    if (vm.count(option) != 0) check_output_file(option, vm[option].as<std::string>());
  }
}

void check_distinct_files(const po::variables_map& vm, std::initializer_list<const char*> outputs, const char* input) {
  namespace fs = std::filesystem;
  const auto path_of = [&vm](const char* option) -> std::optional<fs::path> {
    if (vm.count(option) == 0 || vm[option].as<std::string>().empty()) return std::nullopt;
    std::error_code ec;
    const fs::path given = fs::absolute(vm[option].as<std::string>(), ec);
    const fs::path p = fs::weakly_canonical(given, ec);
    return ec ? given.lexically_normal() : p;
  };
  std::vector<std::pair<const char*, fs::path>> seen;
  for (const char* option : outputs) {
    const auto p = path_of(option);
    if (!p) continue;
    for (const auto& [other, q] : seen) {
      if (*p == q) {
        throw_usage(std::string("--") + option + " and --" + other + " name the same file (" + vm[option].as<std::string>() +
                    "): one would replace the other; give each its own file");
      }
    }
    seen.emplace_back(option, *p);
  }
  if (input == nullptr) return;
  const auto in = path_of(input);
  if (!in) return;
  const bool positional = std::string_view(input) == "file";
  for (const auto& [other, q] : seen) {
    if (*in == q) {
      throw_usage(std::string("--") + other + " " + vm[other].as<std::string>() + ": is the file " +
                  (positional ? std::string("this command reads") : "--" + std::string(input) + " reads") +
                  ", and writing it would destroy it; give another output file");
    }
  }
}

void usage_error(const Args& args, const std::string& message) {
  throw_usage("scalelab " + args.name + ": " + message + "; see 'scalelab " + args.name + " --help'");
}

std::optional<po::variables_map> parse(const Args& args, const std::string& usage, const po::options_description& options,
                                       const po::positional_options_description* positional,
                                       std::vector<po::option>* parsed) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  std::vector<std::string> argv;
  bool after_dashes = false;  // what follows `--` is another command's (scalelab monitor -- cmd -c 1)
  for (const auto& token : args.argv) {
    after_dashes = after_dashes || token == "--";
    const std::string current = after_dashes ? "" : deprecated_spelling(args.name, token);
    if (current.empty()) {
      argv.push_back(token);
      continue;
    }
    const std::string old_flag = token.starts_with("--") ? token.substr(0, token.find('=')) : token.substr(0, 2);
    warn_deprecated(args.name, old_flag, current.substr(0, current.find('=')));
    argv.push_back(current);
  }
  po::variables_map vm;
  try {
    auto parser = po::command_line_parser(argv).options(all).style(
        po::command_line_style::default_style & ~po::command_line_style::allow_guessing);
    if (positional != nullptr) parser.positional(*positional);
    po::parsed_options result = parser.run();
    // A word that no option or positional name takes would otherwise be dropped without a word.
    for (const po::option& o : result.options) {
      if (o.string_key.empty() && !o.original_tokens.empty()) {
        usage_error(args, "unexpected argument '" + o.original_tokens.front() + "'");
      }
    }
    if (parsed != nullptr) *parsed = result.options;
    po::store(result, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << all << std::endl;
      return std::nullopt;
    }
    po::notify(vm);
  } catch (po::error& e) {
    usage_error(args, option_error_message(e));
  }
  return vm;
}

}  // namespace scalelab::cli
