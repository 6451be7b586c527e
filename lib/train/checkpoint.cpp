// save_checkpoint / load_checkpoint (train/checkpoint.h); the atomic write is core/atomic_file.h's.
#include "train/checkpoint.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/file_check.h"
#include "core/json_text.h"
#include "core/limits.h"

namespace scalelab::train {
namespace {

constexpr char kMagic[] = "SCALELABCKPT\n";
constexpr std::size_t kMagicLen = sizeof(kMagic) - 1;
constexpr int kFormat = 2;          // what save_checkpoint writes
constexpr int kOldestFormat = 1;    // the oldest load_checkpoint reads (no seed, no training_forwards)

struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  }
};

// The checksummed body, written through an AtomicFile (core/atomic_file.h): a unique temporary
// beside the checkpoint, removed on any failure, renamed into place by finish().
class Writer {
 public:
  Writer(const std::string& path, const std::function<void(std::size_t)>& after) : file_(path, "checkpoint"), after_(after) {}
  void write(const void* p, std::size_t n) {
    fnv_.add(p, n);
    raw(p, n);
  }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const char*>(p);
    while (n > 0) {  // in blocks, so a test can stop the writer mid-file
      const std::size_t k = std::min<std::size_t>(n, 1 << 20);
      file_.write(b, k);
      b += k;
      n -= k;
      written_ += k;
      if (after_) after_(written_);
    }
  }
  void finish() {
    const std::uint64_t sum = fnv_.h;
    raw(&sum, sizeof sum);
    file_.commit();
  }

 private:
  AtomicFile file_;
  const std::function<void(std::size_t)>& after_;
  Fnv fnv_;
  std::size_t written_ = 0;
};

// The first non-finite value of `values`, by name, or empty: a checkpoint never holds NaN or inf.
std::string non_finite(std::span<const float> values, const char* what) {
  for (const float v : values) {
    if (!std::isfinite(v)) return what;
  }
  return "";
}

}  // namespace

CheckpointLock::CheckpointLock(const std::string& path)
    : lock_(path + ".lock", "checkpoint", path, "give each job its own checkpoint file") {}

void save_checkpoint(const std::string& path, const CheckpointMeta& meta, const nn::ParameterSet& params,
                     const optim::Optimizer& optimizer, const std::function<void(std::size_t)>& after_bytes) {
  for (const std::string& bad : {non_finite(params.values(), "parameters"), non_finite(params.state(), "running statistics"),
                                 non_finite(optimizer.state(), "optimizer state")}) {
    if (!bad.empty()) {
      throw_parameter(ErrorKind::runtime, "checkpoint",
                      path + ": not written: the " + bad + " hold NaN or infinite values (training diverged; the "
                      "previous checkpoint, if any, is kept)");
    }
  }
  const nlohmann::json header = {{"format", kFormat},
                                 {"model", meta.model},
                                 {"layout", params.layout_signature()},
                                 {"values", params.values().size()},
                                 {"state", params.state().size()},
                                 {"optimizer", meta.optimizer},
                                 {"optimizer_state", optimizer.state().size()},
                                 {"optimizer_steps", optimizer.step_count()},
                                 {"epochs_done", meta.counters.epochs_done},
                                 {"global_step", meta.counters.global_step},
                                 {"training_forwards", meta.counters.training_forwards},
                                 {"seed", meta.seed},
                                 {"ranks", meta.ranks},
                                 {"global_batch", meta.global_batch}};
  const std::string text = header.dump();
  Writer w(path, after_bytes);
  w.write(kMagic, kMagicLen);
  const std::uint64_t len = text.size();
  w.write(&len, sizeof len);
  w.write(text.data(), text.size());
  w.write(params.values().data(), params.values().size_bytes());
  w.write(params.state().data(), params.state().size_bytes());
  w.write(optimizer.state().data(), optimizer.state().size_bytes());
  w.finish();
}

CheckpointMeta load_checkpoint(const std::string& path, const std::string& model, nn::ParameterSet& params,
                               optim::Optimizer& optimizer) {
  check_input_file(path, "checkpoint", "resume");
  const auto bad = [&path](const std::string& what) { throw_parameter(ErrorKind::input, "resume", path + ": " + what); };
  const std::string fix = "; give a checkpoint that scalelab train wrote";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_parameter(ErrorKind::input, "resume", path + ": cannot open the checkpoint; check the path");
  // The magic first: a large file of another kind is refused without being read whole.
  std::string bytes(kMagicLen, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(kMagicLen));
  if (in.gcount() != static_cast<std::streamsize>(kMagicLen) || bytes != kMagic) {
    bad(std::string(in.gcount() == 0 ? "is empty" : "is not a scalelab checkpoint (bad magic)") + fix);
  }
  bytes.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (bytes.size() < kMagicLen + 16) bad("is truncated (shorter than a checkpoint's header)" + fix);
  Fnv fnv;
  fnv.add(bytes.data(), bytes.size() - 8);
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (stored != fnv.h) bad("checksum mismatch: the file is truncated or damaged");
  std::uint64_t len = 0;
  std::memcpy(&len, bytes.data() + kMagicLen, 8);
  if (len > bytes.size() - 8 - kMagicLen - 8) bad("header length runs past the end of the file");
  const std::size_t body = kMagicLen + 8 + len;
  nlohmann::json header;
  try {
    header = parse_json_text(std::string_view(bytes).substr(kMagicLen + 8, len));
  } catch (const JsonTextError& e) {
    bad(std::string("unreadable header (") + e.what() + ")");
  }
  // The header's fields as save_checkpoint writes them: a missing or mistyped one is a damaged file.
  if (!header.is_object()) bad("unreadable header (not a JSON object)");
  const auto text = [&](const char* key) {
    const auto it = header.find(key);
    if (it == header.end() || !it->is_string()) bad(std::string("header field \"") + key + "\" is missing or not text");
    return it->get<std::string>();
  };
  const auto count = [&](const char* key) {
    const auto it = header.find(key);
    if (it == header.end() || !it->is_number_unsigned() || it->get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
      bad(std::string("header field \"") + key + "\" is missing or not a count");
    }
    return it->get<std::uint64_t>();
  };
  const auto f = header.find("format");
  if (f == header.end() || !f->is_number_unsigned() || f->get<std::uint64_t>() < std::uint64_t{kOldestFormat} ||
      f->get<std::uint64_t>() > std::uint64_t{kFormat}) {
    bad("checkpoint format " + (f == header.end() ? std::string("(none)") : f->dump()) + " is not one this scalelab reads (" +
        std::to_string(kOldestFormat) + " to " + std::to_string(kFormat) + "); start afresh or use the scalelab that wrote it");
  }
  const int format = static_cast<int>(f->get<std::uint64_t>());
  const std::string ck_model = text("model");
  if (ck_model != model) bad("holds model '" + ck_model + "' but this run's model is '" + model + "'");
  if (text("layout") != params.layout_signature()) {
    bad("the model's tensor shapes differ from the checkpoint's (different dataset or classes?)");
  }
  optimizer.bind(params);
  const std::string ck_opt = text("optimizer");
  if (ck_opt != optimizer.name() || count("optimizer_state") != optimizer.state().size()) {
    bad("holds optimizer '" + ck_opt + "' but this run's optimizer is '" + optimizer.name() + "'");
  }
  const std::size_t nv = params.values().size_bytes(), ns = params.state().size_bytes(),
                    no = optimizer.state().size_bytes();
  if (count("state") * 4 != ns || body + nv + ns + no + 8 != bytes.size()) {
    bad("its size does not match the model and optimizer it names");
  }
  // Counters past these are damage (a run of 2^53 steps is not one), not a run to continue.
  constexpr std::uint64_t kMaxSteps = std::uint64_t{1} << 53;
  const auto bounded = [&](const char* key, std::uint64_t most) {
    const std::uint64_t v = count(key);
    if (v > most) bad(std::string("header field \"") + key + "\" is " + std::to_string(v) + ", beyond any run (at most " +
                      std::to_string(most) + "): the file is damaged; start afresh");
    return static_cast<std::int64_t>(v);
  };
  const std::int64_t optimizer_steps = bounded("optimizer_steps", kMaxSteps);
  const CheckpointCounters counters{bounded("epochs_done", limits::kMaxEpochs), bounded("global_step", kMaxSteps)};
  // Every epoch takes at least one step, and every step at most one optimizer step: counters that
  // say otherwise would resume the schedule and Adam's corrections from a place no run reached.
  if (counters.epochs_done > counters.global_step) {
    bad("header says " + std::to_string(counters.epochs_done) + " epochs done in " + std::to_string(counters.global_step) +
        " steps, which no run does: the file is damaged; start afresh");
  }
  if (optimizer_steps > counters.global_step) {
    bad("header says " + std::to_string(optimizer_steps) + " optimizer steps in " + std::to_string(counters.global_step) +
        " training steps, which no run does: the file is damaged; start afresh");
  }
  // Checked in the file's bytes, before anything is copied: a refused checkpoint leaves the model as it was.
  for (std::size_t at = body; at < body + nv + ns + no; at += sizeof(float)) {
    float x = 0;
    std::memcpy(&x, bytes.data() + at, sizeof x);
    if (!std::isfinite(x)) {
      bad("holds a parameter or optimizer state that is not a finite number (the run it saved had diverged?); start "
          "afresh or resume from an earlier checkpoint");
    }
  }
  std::memcpy(params.values().data(), bytes.data() + body, nv);
  std::memcpy(params.state().data(), bytes.data() + body + nv, ns);
  std::memcpy(optimizer.state().data(), bytes.data() + body + nv + ns, no);
  optimizer.set_step_count(optimizer_steps);
  // Format 1 did not record the training forwards nor the seed: -1 and 0 say so.
  const std::int64_t forwards = format >= 2 ? static_cast<std::int64_t>(count("training_forwards")) : std::int64_t{-1};
  std::uint64_t seed = 0;
  if (format >= 2) {  // any 64-bit value
    const auto it = header.find("seed");
    if (it == header.end() || !it->is_number_unsigned()) bad("header field \"seed\" is missing or not a count");
    seed = it->get<std::uint64_t>();
  }
  CheckpointMeta meta{ck_model, ck_opt, {counters.epochs_done, counters.global_step, forwards}, seed, format};
  // Recorded since they were added (optional: older checkpoints of the same format lack them).
  if (header.contains("ranks")) meta.ranks = bounded("ranks", std::uint64_t{1} << 31);
  if (header.contains("global_batch")) meta.global_batch = bounded("global_batch", kMaxSteps);
  return meta;
}

}  // namespace scalelab::train
