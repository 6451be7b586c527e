// The benchmark's console output, as nccl-tests prints it: a preamble (parameters, one line per
// rank with its host, pid and device), the column header, one row per size as soon as it is
// measured (rank 0 prints), and the footer with the out-of-bounds count and the average bus
// bandwidth. Columns: size count type redop root, then time algbw busbw #wrong out-of-place and
// in-place; with --compare the second group is the library's and a ratio column follows; with a
// predictor, a predicted time and its error (predicted vs measured out-of-place) end each row.
//
//   BenchPrinter p(std::cout, options, comm.size(), comm.backend());
//   p.preamble(places); p.header(); ... p.row(row); ... p.footer(result.summary);
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "bench/options.h"
#include "bench/ranks.h"
#include "report/table.h"

namespace scalelab::bench {

class BenchPrinter {
 public:
  BenchPrinter(std::ostream& out, const BenchOptions& options, int nranks, std::string backend);
  void preamble(const std::vector<RankPlace>& places) const;
  void header() const;
  void row(const Row& r) const;
  void footer(const Summary& s) const;

 private:
  std::ostream& out_;
  const BenchOptions& o_;
  int nranks_;
  std::string backend_;
  report::ConsoleTable table_;
};

// nccl-tests' time format: 2 decimals under 100 us, 1 under 10 ms, none above.
[[nodiscard]] std::string format_time_us(double us);

}  // namespace scalelab::bench
