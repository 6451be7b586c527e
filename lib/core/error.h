// scalelab's one error type. Library code throws scalelab::Error; only main() turns it into an
// exit code: kind usage/input -> exit 2 (the user can fix the command or the file), runtime/comm
// -> exit 1. The message is one line that names the input, what was wrong and what to do.
//
// The library speaks in its own terms, never in the CLI's flags: an error about a parameter names
// it as the library does (`TrainConfig::batch_size` is "batch_size") through throw_parameter, and
// a command-line front end maps that name to its own option when it prints the error
// (apps/scalelab/flag_names.cpp). A program using the library directly reads the same line:
//   throw_parameter(ErrorKind::usage, "batch_size", "0: a batch needs at least one sample")
//   what():  "batch_size 0: a batch needs at least one sample"
//   scalelab train prints:  --batch-size 0: a batch needs at least one sample
// An error about several parameters at once (options that differ across ranks) is a list of
// clauses, each naming its parameter; what() joins them with "; " and a front end maps each name:
//   Error(ErrorKind::usage, {{"lr", "differs across ranks: ..."}, {"seed", "differs ..."}})
//   what():  "lr differs across ranks: ...; seed differs ..."
#pragma once
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace scalelab {

enum class ErrorKind {
  usage,    // a flag, a value, a combination of flags: fix the command line
  input,    // a file or dataset: malformed, missing, disagreeing with another
  runtime,  // the machine or a library failed (CUDA, NCCL, MPI, I/O)
  comm,     // another rank failed, disagreed or vanished
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  // An error about one parameter: what() is "<parameter> <detail>".
  Error(ErrorKind kind, std::string parameter, std::string detail)
      : std::runtime_error(joined(parameter, detail)), kind_(kind), parameter_(std::move(parameter)),
        detail_(std::move(detail)) {}
  // An error about several parameters: one (parameter, detail) clause each, at least one.
  Error(ErrorKind kind, std::vector<std::pair<std::string, std::string>> clauses)
      : Error(kind, clauses.at(0).first, clauses.at(0).second) {
    more_.assign(clauses.begin() + 1, clauses.end());
    whole_ = message_with([](const std::string& p) { return p; });
  }
  [[nodiscard]] const char* what() const noexcept override {
    return whole_.empty() ? std::runtime_error::what() : whole_.c_str();
  }
  [[nodiscard]] ErrorKind kind() const { return kind_; }
  // The library's name of the parameter at fault ("batch_size"), or empty.
  [[nodiscard]] const std::string& parameter() const { return parameter_; }
  // What follows the parameter's name in what() ("0: a batch needs ..."); empty without a parameter.
  [[nodiscard]] const std::string& detail() const { return detail_; }
  // The message with `name` in the parameter's place (what a front end prints with its flag);
  // what() when the error names no parameter.
  [[nodiscard]] std::string message_as(const std::string& name) const {
    return parameter_.empty() ? std::string(what()) : joined(name, detail_);
  }
  // The message with every parameter it names replaced by name_of(parameter): what a front end
  // prints for an error about one or several parameters.
  [[nodiscard]] std::string message_with(const std::function<std::string(const std::string&)>& name_of) const {
    if (parameter_.empty()) return std::runtime_error::what();
    std::string m = joined(name_of(parameter_), detail_);
    for (const auto& [p, d] : more_) m += "; " + joined(name_of(p), d);
    return m;
  }
  // The same error as another kind (its message, and the parameters it names).
  [[nodiscard]] Error as(ErrorKind kind) const {
    if (parameter_.empty()) return Error(kind, what());
    std::vector<std::pair<std::string, std::string>> clauses{{parameter_, detail_}};
    clauses.insert(clauses.end(), more_.begin(), more_.end());
    return Error(kind, std::move(clauses));
  }
  // The process exit code main() uses for this error.
  [[nodiscard]] int exit_code() const {
    return (kind_ == ErrorKind::usage || kind_ == ErrorKind::input) ? 2 : 1;
  }

 private:
  // "batch_size" + "0: ..." -> "batch_size 0: ..."; "dataset" + ": ..." -> "dataset: ...".
  static std::string joined(const std::string& name, const std::string& detail) {
    return name + (detail.empty() || detail[0] == ':' ? "" : " ") + detail;
  }
  ErrorKind kind_;
  std::string parameter_;
  std::string detail_;
  std::vector<std::pair<std::string, std::string>> more_;  // the clauses after the first
  std::string whole_;  // what() when there are several clauses
};

[[noreturn]] inline void throw_usage(const std::string& m) { throw Error(ErrorKind::usage, m); }
[[noreturn]] inline void throw_input(const std::string& m) { throw Error(ErrorKind::input, m); }
[[noreturn]] inline void throw_runtime(const std::string& m) { throw Error(ErrorKind::runtime, m); }
[[noreturn]] inline void throw_comm(const std::string& m) { throw Error(ErrorKind::comm, m); }
// An error about one parameter, named in the library's terms (see the top of this file).
[[noreturn]] inline void throw_parameter(ErrorKind kind, const std::string& parameter, const std::string& detail) {
  throw Error(kind, parameter, detail);
}

}  // namespace scalelab
