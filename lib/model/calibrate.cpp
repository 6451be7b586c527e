// Calibration measurements (see calibrate.h).
#include "model/calibrate.h"

#include <malloc.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "collectives/algorithm.h"
#include "comm/node_barrier.h"
#include "comm/reduce.h"
#include "core/error.h"
#include "core/stats.h"
#include "core/timer.h"

namespace scalelab::model {

namespace {

constexpr std::size_t kPage = 4096;

// A large region touched once up front, so every measurement reuses mapped pages.
struct Region {
  explicit Region(std::size_t bytes) : data(bytes) { std::memset(data.data(), 1, bytes); }
  std::vector<unsigned char> data;
  [[nodiscard]] unsigned char* at(std::size_t off) { return data.data() + off; }
};

// The benchmark's own protocol (lib/bench/runner.h): a barrier before every call, each call
// timed alone, the slower rank's time per call, the median over calls. Medians of single calls
// shrug off the occasional call that waited for a core; means of batches do not.
// `prepare(i)`, when given, runs before each call's barrier, untimed.
template <class Body, class Prepare = void (*)(int)>
double timed(comm::Communicator& comm, int calls, Body body, Prepare prepare = [](int) {}) {
  std::vector<double> mine(static_cast<std::size_t>(calls)), slowest(static_cast<std::size_t>(calls));
  prepare(0);
  body(0);  // warm up
  for (int i = 0; i < calls; ++i) {
    prepare(i);
    comm.barrier();
    const double t0 = now_seconds();
    body(i);
    mine[static_cast<std::size_t>(i)] = now_seconds() - t0;
  }
  comm.allreduce(mine.data(), slowest.data(), mine.size(), comm::DataType::f64, comm::ReduceOp::max);
  return median(slowest);
}

int calls_for(std::size_t bytes, bool quick) {
  const double target = quick ? 4e6 : 256e6;  // bytes moved per size
  return static_cast<int>(std::clamp(target / static_cast<double>(std::max<std::size_t>(bytes, 1)), quick ? 5.0 : 15.0,
                                     quick ? 50.0 : 400.0));
}

std::string mpi_library() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, static_cast<std::size_t>(len));
  const auto comma = s.find(',');
  return comma == std::string::npos ? s : s.substr(0, comma);
}

// Ordinary stores over `bytes` at `p`, as an algorithm's reduction or copy leaves its lines in its
// core's cache (memset may use string stores, which place lines differently).
void scribble(unsigned char* p, std::size_t bytes, int salt) {
  auto* words = reinterpret_cast<float*>(p);
  for (std::size_t k = 0; k < bytes / sizeof(float); ++k) words[k] = static_cast<float>(salt + static_cast<int>(k & 1023));
}

// A cache level's size from sysfs (index2: L2, index3: L3), else sysconf's, else `fallback`.
double cache_bytes(int index, long sysconf_value, double fallback) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
  std::string text;
  if (in >> text && !text.empty()) {
    double v = std::stod(text);
    if (text.back() == 'K') v *= 1024;
    if (text.back() == 'M') v *= 1024 * 1024;
    return v;
  }
  return sysconf_value > 0 ? static_cast<double>(sysconf_value) : fallback;
}

}  // namespace

double measure_flag_round(comm::Communicator& comm, bool quick) {
  comm::NodeMemory* node = comm.node_memory(4096);
  if (node == nullptr || node->local_size() != comm.size()) return 0.0;
  // Rounds of comm::NodeBarrier through a page of node memory, 200 rounds per timed call.
  comm::NodeBarrier flags(*node);
  constexpr int kRounds = 200;
  return timed(comm, quick ? 20 : 200, [&](int) {
           for (int k = 0; k < kRounds; ++k) flags.arrive_and_wait();
         }) / kRounds;
}

Profile calibrate(comm::Communicator& comm, const CalibrateOptions& o) {
  if (comm.size() != 2) {
    throw_usage("scalelab calibrate: needs exactly 2 ranks (it measures one pair), got " + std::to_string(comm.size()) +
                "; run 'scalelab run -np 2 -- calibrate'");
  }
  auto say = [&](const std::string& line) {
    if (o.beat) o.beat();
    if (comm.rank() == 0 && o.progress) o.progress(line);
  };
  Profile p;
  p.ranks = 2;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.mpi_library = mpi_library();
  p.llc_bytes = cache_bytes(3, sysconf(_SC_LEVEL3_CACHE_SIZE), 32.0 * 1024 * 1024);
  p.l2_bytes = cache_bytes(2, sysconf(_SC_LEVEL2_CACHE_SIZE), 1024.0 * 1024);
  const int peer = 1 - comm.rank();
  const std::size_t max_bytes = o.quick ? (4u << 20) : (64u << 20);
  // Cold runs walk through a region of 4x the last-level cache (at least the largest size), at
  // most 1 GiB: a virtual machine may report its host's whole L3 (480 MiB on one build machine),
  // and three regions of 4x that would take 5.8 GB per rank and many seconds to touch.
  constexpr double kMaxPool = 1024.0 * 1024 * 1024;
  const std::size_t pool = std::max<std::size_t>(max_bytes, static_cast<std::size_t>(std::min(4 * p.llc_bytes, kMaxPool)));
  {
    char line[160];
    std::snprintf(line, sizeof line, "preparing 3 buffers of %zu MiB and one of %zu MiB per rank (last-level cache %.0f MiB)",
                  pool >> 20, max_bytes >> 20, p.llc_bytes / (1 << 20));
    say(line);
  }
  Region a(pool), b(pool), out(pool);
  Region scratch(max_bytes);  // the exchange-and-reduce step's receive buffer, reused as an algorithm's is

  // The flag round now and again after the tables (below): on a virtual machine the two cores can
  // be moved closer or farther apart while it measures, and every table then mixes two machines.
  p.shm_sync_start_s = measure_flag_round(comm, o.quick);

  std::vector<std::size_t> sizes;
  for (std::size_t s = 8; s <= max_bytes; s *= (s < 4096 ? 8 : 2)) sizes.push_back(s);
  auto offset = [&](std::size_t s, int i, bool cold) { return cold ? (static_cast<std::size_t>(i) * s) % (pool - s + 1) / kPage * kPage : 0; };

  for (bool cold : {false, true}) {
    SizeTable& msg = cold ? p.message_cold : p.message_hot;
    SizeTable& red = cold ? p.reduce_cold : p.reduce_hot;
    SizeTable& cpy = cold ? p.copy_cold : p.copy_hot;
    SizeTable& xr = cold ? p.exchange_reduce_cold : p.exchange_reduce_hot;
    for (std::size_t s : sizes) {
      const int calls = calls_for(s, o.quick);
      // In cache, what is sent has just been written by the sender, as an algorithm sends what it
      // has just reduced or received: the receiver reads it out of the other core's cache, not
      // out of its own, where the previous call left it.
      const double t_msg = timed(
          comm, calls,
          [&](int i) {
            const std::size_t off = offset(s, i, cold);
            comm.sendrecv(a.at(off), s, peer, b.at(off), s, peer, 0x5ca1);
          },
          [&](int i) {
            if (!cold) scribble(a.at(0), s, i);
          });
      const std::size_t n = std::max<std::size_t>(1, s / 4);
      const double t_red = timed(comm, calls, [&](int i) {
        const std::size_t off = offset(s, i, cold);
        comm::reduce_to(out.at(off), a.at(off), b.at(off), n, comm::DataType::f32, comm::ReduceOp::sum);
      });
      const double t_cpy = timed(comm, calls, [&](int i) {
        const std::size_t off = offset(s, i, cold);
        std::memcpy(out.at(off), a.at(off), s);
      });
      // A reduce-scatter step: the peer's s bytes into the scratch, then reduced with our own into
      // the output while they are still in cache. In cache, the output is what the peer read in
      // the previous call (a collective called again on the same buffers: its allgather phase
      // read it), so writing it first takes those lines back from the other core.
      const double t_xr = timed(
          comm, calls,
          [&](int i) {
            const std::size_t off = offset(s, i, cold);
            comm.sendrecv(a.at(off), s, peer, scratch.at(0), s, peer, 0x5ca3);
            comm::reduce_to(out.at(off), b.at(off), scratch.at(0), n, comm::DataType::f32, comm::ReduceOp::sum);
          },
          [&](int) {
            if (!cold) comm.sendrecv(out.at(0), s, peer, b.at(0), s, peer, 0x5ca4);
          });
      // In cache only: a copy into the output the peer has just read, as Open MPI's copy of the
      // input into the output finds what the previous call sent from it (Costs::reclaim). From
      // memory the peer's core no longer holds those lines.
      double t_cir = 0;
      if (!cold) {
        t_cir = timed(
            comm, calls, [&](int) { std::memcpy(out.at(0), a.at(0), s); },
            [&](int) { comm.sendrecv(out.at(0), s, peer, b.at(0), s, peer, 0x5ca5); });
        p.copy_into_read.bytes.push_back(static_cast<double>(s));
        p.copy_into_read.seconds.push_back(t_cir);
      }
      xr.bytes.push_back(static_cast<double>(s));
      xr.seconds.push_back(t_xr);
      msg.bytes.push_back(static_cast<double>(s));
      msg.seconds.push_back(t_msg);
      red.bytes.push_back(static_cast<double>(s));
      red.seconds.push_back(t_red);
      cpy.bytes.push_back(static_cast<double>(s));
      cpy.seconds.push_back(t_cpy);
      char line[240];
      const int used = std::snprintf(
          line, sizeof line, "%s %10zu B: exchange %9.2f us (%6.2f GB/s)  reduce %8.2f us  copy %8.2f us  exchange+reduce %9.2f us",
          cold ? "cold" : "hot ", s, t_msg * 1e6, static_cast<double>(s) / t_msg / 1e9, t_red * 1e6, t_cpy * 1e6, t_xr * 1e6);
      if (!cold && used > 0 && static_cast<std::size_t>(used) < sizeof line) {
        std::snprintf(line + used, sizeof line - static_cast<std::size_t>(used), "  copy into read %8.2f us", t_cir * 1e6);
      }
      say(line);
    }
  }

  // How long the peer keeps what it read (Costs::reclaim): the copy into lines the peer has just
  // read, as above at kReclaimProbeBytes, but with both ranks walking W bytes of other memory
  // between the read and the copy, as a collective works through its buffers; beside it the same
  // copy after the same walk with no read by the peer. Their difference falls to nothing once the
  // walk has pushed those lines out of the peer's core.
  {
    const auto probe = static_cast<std::size_t>(kReclaimProbeBytes);
    for (std::size_t w = probe; w <= std::min<std::size_t>(max_bytes, 16u << 20); w *= 2) {
      const int calls = calls_for(probe, o.quick);
      auto walk = [&](int i) { scribble(scratch.at(0), w, i); };
      const double t_read = timed(
          comm, calls, [&](int) { std::memcpy(out.at(0), a.at(0), probe); },
          [&](int i) {
            comm.sendrecv(out.at(0), probe, peer, b.at(0), probe, peer, 0x5ca6);
            walk(i);
          });
      const double t_plain = timed(
          comm, calls, [&](int) { std::memcpy(out.at(0), a.at(0), probe); },
          [&](int i) {
            comm.sendrecv(a.at(0), probe, peer, b.at(0), probe, peer, 0x5ca7);
            walk(i);
          });
      p.copy_into_read_walked.bytes.push_back(static_cast<double>(w));
      p.copy_into_read_walked.seconds.push_back(t_read);
      p.copy_walked.bytes.push_back(static_cast<double>(w));
      p.copy_walked.seconds.push_back(t_plain);
      char line[160];
      std::snprintf(line, sizeof line, "%zu KiB copy after a walk of %8zu KiB: into what the peer read %8.2f us, plain %8.2f us",
                    probe >> 10, w >> 10, t_read * 1e6, t_plain * 1e6);
      say(line);
    }
  }

  // The shared-memory allreduce's synchronisation (Costs::sync). This and the next are skipped
  // when the two ranks are on different nodes (no memory to share).
  p.shm_sync_s = measure_flag_round(comm, o.quick);
  const bool same_node = p.shm_sync_s > 0;
  if (same_node) {
    char line[120];
    std::snprintf(line, sizeof line, "shared-memory flag round between the 2 ranks: %.3f us", p.shm_sync_s * 1e6);
    say(line);
    if (!same_state(p.shm_sync_start_s, p.shm_sync_s)) {
      char warn[300];
      std::snprintf(warn, sizeof warn,
                    "warning: the flag round took %.3f us before the tables and %.3f us after them: this machine "
                    "changed state while it was measured; run 'scalelab calibrate' again",
                    p.shm_sync_start_s * 1e6, p.shm_sync_s * 1e6);
      say(warn);
    }
  }

  // The shared-memory allreduce's own step at one chunk or less (Costs::staged), hot and cold as
  // above: what its formula needs and the parts leave out (reading lines the other core has just
  // written, both cores at once).
  if (same_node) {
    const auto& shm = collectives::find_algorithm(collectives::Collective::allreduce, "shm");
    auto algo = shm.make();
    for (bool cold : {false, true}) {
      SizeTable& t = cold ? p.staged_cold : p.staged_hot;
      for (std::size_t s : sizes) {
        if (s > shm.segment_bytes) break;
        const std::size_t n = std::max<std::size_t>(1, s / 4);
        const double secs = timed(comm, calls_for(s, o.quick), [&](int i) {
          const std::size_t off = offset(s, i, cold);
          algo->run(comm, a.at(off), out.at(off), n, comm::DataType::f32, comm::ReduceOp::sum, 0);
        });
        t.bytes.push_back(static_cast<double>(s));
        t.seconds.push_back(secs);
        char line[120];
        std::snprintf(line, sizeof line, "%s %10zu B: shared-memory allreduce step %8.2f us", cold ? "cold" : "hot ", s,
                      secs * 1e6);
        say(line);
      }
    }
  }

  // Moving data between the cores, whatever the algorithm: each rank writes s bytes in the
  // memory it shares with the other, then both copy what the other has just written, at once
  // (the copy alone is timed). Every allreduce must bring the other rank's data into its core
  // so; Predictor::memory_limit_s bounds it by this.
  if (same_node) {
    const std::size_t most = max_bytes / 2;
    comm::NodeMemory* node = comm.node_memory(kPage + most);
    if (node != nullptr && node->local_size() == comm.size()) {
      comm::NodeBarrier flags(*node);
      unsigned char* mine = node->region(node->local_rank()) + kPage;
      const unsigned char* theirs = node->region(1 - node->local_rank()) + kPage;
      for (std::size_t s : sizes) {
        if (s < 4096 || s > most) continue;
        const int calls = calls_for(s, o.quick);
        std::vector<double> own(static_cast<std::size_t>(calls)), slowest(own.size());
        for (int i = -1; i < calls; ++i) {  // i = -1: warm-up
          scribble(mine, s, i);
          flags.arrive_and_wait();
          const double t0 = now_seconds();
          std::memcpy(out.at(0), theirs, s);
          const double t = now_seconds() - t0;
          flags.arrive_and_wait();  // the other rank has read all before it is overwritten
          if (i >= 0) own[static_cast<std::size_t>(i)] = t;
        }
        comm.allreduce(own.data(), slowest.data(), own.size(), comm::DataType::f64, comm::ReduceOp::max);
        p.peer_copy.bytes.push_back(static_cast<double>(s));
        p.peer_copy.seconds.push_back(median(slowest));
        char line[120];
        std::snprintf(line, sizeof line, "%10zu B: copy of what the other rank has just written %8.2f us (%6.2f GB/s)", s,
                      p.peer_copy.seconds.back() * 1e6, static_cast<double>(s) / p.peer_copy.seconds.back() / 1e9);
        say(line);
      }
    }
  }

  // How cold a working set is: both ranks exchange 256 KiB pieces, walking in order through W
  // bytes each (the first half sent from, the second received into), as a collective walks
  // through its buffers. The time per piece climbs from the in-cache figure to the from-memory
  // one as W outgrows what of the caches these two ranks get (model::cold_fraction).
  {
    constexpr std::size_t piece = 256u << 10;
    std::vector<std::size_t> sets;
    for (std::size_t w = 2 * piece; w <= pool; w *= 2) {
      sets.push_back(w);
      if (!o.quick && w >= (2u << 20) && w * 3 / 2 < pool) sets.push_back(w * 3 / 2);  // finer around the cliff
    }
    std::sort(sets.begin(), sets.end());
    // Two passes, upwards then downwards, keeping the faster time per W: a neighbour's burst only
    // ever adds time, and a slow minute then spoils one pass, not the curve.
    std::vector<double> best(sets.size(), 0.0);
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t k = 0; k < sets.size(); ++k) {
        const std::size_t j = pass == 0 ? k : sets.size() - 1 - k;
        const std::size_t w = sets[j], pieces = w / 2 / piece;
        const int calls = static_cast<int>(std::clamp<std::size_t>(3 * pieces, o.quick ? 8 : 40, o.quick ? 64 : 600));
        const double t = timed(comm, calls, [&](int i) {
          const std::size_t off = (static_cast<std::size_t>(i) % pieces) * piece;
          comm.sendrecv(a.at(off), piece, peer, a.at(w / 2 + off), piece, peer, 0x5ca2);
        });
        best[j] = pass == 0 ? t : std::min(best[j], t);
        // A line per measurement: a full sweep takes tens of seconds on a busy machine.
        char line[120];
        std::snprintf(line, sizeof line, "working set %8zu KiB per rank, pass %d of 2: %8.2f us", w >> 10, pass + 1,
                      t * 1e6);
        say(line);
      }
    }
    for (std::size_t j = 0; j < sets.size(); ++j) {
      p.working_set.bytes.push_back(static_cast<double>(sets[j]));
      p.working_set.seconds.push_back(best[j]);
      char line[120];
      std::snprintf(line, sizeof line, "working set %8zu KiB per rank: %8.2f us per 256 KiB exchange", sets[j] >> 10,
                    best[j] * 1e6);
      say(line);
    }
  }

  // First touch of fresh pages: map, touch one byte per page, unmap.
  {
    const std::size_t bytes = o.quick ? (8u << 20) : (64u << 20);
    std::vector<double> per_page;
    for (int r = 0; r < (o.quick ? 3 : 7); ++r) {
      void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) throw_runtime("scalelab calibrate: mmap of " + std::to_string(bytes) + " bytes failed");
      comm.barrier();
      const double t0 = now_seconds();
      for (std::size_t off = 0; off < bytes; off += kPage) static_cast<volatile unsigned char*>(m)[off] = 1;
      double t = (now_seconds() - t0) / static_cast<double>(bytes / kPage), slowest = 0;
      munmap(m, bytes);
      comm.allreduce(&t, &slowest, 1, comm::DataType::f64, comm::ReduceOp::max);
      per_page.push_back(slowest);
    }
    p.page_fault_s = median(per_page);
    char line[120];
    std::snprintf(line, sizeof line, "first touch of a fresh 4 KiB page: %.2f us", p.page_fault_s * 1e6);
    say(line);
  }

  // The allocator: a temporary malloc'ed, filled and freed per call, against the same fill of
  // reused memory. Where the first costs clearly more, the allocator hands out fresh pages.
  for (std::size_t s = 1u << 20; s <= max_bytes; s *= 2) {
    const int calls = o.quick ? 3 : 7;
    const double t_fresh = timed(comm, calls, [&](int) {
      auto* m = static_cast<unsigned char*>(std::malloc(s));
      if (m == nullptr) throw_runtime("scalelab calibrate: malloc failed");
      std::memset(m, 1, s);
      asm volatile("" : : "r"(m) : "memory");  // keep the fill: the compiler may not drop it
      std::free(m);
    });
    const double t_reused = timed(comm, calls, [&](int) {
      std::memset(a.at(0), 1, s);
      asm volatile("" : : "r"(a.at(0)) : "memory");
    });
    // Fresh pages: the extra time per byte is of the order of a page fault per page (measured
    // above), not a scheduling hiccup.
    const double extra_per_byte = (t_fresh - t_reused) / static_cast<double>(s);
    const bool fresh = t_fresh > 2.0 * t_reused && extra_per_byte > 0.5 * p.page_fault_s / static_cast<double>(kPage);
    char line[160];
    std::snprintf(line, sizeof line, "temporary of %8zu KiB per call: %9.1f us (reused memory %8.1f us)%s", s >> 10,
                  t_fresh * 1e6, t_reused * 1e6, fresh ? ": fresh pages every call" : "");
    say(line);
    // The threshold is where fresh pages start and stay: a noisy small size does not count.
    if (!fresh) p.mmap_threshold_bytes = 0;
    if (fresh && p.mmap_threshold_bytes == 0) p.mmap_threshold_bytes = static_cast<double>(s);
    if (fresh) p.fresh_alloc_s_per_byte = (t_fresh - t_reused) / static_cast<double>(s);
  }
  return p;
}

}  // namespace scalelab::model
