// nccl-tests-style console output of the benchmark (printer.h).
#include "bench/printer.h"

#include <cstdio>
#include <utility>

namespace scalelab::bench {
namespace {

using report::Column;
using report::ColumnGroup;
using report::fixed;

std::vector<Column> measurement_columns() {
  return {{"time", "(us)", 8}, {"algbw", "(GB/s)", 7}, {"busbw", "(GB/s)", 7}, {"#wrong", "", 6}};
}

report::ConsoleTable make_table(const BenchOptions& o) {
  std::vector<Column> cols{{"size", "(B)", 12},   {"count", "(elements)", 12}, {"type", "", 6},
                           {"redop", "", 6},      {"root", "", 6}};
  std::vector<ColumnGroup> groups;
  const auto add_group = [&](const std::string& title) {
    groups.push_back({title, cols.size(), 4});
    for (auto& c : measurement_columns()) cols.push_back(c);
  };
  if (o.compare) {
    add_group(o.algorithm + " (out-of-place)");
    add_group("library (out-of-place)");
    cols.push_back({"ratio", "", 6});
  } else {
    add_group("out-of-place");
    add_group("in-place");
  }
  if (o.predictor) {
    groups.push_back({"predicted", cols.size(), 2});
    cols.push_back({"time", "(us)", 8});
    cols.push_back({"error", "(%)", 7});
  }
  if (o.limit) {
    groups.push_back({"memory limit", cols.size(), 2});
    cols.push_back({"time", "(us)", 8});
    cols.push_back({"reached", "(%)", 7});
  }
  if (o.algorithm == "auto") cols.push_back({"algo", "(auto)", 18});
  return report::ConsoleTable(std::move(cols), std::move(groups));
}

void add_measurement(std::vector<std::string>& cells, const Measurement& m) {
  cells.push_back(format_time_us(m.time_us));
  cells.push_back(fixed(m.algbw_GBps, 2));
  cells.push_back(fixed(m.busbw_GBps, 2));
  cells.push_back(m.wrong ? std::to_string(*m.wrong) : "N/A");
}

}  // namespace

std::string format_time_us(double us) {
  return fixed(us, us >= 10000.0 ? 0 : us >= 100.0 ? 1 : 2);
}

BenchPrinter::BenchPrinter(std::ostream& out, const BenchOptions& options, int nranks, std::string backend)
    : out_(out), o_(options), nranks_(nranks), backend_(std::move(backend)), table_(make_table(options)) {}

void BenchPrinter::preamble(const std::vector<RankPlace>& places) const {
  const auto& s = o_.sweep;
  out_ << "# scalelab bench " << collectives::name_of(o_.collective) << ": algorithm " << o_.algorithm
       << (o_.compare ? " vs library" : "") << ", backend " << backend_ << ", " << nranks_ << " ranks\n";
  out_ << "# nThread 1 nGpus 1 minBytes " << s.min_bytes << " maxBytes " << s.max_bytes << " step: "
       << (s.step_factor > 1 ? std::to_string(s.step_factor) + "(factor)" : std::to_string(s.step_bytes) + "(bytes)")
       << " warmup iters: " << o_.warmup_iters << " iters: " << o_.iters
       << " agg iters: 1 validation: " << (o_.check ? 1 : 0) << " graph: 0\n";
  out_ << "#\n# Using devices\n";
  for (const auto& p : places) {
    char line[256];
    std::snprintf(line, sizeof line, "#  Rank %2d Group  0 Pid %6d on %10s device %s\n", p.rank, p.pid,
                  p.host.c_str(), p.device.c_str());
    out_ << line;
  }
  out_ << "#\n# time: median over " << o_.iters
       << " iterations of the slowest rank's time (barrier before each); GB = 1e9 bytes\n";
  if (o_.shared_buffers) {
    out_ << "# buffers in node memory: shm reads the peers' buffers in place, nothing staged\n";
  }
  if (o_.algorithm == "auto") {
    out_ << (o_.chooser ? "# algorithm auto: per size, the one the calibrated cost model predicts fastest on "
                              "rank 0's machine (column algo)\n"
                        : "# algorithm auto: no calibration profile to choose by, so library at every size (run "
                          "'scalelab run -np N -- calibrate' once on this machine)\n");
  }
  if (o_.compare) {
    out_ << "# compared with library: " << o_.algorithm << " and library alternate iteration by iteration; ratio = "
         << o_.algorithm << " busbw / library busbw\n";
  }
  out_ << "#\n";
}

void BenchPrinter::header() const { table_.print_header(out_); }

void BenchPrinter::row(const Row& r) const {
  std::vector<std::string> cells{std::to_string(r.shape.size_bytes), std::to_string(r.shape.count),
                                 std::string(comm::name_of(r.type)),
                                 r.op ? std::string(comm::name_of(*r.op)) : "none", std::to_string(r.root)};
  add_measurement(cells, r.out_of_place);
  if (o_.compare) {
    if (r.library) add_measurement(cells, *r.library);
    cells.push_back(r.busbw_ratio ? fixed(*r.busbw_ratio, 2) : "N/A");
  } else if (r.in_place) {
    add_measurement(cells, *r.in_place);
  }
  if (o_.predictor) {
    if (r.predicted_us && r.out_of_place.time_us > 0) {
      cells.push_back(format_time_us(*r.predicted_us));
      cells.push_back(fixed((*r.predicted_us - r.out_of_place.time_us) / r.out_of_place.time_us * 100.0, 1));
    } else {
      cells.push_back("N/A");
      cells.push_back("N/A");
    }
  }
  if (o_.limit) {
    if (r.limit_us && r.out_of_place.time_us > 0) {
      cells.push_back(format_time_us(*r.limit_us));
      cells.push_back(fixed(*r.limit_us / r.out_of_place.time_us * 100.0, 1));
    } else {
      cells.push_back("N/A");
      cells.push_back("N/A");
    }
  }
  if (o_.algorithm == "auto") cells.push_back(r.out_of_place.algorithm);
  table_.print_row(out_, cells);
}

void BenchPrinter::footer(const Summary& s) const {
  out_ << "# Out of bounds values : " << s.wrong_total << (s.wrong_total == 0 ? " OK" : " FAILED")
       << (o_.check ? "" : " (not checked: -c 0)") << "\n";
  out_ << "# Avg bus bandwidth    : " << fixed(s.avg_busbw_GBps, 4) << "\n";
  if (s.avg_library_busbw_GBps) {
    out_ << "# Avg bus bandwidth of library : " << fixed(*s.avg_library_busbw_GBps, 4) << "\n";
  }
  if (s.min_ratio && s.geomean_ratio) {
    out_ << "# " << o_.algorithm << " / library busbw : geomean " << fixed(*s.geomean_ratio, 3) << "x, worst size "
         << fixed(*s.min_ratio, 3) << "x\n";
  }
  out_ << "#" << std::endl;
}

}  // namespace scalelab::bench
