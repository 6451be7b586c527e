// The console table reads like nccl-tests: its column header, one aligned row per size, the
// footer lines; --compare adds the library group and a ratio; a predictor adds its columns.
#include <gtest/gtest.h>

#include <sstream>

#include "bench/printer.h"
#include "report/table.h"

namespace scalelab::bench {
namespace {

Row sample_row() {
  Row r;
  r.shape = case_shape(collectives::Collective::allreduce, 1 << 20, 4, 2);
  r.op = comm::ReduceOp::sum;
  r.out_of_place = {"ring", false, 250.0, 240.0, 300.0, 4.194304, 4.194304, 0};
  r.in_place = Measurement{"ring", true, 200.0, 190.0, 210.0, 5.24288, 5.24288, 0};
  return r;
}

TEST(BenchPrinter, PrintsNcclTestsColumnsAndFooter) {
  BenchOptions o;
  std::ostringstream out;
  BenchPrinter p(out, o, 2, "mpi");
  p.preamble({{0, "hostA", 11, "cpu"}, {1, "hostB", 12, "cpu"}});
  p.header();
  p.row(sample_row());
  Summary s;
  s.avg_busbw_GBps = 4.7;
  p.footer(s);
  const std::string text = out.str();
  EXPECT_NE(text.find("# nThread 1 nGpus 1 minBytes"), std::string::npos);
  EXPECT_NE(text.find("Rank  1 Group  0 Pid     12 on      hostB device cpu"), std::string::npos);
  EXPECT_NE(text.find("size        count   type  redop   root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"),
            std::string::npos);
  EXPECT_NE(text.find("out-of-place"), std::string::npos);
  EXPECT_NE(text.find("in-place"), std::string::npos);
  EXPECT_NE(text.find("     1048576       262144  float    sum     -1    250.0    4.19    4.19      0    200.0    5.24    5.24      0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# Out of bounds values : 0 OK"), std::string::npos);
  EXPECT_NE(text.find("# Avg bus bandwidth    : 4.7000"), std::string::npos);
}

TEST(BenchPrinter, CompareAndPredictorAddTheirColumns) {
  BenchOptions o;
  o.compare = true;
  o.predictor = [](const CaseKey&) { return std::optional<double>(200.0); };
  std::ostringstream out;
  BenchPrinter p(out, o, 2, "mpi");
  p.header();
  Row r = sample_row();
  r.in_place.reset();
  r.library = Measurement{"library", false, 500.0, 400.0, 600.0, 2.097152, 2.097152, 0};
  r.busbw_ratio = 2.0;
  r.predicted_us = 200.0;
  p.row(r);
  const std::string text = out.str();
  EXPECT_NE(text.find("ring (out-of-place)"), std::string::npos);
  EXPECT_NE(text.find("library (out-of-place)"), std::string::npos);
  EXPECT_NE(text.find("ratio"), std::string::npos);
  EXPECT_NE(text.find("predicted"), std::string::npos);
  // ratio 2.00, then predicted 200 us against a measured 250 us: -20 %.
  EXPECT_NE(text.find("   2.00    200.0   -20.0"), std::string::npos) << text;
}

TEST(BenchPrinter, MemoryLimitAddsItsTimeAndTheShareReached) {
  BenchOptions o;
  o.limit = [](const CaseKey&) { return std::optional<double>(100.0); };
  std::ostringstream out;
  BenchPrinter p(out, o, 2, "mpi");
  p.header();
  Row r = sample_row();
  r.limit_us = 100.0;
  p.row(r);
  Row none = sample_row();  // a case the limit has no answer for
  p.row(none);
  const std::string text = out.str();
  EXPECT_NE(text.find("memory limit"), std::string::npos) << text;
  EXPECT_NE(text.find("reached"), std::string::npos) << text;
  // 100 us against a measured 250 us: 40% reached.
  EXPECT_NE(text.find("      0    100.0    40.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("N/A     N/A\n"), std::string::npos) << text;
}

TEST(BenchPrinter, TimesUseNcclTestsPrecision) {
  EXPECT_EQ(format_time_us(12.345), "12.35");
  EXPECT_EQ(format_time_us(123.45), "123.5");
  EXPECT_EQ(format_time_us(12345.6), "12346");
}

TEST(ConsoleTable, AlignsCellsUnderTheirHeaders) {
  report::ConsoleTable t({{"a", "(x)", 4}, {"bb", "", 5}}, {{"grp", 0, 2}});
  std::ostringstream out;
  t.print_header(out);
  t.print_row(out, {"1", "22"});
  EXPECT_EQ(out.str(), "#    grp\n#    a    bb\n#  (x)\n     1    22\n");
  EXPECT_THROW(t.print_row(out, {"1"}), std::logic_error);
}

}  // namespace
}  // namespace scalelab::bench
