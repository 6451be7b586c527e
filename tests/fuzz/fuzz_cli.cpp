// Fuzz target: command lines. The input is argv, tokens separated by NUL bytes; the first token
// picks the command whose renamed flags apply (cli.cpp's table). The tokens go through the CLI's
// own parser (cli::parse: deprecated spellings, Boost.Program_options) against `scalelab
// train`'s options, the largest set, and read_train_options, which reads and validates them as
// `scalelab train`, `converge` and `scale` do, without running anything. An error must be a
// scalelab::Error, printed as the CLI prints it (cli_message).
#include <iostream>
#include <string>
#include <vector>

#include "cli.h"
#include "flag_names.h"
#include "train_options.h"
#include "fuzz_input.h"

namespace {

const char* const kCommands[] = {"train", "converge", "scale", "bench", "plot", "predict", "topo", "monitor", "bandwidth"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> tokens(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      tokens.emplace_back();
    } else {
      tokens.back() += static_cast<char>(data[i]);
    }
  }
  scalelab::cli::Args args;
  const std::string& first = tokens.front();
  args.name = kCommands[(first.empty() ? 0 : static_cast<unsigned char>(first[0])) % std::size(kCommands)];
  args.argv.assign(tokens.begin() + 1, tokens.end());
  args.full = args.argv;
  try {
    scalelab::cli::po::options_description o("options");
    scalelab::cli::add_train_options(o, scalelab::cli::TrainOptionSet::full);
    const auto vm = scalelab::cli::parse(args, "scalelab train [options]", o);
    if (vm) (void)scalelab::cli::read_train_options(*vm);
  } catch (const scalelab::Error& e) {
    (void)scalelab::cli::cli_message(e);
  }
  return 0;
}
