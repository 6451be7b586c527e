// IDX headers that announce far more data than the file holds: the read fails as truncated
// without first taking the memory the header asks for. Each read runs in a child process whose
// peak resident memory the parent reads back (wait4), so the measure is the read's alone.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "core/error.h"
#include "data/idx.h"

namespace fs = std::filesystem;
using namespace scalelab;

namespace {

fs::path write_header(const std::string& name, const std::array<std::uint32_t, 4>& words, int count) {
  const fs::path p = fs::temp_directory_path() / ("scalelab_test_idx_memory_" + name + "_" + std::to_string(::getpid()));
  std::ofstream out(p, std::ios::binary);
  for (int i = 0; i < count; ++i) {
    const std::uint32_t w = words[static_cast<std::size_t>(i)];
    const char be[4] = {static_cast<char>(w >> 24), static_cast<char>(w >> 16), static_cast<char>(w >> 8), static_cast<char>(w)};
    out.write(be, 4);
  }
  out.write("\x01\x02", 2);  // two bytes of data
  return p;
}

// Runs `read` in a child; returns its peak RSS in MiB, or -1 when the read did not end in a
// scalelab::Error saying "truncated" (the child's exit status says which).
long child_peak_rss_mib(const std::function<void()>& read) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 3;
    try {
      read();
      code = 4;
    } catch (const Error& e) {
      code = std::string(e.what()).find("truncated") != std::string::npos ? 0 : 5;
    } catch (...) {
      code = 6;
    }
    ::_exit(code);
  }
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return usage.ru_maxrss / 1024;
}

// Far above what reading a 10-byte file should take, far below what the headers ask for (1 GiB).
constexpr long kLimitMib = 256;

}  // namespace

TEST(IdxMemory, LabelHeaderAnnouncingAGibibyteInATinyFileTakesLittleMemory) {
  const fs::path p = write_header("labels", {0x00000801, 0x40000000, 0, 0}, 2);
  const long mib = child_peak_rss_mib([&] { (void)data::read_idx_labels(p.string()); });
  fs::remove(p);
  ASSERT_GE(mib, 0) << "the read did not fail as truncated";
  EXPECT_LT(mib, kLimitMib);
}

TEST(IdxMemory, ImageHeaderAnnouncingAGibibyteInATinyFileTakesLittleMemory) {
  const fs::path p = write_header("images", {0x00000803, 0x00100000, 32, 32}, 4);
  const long mib = child_peak_rss_mib([&] { (void)data::read_idx_images(p.string()); });
  fs::remove(p);
  ASSERT_GE(mib, 0) << "the read did not fail as truncated";
  EXPECT_LT(mib, kLimitMib);
}
