// AtomicFile and write_file_atomically (core/atomic_file.h), over POSIX calls for fsync.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/output_path.h"

namespace scalelab {

namespace {

// The file a write to `path` means: a symbolic link's target (so that the link stays a link and
// the file it names gets the bytes), else the path itself.
std::string resolved_target(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_symlink(path, ec)) return path;
  const std::filesystem::path real = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : real.string();
}

// Temporaries of `target` that writers killed mid-write left behind ("<target>.tmp.<pid>.<hex>"):
// removed when their process is gone from this machine and they are an hour old (a writer on
// another host of a shared folder is not visible here; an hour outlasts any write).
void remove_abandoned_temporaries(const std::string& target) {
  namespace fs = std::filesystem;
  const fs::path t(target);
  const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  const std::string prefix = t.filename().string() + ".tmp.";
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || rest.find_first_not_of("0123456789") != dot) continue;
    const long pid = std::stol(rest.substr(0, std::min<std::size_t>(dot, 9)));
    std::error_code time_ec;
    const auto written = fs::last_write_time(e.path(), time_ec);
    const bool old = !time_ec && now - written > std::chrono::hours(1);
    if (old && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove(e.path(), time_ec);
  }
}

}  // namespace

AtomicFile::AtomicFile(std::string target, std::string parameter)
    : target_(resolved_target(target)), parameter_(std::move(parameter)) {
  std::error_code ec;
  if (std::filesystem::is_directory(target_, ec)) {
    fail(true, "is a directory; give a file name (e.g. " + (std::filesystem::path(target_) / "out").string() + ")");
  }
  // A device, FIFO or socket would be replaced by a regular file (as root: /dev/null itself).
  if (std::filesystem::exists(target_, ec) && !std::filesystem::is_regular_file(target_, ec)) {
    fail(true, "is not a regular file (a device, FIFO or socket), and the output replaces its file whole; give the path "
               "of a regular file");
  }
  remove_abandoned_temporaries(target_);
  temp_ = unique_temp_name(target_);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    fail(true, std::string("cannot open for writing (") + std::strerror(errno) +
                   "); check that the folder exists and is writable");
  }
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!committed_ && !temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

void AtomicFile::fail(bool input, const std::string& what) {
  const int saved = errno;
  discard();
  errno = saved;
  const std::string detail = target_ + ": " + what;
  const ErrorKind kind = input ? ErrorKind::input : ErrorKind::runtime;
  if (parameter_.empty()) throw Error(kind, detail);
  throw_parameter(kind, parameter_, detail);
}

void AtomicFile::write(const void* data, std::size_t n) {
  const auto* b = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, b, std::min<std::size_t>(n, std::size_t{1} << 20));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(false, std::string("write failed (") + std::strerror(errno) + "); nothing was replaced");
    }
    b += w;
    n -= static_cast<std::size_t>(w);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail(false, std::string("fsync failed (") + std::strerror(errno) + "); nothing was replaced");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(false, std::string("close failed (") + std::strerror(errno) + "); nothing was replaced");
  if (std::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail(false, std::string("cannot rename the temporary file into place (") + std::strerror(errno) + ")");
  }
  committed_ = true;
  const std::filesystem::path p(target_);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomically(const std::string& path, const std::string& text, const std::string& parameter) {
  AtomicFile f(path, parameter);
  f.write(text.data(), text.size());
  f.commit();
}

}  // namespace scalelab
