// NvmlSampler against tests/monitor/fake_nvml.cpp, a stand-in library with scripted answers
// (see that file): dlopen and dlsym, return codes (not supported -> N/A, GPU lost -> error, init
// failure -> one line), unit conversions (bytes -> MiB, mW -> W, KiB counters -> bytes) and the
// NVLink link walk. The real NVML has never been loaded by these tests (docs/gpu-status.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "monitor/nvml_sampler.h"

namespace scalelab::monitor {
namespace {

// Loads the fake library for the test's duration, with the given scripted environment.
class FakeNvml : public ::testing::Test {
 protected:
  void SetUp() override { setenv("SCALELAB_NVML_LIBRARY", SCALELAB_FAKE_NVML_PATH, 1); }
  void TearDown() override {
    for (const char* v : {"SCALELAB_NVML_LIBRARY", "FAKE_NVML_GPUS", "FAKE_NVML_INIT", "FAKE_NVML_LOST_AFTER"}) unsetenv(v);
  }
  static std::string error_of(void (*f)()) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(FakeNvml, ListsTheDevicesAndSaysWhereReadingsComeFrom) {
  const auto s = open_nvml_sampler();
  ASSERT_EQ(s->devices().size(), 2u);
  EXPECT_EQ(s->devices()[0].name, "Fake NVML GPU 0");
  EXPECT_EQ(s->devices()[1].index, 1u);
  EXPECT_EQ(s->description(), "NVML 12.999.99, driver 999.99");
}

TEST_F(FakeNvml, SampleConvertsUnitsAndMarksWhatIsNotSupported) {
  const auto s = open_nvml_sampler();
  std::vector<GpuSample> out;
  s->sample(out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOUBLE_EQ(out[0].utilization_pct, 50);
  EXPECT_DOUBLE_EQ(out[1].utilization_pct, 51);
  EXPECT_DOUBLE_EQ(out[0].memory_used_mib, static_cast<double>(2ULL << 30) / (1 << 20));
  EXPECT_DOUBLE_EQ(out[0].memory_total_mib, static_cast<double>(80ULL << 30) / (1 << 20));
  EXPECT_DOUBLE_EQ(out[0].power_w, 300500 / 1000.0);
  EXPECT_TRUE(std::isnan(out[1].power_w));  // NVML_ERROR_NOT_SUPPORTED
  EXPECT_DOUBLE_EQ(out[1].temperature_c, 41);
}

TEST_F(FakeNvml, NvLinkCountersOfActiveLinksInBytes) {
  const auto s = open_nvml_sampler();
  const auto a = s->nvlink();
  const auto b = s->nvlink();
  ASSERT_EQ(a.size(), 2u);
  ASSERT_TRUE(a[0].exposed) << a[0].reason;
  ASSERT_EQ(a[0].links.size(), 2u);  // links 0 and 1 active, 2 inactive, no link 3
  EXPECT_EQ(a[0].links[1].link, 1u);
  // One field read later, each counter has grown by 1000 KiB (tx) and 3000 KiB (rx).
  EXPECT_EQ(b[0].links[0].tx_bytes - a[0].links[0].tx_bytes, 1000u * 1024u);
  EXPECT_EQ(b[0].links[1].rx_bytes - a[0].links[1].rx_bytes, 3000u * 1024u);
  EXPECT_FALSE(a[1].exposed);
  EXPECT_NE(a[1].reason.find("no NVLink"), std::string::npos) << a[1].reason;
}

TEST_F(FakeNvml, InitFailureIsOneLineWithNvmlsReason) {
  setenv("FAKE_NVML_INIT", "9", 1);
  const std::string e = error_of([] { (void)open_nvml_sampler(); });
  EXPECT_NE(e.find("NVML could not start (nvmlInit: Driver Not Loaded (9))"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST_F(FakeNvml, NoGpuIsAnError) {
  setenv("FAKE_NVML_GPUS", "0", 1);
  EXPECT_NE(error_of([] { (void)open_nvml_sampler(); }).find("NVML sees no GPU"), std::string::npos);
}

TEST_F(FakeNvml, LostGpuIsAnErrorNamingIt) {
  setenv("FAKE_NVML_LOST_AFTER", "0", 1);
  const auto s = open_nvml_sampler();
  std::vector<GpuSample> out;
  try {
    s->sample(out);
    FAIL() << "a lost GPU was sampled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 0: nvmlDeviceGetUtilizationRates failed: GPU is lost (15)"),
              std::string::npos)
        << e.what();
  }
}

TEST(NvmlLibrary, ALibraryThatIsNotNvmlIsNamed) {
  setenv("SCALELAB_NVML_LIBRARY", "libm.so.6", 1);
  try {
    (void)open_nvml_sampler();
    FAIL() << "libm accepted as NVML";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NVML (libm.so.6) lacks nvmlInit_v2: it is not NVML"), std::string::npos)
        << e.what();
  }
  unsetenv("SCALELAB_NVML_LIBRARY");
}

}  // namespace
}  // namespace scalelab::monitor
