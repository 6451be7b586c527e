// A path to be read as a file is refused, by name, when it is a folder or a FIFO (whose open would
// block) or a device; a regular file and a missing path pass (the caller's open says what is missing).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "core/file_check.h"

namespace fs = std::filesystem;
using namespace scalelab;

namespace {

std::string refusal(const std::string& path) {
  try {
    check_input_file(path, "machine file", "machine");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    return e.message_as("--machine");
  }
  return "";
}

}  // namespace

TEST(FileCheck, FoldersFifosAndDevicesAreRefusedByName) {
  const fs::path d = fs::temp_directory_path() / ("scalelab_filecheck_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  const fs::path fifo = d / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(d / "plain.json") << "{}";

  EXPECT_NE(refusal(d.string()).find(d.string() + ": is a directory, not a machine file"), std::string::npos);
  const std::string f = refusal(fifo.string());
  EXPECT_NE(f.find(fifo.string() + ": is not a regular file (a device, FIFO or socket); give the machine file's path"),
            std::string::npos)
      << f;
  EXPECT_NE(refusal("/dev/zero").find("/dev/zero: is not a regular file"), std::string::npos);
  EXPECT_EQ(refusal((d / "plain.json").string()), "");
  EXPECT_EQ(refusal((d / "missing.json").string()), "");
  fs::remove_all(d);
}
