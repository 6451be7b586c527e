// Checkpoints restore exactly what was saved, refuse damaged or mismatched files with one clear
// line, and survive a kill -9 of the writer mid-file: the previous checkpoint stays loadable.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <fstream>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "nn/model.h"
#include "optim/factory.h"
#include "train/checkpoint.h"
#include "file_size_limit.h"

namespace fs = std::filesystem;
using namespace scalelab;
using namespace scalelab::train;

namespace {

struct ModelAndOptimizer {
  std::unique_ptr<nn::Model> model;
  std::unique_ptr<optim::Optimizer> opt;
  explicit ModelAndOptimizer(std::uint64_t seed) {
    model = nn::make_model("mlp", nn::Shape{1, 4, 4}, 3, seed);
    opt = optim::make_optimizer("adam", {});
    opt->bind(model->parameters());
  }
  // One optimizer step with made-up gradients, so the state is not all zeros.
  void step() {
    auto g = model->parameters().grads();
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = 0.01f * static_cast<float>(i % 7) - 0.03f;
    opt->step(model->parameters(), 0.01f);
  }
};

// The temporaries beside `path` (path.tmp.<pid>.<random>).
std::vector<fs::path> temporaries_of(const fs::path& path) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(path.parent_path())) {
    if (e.path().filename().string().rfind(path.filename().string() + ".tmp", 0) == 0) found.push_back(e.path());
  }
  return found;
}

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("scalelab_ckpt_" + name + "_" + std::to_string(::getpid()));
}

std::vector<float> copy(std::span<const float> s) { return {s.begin(), s.end()}; }

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Rewrites the JSON header of the checkpoint at `path` with `edit` and seals it with a fresh
// checksum (FNV-1a, as the file format says): a well-formed file of another format version.
void rewrite_header(const fs::path& path, const std::function<void(nlohmann::json&)>& edit) {
  const std::string bytes = read_all(path);
  const std::size_t magic = 13;  // "SCALELABCKPT\n"
  std::uint64_t len = 0;
  std::memcpy(&len, bytes.data() + magic, 8);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(magic + 8, len));
  edit(header);
  const std::string text = header.dump();
  const std::uint64_t new_len = text.size();
  std::string out = bytes.substr(0, magic) + std::string(reinterpret_cast<const char*>(&new_len), 8) + text +
                    bytes.substr(magic + 8 + len, bytes.size() - 8 - (magic + 8 + len));
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char b : out) h = (h ^ b) * 0x100000001b3ull;
  out.append(reinterpret_cast<const char*>(&h), 8);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out;
}

}  // namespace

TEST(Checkpoint, RoundTripRestoresValuesStateAndCounters) {
  ModelAndOptimizer a(1);
  a.step();
  const fs::path path = temp_file("roundtrip");
  save_checkpoint(path, {"mlp", a.opt->name(), {3, 123}}, a.model->parameters(), *a.opt);
  EXPECT_TRUE(temporaries_of(path).empty());
  ModelAndOptimizer b(2);
  ASSERT_NE(copy(a.model->parameters().values()), copy(b.model->parameters().values()));
  const CheckpointMeta meta = load_checkpoint(path, "mlp", b.model->parameters(), *b.opt);
  EXPECT_EQ(meta.counters.epochs_done, 3);
  EXPECT_EQ(meta.counters.global_step, 123);
  EXPECT_EQ(copy(a.model->parameters().values()), copy(b.model->parameters().values()));
  EXPECT_EQ(copy(a.opt->state()), copy(b.opt->state()));
  EXPECT_EQ(b.opt->step_count(), a.opt->step_count());
  fs::remove(path);
}

TEST(Checkpoint, DamagedOrMismatchedFilesAreInputErrors) {
  ModelAndOptimizer a(1);
  const fs::path path = temp_file("damaged");
  save_checkpoint(path, {"mlp", a.opt->name(), {1, 10}}, a.model->parameters(), *a.opt);
  ModelAndOptimizer b(2);
  try {
    (void)load_checkpoint(path, "cnn", b.model->parameters(), *b.opt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("holds model 'mlp'"), std::string::npos) << e.what();
  }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x55');
  }
  try {
    (void)load_checkpoint(path, "mlp", b.model->parameters(), *b.opt);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

TEST(Checkpoint, KillDuringWritingLeavesThePreviousCheckpointIntact) {
  ModelAndOptimizer a(1);
  a.step();
  const fs::path path = temp_file("kill");
  save_checkpoint(path, {"mlp", a.opt->name(), {1, 50}}, a.model->parameters(), *a.opt);
  const std::vector<float> saved = copy(a.model->parameters().values());

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The writer: new parameters, then stop after the first blocks of the temporary file.
    for (float& v : a.model->parameters().values()) v = 7.0f;
    save_checkpoint(path, {"mlp", a.opt->name(), {2, 100}}, a.model->parameters(), *a.opt, [&](std::size_t bytes) {
      if (bytes > 100) {
        const char c = 'x';
        (void)!::write(ready[1], &c, 1);
        for (;;) ::pause();
      }
    });
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);  // the writer is mid-file now
  EXPECT_EQ(temporaries_of(path).size(), 1u);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));

  ModelAndOptimizer b(2);
  const CheckpointMeta meta = load_checkpoint(path, "mlp", b.model->parameters(), *b.opt);
  EXPECT_EQ(meta.counters.epochs_done, 1);
  EXPECT_EQ(copy(b.model->parameters().values()), saved);
  fs::remove(path);
  for (const fs::path& t : temporaries_of(path)) fs::remove(t);  // kill -9 leaves it; nothing else does
}

// Diverged training must not replace a good checkpoint: NaN or inf anywhere refuses the write.
TEST(Checkpoint, NonFiniteValuesAreNeverWritten) {
  ModelAndOptimizer a(1);
  const fs::path path = temp_file("nonfinite");
  save_checkpoint(path, {"mlp", a.opt->name(), {1, 10}}, a.model->parameters(), *a.opt);
  const auto before = fs::file_size(path);
  a.model->parameters().values()[3] = std::numeric_limits<float>::quiet_NaN();
  try {
    save_checkpoint(path, {"mlp", a.opt->name(), {2, 20}}, a.model->parameters(), *a.opt);
    FAIL() << "a NaN parameter was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the parameters hold NaN or infinite values"), std::string::npos) << e.what();
  }
  a.model->parameters().values()[3] = 0.0f;
  a.step();
  a.opt->state()[0] = std::numeric_limits<float>::infinity();
  EXPECT_THROW(save_checkpoint(path, {"mlp", a.opt->name(), {2, 20}}, a.model->parameters(), *a.opt), Error);
  EXPECT_EQ(fs::file_size(path), before);
  ModelAndOptimizer b(2);
  EXPECT_EQ(load_checkpoint(path, "mlp", b.model->parameters(), *b.opt).counters.epochs_done, 1);
  fs::remove(path);
}

// Format 2 records the seed and each rank's training forwards (where the dropout streams stand);
// a format-1 file is still read, saying that position is unknown; a later format is refused.
TEST(Checkpoint, RecordsTheRandomStreamsAndReadsTheOlderFormat) {
  ModelAndOptimizer a(1);
  const fs::path path = temp_file("format");
  save_checkpoint(path, {"mlp", a.opt->name(), {2, 40, 80}, 1234}, a.model->parameters(), *a.opt);
  ModelAndOptimizer b(2);
  const CheckpointMeta now = load_checkpoint(path, "mlp", b.model->parameters(), *b.opt);
  EXPECT_EQ(now.format, 2);
  EXPECT_EQ(now.seed, 1234u);
  EXPECT_EQ(now.counters.training_forwards, 80);
  rewrite_header(path, [](nlohmann::json& h) {
    h["format"] = 1;
    h.erase("seed");
    h.erase("training_forwards");
  });
  const CheckpointMeta old = load_checkpoint(path, "mlp", b.model->parameters(), *b.opt);
  EXPECT_EQ(old.format, 1);
  EXPECT_EQ(old.counters.global_step, 40);
  EXPECT_EQ(old.counters.training_forwards, -1);
  rewrite_header(path, [](nlohmann::json& h) { h["format"] = 3; });
  try {
    (void)load_checkpoint(path, "mlp", b.model->parameters(), *b.opt);
    FAIL() << "format 3 was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("checkpoint format 3 is not one this scalelab reads (1 to 2)"), std::string::npos)
        << e.what();
  }
  fs::remove(path);
}

// A disk that refuses the bytes mid-file (a file-size limit in a child process stands in for a
// full disk): an error, the previous checkpoint intact, and no temporary left filling the disk.
TEST(Checkpoint, ARefusedWriteLeavesNoTemporaryAndThePreviousCheckpoint) {
  ModelAndOptimizer a(1);
  const fs::path path = temp_file("refused");
  save_checkpoint(path, {"mlp", a.opt->name(), {1, 10}}, a.model->parameters(), *a.opt);
  const auto before = fs::file_size(path);
  const std::string m = testing_support::error_under_file_size_limit(
      4096, [&] { save_checkpoint(path, {"mlp", a.opt->name(), {2, 20}}, a.model->parameters(), *a.opt); });
  EXPECT_NE(m.find("write failed"), std::string::npos) << m;
  EXPECT_TRUE(temporaries_of(path).empty());
  EXPECT_EQ(fs::file_size(path), before);
  fs::remove(path);
}

// Two jobs on one checkpoint file: the second is refused with a line naming the holder's pid; once
// the first ends, its lock file is gone and the file is free again.
TEST(Checkpoint, OneJobPerCheckpointFile) {
  const fs::path path = temp_file("lock");
  {
    const CheckpointLock first(path.string());
    EXPECT_TRUE(fs::exists(path.string() + ".lock"));
    try {
      const CheckpointLock second(path.string());
      FAIL() << "two jobs hold one checkpoint";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_EQ(e.parameter(), "checkpoint");
      EXPECT_NE(std::string(e.what()).find(": in use by another job (pid " + std::to_string(::getpid()) +
                                           "); give each job its own checkpoint file"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(path.string() + ".lock"));
  const CheckpointLock again(path.string());
  EXPECT_TRUE(fs::exists(path.string() + ".lock"));
}
