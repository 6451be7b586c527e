// A calibration profile: what `scalelab calibrate` measured on this machine, and the costs the
// model derives from it for CPU ranks talking through shared memory (Open MPI's vader/CMA).
//
// Saved as JSON (schema "scalelab.calibration", docs/results-schema.md) at default_profile_path()
// (~/.cache/scalelab/this-machine.json, or $SCALELAB_PROFILE), or where --profile says.
//
//   Profile prof = load_profile(default_profile_path());
//   CpuCosts costs(prof, /*footprint_bytes=*/2 * n);  // collectives::Costs for the cost formulas
//
// Since schema_version 2 a profile also holds `gpu` (GpuCopies): the bandwidth test's pinned
// host-device and device copy figures on a machine with a usable GPU, or why there are none.
// Version 1 profiles (no `gpu`) still load, as "not measured". Since schema_version 4 it also holds
// `compute` (ComputeRates): the nn engine's own layers timed on one thread, which the simulator
// turns into "this machine's" device (sim/cpu_rates.h); older profiles load it as "not measured".
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "collectives/costs.h"
#include "topo/machine.h"

namespace scalelab::model {

using collectives::Costs;

// The envelope a saved profile carries (docs/results-schema.md) and the newest version read.
inline constexpr const char* kProfileSchema = "scalelab.calibration";
inline constexpr int kProfileSchemaVersion = 4;

// Time per call at each measured size (bytes ascending).
struct SizeTable {
  std::vector<double> bytes;
  std::vector<double> seconds;
  // Log-log interpolation; beyond the ends the time scales with the size at the end's rate.
  [[nodiscard]] double at(double b) const;
  [[nodiscard]] bool empty() const { return bytes.empty(); }
};

// GPU copies measured by `scalelab calibrate` with the bandwidth test (gpu/bandwidth.h): pinned
// host memory, one copy at a time; D2D GB/s counts the bytes read and written (2 x size).
struct GpuCopies {
  bool measured = false;
  std::string reason;       // why not measured ("bandwidth: no usable GPU (cudaGetDeviceCount: ...)")
  std::string device;       // "NVIDIA H100 80GB HBM3"
  double large_bytes = 0;   // the size of the GB/s figures
  double small_bytes = 0;   // the size of the latencies
  double h2d_GBps = 0, d2h_GBps = 0, d2d_GBps = 0;
  double h2d_latency_us = 0, d2h_latency_us = 0, d2d_latency_us = 0;
};

// The nn engine's layers timed on one thread by `scalelab calibrate` (sim/cpu_rates.h measures them;
// plain numbers here so that the cost model needs nothing of the simulator). Compute-bound kinds
// in FLOP/s (multiply-adds counted as 2, forward and backward); memory-bound kinds in bytes/s,
// counting each layer's input and output once forward and once backward (float32).
struct ComputeRates {
  bool measured = false;
  std::string reason;          // why not measured ("this profile predates ...")
  std::string blas;            // nn::blas_description() at the time
  int threads = 1;
  int batch = 0;               // images per timed call
  double conv_flops_per_s = 0;         // Conv2D forward + backward at the cnn model's shapes
  double matmul_flops_per_s = 0;       // Dense forward + backward at the cnn model's shapes
  double elementwise_bytes_per_s = 0;  // ReLU and Dropout forward + backward
  double pool_bytes_per_s = 0;         // MaxPool2D forward + backward
  double norm_bytes_per_s = 0;         // BatchNorm forward + backward; 0 (older profiles): elementwise's
  // The lab models' own matrix products, each timed alone: a convolution per image as the product
  // of m = output channels, n = output pixels, k = input channels x kernel area; a dense layer as
  // m = batch, n = outputs, k = inputs. The rate a product reaches depends on its shape (a
  // 16-channel convolution runs at half the rate of the cnn's 64-channel one here), so the
  // simulator prices each layer at the measured shape nearest to its own. A convolution is timed
  // at two batches (the share of its data the caches hold falls as the batch grows), so its rate
  // at the trained batch is read between them. Empty in older profiles.
  struct Shape {
    std::string kind;  // "conv" or "matmul"
    double m = 0, n = 0, k = 0;
    double batch = 0;  // images per timed call; 0 in older profiles (not recorded)
    double flops_per_s = 0;
  };
  std::vector<Shape> shapes;
  // The lab models' memory-bound layers (elementwise, pool, norm) timed alone at several batches:
  // a layer's rate depends on whether its tensors stay in the caches, so the simulator reads each
  // layer's rate off this table at the bytes one pass of it moves (its input and output). Empty
  // in older profiles.
  struct Traffic {
    std::string kind;  // "elementwise", "pool" or "norm"
    double bytes = 0;  // one pass (forward or backward): batch x (input + output) x 4
    double bytes_per_s = 0;
  };
  std::vector<Traffic> traffic;
  // Runs of the lab models' layers that the nn engine fuses into one unit (a convolution that
  // computes its pool, and the first convolution, chunk by chunk in cache: nn::Model::fused_groups),
  // each timed as it runs in training at two batches: the layers it covers, by kind and figures
  // per image, and forward + backward seconds per image. Empty in older profiles.
  struct FusedLayer {
    std::string kind;  // "conv", "pool", ...
    double forward_flops = 0, params = 0, in_elems = 0, out_elems = 0;
  };
  struct Fused {
    std::vector<FusedLayer> layers;
    double batch = 0;  // images per timed call
    double seconds_per_image = 0;
  };
  std::vector<Fused> fused;
};

// The copy size of calibrate's measurement of how long the peer keeps what it read
// (Profile::copy_into_read_walked).
inline constexpr double kReclaimProbeBytes = 64.0 * 1024;

struct Profile {
  int ranks = 2;
  std::string host;
  std::string cpu_model;
  std::string mpi_library;     // "Open MPI v4.1.4"
  std::string created;
  // Buffers reused and small enough to stay in cache ("hot"), and walking through a working
  // set larger than the last-level cache ("cold").
  SizeTable message_hot, message_cold;  // one exchange (sendrecv) between 2 ranks
  SizeTable reduce_hot, reduce_cold;    // out = a + b (comm::reduce_to), float32
  SizeTable copy_hot, copy_cold;        // memcpy
  double llc_bytes = 32.0 * 1024 * 1024;
  double l2_bytes = 1.0 * 1024 * 1024;   // per core
  double page_fault_s = 0;              // first touch of one fresh 4 KiB page
  double mmap_threshold_bytes = 0;      // allocations this large are fresh pages every time (0: unknown)
  double fresh_alloc_s_per_byte = 0;    // malloc + first touch + free above the threshold, per touched byte
  double shm_sync_s = 0;                // one round of comm::NodeBarrier between the 2 ranks (0: not measured)
  // The same round timed before the tables, at the start of the calibration (0: not measured): a
  // machine whose cores moved apart or together meanwhile shows it as a different round.
  double shm_sync_start_s = 0;
  // The shared-memory allreduce itself at one chunk or less (Costs::staged), hot and cold like the
  // tables above; empty in profiles made before it was measured.
  SizeTable staged_hot, staged_cold;
  // An exchange of m bytes into a reused scratch buffer, then those m bytes reduced with the
  // rank's own m into the output (Costs::exchange_reduce: a reduce-scatter step as the ring and
  // recursive halving run it), hot and cold like the tables above; empty in profiles made before
  // it was measured.
  SizeTable exchange_reduce_hot, exchange_reduce_cold;
  // A copy of s bytes that the other rank has just written in node memory, both ranks at once
  // (the least any allreduce must do per byte that crosses between the cores; empty in profiles
  // made before it was measured, or with the ranks on different nodes).
  SizeTable peer_copy;
  // A copy of s bytes into a buffer the other rank has just read, both ranks at once, in cache
  // (Costs::reclaim: this less copy_hot; empty in profiles made before it was measured).
  SizeTable copy_into_read;
  // The same copy at kReclaimProbeBytes, with both ranks walking W bytes of other memory between
  // the peer's read and the copy (keyed by W), and the plain copy after the same walk: how much
  // walking it takes before the peer's core has let those lines go (CpuCosts::reclaim).
  SizeTable copy_into_read_walked;
  SizeTable copy_walked;
  GpuCopies gpu;                        // schema_version 2; "not measured" in older profiles
  // How cold a call's working set is, measured (schema_version 3; empty in older profiles):
  // time per 256 KiB exchange while both ranks walk through W bytes each (half sent from, half
  // received into), for W from a few hundred KiB to 4x the LLC. See cold_fraction().
  SizeTable working_set;
  ComputeRates compute;  // schema_version 4; "not measured" in older profiles
  // The same layers timed with every rank of the calibration computing at once (they share the
  // caches and the memory bandwidth): what each rank gets when a node runs several. The slower
  // rank's rates. "Not measured" in profiles made before it was.
  ComputeRates compute_shared;
};

// Why predictions of `ranks` CPU ranks on this machine from `p` may describe something else, one
// line each (empty: nothing to say): a profile measured on another host, or more ranks than this
// machine has hardware threads (the profile measured 2 ranks, one per core; more ranks than
// threads share the cores, which it does not describe).
[[nodiscard]] std::vector<std::string> profile_cautions(const Profile& p, int ranks);

// The fraction (0: in cache, 1: from memory) of the way from the in-cache to the from-memory
// exchange time that a per-rank working set of `bytes` has gone, read off p.working_set (made
// non-decreasing in W by pooling adjacent violators, log-W interpolation). Without a working_set table (older profiles): 0 up to
// half the LLC, 1 from twice it, log-interpolated between.
[[nodiscard]] double cold_fraction(const Profile& p, double bytes);

// Whether two flag rounds (seconds, as shm_sync_s) show one state of the machine: within 2x of
// each other. True when either was not measured (0).
[[nodiscard]] bool same_state(double round_a, double round_b);

// "" when there is none (no SCALELAB_PROFILE, XDG_CACHE_HOME or home folder): load_profile("")
// then says so, and kNoDefaultProfile is that line.
[[nodiscard]] std::string default_profile_path();
extern const char* const kNoDefaultProfile;
[[nodiscard]] nlohmann::json to_json(const Profile& p);
// Every field is checked: an input error names `origin`, the field ("message_hot[3].bytes") and
// what is wrong with it (tables empty or out of order, counts and sizes out of range, the schema).
[[nodiscard]] Profile profile_from_json(const nlohmann::json& j, const std::string& origin);
// Reads a profile; a missing file is an input error telling the user to run `scalelab calibrate`.
[[nodiscard]] Profile load_profile(const std::string& path);
[[nodiscard]] std::optional<Profile> try_load_profile(const std::string& path);

// Sets every GPU-CPU link of `m` (PCIe, host side) to the calibrated copy bandwidth per
// direction: the slower of pinned H2D and D2H (topo::LinkSpec::bw_override_GBps, so the model
// keeps NCCL's efficiency ratio for collectives). Returns how many links changed (0 when `g` was
// not measured).
int apply_gpu_copies(topo::Machine& m, const GpuCopies& g);
// "this" machine (origin "detected") with its GPU-host links calibrated from the profile at
// default_profile_path() when that profile has GPU figures (its sources say so); any other
// machine, or no such profile, unchanged. The GPU Predictor calls this.
[[nodiscard]] topo::Machine with_calibrated_host_links(const topo::Machine& m);

// Costs for one collective call whose buffers span `footprint_bytes` per rank: each primitive is
// its hot and cold table's values weighted by how much colder the call's footprint is than the
// hot measurement's own working set (cold_fraction of each): a call whose buffers stay in cache
// costs what the hot tables say, one that streams from memory what the cold ones say.
class CpuCosts final : public Costs {
 public:
  CpuCosts(const Profile& p, double footprint_bytes);
  [[nodiscard]] double message(double bytes) const override;
  [[nodiscard]] double reduce(double bytes) const override;
  // The measured step; profiles without it: the sum of its parts.
  [[nodiscard]] double exchange_reduce(double bytes) const override;
  [[nodiscard]] double copy(double bytes) const override;
  // A temporary allocated and freed per call: fresh pages when above the mmap threshold.
  [[nodiscard]] double fresh(double alloc_bytes, double touched_bytes) const override;
  // The measured NodeBarrier round; profiles without it: an empty message (Costs' bound).
  [[nodiscard]] double sync() const override;
  // The measured step; profiles without it: the sum of its parts.
  [[nodiscard]] double staged(double bytes) const override;
  // The measured copy of what the other rank has just written (Profile::peer_copy): out of the
  // other core's cache whatever the call's footprint, since it was just written; profiles
  // without it: a local copy.
  [[nodiscard]] double peer_copy(double bytes) const override;
  // The measured copy into what the peer has just read, less the plain copy, in cache, times the
  // share of it still paid after the peer has walked `since` bytes (copy_into_read_walked against
  // copy_walked); profiles without those tables: 0.
  [[nodiscard]] double reclaim(double bytes, double since) const override;

 private:
  [[nodiscard]] double blend(const SizeTable& hot, const SizeTable& cold, double bytes, double own_set) const;
  const Profile& p_;
  double call_cold_ = 0;  // cold_fraction of the call's footprint: 0 in cache, 1 from memory
};

}  // namespace scalelab::model
