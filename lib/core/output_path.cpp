// check_output_file, prepare_output_folder, unique_temp_name (core/output_path.h).
#include "core/output_path.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "core/file_check.h"

namespace scalelab {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const std::string& parameter, const std::string& path, const std::string& why) {
  throw_parameter(ErrorKind::input, parameter, path + ": " + why);
}

// Creates and removes a probe file in `folder`; the errno of a failed creation, or 0.
int probe_folder(const fs::path& folder) {
  const fs::path probe = unique_temp_name((folder / ".scalelab-write-test").string());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return errno;
  ::close(fd);
  ::unlink(probe.c_str());
  return 0;
}

}  // namespace

std::string unique_temp_name(const std::string& path) {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return fmt::format("{}.tmp.{}.{:08x}", path, ::getpid(), static_cast<std::uint32_t>(gen()));
}

void remove_abandoned_temporaries(const std::string& target) {
  const fs::path t(target);
  const fs::path dir = t.has_parent_path() ? t.parent_path() : fs::path(".");
  const std::string prefix = t.filename().string() + ".tmp.";  // unique_temp_name's "<path>.tmp.<pid>.<hex>"
  const auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || dot > 9 || rest.find_first_not_of("0123456789") != dot) continue;
    const long pid = std::stol(rest.substr(0, dot));
    std::error_code time_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    const bool old = !time_ec && now - written > std::chrono::hours(1);
    if (old && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove(it->path(), time_ec);
  }
}

std::string resolved_output_path(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  const fs::path real = fs::weakly_canonical(path, ec);
  return ec ? path : real.string();
}

void check_output_file(const std::string& parameter, const std::string& path) {
  if (path.empty()) return;
  std::error_code ec;
  const fs::path p(resolved_output_path(path));
  // Before the folder probe: /dev/null is refused as a device for every user, not as a folder
  // where only root may create files.
  if (is_special_file(p.string())) {
    bad(parameter, path, std::string(kSpecialFileWords) + ", and the output replaces its file whole; give the path of a regular file");
  }
  if (fs::is_directory(p, ec)) bad(parameter, path, "is a directory; give a file name (e.g. " + (p / "out").string() + ")");
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::exists(folder, ec)) bad(parameter, path, "the folder " + folder.string() + " does not exist; create it or give another path");
  if (!fs::is_directory(folder, ec)) bad(parameter, path, folder.string() + " is not a folder; give another path");
  if (const int err = probe_folder(folder); err != 0) {
    bad(parameter, path, "cannot create files in " + folder.string() + " (" + std::strerror(err) + "); give a writable path");
  }
  if (fs::exists(p, ec)) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd < 0) bad(parameter, path, std::string("cannot be replaced (") + std::strerror(errno) + "); give another path");
    ::close(fd);
  }
}

void prepare_output_folder(const std::string& parameter, const std::string& path) {
  if (path.empty()) bad(parameter, path, "give a folder");
  std::error_code ec;
  const fs::path p(path);
  if (fs::exists(p, ec) && !fs::is_directory(p, ec)) bad(parameter, path, "is a file, not a folder; give a folder");
  fs::create_directories(p, ec);
  if (ec) bad(parameter, path, "cannot create the folder (" + ec.message() + "); give a writable path");
  if (const int err = probe_folder(p); err != 0) {
    bad(parameter, path, std::string("cannot create files in the folder (") + std::strerror(err) + "); give a writable path");
  }
}

}  // namespace scalelab
