// Grading one submission (grade/grader.h).
#include "grade/grader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/process.h"
#include "grade/checks.h"
#include "grade/sandbox.h"

namespace scalelab::grade {
namespace fs = std::filesystem;
namespace {

// The grader's build of every submission: only the sources are the student's.
constexpr const char* kCMakeLists = R"(# Written by scalelab grade: the submission's sources built with fixed flags.
cmake_minimum_required(VERSION 3.25)
project(submission LANGUAGES CXX)
find_package(scalelab REQUIRED)
file(GLOB_RECURSE sources CONFIGURE_DEPENDS src/*.cpp src/*.cc src/*.cxx)
add_executable(train ${sources})
target_compile_features(train PRIVATE cxx_std_20)
target_include_directories(train PRIVATE src)
target_link_libraries(train PRIVATE scalelab::scalelab)
)";

constexpr std::uintmax_t kMaxFileBytes = 8u << 20;

bool is_source(const fs::path& p) {
  static const std::set<std::string> kinds = {".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".hxx", ".inc", ".ipp"};
  return kinds.count(p.extension().string()) > 0;
}

struct Copied {
  int cpp = 0;                         // .cpp files that came along
  std::vector<std::string> left_out;   // sources not copied, each with why ("src/big.h: over 8 MiB")
};

// Copies the submission's source files (not its build folders, hidden folders or build files)
// into dest. A source file over 8 MiB or a symbolic link is left out (a link could reach the
// grader's own files), and said so: the build's error would not say why the file is missing.
Copied copy_sources(const fs::path& from, const fs::path& dest) {
  Copied c;
  fs::create_directories(dest);
  for (auto it = fs::recursive_directory_iterator(from, fs::directory_options::skip_permission_denied); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = fs::relative(it->path(), from);
    const std::string name = it->path().filename().string();
    if (it->is_directory() && !it->is_symlink()) {
      if (name.rfind('.', 0) == 0 || name.rfind("build", 0) == 0) it.disable_recursion_pending();
      continue;
    }
    if (!is_source(it->path())) continue;
    if (it->is_symlink()) {
      c.left_out.push_back(rel.string() + ": a symbolic link; put the file itself in the submission");
      continue;
    }
    if (!it->is_regular_file()) continue;
    if (it->file_size() > kMaxFileBytes) {
      c.left_out.push_back(rel.string() + ": over 8 MiB; generate large tables at run time instead");
      continue;
    }
    fs::create_directories((dest / rel).parent_path());
    fs::copy_file(it->path(), dest / rel, fs::copy_options::overwrite_existing);
    const std::string ext = it->path().extension().string();
    if (ext == ".cpp" || ext == ".cc" || ext == ".cxx") ++c.cpp;
  }
  return c;
}

std::string first_errors(const std::string& log) {
  std::istringstream in(log);
  std::string out;
  int n = 0;
  for (std::string l; std::getline(in, l) && n < 3;) {
    if (l.find("error") != std::string::npos || l.find("Error") != std::string::npos) {
      out += (out.empty() ? "" : " | ") + l;
      ++n;
    }
  }
  if (out.empty()) {
    std::vector<std::string> lines;
    std::istringstream again(log);
    for (std::string l; std::getline(again, l);) lines.push_back(l);
    for (std::size_t i = lines.size() > 3 ? lines.size() - 3 : 0; i < lines.size(); ++i) out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

std::string number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

// A file's identity and state, to tell whether something wrote it.
struct FileState {
  bool exists = false;
  struct stat st {};
};

FileState state_of(const std::string& path) {
  FileState s;
  s.exists = !path.empty() && ::stat(path.c_str(), &s.st) == 0;
  return s;
}

bool same_state(const FileState& a, const FileState& b) {
  if (a.exists != b.exists) return false;
  if (!a.exists) return true;
  return a.st.st_ino == b.st.st_ino && a.st.st_size == b.st.st_size && a.st.st_mtim.tv_sec == b.st.st_mtim.tv_sec &&
         a.st.st_mtim.tv_nsec == b.st.st_mtim.tv_nsec;
}

// Each rank enters its own folder (rank-R, R from Open MPI's or a PMI launcher's environment)
// before the program starts, so the files it writes land where the grader can tell them apart.
constexpr const char* kEnterRankFolder = R"(cd "rank-${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" && exec "$0" "$@")";

// The regular files under `dir`, relative to it, in order.
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) out.push_back(fs::relative(it->path(), dir, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_descriptor(int fd) {
  std::string text;
  char buf[65536];
  off_t at = 0;
  for (ssize_t n; (n = ::pread(fd, buf, sizeof buf, at)) > 0; at += n) text.append(buf, static_cast<std::size_t>(n));
  return text;
}

}  // namespace

void check_options(const GradeOptions& o, bool with_submission) {
  std::error_code ec;
  if (with_submission && o.submission.empty()) throw_parameter(ErrorKind::usage, "submission", "missing: give the folder holding the program's sources");
  if (with_submission && !fs::is_directory(o.submission, ec)) {
    throw_parameter(ErrorKind::input, "submission", o.submission + ": not a folder: give the folder holding the program's train.cpp");
  }
  if (o.ranks.empty()) throw_parameter(ErrorKind::usage, "ranks", "is empty: give rank counts such as 1,2,3");
  std::set<int> seen;
  for (int n : o.ranks) {
    if (n < 1 || n > 64) throw_parameter(ErrorKind::usage, "ranks", std::to_string(n) + ": each rank count must be 1 to 64");
    if (!seen.insert(n).second) throw_parameter(ErrorKind::usage, "ranks", std::to_string(n) + " given twice: list each rank count once");
  }
  if (!(o.time_limit > 0 && o.time_limit <= 86400)) {
    throw_parameter(ErrorKind::usage, "time_limit", number(o.time_limit) + ": give the seconds per run, more than 0 and at most 86400");
  }
  // The upper bound (1 TiB) is beyond any grading machine, and far below where MiB * 2^20 would
  // overflow the byte count handed to setrlimit (which then wraps to a limit of almost nothing).
  constexpr long kMaxMiB = 1L << 20;
  if ((o.memory_limit != 0 && o.memory_limit < 256) || o.memory_limit > kMaxMiB) {
    throw_parameter(ErrorKind::usage, "memory_limit", std::to_string(o.memory_limit) +
                                                          ": give 256 to " + std::to_string(kMaxMiB) +
                                                          " MiB of address space per process (MPI ranks need 256), or 0 for no limit");
  }
  if ((o.disk_limit != 0 && o.disk_limit < 16) || o.disk_limit > kMaxMiB) {
    throw_parameter(ErrorKind::usage, "disk_limit", std::to_string(o.disk_limit) + ": give 16 to " + std::to_string(kMaxMiB) +
                                                        " MiB (a run writes its logs and trace), or 0 for no limit");
  }
  if (!(o.target > 0 && o.target <= 1)) throw_parameter(ErrorKind::usage, "target", number(o.target) + ": an accuracy is more than 0 and at most 1");
  if (with_submission) {
    bool any = false;
    for (auto it = fs::recursive_directory_iterator(o.submission, fs::directory_options::skip_permission_denied, ec);
         !any && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      const std::string ext = it->path().extension().string();
      any = it->is_regular_file() && (ext == ".cpp" || ext == ".cc" || ext == ".cxx");
    }
    if (!any) throw_parameter(ErrorKind::input, "submission", o.submission + ": no .cpp file in it: give the folder holding the program's train.cpp");
  }
}

std::string built_source_dir() { return SCALELAB_SOURCE_DIR; }

namespace {

std::string check_prefix(const std::string& prefix) {
  if (prefix.empty()) {
    throw_parameter(ErrorKind::usage, "prefix", "not given, and no installed scalelab was found beside this one: install one "
                                                "(cmake --install BUILD --prefix DIR) and name that folder");
  }
  std::error_code ec;
  const fs::path config = fs::path(prefix) / "lib" / "cmake" / "scalelab" / "scalelabConfig.cmake";
  if (!fs::is_regular_file(config, ec)) {
    throw_parameter(ErrorKind::input, "prefix", prefix + ": no scalelab installed there (" + config.string() +
                                                    " is missing): install one with cmake --install BUILD --prefix " + prefix);
  }
  return fs::absolute(prefix).lexically_normal().string();
}

// The scratch folder: $TMPDIR (or /tmp)/scalelab-grade-XXXXXX, private to this user.
fs::path make_work_dir() {
  const char* t = std::getenv("TMPDIR");
  std::string templ = std::string(t && *t ? t : "/tmp") + "/scalelab-grade-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) throw_runtime("cannot create a scratch folder " + templ + ": " + std::strerror(errno) + ": set TMPDIR to a writable folder");
  return templ;
}

}  // namespace

std::string default_prefix() {
  std::error_code ec;
  auto installed = [&](const fs::path& p) { return fs::is_regular_file(p / "lib" / "cmake" / "scalelab" / "scalelabConfig.cmake", ec); };
  try {
    const fs::path beside = fs::path(this_executable()).parent_path().parent_path();
    if (installed(beside)) return beside.string();
  } catch (const Error&) {
  }
#ifdef SCALELAB_INSTALL_PREFIX
  if (installed(SCALELAB_INSTALL_PREFIX)) return SCALELAB_INSTALL_PREFIX;
#endif
  return "";
}

GradeReport grade_submission(const GradeOptions& options, const std::function<void(const std::string&)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  check_options(options);
  const std::string prefix = check_prefix(options.prefix.empty() ? default_prefix() : options.prefix);

  const fs::path work = make_work_dir();
  const fs::path scratch = work / "submission";  // what the program sees
  const fs::path grader = work / "grader";       // the grader's own files: build logs, run outputs
  fs::create_directories(grader);
  fs::permissions(grader, fs::perms::owner_all, fs::perm_options::replace);
  const Copied copied = copy_sources(options.submission, scratch / "src");
  if (copied.cpp == 0) {
    fs::remove_all(work);
    throw_parameter(ErrorKind::input, "submission",
                    options.submission + ": no .cpp file in it" +
                        (copied.left_out.empty() ? std::string() : " that the grader copies (" + copied.left_out.front() + ")") +
                        ": give the folder holding the program's train.cpp");
  }
  {
    std::ofstream(scratch / "CMakeLists.txt") << kCMakeLists;
  }

  // Watch results.json: the grader's own, and any the program could leave in its folders.
  const std::string gradescope = "/autograder/results/results.json";
  const FileState out_before = state_of(options.results_path), gradescope_before = state_of(gradescope);

  // Build.
  BuildResult build;
  Limits build_limits{.wall_s = std::max(300.0, options.time_limit), .memory_mib = 0, .isolate_network = options.isolate_network,
                      .disk_mib = 0};
  say("grade: building " + options.submission + " against " + prefix);
  {
    const RunOutcome configure = run_limited({"cmake", "-S", scratch.string(), "-B", (scratch / "build").string(),
                                              "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"},
                                             scratch.string(), {}, build_limits, (grader / "configure.log").string());
    RunOutcome made = configure;
    if (configure.ok()) {
      made = run_limited({"cmake", "--build", (scratch / "build").string(), "-j2"}, scratch.string(), {}, build_limits,
                         (grader / "build.log").string());
    }
    build.ok = made.ok() && fs::is_regular_file(scratch / "build" / "train");
    build.seconds = configure.seconds + (configure.ok() ? made.seconds : 0);
    if (!build.ok) {
      // The first errors are at the log's start: its tail (made.output) holds the last ones.
      const fs::path log = grader / (configure.ok() ? "build.log" : "configure.log");
      std::ifstream in(log);
      std::string head(64 * 1024, '\0');
      in.read(head.data(), static_cast<std::streamsize>(head.size()));
      head.resize(static_cast<std::size_t>(in.gcount()));
      build.seen = (made.timed_out ? made.ending() + ": " : "") + first_errors(head.empty() ? made.output : head);
    }
  }

  // Run at 1 rank and at each graded count.
  std::vector<int> counts{1};
  for (int n : options.ranks) {
    if (n != 1) counts.push_back(n);
  }
  std::vector<RankRun> runs;
  const Limits limits{.wall_s = options.time_limit, .memory_mib = options.memory_limit, .isolate_network = options.isolate_network,
                      .disk_mib = options.disk_limit};
  LimitsInForce in_force;
  in_force.wall_s = options.time_limit;
  in_force.memory_mib = options.memory_limit;
  in_force.disk_mib = options.disk_limit;
  std::string run_lines;
  if (build.ok) {
    for (int n : counts) {
      const fs::path dir = scratch / ("run-" + std::to_string(n));
      for (int r = 0; r < n; ++r) fs::create_directories(dir / ("rank-" + std::to_string(r)));
      const fs::path trace_path = grader / ("trace-" + std::to_string(n) + ".jsonl");
      const int fd = ::open(trace_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) throw_runtime("cannot create the trace file " + trace_path.string() + ": " + std::strerror(errno));
      ::unlink(trace_path.c_str());  // reachable only through the descriptor from here on
      std::vector<std::string> argv{options.mpiexec, "-n", std::to_string(n), "--oversubscribe", "--bind-to", "none"};
      if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
      argv.insert(argv.end(), {"-x", "SCALELAB_TRACE_FD", "/bin/sh", "-c", kEnterRankFolder, (scratch / "build" / "train").string(), "out"});
      say("grade: running at " + std::to_string(n) + (n == 1 ? " rank" : " ranks"));
      RankRun run;
      run.ranks = n;
      run.outcome = run_limited(argv, dir.string(), {{"SCALELAB_TRACE_FD", std::to_string(::getpid()) + ":" + std::to_string(fd)}},
                                limits, (grader / ("run-" + std::to_string(n) + ".log")).string());
      run.trace = read_trace(read_descriptor(fd), n);
      ::close(fd);
      for (int r = 0; r < n; ++r) run.files.push_back(files_under(dir / ("rank-" + std::to_string(r))));
      in_force = run.outcome.limits;
      char line[256];
      std::snprintf(line, sizeof line, "run at %d rank%s: %s in %.1f s\n", n, n == 1 ? "" : "s", run.outcome.ending().c_str(), run.outcome.seconds);
      run_lines += line;
      runs.push_back(std::move(run));
    }
  }

  // Integrity: results.json left alone.
  Integrity integrity;
  if (!same_state(out_before, state_of(options.results_path))) integrity.violations.push_back("the program wrote " + options.results_path);
  if (!same_state(gradescope_before, state_of(gradescope))) integrity.violations.push_back("the program wrote " + gradescope);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(scratch, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() == "results.json") {
      integrity.violations.push_back("the program wrote results.json (" + fs::relative(it->path(), scratch).string() +
                                     " in its folder): only the grader writes results.json");
    }
  }

  GradeReport report;
  report.tests = score_runs(build, runs, {.target = options.target, .ranks = options.ranks}, integrity);
  report.integrity_ok = report.tests.back().passed;

  // The leaderboard: time to accuracy at the largest graded rank count that reached it.
  std::vector<int> graded = options.ranks;
  std::sort(graded.rbegin(), graded.rend());
  for (int n : graded) {
    const auto it = std::find_if(runs.begin(), runs.end(), [n](const RankRun& r) { return r.ranks == n; });
    if (it == runs.end() || !it->outcome.ok()) continue;
    const double acc = traced_accuracy(it->trace);
    if (acc < options.target) continue;
    report.leaderboard.push_back({.name = "Time to accuracy at " + std::to_string(n) + " ranks (s)", .value = it->outcome.seconds, .ascending = true});
    report.leaderboard.push_back({.name = "Accuracy at " + std::to_string(n) + " ranks", .value = acc, .ascending = false});
    break;
  }

  std::ostringstream out;
  out << "scalelab grade " << SCALELAB_VERSION << ": " << options.submission << " at ranks ";
  for (std::size_t i = 0; i < options.ranks.size(); ++i) out << (i ? "," : "") << options.ranks[i];
  // Only a run learns which limits the kernel granted (the network namespace may be refused).
  if (runs.empty()) out << "\nlimits in force: none applied (nothing ran)\n";
  else out << "\nlimits in force: " << in_force.text() << "\n";
  for (const std::string& f : copied.left_out) out << "left out of the build: " << f << "\n";
  out << (build.ok ? "built in " + std::to_string(static_cast<int>(build.seconds)) + " s\n" : "the build failed\n") << run_lines;
  if (!report.integrity_ok) out << "score 0: " << report.tests.back().seen << "\n";
  if (options.keep) {
    out << "scratch folder kept: " << work.string() << "\n";
  } else {
    fs::remove_all(work, ec);
  }
  report.output = out.str();
  report.execution_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace scalelab::grade
