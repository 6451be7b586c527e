// The calibration profile's `compute` and `compute_shared` sections (model::ComputeRates) to and
// from JSON: the per-kind rates, and the lab models' product shapes and memory-bound sizes
// (docs/results-schema.md, calibration). Internal to lib/model (profile.cpp reads and writes
// whole profiles with them).
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/profile.h"

namespace scalelab::model {

[[nodiscard]] nlohmann::json compute_json(const ComputeRates& c);
// `key`: "compute" or "compute_shared" (the same fields); absent: not measured, with the reason.
[[nodiscard]] ComputeRates compute_from(const nlohmann::json& j, const std::string& origin, const std::string& key);

}  // namespace scalelab::model
