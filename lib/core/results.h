// JSON result files. Every file scalelab writes with --json starts with the same envelope
// (docs/results-schema.md): {"schema": "scalelab.<kind>", "schema_version": N, "created": ISO-8601
// UTC, "command": argv, "machine": MachineInfo, ...}, then the command's own records.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab {

// The envelope for a result of `kind` ("bench", "train", "predict", ...) at `schema_version`.
[[nodiscard]] nlohmann::json make_envelope(const std::string& kind, int schema_version,
                                           const std::vector<std::string>& command);
// Writes `doc` to `path` atomically (a temporary file beside it, then rename), so a reader never
// sees half a file. Errors name the path.
void write_json_file(const std::string& path, const nlohmann::json& doc);
// Reads a JSON file; errors name the path and what is wrong.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path);
// Current UTC time as ISO-8601 ("2026-11-22T05:00:00Z").
[[nodiscard]] std::string utc_timestamp();

}  // namespace scalelab
