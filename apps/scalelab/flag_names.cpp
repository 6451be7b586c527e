// The table of flag_names.h: library parameter -> CLI flag. Keep rows sorted by parameter.
#include "flag_names.h"

#include <utility>

namespace scalelab::cli {
namespace {

constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
    {"algorithm", "--algo"},
    {"batch_size", "--batch-size"},
    {"dataset", "--dataset"},
    {"device", "--device"},
};

}  // namespace

std::string flag_for(std::string_view parameter) {
  for (const auto& [name, flag] : kFlags) {
    if (name == parameter) return std::string(flag);
  }
  return "";
}

std::string cli_message(const Error& e) {
  if (e.parameter().empty()) return e.what();
  const std::string flag = flag_for(e.parameter());
  if (flag.empty()) return e.what();
  const std::string& d = e.detail();
  return flag + (d.empty() || d[0] == ':' ? "" : " ") + d;
}

}  // namespace scalelab::cli
