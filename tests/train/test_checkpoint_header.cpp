// Checkpoint headers that are valid JSON with the right checksum but not what save_checkpoint
// writes (not an object, a field missing or of another type, a length past the end): each is an
// input error naming the file, never a JSON library exception.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "nn/model.h"
#include "optim/factory.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;
using namespace scalelab;

namespace {

constexpr char kMagic[] = "SCALELABCKPT\n";
constexpr std::size_t kMagicLen = sizeof(kMagic) - 1;

std::uint64_t fnv1a(const std::string& b) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : b) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

// magic, the u64 length (`len` when given, else the header's), the header, the arrays, the checksum.
std::string checkpoint_bytes(const std::string& header, const std::string& arrays, std::uint64_t len = 0) {
  std::string b(kMagic, kMagicLen);
  const std::uint64_t n = len != 0 ? len : header.size();
  b.append(reinterpret_cast<const char*>(&n), 8);
  b += header + arrays;
  const std::uint64_t h = fnv1a(b);
  b.append(reinterpret_cast<const char*>(&h), 8);
  return b;
}

struct Fixture {
  std::unique_ptr<nn::Model> model = nn::make_model("trivial", nn::Shape{1, 2, 2}, 2, 1);
  std::unique_ptr<optim::Optimizer> opt = optim::make_optimizer("adam", {});
  fs::path path = fs::temp_directory_path() / ("scalelab_ckpt_header_" + std::to_string(::getpid()));
  nlohmann::json header;  // of a real checkpoint
  std::string arrays;     // its float arrays

  Fixture() {
    opt->bind(model->parameters());
    train::save_checkpoint(path.string(), {"trivial", "adam", {1, 10}}, model->parameters(), *opt);
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::uint64_t len = 0;
    std::memcpy(&len, bytes.data() + kMagicLen, 8);
    header = nlohmann::json::parse(bytes.substr(kMagicLen + 8, len));
    arrays = bytes.substr(kMagicLen + 8 + len, bytes.size() - 8 - kMagicLen - 8 - len);
  }
  ~Fixture() { fs::remove(path); }

  // Loads `bytes` and returns the error's message ("" when it loaded).
  std::string load_error(const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    try {
      (void)train::load_checkpoint(path.string(), "trivial", model->parameters(), *opt);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      return e.what();
    }
    return "";
  }
  std::string load_error_with(const std::string& key, const nlohmann::json& value) {
    nlohmann::json h = header;
    h[key] = value;
    return load_error(checkpoint_bytes(h.dump(), arrays));
  }
};

}  // namespace

TEST(CheckpointHeader, TheRealHeaderLoads) {
  Fixture f;
  EXPECT_EQ(f.load_error(checkpoint_bytes(f.header.dump(), f.arrays)), "");
}

TEST(CheckpointHeader, NotAnObjectIsAnInputErrorNamingTheFile) {
  Fixture f;
  for (const char* h : {"1", "[]", "\"text\"", "null"}) {
    const std::string m = f.load_error(checkpoint_bytes(h, f.arrays));
    EXPECT_NE(m.find(f.path.string()), std::string::npos) << h << ": " << m;
    EXPECT_NE(m.find("not a JSON object"), std::string::npos) << h << ": " << m;
  }
}

TEST(CheckpointHeader, AMistypedFieldIsAnInputErrorNamingIt) {
  Fixture f;
  EXPECT_NE(f.load_error_with("format", "1").find("checkpoint format \"1\" is not one this scalelab reads"), std::string::npos);
  EXPECT_NE(f.load_error_with("model", 7).find("\"model\" is missing or not text"), std::string::npos);
  EXPECT_NE(f.load_error_with("layout", nullptr).find("\"layout\" is missing or not text"), std::string::npos);
  EXPECT_NE(f.load_error_with("optimizer_state", 1e300).find("\"optimizer_state\" is missing or not a count"), std::string::npos);
  EXPECT_NE(f.load_error_with("state", "0").find("\"state\" is missing or not a count"), std::string::npos);
  EXPECT_NE(f.load_error_with("epochs_done", -1).find("\"epochs_done\" is missing or not a count"), std::string::npos);
  EXPECT_NE(f.load_error_with("global_step", 2.5).find("\"global_step\" is missing or not a count"), std::string::npos);
  EXPECT_NE(f.load_error_with("seed", -3).find("\"seed\" is missing or not a count"), std::string::npos);
  EXPECT_NE(f.load_error_with("training_forwards", "9").find("\"training_forwards\" is missing or not a count"), std::string::npos);
  EXPECT_NE(f.load_error_with("optimizer_steps", nlohmann::json::array()).find("\"optimizer_steps\" is missing or not a count"),
            std::string::npos);
}

TEST(CheckpointHeader, ALengthThatWrapsAroundIsPastTheEnd) {
  Fixture f;
  const std::string m = f.load_error(checkpoint_bytes(f.header.dump(), f.arrays, ~std::uint64_t{0} - 5));
  EXPECT_NE(m.find("header length runs past the end of the file"), std::string::npos) << m;
}

// Counters beyond any run and non-finite arrays are damage, refused by name; the file the run
// would resume from is never a FIFO (which would block) or a device (which would never end).
TEST(CheckpointHeader, CountersBeyondAnyRunAndNonFiniteValuesAreRefused) {
  Fixture f;
  const std::uint64_t huge = std::uint64_t{1} << 62;
  EXPECT_NE(f.load_error_with("epochs_done", huge).find("\"epochs_done\" is 4611686018427387904, beyond any run"),
            std::string::npos);
  EXPECT_NE(f.load_error_with("global_step", huge).find("\"global_step\" is"), std::string::npos);
  EXPECT_NE(f.load_error_with("optimizer_steps", huge).find("beyond any run"), std::string::npos);
  // Counters no run reaches: more epochs than steps, more optimizer steps than steps.
  EXPECT_NE(f.load_error_with("epochs_done", 11).find("11 epochs done in 10 steps"), std::string::npos);
  EXPECT_NE(f.load_error_with("optimizer_steps", 12).find("12 optimizer steps in 10 training steps"), std::string::npos);
  std::string nan_arrays = f.arrays;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan_arrays.data(), &nan, sizeof nan);
  EXPECT_NE(f.load_error(checkpoint_bytes(f.header.dump(), nan_arrays)).find("not a finite number"), std::string::npos);
  EXPECT_NE(f.load_error("").find("is empty"), std::string::npos);
}

TEST(CheckpointHeader, AFifoOrADeviceIsRefusedWithoutReading) {
  Fixture f;
  const fs::path fifo = f.path.string() + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/zero")}) {
    try {
      (void)train::load_checkpoint(path, "trivial", f.model->parameters(), *f.opt);
      ADD_FAILURE() << path << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": is not a regular file"), std::string::npos) << e.what();
    }
  }
  fs::remove(fifo);
}
