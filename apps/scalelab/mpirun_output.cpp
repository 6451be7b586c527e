// MpirunOutput (mpirun_output.h).
#include "mpirun_output.h"

#include <regex>

namespace scalelab::cli {
namespace {

bool is_dashes(const std::string& l) {
  return l.size() >= 20 && l.find_first_not_of('-') == std::string::npos;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

void MpirunOutput::line(const std::string& l) {
  if (is_dashes(l)) {
    banner_.push_back(l);
    if (in_banner_) {
      end_banner();
    } else {
      in_banner_ = true;
    }
    return;
  }
  if (in_banner_) {
    banner_.push_back(l);
    return;
  }
  if (l.rfind("error:", 0) == 0) saw_error_ = true;
  out_ << l << '\n' << std::flush;
}

void MpirunOutput::end_banner() {
  const std::string text = joined(banner_);
  banner_.clear();
  in_banner_ = false;
  // Open MPI 4.1's wording (orte's help-errmgr-base.txt and help-orterun.txt).
  if (text.find("Primary job") != std::string::npos && text.find("non-zero exit code") != std::string::npos) return;
  if (text.find("exited with non-zero status") != std::string::npos) {
    if (saw_error_) return;
    std::smatch rank, code;
    const bool named = std::regex_search(text, rank, std::regex(R"(Process name:\s*\[\[\d+,\d+\],(\d+)\])")) &&
                       std::regex_search(text, code, std::regex(R"(Exit code:\s*(\d+))"));
    if (named) {
      out_ << "scalelab run: rank " << rank[1] << " exited with code " << code[1] << " without an error message\n"
           << std::flush;
      return;
    }
  }
  out_ << text << std::flush;
}

void MpirunOutput::finish() {
  if (in_banner_) {
    out_ << joined(banner_) << std::flush;
    banner_.clear();
    in_banner_ = false;
  }
}

}  // namespace scalelab::cli
