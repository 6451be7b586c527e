// JSON record of a benchmark run (record.h, docs/results-schema.md).
#include "bench/record.h"

#include "core/results.h"

namespace scalelab::bench {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json measurement(const Measurement& m) {
  return json{{"algorithm", m.algorithm},
              {"in_place", m.in_place},
              {"time_us", m.time_us},
              {"min_time_us", m.min_us},
              {"max_time_us", m.max_us},
              {"algbw_GBps", m.algbw_GBps},
              {"busbw_GBps", m.busbw_GBps},
              {"wrong", m.wrong ? json(*m.wrong) : json(nullptr)}};
}

}  // namespace

json bench_document(const std::vector<json>& runs, const std::vector<std::string>& command) {
  json doc = make_envelope("bench", kBenchSchemaVersion, command);
  doc["runs"] = runs;
  return doc;
}

json bench_run(const BenchOptions& o, const BenchResult& r, const std::vector<RankPlace>& places) {
  json doc;
  json types = json::array(), ops = json::array();
  for (const auto t : o.types) types.push_back(comm::name_of(t));
  for (const auto op : o.ops) ops.push_back(comm::name_of(op));
  doc["benchmark"] = {
      {"collective", collectives::name_of(o.collective)},
      {"algorithm", o.algorithm},
      {"compare_with_library", o.compare},
      {"shared_buffers", o.shared_buffers},
      {"backend", r.backend},
      {"ranks", r.nranks},
      {"datatypes", types},
      {"ops", ops},
      {"root", o.root},
      {"min_bytes", o.sweep.min_bytes},
      {"max_bytes", o.sweep.max_bytes},
      {"step_factor", o.sweep.step_factor},
      {"step_bytes", o.sweep.step_bytes},
      {"iters", o.iters},
      {"warmup_iters", o.warmup_iters},
      {"check", o.check},
      {"timing", "median over iterations of the slowest rank's time; barrier before each iteration"},
      {"busbw_factor", busbw_factor(o.collective, r.nranks)},
  };
  json ranks = json::array();
  for (const auto& p : places) ranks.push_back({{"rank", p.rank}, {"host", p.host}, {"pid", p.pid}, {"device", p.device}});
  doc["ranks"] = ranks;
  json rows = json::array();
  for (const Row& row : r.rows) {
    json j{{"size_bytes", row.shape.size_bytes},
           {"count", row.shape.count},
           {"call_count", row.shape.call_count},
           {"type", comm::name_of(row.type)},
           {"redop", row.op ? json(comm::name_of(*row.op)) : json("none")},
           {"root", row.root},
           {"out_of_place", measurement(row.out_of_place)},
           {"in_place", row.in_place ? measurement(*row.in_place) : json(nullptr)},
           {"library", row.library ? measurement(*row.library) : json(nullptr)},
           {"busbw_ratio", optional_number(row.busbw_ratio)},
           {"predicted_us", optional_number(row.predicted_us)},
           {"limit_us", optional_number(row.limit_us)}};
    rows.push_back(std::move(j));
  }
  doc["results"] = rows;
  const Summary& s = r.summary;
  doc["summary"] = {{"wrong_total", s.wrong_total},
                    {"checked", o.check},
                    {"avg_busbw_GBps", s.avg_busbw_GBps},
                    {"avg_library_busbw_GBps", optional_number(s.avg_library_busbw_GBps)},
                    {"min_busbw_ratio", optional_number(s.min_ratio)},
                    {"geomean_busbw_ratio", optional_number(s.geomean_ratio)}};
  return doc;
}

}  // namespace scalelab::bench
