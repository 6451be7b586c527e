// What `scalelab run` (and calibrate, which launches its own ranks) shows of mpirun's standard
// error. Each rank already says in one line why it stopped ("error: --batch-size 0: ..."); Open
// MPI then adds two banners, framed by lines of dashes, saying that a process "returned a non-zero
// exit code" and which one was first. Those two are dropped: the rank's line is the message. Where
// no rank printed an "error:" line, the second banner becomes one line naming the rank and its
// exit code. Every other line and banner (a rank ended by a signal, a warning about the network)
// passes as it came.
//
//   MpirunOutput out(std::cerr);
//   run_process(cmd, "", true, nullptr, [&](const std::string& l) { out.line(l); });
//   out.finish();
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace scalelab::cli {

class MpirunOutput {
 public:
  explicit MpirunOutput(std::ostream& out) : out_(out) {}
  void line(const std::string& l);
  // A banner left open when the output ended is shown as it came.
  void finish();

 private:
  void end_banner();
  std::ostream& out_;
  std::vector<std::string> banner_;  // lines since an opening line of dashes
  bool in_banner_ = false;
  bool saw_error_ = false;           // a rank printed an "error:" line
};

}  // namespace scalelab::cli
