// Path checks of core/file_check.h.
#include "core/file_check.h"

#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace scalelab {
namespace {

bool is_folder(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

}  // namespace

void check_input_file(const std::string& path, const std::string& what, const std::string& parameter) {
  std::string detail;
  if (is_folder(path)) {
    detail = path + ": is a directory, not a " + what + "; give the file's path";
  } else if (is_special_file(path)) {
    detail = path + ": " + kSpecialFileWords + "; give the " + what + "'s path";
  } else {
    return;
  }
  if (parameter.empty()) throw_input(detail);
  throw_parameter(ErrorKind::input, parameter, detail);
}

bool is_special_file(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) && !std::filesystem::is_directory(st);
}

}  // namespace scalelab
