// Shared command-line plumbing for the subcommands: Boost.Program_options parsing that turns
// every parse problem into one usage line ("scalelab bench: unrecognised option '--x'; see
// 'scalelab bench --help'") and prints --help.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace scalelab::cli {

namespace po = boost::program_options;

// The arguments a subcommand receives: argv[0] is "scalelab <name>".
struct Args {
  std::string name;               // "bench"
  std::vector<std::string> argv;  // everything after the subcommand name
  std::vector<std::string> full;  // the whole command line, for result records
};

// Parses `args` against `options` (plus positional names, if any). Returns nullopt when --help
// was given (usage and options have been printed). Throws usage errors for anything malformed.
std::optional<po::variables_map> parse(const Args& args, const std::string& usage, const po::options_description& options,
                                       const po::positional_options_description* positional = nullptr);

// Throws a usage error "scalelab <name>: <message>; see 'scalelab <name> --help'".
[[noreturn]] void usage_error(const Args& args, const std::string& message);

}  // namespace scalelab::cli
