// scalelab's one error type. Library code throws scalelab::Error; only main() turns it into an
// exit code: kind usage/input -> exit 2 (the user can fix the command or the file), runtime/comm
// -> exit 1. The message is one line that names the input, what was wrong and what to do.
#pragma once
#include <stdexcept>
#include <string>

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
  [[nodiscard]] ErrorKind kind() const { return kind_; }
  // The process exit code main() uses for this error.
  [[nodiscard]] int exit_code() const {
    return (kind_ == ErrorKind::usage || kind_ == ErrorKind::input) ? 2 : 1;
  }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void throw_usage(const std::string& m) { throw Error(ErrorKind::usage, m); }
[[noreturn]] inline void throw_input(const std::string& m) { throw Error(ErrorKind::input, m); }
[[noreturn]] inline void throw_runtime(const std::string& m) { throw Error(ErrorKind::runtime, m); }
[[noreturn]] inline void throw_comm(const std::string& m) { throw Error(ErrorKind::comm, m); }

}  // namespace scalelab
