// Atomic writes: the target is replaced whole or not at all, and the temporary never stays behind,
// whether the write is abandoned, the disk refuses the bytes (a file-size limit stands in for a
// full disk) or two writers share the target.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/results.h"
#include "file_size_limit.h"

namespace fs = std::filesystem;
using namespace scalelab;

namespace {

fs::path fresh_folder(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("scalelab_atomic_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t files_in(const fs::path& d) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
  return n;
}

}  // namespace

TEST(AtomicFile, CommitReplacesTheTargetAndLeavesOnlyIt) {
  const fs::path d = fresh_folder("commit");
  std::ofstream(d / "a.json") << "old";
  write_file_atomically((d / "a.json").string(), "new text", "json");
  EXPECT_EQ(read_all(d / "a.json"), "new text");
  EXPECT_EQ(files_in(d), 1u);
  fs::remove_all(d);
}

TEST(AtomicFile, AnAbandonedWriteRemovesItsTemporary) {
  const fs::path d = fresh_folder("abandon");
  std::ofstream(d / "a.json") << "old";
  {
    AtomicFile f((d / "a.json").string(), "json");
    f.write("half", 4);
    EXPECT_TRUE(fs::exists(f.temp_path()));
    EXPECT_EQ(f.temp_path().rfind((d / "a.json.tmp.").string(), 0), 0u) << f.temp_path();
  }  // an exception between writes ends here the same way
  EXPECT_EQ(read_all(d / "a.json"), "old");
  EXPECT_EQ(files_in(d), 1u);
  fs::remove_all(d);
}

TEST(AtomicFile, TwoWritersOfOneTargetUseTheirOwnTemporaries) {
  const fs::path d = fresh_folder("two");
  AtomicFile a((d / "ck.bin").string(), "checkpoint");
  AtomicFile b((d / "ck.bin").string(), "checkpoint");
  EXPECT_NE(a.temp_path(), b.temp_path());
  a.write("aaaa", 4);
  b.write("bb", 2);
  a.commit();
  EXPECT_EQ(read_all(d / "ck.bin"), "aaaa");
  b.commit();
  EXPECT_EQ(read_all(d / "ck.bin"), "bb");
  EXPECT_EQ(files_in(d), 1u);
  fs::remove_all(d);
}

// A write the disk refuses (here a 4 KiB file-size limit, in a child process, as a full disk
// would): an error naming the parameter and the target, the temporary removed, the target intact.
TEST(AtomicFile, ARefusedWriteRemovesTheTemporaryAndKeepsTheTarget) {
  const fs::path d = fresh_folder("refused");
  std::ofstream(d / "a.json") << "old";
  const std::string m = testing_support::error_under_file_size_limit(
      4096, [&] { write_file_atomically((d / "a.json").string(), std::string(100000, 'x'), "json"); });
  EXPECT_EQ(m.find("json " + (d / "a.json").string() + ": write failed"), 0u) << m;
  EXPECT_EQ(read_all(d / "a.json"), "old");
  EXPECT_EQ(files_in(d), 1u);
  fs::remove_all(d);
}

// The same through write_json_file, which every --json option uses.
TEST(AtomicFile, ARefusedJsonWriteLeavesNoTemporary) {
  const fs::path d = fresh_folder("json");
  const std::string m = testing_support::error_under_file_size_limit(
      4096, [&] { write_json_file((d / "r.json").string(), nlohmann::json{{"text", std::string(100000, 'x')}}); });
  EXPECT_NE(m.find("write failed"), std::string::npos) << m;
  EXPECT_EQ(files_in(d), 0u);
  fs::remove_all(d);
}

// A symbolic link keeps being a link: the file it names gets the bytes. A FIFO (or a device such
// as /dev/null) is refused, never replaced by a regular file, and nothing is left beside it.
TEST(AtomicFile, FollowsLinksAndRefusesDevicesAndFifos) {
  const fs::path d = fresh_folder("special");
  fs::create_directories(d / "shared");
  std::ofstream(d / "shared" / "results.json") << "old";
  fs::create_symlink(d / "shared" / "results.json", d / "link.json");
  write_file_atomically((d / "link.json").string(), "new", "json");
  EXPECT_TRUE(fs::is_symlink(d / "link.json"));
  EXPECT_EQ(read_all(d / "shared" / "results.json"), "new");
  ASSERT_EQ(::mkfifo((d / "fifo.json").c_str(), 0600), 0);
  try {
    write_file_atomically((d / "fifo.json").string(), "x", "json");
    FAIL() << "a FIFO was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_fifo(d / "fifo.json"));
  EXPECT_EQ(files_in(d), 3u);  // shared/, link.json, fifo.json
  fs::remove_all(d);
}

// A writer killed mid-write (SIGKILL, or a rank's SIGTERM) leaves its temporary; the next write of
// the same target removes it once its process is gone and it is an hour old, and nothing else.
TEST(AtomicFile, AbandonedTemporariesOfDeadWritersAreRemoved) {
  const fs::path d = fresh_folder("abandoned");
  const auto leave = [&](const std::string& name, std::chrono::hours age) {
    std::ofstream(d / name) << "half";
    fs::last_write_time(d / name, fs::file_time_type::clock::now() - age);
  };
  leave("a.json.tmp.99999999.0badf00d", std::chrono::hours(2));                           // dead, old: removed
  leave("a.json.tmp.99999998.0badf00d", std::chrono::hours(0));                           // dead, fresh: kept
  leave("a.json.tmp." + std::to_string(::getpid()) + ".0badf00d", std::chrono::hours(2));  // alive: kept
  leave("b.json.tmp.99999999.0badf00d", std::chrono::hours(2));                           // another target: kept
  write_file_atomically((d / "a.json").string(), "new", "json");
  EXPECT_FALSE(fs::exists(d / "a.json.tmp.99999999.0badf00d"));
  EXPECT_TRUE(fs::exists(d / "a.json.tmp.99999998.0badf00d"));
  EXPECT_TRUE(fs::exists(d / ("a.json.tmp." + std::to_string(::getpid()) + ".0badf00d")));
  EXPECT_TRUE(fs::exists(d / "b.json.tmp.99999999.0badf00d"));
  EXPECT_EQ(read_all(d / "a.json"), "new");
  fs::remove_all(d);
}
