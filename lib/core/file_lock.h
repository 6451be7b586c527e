// One holder at a time for a file or folder that two processes must not fill at once (a
// checkpoint, a lab's output folder): an advisory lock (flock) on a lock file, held for the
// holder's life. The lock file holds the holder's pid and is removed on release (a killed
// holder's stale file is harmless: the kernel dropped its lock). Taking a lock another process
// holds is a usage error naming `parameter`, the thing locked and that pid.
//
//   FileLock lock(path + ".lock", "checkpoint", path, "give each job its own checkpoint file");
#pragma once
#include <string>

namespace scalelab {

class FileLock {
 public:
  // `what` names the thing locked in errors ("ck.bin: in use by another job (pid 42); <fix>").
  FileLock(std::string lock_path, std::string parameter, const std::string& what, const std::string& fix);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace scalelab
