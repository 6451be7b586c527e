// The behaviour trace of a short data-parallel run (run at 2 and 3 ranks): every rank writes its
// own trace file (SCALELAB_TRACE_FD set before the Runtime starts); after a few API calls the
// file holds, in order, the sampler and its epoch, the samples read, the broadcast and the
// parameters after it, each averaging allreduce with its bytes, the learning rate per step, the
// parameters after the first step, the metric averaged, and the checkpoint written.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalelab/scalelab.h"

namespace {

std::string g_trace_path;

std::vector<nlohmann::json> read_trace() {
  std::vector<nlohmann::json> out;
  std::ifstream in(g_trace_path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(ApiTraceMpi, RecordsWhatTheProgramDid) {
  const std::size_t before = read_trace().size();
  scalelab::Datasets d = scalelab::load_datasets({.name = "synthetic"});
  scalelab::Model model("mlp", d.train, 3);
  scalelab::Optimizer sgd(model, "sgd");
  scalelab::DistributedOptimizer opt(sgd, {.fp16_wire = true});
  scalelab::ShardedSampler sampler(d.train.size(), scalelab::size(), scalelab::rank(), 9);
  sampler.set_epoch(1);
  scalelab::broadcast_from_rank0(model, sgd);
  scalelab::Batch b;
  for (std::size_t s = 0; s < 2; ++s) {
    d.train.fill(sampler.batch_indices(s, 16), b);
    model.train_batch(b);
    opt.step(0.25f * static_cast<float>(s + 1));
  }
  const double avg = scalelab::average_over_ranks(scalelab::rank());
  const std::string ckpt = (std::filesystem::temp_directory_path() / ("api_trace_" + std::to_string(::getpid()) + ".ckpt")).string();
  scalelab::on_rank0([&] { scalelab::save_checkpoint(ckpt, model, sgd, 1); });

  const std::vector<nlohmann::json> all = read_trace();
  const std::vector<nlohmann::json> t(all.begin() + static_cast<long>(before), all.end());
  std::vector<std::string> events;
  for (const auto& e : t) {
    EXPECT_EQ(e["rank"], scalelab::rank());
    events.push_back(e["event"]);
  }
  std::vector<std::string> expected = {"sampler", "epoch",   "enter", "collective", "parameters",
                                       "samples", "enter",   "collective", "step",   "parameters",
                                       "samples", "enter",   "collective", "step",   "enter", "collective"};
  if (scalelab::rank() == 0) expected.push_back("file");
  ASSERT_EQ(events, expected);
  EXPECT_EQ(t[0]["world_size"], scalelab::size());
  EXPECT_EQ(t[0]["shard"], scalelab::rank());
  EXPECT_EQ(t[1]["epoch"], 1);
  EXPECT_EQ(t[3]["op"], "broadcast");
  EXPECT_EQ(t[4]["when"], "broadcast");
  const auto first = sampler.batch_indices(0, 16);
  EXPECT_EQ(t[5]["indices"].get<std::vector<std::size_t>>(), std::vector<std::size_t>(first.begin(), first.end()));
  EXPECT_EQ(t[7]["op"], "allreduce");
  EXPECT_EQ(t[7]["call"], "scalelab::DistributedOptimizer::step");
  EXPECT_EQ(t[7]["wire"], "float16");
  EXPECT_EQ(t[7]["bytes"].get<std::size_t>() % 2, 0u);
  EXPECT_GE(t[7]["bytes"].get<std::size_t>(), model.parameter_count() * 2);
  EXPECT_EQ(t[8]["lr"], 0.25);
  EXPECT_EQ(t[8]["step"], 1);
  EXPECT_EQ(t[9]["when"], "first_step");
  EXPECT_EQ(t[13]["lr"], 0.5);
  EXPECT_EQ(t[15]["call"], "scalelab::average_over_ranks");
  EXPECT_EQ(t[15]["values"][0], scalelab::rank());
  EXPECT_EQ(t[15]["results"][0], avg);
  if (scalelab::rank() == 0) {
    EXPECT_EQ(t[16]["path"], ckpt);
    EXPECT_EQ(t[16]["kind"], "checkpoint");
    std::filesystem::remove(ckpt);
  }
  // Each collective is announced by an "enter" line naming the same call, written before it blocks.
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i]["event"] == "enter") {
      EXPECT_EQ(t[i + 1]["event"], "collective");
      EXPECT_EQ(t[i]["call"], t[i + 1]["call"]);
      EXPECT_EQ(t[i]["op"], t[i + 1]["op"]);
    }
  }
  // The fingerprints after the broadcast and after the first step agree across ranks.
  const std::vector<double> f = scalelab::sum_over_ranks(
      {static_cast<double>(std::stoull(t[4]["fingerprint"].get<std::string>(), nullptr, 16) % 1000003),
       static_cast<double>(std::stoull(t[9]["fingerprint"].get<std::string>(), nullptr, 16) % 1000003)});
  EXPECT_EQ(f[0], scalelab::size() * static_cast<double>(std::stoull(t[4]["fingerprint"].get<std::string>(), nullptr, 16) % 1000003));
  EXPECT_EQ(f[1], scalelab::size() * static_cast<double>(std::stoull(t[9]["fingerprint"].get<std::string>(), nullptr, 16) % 1000003));
  // seq counts this rank's lines from 0 without a gap.
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i]["seq"], i);
}

}  // namespace

int main(int argc, char** argv) {
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  g_trace_path = (std::filesystem::temp_directory_path() /
                  ("api_trace_" + std::to_string(::getpid()) + "_" + (r ? r : "0") + ".jsonl")).string();
  const int fd = ::open(g_trace_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return 1;
  ::setenv("SCALELAB_TRACE_FD", std::to_string(fd).c_str(), 1);
  int rc = 0;
  {
    scalelab::Runtime runtime;
    ::testing::InitGoogleTest(&argc, argv);
    if (scalelab::rank() != 0) {
      auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
    }
    rc = RUN_ALL_TESTS() != 0 ? 1 : 0;
    rc = scalelab::sum_over_ranks(rc) > 0 ? 1 : 0;
  }
  std::filesystem::remove(g_trace_path);
  return rc;
}
