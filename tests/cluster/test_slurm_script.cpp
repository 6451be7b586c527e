// Job scripts for each cluster: every directive the site's documentation asks for (docs/clusters.md),
// the partition chosen by size and time, and each bad request refused with one line naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/slurm_script.h"
#include "cluster/slurm_site.h"
#include "core/error.h"

namespace scalelab::cluster {
namespace {

JobRequest request(int nodes, long long seconds, std::string account = "project_2001234") {
  JobRequest r;
  r.nodes = nodes;
  r.time_seconds = seconds;
  r.account = std::move(account);
  r.command = {"train", "--model", "resnet", "--epochs", "2"};
  return r;
}

void expect_lines(const std::string& script, const std::vector<std::string>& lines) {
  for (const auto& l : lines) EXPECT_NE(script.find(l), std::string::npos) << "missing: " << l << "\n" << script;
}

std::string error_of(const SlurmSite& site, const JobRequest& r) {
  try {
    (void)write_slurm_script(site, r);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(SlurmScript, PuhtiFollowsCscConventions) {
  const SlurmSite site = load_slurm_site("puhti");
  ASSERT_EQ(site.gpus_per_node, 4);
  const JobScript quick = write_slurm_script(site, request(1, 10 * 60));
  EXPECT_EQ(quick.partition, "gputest");
  const JobScript s = write_slurm_script(site, request(2, 3600));
  EXPECT_EQ(s.partition, "gpu");  // 1 hour is past gputest's 15 minutes
  EXPECT_EQ(s.ranks, 8);
  expect_lines(s.text, {"#!/bin/bash\n", "#SBATCH --account=project_2001234 ", "#SBATCH --partition=gpu ", "#SBATCH --time=01:00:00 ",
                        "#SBATCH --nodes=2 ", "#SBATCH --ntasks-per-node=4 ", "#SBATCH --gres=gpu:v100:4 ",
                        "#SBATCH --cpus-per-task=10 ", "#SBATCH --mem=382G ", "\nsrun \"$SCALELAB\" train --model resnet --epochs 2\n"});
  // Half a node: half the memory.
  JobRequest half = request(1, 600);
  half.gpus_per_node = 2;
  expect_lines(write_slurm_script(site, half).text, {"--gres=gpu:v100:2 ", "--ntasks-per-node=2 ", "--mem=191G "});
  // Every directive carries a comment saying why.
  std::size_t at = 0;
  while ((at = s.text.find("#SBATCH", at)) != std::string::npos) {
    const std::string line = s.text.substr(at, s.text.find('\n', at) - at);
    EXPECT_NE(line.find(" # "), std::string::npos) << line;
    ++at;
  }
}

TEST(SlurmScript, MahtiPicksGpusmallOrGpumediumByGpusAndNodes) {
  const SlurmSite site = load_slurm_site("mahti");
  JobRequest two = request(1, 5 * 3600);
  two.gpus_per_node = 2;
  EXPECT_EQ(write_slurm_script(site, two).partition, "gpusmall");
  const JobScript four = write_slurm_script(site, request(1, 5 * 3600));  // 4 GPUs: past gpusmall's 2
  EXPECT_EQ(four.partition, "gpumedium");
  expect_lines(four.text, {"--gres=gpu:a100:4 ", "--cpus-per-task=32 "});
  EXPECT_EQ(four.text.find("--mem="), std::string::npos);  // Mahti gives 122.5 GiB per GPU itself
  EXPECT_EQ(write_slurm_script(site, request(6, 36 * 3600)).partition, "gpumedium");
}

TEST(SlurmScript, LumiBindsCpusAndSelectsOneGcdPerRank) {
  const SlurmSite site = load_slurm_site("lumi-g");
  ASSERT_EQ(site.gpus_per_node, 8);
  EXPECT_EQ(write_slurm_script(site, request(2, 3600)).partition, "dev-g");
  EXPECT_EQ(write_slurm_script(site, request(2, 24 * 3600)).partition, "small-g");
  const JobScript s = write_slurm_script(site, request(16, 24 * 3600, "project_465000001"));
  EXPECT_EQ(s.partition, "standard-g");
  expect_lines(s.text, {"#SBATCH --gpus-per-node=8 ", "#SBATCH --ntasks-per-node=8 ", "#SBATCH --cpus-per-task=7 ",
                        "srun --cpu-bind=mask_cpu:fe000000000000,fe00000000000000,fe0000,fe000000,fe,fe00,fe00000000,fe0000000000 ",
                        "bash -c 'ROCR_VISIBLE_DEVICES=$SLURM_LOCALID exec \"$@\"' scalelab \"$SCALELAB\" train"});
  EXPECT_EQ(s.text.find("--gres"), std::string::npos);
}

TEST(SlurmScript, DgxRunsInAPyxisContainerWithPmix) {
  const SlurmSite site = load_slurm_site("dgx");
  JobRequest r = request(4, 3600, "");
  r.container = "nvcr.io/nvidia/pytorch:24.05-py3";
  const JobScript s = write_slurm_script(site, r);
  EXPECT_EQ(s.partition, "");
  EXPECT_EQ(s.ranks, 32);
  expect_lines(s.text, {"#SBATCH --gpus-per-node=8 ", "srun --mpi=pmix --container-image=nvcr.io/nvidia/pytorch:24.05-py3 "
                        "--container-mounts=\"$PWD:$PWD\" --container-workdir=\"$PWD\" \"$SCALELAB\" train"});
  EXPECT_EQ(s.text.find("--partition"), std::string::npos);
  EXPECT_EQ(s.text.find("--account"), std::string::npos);
}

TEST(SlurmScript, GenericRunsCpuRanksOrGpusAsAsked) {
  const SlurmSite site = load_slurm_site("generic");
  JobRequest cpu = request(1, 600, "");
  cpu.gpus_per_node = 0;
  cpu.ranks_per_node = 2;
  const JobScript s = write_slurm_script(site, cpu);
  expect_lines(s.text, {"#SBATCH --ntasks-per-node=2 ", "srun --mpi=pmix \"$SCALELAB\" train"});
  EXPECT_EQ(s.text.find("gpu"), std::string::npos);
  JobRequest gpus = request(2, 600, "");
  gpus.gpus_per_node = 4;
  gpus.partition = "batch";
  expect_lines(write_slurm_script(site, gpus).text, {"--gpus-per-node=4 ", "--ntasks-per-node=4 ", "--partition=batch "});
}

TEST(SlurmScript, BadRequestsAreNamed) {
  const SlurmSite puhti = load_slurm_site("puhti");
  JobRequest many = request(1, 600);
  many.gpus_per_node = 8;
  EXPECT_NE(error_of(puhti, many).find("gpus_per_node 8: a puhti node has 4 GPUs; give 1 to 4"), std::string::npos);
  const std::string too_long = error_of(puhti, request(2, 4 * 86400));
  EXPECT_NE(too_long.find("no puhti partition takes 2 node(s) x 4 GPUs for that long"), std::string::npos) << too_long;
  EXPECT_NE(too_long.find("gputest: 2 nodes, 8 GPUs, 00:15:00; gpu: 20 nodes, 80 GPUs, 3-00:00:00"), std::string::npos) << too_long;
  EXPECT_NE(error_of(puhti, request(30, 3600)).find("no puhti partition takes 30 node(s)"), std::string::npos);
  EXPECT_NE(error_of(puhti, request(1, 600, "")).find("account: puhti bills every job to a project"), std::string::npos);
  JobRequest ranks = request(1, 600);
  ranks.ranks_per_node = 3;
  EXPECT_NE(error_of(puhti, ranks).find("3 ranks per node for 4 GPUs per node"), std::string::npos);
  JobRequest box = request(1, 600);
  box.container = "img.sqsh";
  EXPECT_NE(error_of(puhti, box).find("puhti has no Pyxis container plugin"), std::string::npos);
  JobRequest part = request(1, 600);
  part.partition = "gpu";
  EXPECT_NE(error_of(puhti, part).find("chosen from the size and the time"), std::string::npos);
  EXPECT_NE(error_of(load_slurm_site("dgx"), request(65, 600, "")).find("65: dgx has 64 GPU nodes"), std::string::npos);
  // The generic site has no node count of its own: the bound is the script writer's.
  EXPECT_NE(error_of(load_slurm_site("generic"), request(100'001, 600, "")).find("100001: give from 1 to 100000 nodes"),
            std::string::npos);
  EXPECT_NE(error_of(load_slurm_site("generic"), request(0, 600, "")).find("0: give from 1 to 100000 nodes"), std::string::npos);
  try {
    (void)load_slurm_site("frontier");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("frontier: not a cluster scalelab writes job scripts for; use one of"), std::string::npos);
  }
}

TEST(SlurmTime, ReadsWhatSbatchReads) {
  EXPECT_EQ(parse_slurm_time("00:15:00", "time"), 900);
  EXPECT_EQ(parse_slurm_time("30", "time"), 1800);
  EXPECT_EQ(parse_slurm_time("10:30", "time"), 630);
  EXPECT_EQ(parse_slurm_time("1-12:00:00", "time"), 36 * 3600);
  EXPECT_EQ(parse_slurm_time("2-06", "time"), 54 * 3600);
  for (const char* bad : {"", "abc", "1:2:3:4", "00:61:00", "-5", "0", "00:00:00", "1--2", "1:-2", "999999999999"}) {
    EXPECT_THROW((void)parse_slurm_time(bad, "time"), Error) << bad;
  }
  EXPECT_EQ(format_slurm_time(900), "00:15:00");
  EXPECT_EQ(format_slurm_time(36 * 3600), "1-12:00:00");
}

TEST(SlurmScript, ShellQuotingKeepsArgumentsWhole) {
  EXPECT_EQ(shell_quote("--lr"), "--lr");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
  EXPECT_EQ(shell_quote(""), "''");
}

}  // namespace
}  // namespace scalelab::cluster
