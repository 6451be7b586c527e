// Running a submitted program under limits, as its own process tree: the grader's one way of
// starting anything it did not write. The child gets its own session (process group), an
// address-space limit (setrlimit RLIMIT_AS, inherited by everything it starts), a network
// namespace of its own with only the loopback interface where the kernel allows it (so mpirun
// still reaches its ranks but nothing outside), and a wall-time limit: at the limit every process
// descended from it is killed (SIGKILL), found through the process table, since ranks may leave
// the process group; and a disk limit: no file it writes may pass it (setrlimit RLIMIT_FSIZE:
// SIGXFSZ), and the run's folder is measured every second, its whole tree killed once the folder
// holds more. stdout and stderr go to one file.
//
//   grade::Limits limits{.wall_s = 60, .memory_mib = 2048, .isolate_network = true};
//   grade::RunOutcome r = grade::run_limited({"mpirun", "-n", "2", "./train", "out"}, "run-2",
//                                            {{"SCALELAB_TRACE_FD", "123:9"}}, limits, "run-2.log");
//   if (r.timed_out) ...   // killed at r.limits.wall_s; r.limits says which limits were in force
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace scalelab::grade {

struct Limits {
  double wall_s = 60;           // the wall-time limit; the whole process tree is killed at it
  long memory_mib = 2048;       // RLIMIT_AS of every process, in MiB; 0: none
  bool isolate_network = true;  // a new network namespace (loopback only) where permitted
  long disk_mib = 1024;         // the most any file written, and the run's folder in all, may hold; 0: none
};

// The limits a run actually had: the network namespace may be refused by the kernel.
struct LimitsInForce {
  double wall_s = 0;
  long memory_mib = 0;            // 0: none
  bool network_isolated = false;
  std::string network_note;       // why not, when it was asked for and refused
  long disk_mib = 0;              // 0: none
  [[nodiscard]] std::string text() const;  // "wall time 60 s, memory 2048 MiB per process, no network"
};

struct RunOutcome {
  int exit_code = -1;      // the exit status when the child exited, else -1
  int signal = 0;          // the signal that ended the child, else 0
  bool timed_out = false;  // killed at the wall-time limit
  bool disk_full = false;  // killed when its folder passed the disk limit
  double seconds = 0;      // wall time from start to end (or to the kill)
  // The programs (names, each once) still running when the run was killed, or, after a run that
  // ended by itself, the ones it left running (killed then): a background process that holds
  // mpirun's output open keeps mpirun waiting until the limit.
  std::vector<std::string> left_running;
  std::string output;      // the last 64 KiB of stdout and stderr together
  LimitsInForce limits;
  [[nodiscard]] bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exit status 1", "killed by signal 11 (Segmentation fault)", "killed at the 60 s limit;
  // still running then: mpirun, sleep", "killed when its folder passed the 1024 MiB disk limit",
  // "exit status 0; it left running, killed then: sleep".
  [[nodiscard]] std::string ending() const;
};

// Runs argv (argv[0] found in $PATH when it has no '/') in `dir` with the grader's environment
// plus `env`, stdout and stderr into `output_file`, under `limits`. A program that cannot be
// started ends with exit status 127 and says why in its output. Throws a runtime error only when
// the grader itself cannot fork or create the output file.
RunOutcome run_limited(const std::vector<std::string>& argv, const std::string& dir,
                       const std::vector<std::pair<std::string, std::string>>& env, const Limits& limits,
                       const std::string& output_file);

}  // namespace scalelab::grade
