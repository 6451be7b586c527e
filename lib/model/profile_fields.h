// Reading a calibration profile's fields (model/profile.cpp, model/profile_compute.cpp): every
// damaged or hand-edited figure is one input error naming the file and the field, with the fix
// (run `scalelab calibrate` again). Internal to lib/model.
#pragma once
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace scalelab::model::profile_fields {

[[noreturn]] void bad_field(const std::string& origin, const std::string& field, const std::string& problem);

// Plausibility bounds: a figure past them is a hand-edited or damaged profile, which would print
// NaN or 80-digit step times rather than fail. Far beyond any machine: 1 PFLOP/s per core, 100 TB/s,
// a table time from 1 ps to 1000 s.
inline constexpr double kMaxGflops = 1e6, kMaxGBps = 1e5, kMinTableUs = 1e-6, kMaxTableUs = 1e9;

// The number at j[key] (field names it in errors: "gpu.h2d_GBps"), finite and at least `min`
// (above it when `strict`) and at most `max`; `fallback` when absent and optional.
[[nodiscard]] double number(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& field,
                            double min, bool strict, std::optional<double> fallback = std::nullopt,
                            double max = std::numeric_limits<double>::infinity());

// A whole number at j[key], from `min` to the largest int (a fraction, or a number beyond int,
// which the cast would turn into undefined behaviour, is named); `fallback` when absent.
[[nodiscard]] int whole(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& field,
                        int min, int fallback);

}  // namespace scalelab::model::profile_fields
