// A full disk for a test: `write` runs in a child process whose files may not grow past `bytes`
// (RLIMIT_FSIZE, SIGXFSZ ignored, so a write past it fails with EFBIG as one on a full disk
// fails), and the message of the scalelab::Error it threw comes back ("" when it threw none).
// The parent's own files and limits are untouched.
//
//   const std::string m = error_under_file_size_limit(4096, [&] { write_file_atomically(p, big, "json"); });
//   EXPECT_NE(m.find("write failed"), std::string::npos) << m;
#pragma once
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <functional>
#include <string>

#include "core/error.h"

namespace scalelab::testing_support {

inline std::string error_under_file_size_limit(std::size_t bytes, const std::function<void()>& write) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    ADD_FAILURE() << "pipe failed";
    return "";
  }
  const pid_t child = ::fork();
  if (child < 0) {
    ADD_FAILURE() << "fork failed";
    return "";
  }
  if (child == 0) {  // never returns into the test suite
    ::close(pipe_fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit small{bytes, bytes};
    ::setrlimit(RLIMIT_FSIZE, &small);
    std::string message;
    try {
      write();
    } catch (const Error& e) {
      message = e.what();
    } catch (...) {
      message = "(an exception other than scalelab::Error)";
    }
    (void)!::write(pipe_fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writing child did not end normally";
  return message;
}

}  // namespace scalelab::testing_support
