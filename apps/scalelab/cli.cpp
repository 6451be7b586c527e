#include "cli.h"

#include <iostream>

#include "core/error.h"

namespace scalelab::cli {

void usage_error(const Args& args, const std::string& message) {
  throw_usage("scalelab " + args.name + ": " + message + "; see 'scalelab " + args.name + " --help'");
}

std::optional<po::variables_map> parse(const Args& args, const std::string& usage, const po::options_description& options,
                                       const po::positional_options_description* positional) {
  po::options_description all(options);
  all.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    auto parser = po::command_line_parser(args.argv).options(all).style(
        po::command_line_style::default_style & ~po::command_line_style::allow_guessing);
    if (positional != nullptr) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << all << std::endl;
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    usage_error(args, e.what());
  }
  return vm;
}

}  // namespace scalelab::cli
