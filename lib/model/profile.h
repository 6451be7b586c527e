// A calibration profile: what `scalelab calibrate` measured on this machine, and the costs the
// model derives from it for CPU ranks talking through shared memory (Open MPI's vader/CMA).
//
// Saved as JSON (schema "scalelab.calibration", docs/results-schema.md) at default_profile_path()
// (~/.cache/scalelab/this-machine.json, or $SCALELAB_PROFILE), or where --profile says.
//
//   Profile prof = load_profile(default_profile_path());
//   CpuCosts costs(prof, /*footprint_bytes=*/2 * n);  // a model::Costs for formulas.h
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/costs.h"

namespace scalelab::model {

// Time per call at each measured size (bytes ascending).
struct SizeTable {
  std::vector<double> bytes;
  std::vector<double> seconds;
  // Log-log interpolation; beyond the ends the time scales with the size at the end's rate.
  [[nodiscard]] double at(double b) const;
  [[nodiscard]] bool empty() const { return bytes.empty(); }
};

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
};

[[nodiscard]] std::string default_profile_path();
[[nodiscard]] nlohmann::json to_json(const Profile& p);
[[nodiscard]] Profile profile_from_json(const nlohmann::json& j, const std::string& origin);
// Reads a profile; a missing file is an input error telling the user to run `scalelab calibrate`.
[[nodiscard]] Profile load_profile(const std::string& path);
[[nodiscard]] std::optional<Profile> try_load_profile(const std::string& path);

// Costs for one collective call whose buffers span `footprint_bytes`: hot tables when that fits
// in half the last-level cache, cold ones (from memory) beyond twice it, interpolated in log
// size between. (The hot tables were measured with buffers of the message's size, which stay in
// L2: for footprints between L2 and the LLC they are optimistic; l2_bytes is recorded for a
// third, L3-resident table, not measured yet.)
class CpuCosts final : public Costs {
 public:
  CpuCosts(const Profile& p, double footprint_bytes);
  [[nodiscard]] double message(double bytes) const override;
  [[nodiscard]] double reduce(double bytes) const override;
  [[nodiscard]] double copy(double bytes) const override;
  // A temporary allocated and freed per call: fresh pages when above the mmap threshold.
  [[nodiscard]] double fresh(double alloc_bytes, double touched_bytes) const override;

 private:
  [[nodiscard]] double blend(const SizeTable& hot, const SizeTable& cold, double bytes) const;
  const Profile& p_;
  double w_cold_ = 0;  // 0: hot, 1: cold
};

}  // namespace scalelab::model
