// The optimizer table behind make_optimizer (see factory.h). To add an optimizer, include its
// header and append one row to kOptimizers.
#include "optim/factory.h"

#include <functional>

#include "core/error.h"
#include "optim/adam.h"
#include "optim/lamb.h"
#include "optim/lars.h"
#include "optim/sgd.h"

namespace scalelab::optim {
namespace {

struct Entry {
  const char* name;
  std::function<std::unique_ptr<Optimizer>(const OptimizerOptions&)> make;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> kOptimizers = {
      {"sgd", [](const OptimizerOptions& o) { return std::make_unique<Sgd>(o); }},
      {"adam", [](const OptimizerOptions& o) { return std::make_unique<Adam>(o); }},
      {"lars", [](const OptimizerOptions& o) { return std::make_unique<Lars>(o); }},
      {"lamb", [](const OptimizerOptions& o) { return std::make_unique<Lamb>(o); }},
  };
  return kOptimizers;
}

}  // namespace

std::vector<std::string> optimizer_names() {
  std::vector<std::string> names;
  for (const auto& e : table()) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name, const OptimizerOptions& options) {
  for (const auto& e : table())
    if (name == e.name) return e.make(options);
  std::string known;
  for (const auto& n : optimizer_names()) known += (known.empty() ? "" : ", ") + n;
  throw_parameter(ErrorKind::usage, "optimizer", name + ": unknown optimizer; choose one of " + known);
}

}  // namespace scalelab::optim
