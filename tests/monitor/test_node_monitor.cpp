// What `train --gpu-monitor` does before training: nothing without the flag, a positive interval,
// one clear line when NVML is absent, and a per-node file name on multi-node jobs.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"
#include "monitor/node_monitor.h"
#include "monitor/nvml_sampler.h"

namespace scalelab::monitor {
namespace {

// Points NVML's loader at a file that does not exist, whatever this machine has installed.
class MissingNvml : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SCALELAB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1); }
  void TearDown() override { unsetenv("SCALELAB_NVML_LIBRARY"); }
};

TEST_F(MissingNvml, OpeningTheSamplerSaysNvmlIsNotFoundAndWhatToDo) {
  try {
    (void)open_nvml_sampler();
    FAIL() << "no error without NVML";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_EQ(std::string(e.what()),
              "NVML not found (/nonexistent/libnvidia-ml.so.1): install the NVIDIA driver; GPU monitoring needs it");
  }
}

TEST_F(MissingNvml, NodeMonitorFailsBeforeTrainingWhenAsked) {
  EXPECT_THROW(NodeMonitor({"gpu.csv", 5}), Error);
}

TEST_F(MissingNvml, NodeMonitorWithoutAPathDoesNothing) {
  NodeMonitor m({"", 5});
  EXPECT_FALSE(m.sampling());
  m.start();
  EXPECT_TRUE(m.finish().is_null());
}

TEST(NodeMonitor, IntervalIsCheckedBeforeNvml) {
  try {
    NodeMonitor m({"gpu.csv", 0});
    FAIL() << "interval 0 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(e.parameter(), "interval_s");
    EXPECT_NE(std::string(e.what()).find("interval_s 0: give a positive number of seconds"), std::string::npos) << e.what();
  }
}

TEST(NodeMonitor, DefaultLibraryIsTheDriversSoname) {
  unsetenv("SCALELAB_NVML_LIBRARY");
  EXPECT_EQ(nvml_library_name(), "libnvidia-ml.so.1");
}

TEST(NodeMonitor, PerNodePathPutsTheHostBeforeTheExtension) {
  EXPECT_EQ(per_node_path("gpu.csv", "n1"), "gpu-n1.csv");
  EXPECT_EQ(per_node_path("runs/a.b/gpu.csv", "n1"), "runs/a.b/gpu-n1.csv");
  EXPECT_EQ(per_node_path("runs/a.b/gpu", "n1"), "runs/a.b/gpu-n1");
  EXPECT_EQ(per_node_path(".hidden", "n1"), ".hidden-n1");
}

}  // namespace
}  // namespace scalelab::monitor
