// make_optimizer: builds an optimizer by name ("sgd", "adam", ...); an unknown name is a usage
// error that lists the known ones. New optimizers add one line to the table in factory.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace scalelab::optim {

[[nodiscard]] std::unique_ptr<Optimizer> make_optimizer(const std::string& name, const OptimizerOptions& options);
// Known names, in table order.
[[nodiscard]] std::vector<std::string> optimizer_names();

}  // namespace scalelab::optim
