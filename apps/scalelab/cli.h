// Shared command-line plumbing for the subcommands: Boost.Program_options parsing that turns
// every parse problem into one usage line ("scalelab bench: unrecognised option '--x'; see
// 'scalelab bench --help'"), prints --help, and accepts the deprecated spellings of renamed
// flags (one table, in cli.cpp) with a one-line notice on stderr.
#pragma once
#include <initializer_list>
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
// Deprecated spellings are rewritten to the current ones first (deprecated_spelling). `parsed`,
// when given, receives every option as parsed (its key and values), for a command that passes
// some of them on to another.
std::optional<po::variables_map> parse(const Args& args, const std::string& usage, const po::options_description& options,
                                       const po::positional_options_description* positional = nullptr,
                                       std::vector<po::option>* parsed = nullptr);

// The current spelling of `token` ("--fusion-threshold" -> "--bucket-cap", "-o" -> "--output"
// in `scalelab plot`) for command `command`, or "" when it is not a deprecated spelling there.
// Handles "--old=value" and "-oVALUE" by returning "--new=value".
[[nodiscard]] std::string deprecated_spelling(const std::string& command, const std::string& token);

// Prints "scalelab <command>: <old> is deprecated; use <current>" on stderr (rank 0 only, once per
// old spelling and process).
void warn_deprecated(const std::string& command, const std::string& old_flag, const std::string& current);

// Before the work: on the launch's rank 0 (the one that writes them), each named option's file
// (when given and not empty) can be created or replaced (core/output_path.h); an input error
// naming the option otherwise ("--json /proc/x.json: cannot create files in /proc ...").
void check_output_files(const po::variables_map& vm, std::initializer_list<const char*> options);
// Files one command writes must be different files (two writers of one path leave one file), and
// none may be `input`, a file the command reads first (an output over it destroys it). Paths are
// compared after resolving "." and "..", and symbolic links; unset and empty ones are skipped.
void check_distinct_files(const po::variables_map& vm, std::initializer_list<const char*> outputs,
                          const char* input = nullptr);
// An option given as '' where a file is wanted: a usage error (an empty default means "none").
void refuse_empty_paths(const po::variables_map& vm, std::initializer_list<const char*> options);

// Throws a usage error "scalelab <name>: <message>; see 'scalelab <name> --help'".
[[noreturn]] void usage_error(const Args& args, const std::string& message);

}  // namespace scalelab::cli
