// The behaviour trace's descriptor handling and line format (api/trace.h), on the local backend:
// SCALELAB_TRACE_FD as N and as PID:N, its one-line errors, seq numbering, start/end events,
// lines longer than a pipe's atomic write refused.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/trace.h"
#include "comm/local.h"
#include "scalelab/runtime.h"

namespace scalelab::api {
namespace {

struct EnvGuard {
  explicit EnvGuard(const std::string& v) { ::setenv("SCALELAB_TRACE_FD", v.c_str(), 1); }
  ~EnvGuard() { ::unsetenv("SCALELAB_TRACE_FD"); }
};

std::string open_error(const std::string& value) {
  EnvGuard env(value);
  std::string what = "no error";
  comm::run_local(1, [&](comm::Communicator& c) {
    try {
      open_trace(c);
      close_trace();
    } catch (const ApiError& e) {
      what = e.what();
      EXPECT_EQ(e.exit_code(), 2) << what;
    }
  });
  return what;
}

std::vector<nlohmann::json> read_lines(int fd) {
  std::string all;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) all.append(buf, static_cast<std::size_t>(n));
  std::vector<nlohmann::json> out;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

const std::string kFix = ": set it to a descriptor open for writing (N, or PID:N for process PID's descriptor N), or unset it";

TEST(ApiTrace, BadDescriptorsAreOneLineErrors) {
  EXPECT_EQ(open_error("abc"), "SCALELAB_TRACE_FD=abc: not a descriptor number" + kFix);
  EXPECT_EQ(open_error("987"), "SCALELAB_TRACE_FD=987: descriptor 987 is not open in this process" + kFix);
  EXPECT_EQ(open_error("1:x"), "SCALELAB_TRACE_FD=1:x: not PID:N with two numbers" + kFix);
  EXPECT_EQ(open_error("1:2:3"), "SCALELAB_TRACE_FD=1:2:3: not PID:N with two numbers" + kFix);
  const std::string e = open_error(std::to_string(::getpid()) + ":987");
  EXPECT_EQ(e.rfind("SCALELAB_TRACE_FD=" + std::to_string(::getpid()) + ":987: cannot open /proc/", 0), 0u) << e;
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_EQ(open_error(std::to_string(p[0])),
            "SCALELAB_TRACE_FD=" + std::to_string(p[0]) + ": descriptor " + std::to_string(p[0]) + " is open for reading only" + kFix);
  ::close(p[0]);
  ::close(p[1]);
  EXPECT_FALSE(tracing());
}

TEST(ApiTrace, LinesCarrySeqRankAndEventThroughEitherForm) {
  for (bool through_proc : {false, true}) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    ASSERT_EQ(::fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    {
      EnvGuard env(through_proc ? std::to_string(::getpid()) + ":" + std::to_string(p[1]) : std::to_string(p[1]));
      comm::run_local(1, [&](comm::Communicator& c) {
        open_trace(c);
        EXPECT_TRUE(tracing());
        trace("step", {{"step", 1}, {"lr", 0.5}});
        EXPECT_THROW(trace("samples", {{"indices", std::vector<int>(1000, 123456)}}), ApiError) << "over 4096 bytes";
        close_trace();
        EXPECT_FALSE(tracing());
        trace("step", {{"step", 2}});  // after close: nothing
      });
    }
    ::close(p[1]);
    const std::vector<nlohmann::json> lines = read_lines(p[0]);
    ::close(p[0]);
    ASSERT_EQ(lines.size(), 3u) << (through_proc ? "PID:N" : "N");
    EXPECT_EQ(lines[0]["event"], "start");
    EXPECT_EQ(lines[0]["format"], "scalelab.trace/1");
    EXPECT_EQ(lines[0]["size"], 1);
    EXPECT_EQ(lines[1]["event"], "step");
    EXPECT_EQ(lines[1]["lr"], 0.5);
    EXPECT_EQ(lines[2]["event"], "end");
    for (std::size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i]["seq"], i);
      EXPECT_EQ(lines[i]["rank"], 0);
    }
  }
}

TEST(ApiTrace, FingerprintText) {
  EXPECT_EQ(fingerprint_text(0), "0000000000000000");
  EXPECT_EQ(fingerprint_text(0xfedcba9876543210ull), "fedcba9876543210");
}

}  // namespace
}  // namespace scalelab::api
