// Output paths are checked before the work, with errors naming the parameter, and the checks
// leave nothing behind.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.h"
#include "core/output_path.h"

namespace fs = std::filesystem;
using namespace scalelab;

namespace {

fs::path fresh_folder(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("scalelab_outpath_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    return e.message_as("--flag");
  }
  return "";
}

}  // namespace

TEST(OutputPath, WritableFilePassesAndLeavesNothingBehind) {
  const fs::path d = fresh_folder("ok");
  check_output_file("json", (d / "new.json").string());
  std::ofstream(d / "old.json") << "{}";
  check_output_file("json", (d / "old.json").string());
  check_output_file("json", "");
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  EXPECT_EQ(n, 1u);  // old.json only: no probe, no new.json
  EXPECT_FALSE(fs::exists(d / "new.json"));
  fs::remove_all(d);
}

TEST(OutputPath, FolderMissingFolderAndUnwritablePlacesAreNamed) {
  const fs::path d = fresh_folder("bad");
  EXPECT_NE(error_of([&] { check_output_file("checkpoint", d.string()); }).find("--flag " + d.string() + ": is a directory; give a file name"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_output_file("checkpoint", (d / "no" / "ck.bin").string()); }).find("the folder " + (d / "no").string() + " does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([] { check_output_file("profile", "/proc/x.json"); }).find("--flag /proc/x.json: cannot create files in /proc"),
            std::string::npos);
  std::ofstream(d / "file") << "x";
  EXPECT_NE(error_of([&] { check_output_file("json", (d / "file" / "a.json").string()); }).find("is not a folder"),
            std::string::npos);
  fs::remove_all(d);
}

// A FIFO would block the check's open (and the write), a device would be replaced: both refused.
TEST(OutputPath, FifosAndDevicesAreRefusedAtOnce) {
  const fs::path d = fresh_folder("fifo");
  ASSERT_EQ(::mkfifo((d / "fifo.json").c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { check_output_file("json", (d / "fifo.json").string()); }).find("is not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([] { check_output_file("json", "/dev/null"); }).find("--flag /dev/null: is not a regular file"),
            std::string::npos);
  fs::remove_all(d);
}

TEST(OutputPath, OutputFolderIsCreatedOrNamed) {
  const fs::path d = fresh_folder("folder");
  prepare_output_folder("out_dir", (d / "a" / "b").string());
  EXPECT_TRUE(fs::is_directory(d / "a" / "b"));
  EXPECT_TRUE(fs::is_empty(d / "a" / "b"));
  std::ofstream(d / "file") << "x";
  EXPECT_NE(error_of([&] { prepare_output_folder("out_dir", (d / "file").string()); }).find("is a file, not a folder"),
            std::string::npos);
  EXPECT_NE(error_of([] { prepare_output_folder("out_dir", "/proc/x"); }).find("--flag /proc/x: cannot create the folder"),
            std::string::npos);
  fs::remove_all(d);
}

TEST(OutputPath, TemporaryNamesAreUniqueAndBesideTheTarget) {
  const std::string a = unique_temp_name("/data/ck.bin"), b = unique_temp_name("/data/ck.bin");
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("/data/ck.bin.tmp." + std::to_string(::getpid()) + ".", 0), 0u) << a;
}
