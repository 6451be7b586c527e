// Child processes and this program's own path, for every command that runs another program:
// the lab runner and `scalelab scale` / `calibrate` run scalelab commands, `scalelab run` runs
// mpirun, charts run gnuplot. The child inherits stdin, stdout and stderr, so its progress lines
// appear as it prints them (stderr may instead be handed, line by line, to a function: run's
// filter of mpirun's banners). (lib/monitor starts its child itself: it needs its own signal mask.)
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace scalelab {

// Runs argv[0] (a path) with argv, in `working_dir` when it is not empty; returns its exit
// code, or 128 + the signal that ended it. A program that cannot be started is a runtime error
// naming it. With SIGCHLD ignored the child's status is lost: a runtime error once it has ended
// (waitpid fails with ECHILD; nothing spins).
// With `forward_signals`, SIGTERM, SIGINT and SIGHUP received while the child runs are passed on
// to it (a launcher such as mpirun then ends its ranks); run_process waits for the child to end
// and returns 128 + the first such signal, as a shell would for a process that signal ended; and
// the child gets SIGTERM if this process dies, even by SIGKILL (Linux's parent-death signal).
// `forwarded`, where given, receives that signal (0 when none came): a child that a signal to
// this process ended, told from one that exited 128 + N on its own.
// `stderr_lines`, where given, receives the child's standard error line by line (without the
// newline; a last line without one too) instead of this process's standard error, called from a
// reader thread while the child runs; it stops reading once the child has ended and no more
// comes for 0.2 s (grandchildren that outlive it, holding the pipe, are not waited for).
int run_process(const std::vector<std::string>& argv, const std::string& working_dir = "",
                bool forward_signals = false, int* forwarded = nullptr,
                const std::function<void(const std::string& line)>& stderr_lines = {});

// The full path of the running executable (from /proc/self/exe); a runtime error if the kernel
// does not say.
[[nodiscard]] std::string this_executable();

// The scalelab binary, found one way everywhere: this executable when it is scalelab (a command
// running more scalelab commands: run, scale, calibrate); else $SCALELAB_BIN when set; else the
// `scalelab` beside this executable (the lab executables are built there). A usage error saying
// what to do when that is not an executable file.
[[nodiscard]] std::string scalelab_binary();

// The first executable `program` in $PATH (/usr/bin:/bin when unset), or "" when there is none.
[[nodiscard]] std::string find_in_path(const std::string& program);

}  // namespace scalelab
