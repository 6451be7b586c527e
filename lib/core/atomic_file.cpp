// AtomicFile and write_file_atomically (core/atomic_file.h), over POSIX calls for fsync.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "core/file_check.h"
#include "core/output_path.h"

namespace scalelab {

AtomicFile::AtomicFile(std::string target, std::string parameter)
    : target_(resolved_output_path(target)), parameter_(std::move(parameter)) {
  std::error_code ec;
  if (std::filesystem::is_directory(target_, ec)) {
    fail(true, "is a directory; give a file name (e.g. " + (std::filesystem::path(target_) / "out").string() + ")");
  }
  // A device, FIFO or socket would be replaced by a regular file (as root: /dev/null itself).
  if (is_special_file(target_)) {
    fail(true, std::string(kSpecialFileWords) + ", and the output replaces its file whole; give the path of a regular file");
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

void AtomicFile::prepare() {
  if (fd_ < 0) return;  // prepared already
  if (::fsync(fd_) != 0) fail(false, std::string("fsync failed (") + std::strerror(errno) + "); nothing was replaced");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(false, std::string("close failed (") + std::strerror(errno) + "); nothing was replaced");
}

void AtomicFile::commit() {
  prepare();
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
