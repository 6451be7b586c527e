// The benchmark's JSON record (`scalelab bench --json FILE`): the common envelope of
// core/results.h with schema "scalelab.bench", then "runs": one object per algorithm timed
// (one, or several with --algo all), each with the run's parameters, the ranks, one entry per
// row and the summary. Every field is documented in docs/results-schema.md; bump
// kBenchSchemaVersion when a field changes meaning or disappears (adding one does not).
//
//   auto doc = bench_document({bench_run(options, result, places)}, argv);
//   write_json_file(path, doc);
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/options.h"
#include "bench/ranks.h"

namespace scalelab::bench {

inline constexpr int kBenchSchemaVersion = 1;

// One run: {"benchmark": parameters, "ranks": [...], "results": [...], "summary": {...}}.
[[nodiscard]] nlohmann::json bench_run(const BenchOptions& options, const BenchResult& result,
                                       const std::vector<RankPlace>& places);
// The envelope with "runs": runs.
[[nodiscard]] nlohmann::json bench_document(const std::vector<nlohmann::json>& runs,
                                            const std::vector<std::string>& command);

}  // namespace scalelab::bench
