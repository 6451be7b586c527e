// FileLock (core/file_lock.h), over flock(2).
#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace scalelab {

FileLock::FileLock(std::string lock_path, std::string parameter, const std::string& what, const std::string& fix)
    : lock_path_(std::move(lock_path)) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw_parameter(ErrorKind::input, parameter,
                      what + ": cannot create its lock file " + lock_path_ + " (" + std::strerror(errno) +
                          "); check that the folder is writable");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      char text[32] = {};
      const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
      ::close(fd_);
      fd_ = -1;
      const std::string pid = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : "unknown";
      throw_parameter(ErrorKind::usage, parameter,
                      what + ": in use by another job (pid " + pid.substr(0, pid.find('\n')) + "); " + fix);
    }
    // The holder before us may have removed the file between our open and our lock: the lock
    // counts only on the file that is still at the path.
    struct stat held {}, now {};
    if (::fstat(fd_, &held) == 0 && ::stat(lock_path_.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
        held.st_dev == now.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw_parameter(ErrorKind::runtime, parameter, what + ": could not take the lock " + lock_path_);
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still holding it: a waiting process then retries on a new file
  ::close(fd_);
}

}  // namespace scalelab
