// `scalelab run -np N [-H host:slots,...] [--dry-run] -- <subcommand ...>`: a launcher in the
// spirit of horovodrun. It builds the mpirun command a student would otherwise have to know
//   mpirun -np N --bind-to none [--oversubscribe] [--allow-run-as-root] [--host H --mca oob_tcp_keepalive_* ...] <this scalelab> <subcommand ...>
// (--oversubscribe when N exceeds the physical cores, or the slots of -H; --allow-run-as-root
// when run as root), prints it on stderr as "$ mpirun ...", runs it and returns its exit code.
// mpirun's standard error passes through MpirunOutput (mpirun_output.h): a rank's one-line error
// is not followed by Open MPI's banners about non-zero exit codes.
// SIGTERM, SIGINT and SIGHUP are passed on to mpirun (which ends the ranks); run waits for it and
// exits with 128 + the signal.
// --dry-run prints the command on stdout and runs nothing.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/machine_info.h"
#include "core/process.h"
#include "core/size_parse.h"
#include "core/text.h"
#include "mpirun_output.h"

namespace scalelab::cli {
namespace {

constexpr const char* kUsage =
    "scalelab run -np N [-H host:slots,...] [--dry-run] -- <scalelab subcommand and its options>\n\n"
    "Launches N ranks of this scalelab through Open MPI's mpirun and prints the command it runs.\n"
    "  -np N, --np N      number of ranks (-n N is a deprecated spelling: -n is bench's --iters)\n"
    "  -H, --host LIST    hosts and slots, e.g. node1:4,node2:4 (passed to mpirun as --host)\n"
    "  --dry-run          print the mpirun command and stop\n\n"
    "example: scalelab run -np 2 -- bench allreduce -b 1K -e 16M -f 4";

struct RunArgs {
  int np = 0;
  std::string hosts;
  bool dry_run = false;
  std::vector<std::string> command;
};

std::optional<RunArgs> parse_run(const Args& args) {
  RunArgs r;
  std::string np_text;  // -np as given, for errors
  bool hosts_given = false;
  const auto& a = args.argv;
  std::size_t i = 0;
  const auto value = [&](const std::string& flag) -> std::string {
    if (i + 1 >= a.size() || a[i + 1] == "--") usage_error(args, flag + " needs a value before --");
    return a[++i];
  };
  for (; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (s == "--") {
      r.command.assign(a.begin() + static_cast<std::ptrdiff_t>(i) + 1, a.end());
      break;
    }
    if (s == "-h" || s == "--help") {
      std::cout << "usage: " << kUsage << std::endl;
      return std::nullopt;
    }
    if (s == "-n") warn_deprecated(args.name, "-n", "-np");  // -n is bench's --iters
    if (s == "-np" || s == "-n" || s == "--np") {
      // Given twice, one would win silently, as every other command refuses to let happen.
      if (!np_text.empty()) usage_error(args, s + " given twice (" + np_text + " before); give the number of ranks once");
      np_text = value(s);
      const auto v = parse_int(np_text, "-np");
      if (v < 1) usage_error(args, "-np " + std::to_string(v) + ": give a number of ranks >= 1");
      r.np = static_cast<int>(std::min<std::int64_t>(v, limits::kMaxRanksAcrossHosts + 1));
    } else if (s == "-H" || s == "--host") {
      if (hosts_given) usage_error(args, s + " given twice; give every host in one list (-H a:2,b:2)");
      r.hosts = value(s);
      hosts_given = true;
      // mpirun would be handed an empty host name; name the list here instead.
      const std::vector<std::string> items = split_list(r.hosts);
      if (std::find(items.begin(), items.end(), std::string()) != items.end()) {
        usage_error(args, s + " " + r.hosts + ": an empty host (two commas, or one at an end); give hosts such as node1:4,node2:4");
      }
    } else if (s == "--dry-run") {
      r.dry_run = true;
    } else {
      usage_error(args, "unknown option '" + s + "' (the command to launch goes after --)");
    }
  }
  if (r.np == 0) usage_error(args, "give the number of ranks with -np N");
  // One machine runs a few ranks per hardware thread; a host list, up to a fixed bound.
  const int bound = r.hosts.empty() ? limits::max_local_ranks() : limits::kMaxRanksAcrossHosts;
  if (r.np > bound) {
    usage_error(args, "-np " + np_text + ": at most " + std::to_string(bound) +
                          (r.hosts.empty() ? " ranks on this machine (" + limits::machine_bound_basis(limits::kRanksPerHardwareThread) +
                                                 "; give hosts with -H for more)"
                                           : " ranks across hosts"));
  }
  if (r.command.empty()) usage_error(args, "give the command to launch after --, e.g. scalelab run -np 2 -- bench allreduce");
  if (r.command.front() == "run") usage_error(args, "the launched command cannot be 'run' itself");
  // These start their own mpirun, which Open MPI refuses inside another one.
  if (r.command.front() == "scale" || r.command.front() == "grade") {
    usage_error(args, "'" + r.command.front() + "' launches its own ranks; run 'scalelab " + r.command.front() +
                          " ...' without scalelab run");
  }
  // Checked here, once, rather than by every rank it would start.
  if (!is_scalelab_command(r.command.front())) {
    usage_error(args, "'" + r.command.front() + "' after -- is not a scalelab command; give one of scalelab's (train, bench, scale ...)");
  }
  // Each host as Open MPI reads it, NAME or NAME:SLOTS with SLOTS >= 1: an empty list, an empty
  // name or 0 slots would otherwise start the job on this machine alone.
  if (hosts_given) {
    const auto bad_host = [&](const std::string& h, const std::string& why) {
      usage_error(args, "-H " + r.hosts + ": '" + h + "' " + why + ", e.g. -H node1:2,node2:2");
    };
    if (r.hosts.empty()) usage_error(args, "-H '': give host names with their slots, e.g. -H node1:2,node2:2");
    int named = 0;
    for (const std::string& h : split_list(r.hosts)) {
      if (h.empty()) continue;  // "a:2,b:2," as host_slots reads it
      ++named;
      const auto colon = h.rfind(':');
      const std::string name = h.substr(0, colon);
      if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != std::string::npos) {
        bad_host(h, "is not a host name: give names of letters, digits, '.', '-' and '_' with their slots");
      }
      if (colon != std::string::npos) {
        const std::string slots = h.substr(colon + 1);
        std::int64_t n = 0;
        try {
          n = parse_int(slots, "-H slots");
        } catch (const Error&) {
          n = 0;
        }
        if (n < 1) bad_host(h, "has slots '" + slots + "': give a whole number of at least 1 after the colon");
      }
    }
    if (named == 0) usage_error(args, "-H " + r.hosts + ": no host in it; give host names with their slots, e.g. -H node1:2,node2:2");
  }
  return r;
}

// Slots of an Open MPI host list: "a:4,b:2" -> 6; a host without ":n" has one slot.
int host_slots(const std::string& hosts) {
  int total = 0;
  for (const auto& h : split_list(hosts)) {
    if (h.empty()) continue;
    const auto colon = h.rfind(':');
    total += colon == std::string::npos ? 1 : static_cast<int>(parse_int(h.substr(colon + 1), "-H slots"));
  }
  return total;
}

// Physical cores (what Open MPI counts as slots by default): distinct (package, core) pairs of
// /proc/cpuinfo, or the logical CPU count where that file says nothing.
int physical_cores() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string package, line;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "physical id") package = val;
    if (key == "core id") cores.insert({package, val});
  }
  const int logical = read_machine_info().logical_cpus;
  return cores.empty() ? logical : static_cast<int>(cores.size());
}

// Shell quoting for display, so the printed line can be pasted back into a shell.
std::string shell_quoted(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") ==
                        std::string::npos) {
    return s;
  }
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

int cmd_run(const Args& args) {
  const auto r = parse_run(args);
  if (!r) return 0;
  const std::string mpirun = find_in_path("mpirun");
  std::vector<std::string> cmd{mpirun.empty() ? "mpirun" : mpirun, "-np", std::to_string(r->np), "--bind-to", "none"};
  const int slots = r->hosts.empty() ? physical_cores() : host_slots(r->hosts);
  if (r->np > slots) cmd.push_back("--oversubscribe");
  if (geteuid() == 0) cmd.push_back("--allow-run-as-root");
  if (!r->hosts.empty()) {
    cmd.push_back("--host");
    cmd.push_back(r->hosts);
    // Across hosts, a lost host or link must end the job: without keepalives on Open MPI's control
    // connections (5 minutes idle by default, then 9 probes 20 s apart) mpirun waits on the lost
    // daemon for ever. With these it reports "lost communication with a remote daemon ... on node
    // <host>" and ends the job within about 30 s. An OMPI_MCA_ setting of the user's wins.
    for (const auto& [name, value] : {std::pair{"oob_tcp_keepalive_time", "10"}, std::pair{"oob_tcp_keepalive_intvl", "5"},
                                      std::pair{"oob_tcp_keepalive_probes", "3"}}) {
      if (std::getenv(("OMPI_MCA_" + std::string(name)).c_str()) != nullptr) continue;
      cmd.insert(cmd.end(), {"--mca", name, value});
    }
  }
  cmd.push_back(scalelab_binary());
  cmd.insert(cmd.end(), r->command.begin(), r->command.end());

  std::string shown = "$";
  for (const auto& part : cmd) {
    shown += ' ';
    shown += shell_quoted(part);
  }
  if (r->dry_run) {
    std::cout << shown << std::endl;
    return 0;
  }
  if (mpirun.empty()) {
    throw_runtime("scalelab run: mpirun not found in PATH; install Open MPI (Debian: apt-get install openmpi-bin)");
  }
  std::cerr << shown << std::endl;
  // The ranks' one-line errors without Open MPI's banners about non-zero exit codes (mpirun_output.h).
  MpirunOutput shown_errors(std::cerr);
  const int rc = run_process(cmd, "", /*forward_signals=*/true, nullptr,  // SIGTERM/SIGINT end mpirun and its ranks too
                             [&](const std::string& line) { shown_errors.line(line); });
  shown_errors.finish();
  // mpirun ends its ranks in silence when it is interrupted: say why the job stopped.
  if (rc > 128 && rc < 128 + 65) {
    std::cerr << "scalelab run: the job ended by signal " << rc - 128 << " (" << strsignal(rc - 128) << ")" << std::endl;
  }
  return rc;
}

}  // namespace scalelab::cli
