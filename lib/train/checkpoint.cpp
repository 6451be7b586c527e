// save_checkpoint / load_checkpoint (train/checkpoint.h), with POSIX calls for fsync.
#include "train/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace scalelab::train {
namespace {

constexpr char kMagic[] = "SCALELABCKPT\n";
constexpr std::size_t kMagicLen = sizeof(kMagic) - 1;
constexpr int kFormat = 1;

struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  }
};

class Writer {
 public:
  Writer(std::string path, const std::function<void(std::size_t)>& after) : path_(std::move(path)), after_(after) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd_ < 0) {
      throw_parameter(ErrorKind::input, "checkpoint", path_ + ": cannot open for writing (" + std::strerror(errno) +
                  "); check that the folder exists and is writable");
    }
  }
  ~Writer() {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(const void* p, std::size_t n) {
    fnv_.add(p, n);
    raw(p, n);
  }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const char*>(p);
    while (n > 0) {
      const ssize_t w = ::write(fd_, b, std::min<std::size_t>(n, 1 << 20));
      if (w < 0) {
        if (errno == EINTR) continue;
        throw_parameter(ErrorKind::runtime, "checkpoint", path_ + ": write failed (" + std::strerror(errno) + ")");
      }
      b += w;
      n -= static_cast<std::size_t>(w);
      written_ += static_cast<std::size_t>(w);
      if (after_) after_(written_);
    }
  }
  void finish() {
    const std::uint64_t sum = fnv_.h;
    raw(&sum, sizeof sum);
    if (::fsync(fd_) != 0) throw_parameter(ErrorKind::runtime, "checkpoint", path_ + ": fsync failed (" + std::strerror(errno) + ")");
    if (::close(fd_) != 0) throw_parameter(ErrorKind::runtime, "checkpoint", path_ + ": close failed (" + std::strerror(errno) + ")");
    fd_ = -1;
  }

 private:
  std::string path_;
  const std::function<void(std::size_t)>& after_;
  int fd_ = -1;
  Fnv fnv_;
  std::size_t written_ = 0;
};

void fsync_folder(const std::filesystem::path& file) {
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointMeta& meta, const nn::ParameterSet& params,
                     const optim::Optimizer& optimizer, const std::function<void(std::size_t)>& after_bytes) {
  const nlohmann::json header = {{"format", kFormat},
                                 {"model", meta.model},
                                 {"layout", params.layout_signature()},
                                 {"values", params.values().size()},
                                 {"state", params.state().size()},
                                 {"optimizer", meta.optimizer},
                                 {"optimizer_state", optimizer.state().size()},
                                 {"optimizer_steps", optimizer.step_count()},
                                 {"epochs_done", meta.counters.epochs_done},
                                 {"global_step", meta.counters.global_step}};
  const std::string text = header.dump();
  const std::string tmp = path + ".tmp";
  {
    Writer w(tmp, after_bytes);
    w.write(kMagic, kMagicLen);
    const std::uint64_t len = text.size();
    w.write(&len, sizeof len);
    w.write(text.data(), text.size());
    w.write(params.values().data(), params.values().size_bytes());
    w.write(params.state().data(), params.state().size_bytes());
    w.write(optimizer.state().data(), optimizer.state().size_bytes());
    w.finish();
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw_parameter(ErrorKind::runtime, "checkpoint", path + ": cannot rename " + tmp + " into place (" + std::strerror(errno) + ")");
  }
  fsync_folder(path);
}

CheckpointMeta load_checkpoint(const std::string& path, const std::string& model, nn::ParameterSet& params,
                               optim::Optimizer& optimizer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_parameter(ErrorKind::input, "resume", path + ": cannot open the checkpoint; check the path");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bad = [&path](const std::string& what) { throw_parameter(ErrorKind::input, "resume", path + ": " + what); };
  if (bytes.size() < kMagicLen + 16 || bytes.compare(0, kMagicLen, kMagic) != 0) {
    bad("not a scalelab checkpoint (bad magic)");
  }
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
    header = nlohmann::json::parse(bytes.substr(kMagicLen + 8, len));
  } catch (const nlohmann::json::exception& e) {
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
  if (const auto f = header.find("format"); f == header.end() || !f->is_number_unsigned() || f->get<std::uint64_t>() != kFormat) {
    bad("checkpoint format " + (f == header.end() ? std::string("(none)") : f->dump()) + " is not " + std::to_string(kFormat));
  }
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
  const auto optimizer_steps = static_cast<std::int64_t>(count("optimizer_steps"));
  const CheckpointCounters counters{static_cast<std::int64_t>(count("epochs_done")),
                                    static_cast<std::int64_t>(count("global_step"))};
  std::memcpy(params.values().data(), bytes.data() + body, nv);
  std::memcpy(params.state().data(), bytes.data() + body + nv, ns);
  std::memcpy(optimizer.state().data(), bytes.data() + body + nv + ns, no);
  optimizer.set_step_count(optimizer_steps);
  CheckpointMeta meta{ck_model, ck_opt, counters};
  return meta;
}

}  // namespace scalelab::train
