// Calibration profile storage and the calibrated CPU costs (see profile.h).
#include "model/profile.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_text.h"
#include "core/limits.h"
#include "core/results.h"
#include "model/profile_compute.h"
#include "model/profile_fields.h"

namespace scalelab::model {

double SizeTable::at(double b) const {
  if (bytes.empty()) return 0.0;
  if (bytes.size() == 1) return seconds[0] * std::max(1.0, b / bytes[0]);
  if (b <= bytes.front()) return seconds.front();
  if (b >= bytes.back()) {
    // Past the last point the per-byte rate of the last interval continues.
    const std::size_t n = bytes.size();
    const double rate = (seconds[n - 1] - seconds[n - 2]) / (bytes[n - 1] - bytes[n - 2]);
    return seconds[n - 1] + std::max(rate, seconds[n - 1] / bytes[n - 1] * 0.5) * (b - bytes[n - 1]);
  }
  const auto it = std::upper_bound(bytes.begin(), bytes.end(), b);
  const std::size_t i = static_cast<std::size_t>(it - bytes.begin());
  const double x0 = std::log(bytes[i - 1]), x1 = std::log(bytes[i]);
  const double y0 = std::log(seconds[i - 1]), y1 = std::log(seconds[i]);
  const double t = (std::log(b) - x0) / (x1 - x0);
  return std::exp(y0 + t * (y1 - y0));
}

const char* const kNoDefaultProfile =
    "no default calibration profile: HOME is not set to a folder; set HOME (or SCALELAB_PROFILE), or name a profile file";

std::string default_profile_path() {
  if (const char* env = std::getenv("SCALELAB_PROFILE"); env != nullptr && *env) return env;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg == '/') return std::string(xdg) + "/scalelab/this-machine.json";
  // HOME unset or empty (some batch systems and containers): the account's home from the password
  // database, not a path relative to wherever the command runs.
  std::string home = std::getenv("HOME") != nullptr ? std::getenv("HOME") : "";
  if (home.empty() || home.front() != '/') {
    if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_dir != nullptr && pw->pw_dir[0] == '/') home = pw->pw_dir;
  }
  if (home.empty() || home.front() != '/') return "";  // no default: load_profile("") says so
  return home + "/.cache/scalelab/this-machine.json";
}

namespace {

using profile_fields::bad_field;
using profile_fields::kMaxGBps;
using profile_fields::kMaxTableUs;
using profile_fields::kMinTableUs;
using profile_fields::number;
using profile_fields::whole;

nlohmann::json table_json(const SizeTable& t) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < t.bytes.size(); ++i) a.push_back({{"bytes", t.bytes[i]}, {"us", t.seconds[i] * 1e6}});
  return a;
}

// A {bytes, us} table: at least two rows (an optional one may be empty), sizes strictly ascending,
// sizes and times positive.
SizeTable table_from(const nlohmann::json& j, const char* key, const std::string& origin, bool may_be_empty = false) {
  SizeTable t;
  if (!j.contains(key)) bad_field(origin, key, "is missing");
  const nlohmann::json& rows = j[key];
  if (!rows.is_array()) bad_field(origin, key, "is not an array of {bytes, us}");
  if (rows.empty() && !may_be_empty) bad_field(origin, key, "has no measurements");
  // calibrate measures every table at several sizes; one row cannot say how time grows with size.
  if (rows.size() == 1) bad_field(origin, key, "has one measurement; a table needs at least two sizes");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
    if (!rows[i].is_object()) bad_field(origin, at, "is not a {bytes, us} object");
    const double b = number(rows[i], "bytes", origin, at + ".bytes", 0, true);
    const double us = number(rows[i], "us", origin, at + ".us", kMinTableUs, false, std::nullopt, kMaxTableUs);
    if (!t.bytes.empty() && !(b > t.bytes.back())) {
      bad_field(origin, at + ".bytes", "is not larger than the row before it; sizes must be in ascending order");
    }
    t.bytes.push_back(b);
    t.seconds.push_back(us * 1e-6);
  }
  return t;
}

nlohmann::json gpu_json(const GpuCopies& g) {
  if (!g.measured) return {{"measured", false}, {"reason", g.reason}};
  return {{"measured", true},
          {"device", g.device},
          {"host_memory", "pinned"},
          {"large_bytes", g.large_bytes},
          {"small_bytes", g.small_bytes},
          {"h2d_GBps", g.h2d_GBps},
          {"d2h_GBps", g.d2h_GBps},
          {"d2d_GBps", g.d2d_GBps},
          {"h2d_latency_us", g.h2d_latency_us},
          {"d2h_latency_us", g.d2h_latency_us},
          {"d2d_latency_us", g.d2d_latency_us}};
}

GpuCopies gpu_from(const nlohmann::json& j, const std::string& origin) {
  GpuCopies g;
  if (!j.contains("gpu")) {
    g.reason = "this profile predates GPU calibration (schema_version 1); run 'scalelab calibrate' again";
    return g;
  }
  const nlohmann::json& x = j["gpu"];
  g.measured = x.at("measured").get<bool>();
  if (!g.measured) {
    g.reason = x.value("reason", std::string("not measured"));
    return g;
  }
  g.device = x.value("device", std::string());
  g.large_bytes = number(x, "large_bytes", origin, "gpu.large_bytes", 0, true);
  g.small_bytes = number(x, "small_bytes", origin, "gpu.small_bytes", 0, true);
  g.h2d_GBps = number(x, "h2d_GBps", origin, "gpu.h2d_GBps", 0, true, std::nullopt, kMaxGBps);
  g.d2h_GBps = number(x, "d2h_GBps", origin, "gpu.d2h_GBps", 0, true, std::nullopt, kMaxGBps);
  g.d2d_GBps = number(x, "d2d_GBps", origin, "gpu.d2d_GBps", 0, true, std::nullopt, kMaxGBps);
  g.h2d_latency_us = number(x, "h2d_latency_us", origin, "gpu.h2d_latency_us", 0, false);
  g.d2h_latency_us = number(x, "d2h_latency_us", origin, "gpu.d2h_latency_us", 0, false);
  g.d2d_latency_us = number(x, "d2d_latency_us", origin, "gpu.d2d_latency_us", 0, false);
  return g;
}

// A saved profile's envelope (docs/results-schema.md) must say it is a calibration profile of a
// version this build reads; a bare profile object (no envelope) has nothing to check.
void check_envelope(const nlohmann::json& doc, const std::string& origin) {
  if (!doc.is_object()) throw_input(origin + ": not a scalelab calibration profile (not a JSON object); run 'scalelab calibrate' again");
  if (!doc.contains("profile") && !doc.contains("schema") && !doc.contains("schema_version")) return;
  const nlohmann::json schema = doc.value("schema", nlohmann::json());
  if (schema != kProfileSchema) {
    bad_field(origin, "schema", "is " + (schema.is_null() ? std::string("missing") : schema.dump()) + ", not \"" +
                                    kProfileSchema + "\" (another kind of scalelab file)");
  }
  const nlohmann::json version = doc.value("schema_version", nlohmann::json());
  if (!version.is_number_integer() || version.get<int>() < 1 || version.get<int>() > kProfileSchemaVersion) {
    bad_field(origin, "schema_version",
              "is " + (version.is_null() ? std::string("missing") : version.dump()) + "; this scalelab reads versions 1 to " +
                  std::to_string(kProfileSchemaVersion));
  }
}

}  // namespace

nlohmann::json to_json(const Profile& p) {
  return {{"ranks", p.ranks},
          {"host", p.host},
          {"cpu_model", p.cpu_model},
          {"mpi_library", p.mpi_library},
          {"llc_bytes", p.llc_bytes},
          {"l2_bytes", p.l2_bytes},
          {"page_fault_us", p.page_fault_s * 1e6},
          {"mmap_threshold_bytes", p.mmap_threshold_bytes},
          {"fresh_alloc_ns_per_byte", p.fresh_alloc_s_per_byte * 1e9},
          {"shm_sync_us", p.shm_sync_s * 1e6},
          {"shm_sync_start_us", p.shm_sync_start_s * 1e6},
          {"message_hot", table_json(p.message_hot)},
          {"message_cold", table_json(p.message_cold)},
          {"reduce_hot", table_json(p.reduce_hot)},
          {"reduce_cold", table_json(p.reduce_cold)},
          {"copy_hot", table_json(p.copy_hot)},
          {"copy_cold", table_json(p.copy_cold)},
          {"gpu", gpu_json(p.gpu)},
          {"working_set", table_json(p.working_set)},
          {"staged_hot", table_json(p.staged_hot)},
          {"staged_cold", table_json(p.staged_cold)},
          {"peer_copy", table_json(p.peer_copy)},
          {"exchange_reduce_hot", table_json(p.exchange_reduce_hot)},
          {"exchange_reduce_cold", table_json(p.exchange_reduce_cold)},
          {"copy_into_read", table_json(p.copy_into_read)},
          {"copy_into_read_walked", table_json(p.copy_into_read_walked)},
          {"copy_walked", table_json(p.copy_walked)},
          {"compute", compute_json(p.compute)},
          {"compute_shared", compute_json(p.compute_shared)}};
}

Profile profile_from_json(const nlohmann::json& doc, const std::string& origin) {
  try {
    check_envelope(doc, origin);
    const nlohmann::json& j = doc.contains("profile") ? doc["profile"] : doc;
    if (!j.is_object()) bad_field(origin, "profile", "is not an object");
    // A misspelt field would otherwise leave its figure at the default without a word.
    const nlohmann::json known = to_json(Profile{});
    for (const auto& [key, value] : j.items()) {
      if (!known.contains(key)) bad_field(origin, key, "is not a field of a calibration profile (misspelt?)");
    }
    Profile p;
    p.ranks = whole(j, "ranks", origin, "ranks", 2, 2);
    p.host = j.value("host", std::string());
    p.cpu_model = j.value("cpu_model", std::string());
    p.mpi_library = j.value("mpi_library", std::string());
    p.created = doc.value("created", std::string());
    p.llc_bytes = number(j, "llc_bytes", origin, "llc_bytes", 0, true, 32.0 * 1024 * 1024);
    p.l2_bytes = number(j, "l2_bytes", origin, "l2_bytes", 0, true, 1.0 * 1024 * 1024);
    p.page_fault_s = number(j, "page_fault_us", origin, "page_fault_us", 0, false, 0.0) * 1e-6;
    p.mmap_threshold_bytes = number(j, "mmap_threshold_bytes", origin, "mmap_threshold_bytes", 0, false, 0.0);
    p.fresh_alloc_s_per_byte = number(j, "fresh_alloc_ns_per_byte", origin, "fresh_alloc_ns_per_byte", 0, false, 0.0) * 1e-9;
    p.shm_sync_s = number(j, "shm_sync_us", origin, "shm_sync_us", 0, false, 0.0) * 1e-6;
    p.shm_sync_start_s = number(j, "shm_sync_start_us", origin, "shm_sync_start_us", 0, false, 0.0) * 1e-6;
    p.message_hot = table_from(j, "message_hot", origin);
    p.message_cold = table_from(j, "message_cold", origin);
    p.reduce_hot = table_from(j, "reduce_hot", origin);
    p.reduce_cold = table_from(j, "reduce_cold", origin);
    p.copy_hot = table_from(j, "copy_hot", origin);
    p.copy_cold = table_from(j, "copy_cold", origin);
    p.gpu = gpu_from(j, origin);
    if (j.contains("working_set")) p.working_set = table_from(j, "working_set", origin, /*may_be_empty=*/true);
    if (j.contains("staged_hot")) p.staged_hot = table_from(j, "staged_hot", origin, /*may_be_empty=*/true);
    if (j.contains("staged_cold")) p.staged_cold = table_from(j, "staged_cold", origin, /*may_be_empty=*/true);
    if (j.contains("peer_copy")) p.peer_copy = table_from(j, "peer_copy", origin, /*may_be_empty=*/true);
    if (j.contains("exchange_reduce_hot")) {
      p.exchange_reduce_hot = table_from(j, "exchange_reduce_hot", origin, /*may_be_empty=*/true);
    }
    if (j.contains("exchange_reduce_cold")) {
      p.exchange_reduce_cold = table_from(j, "exchange_reduce_cold", origin, /*may_be_empty=*/true);
    }
    if (j.contains("copy_into_read")) p.copy_into_read = table_from(j, "copy_into_read", origin, /*may_be_empty=*/true);
    if (j.contains("copy_into_read_walked")) {
      p.copy_into_read_walked = table_from(j, "copy_into_read_walked", origin, /*may_be_empty=*/true);
    }
    if (j.contains("copy_walked")) p.copy_walked = table_from(j, "copy_walked", origin, /*may_be_empty=*/true);
    if (p.copy_walked.bytes != p.copy_into_read_walked.bytes) {
      throw_input(origin + ": copy_walked and copy_into_read_walked must list the same walks (calibrate writes them "
                           "together); run 'scalelab calibrate' again");
    }
    p.compute = compute_from(j, origin, "compute");
    p.compute_shared = compute_from(j, origin, "compute_shared");
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw_input(origin + ": not a scalelab calibration profile (" + plain_json_error(e) + "); run 'scalelab calibrate' again");
  }
}

std::vector<std::string> profile_cautions(const Profile& p, int ranks) {
  std::vector<std::string> out;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  if (!p.host.empty() && p.host != host) {
    out.push_back("the calibration profile was measured on " + p.host + ", not on this machine (" + host +
                  "): its figures describe that machine; run scalelab calibrate here");
  }
  const int threads = limits::hardware_threads();
  if (ranks > threads) {
    out.push_back(std::to_string(ranks) + " ranks on this machine's " + std::to_string(threads) +
                  " hardware threads share the cores, which the profile (2 ranks, one per core) does not measure: "
                  "the prediction is of ranks that each have a core");
  }
  return out;
}

std::optional<Profile> try_load_profile(const std::string& path) {
  if (path.empty() || !std::filesystem::exists(path)) return std::nullopt;
  check_input_file(path, "calibration profile", "profile");
  return profile_from_json(read_json_file(path), path);
}

Profile load_profile(const std::string& path) {
  if (path.empty()) throw_parameter(ErrorKind::usage, "profile", kNoDefaultProfile);
  auto p = try_load_profile(path);
  if (!p) {
    throw_parameter(ErrorKind::input, "profile",
                    path + " does not exist; run 'scalelab calibrate' first, or name another calibration profile");
  }
  return *p;
}

int apply_gpu_copies(topo::Machine& m, const GpuCopies& g) {
  if (!g.measured) return 0;
  const double per_direction = std::min(g.h2d_GBps, g.d2h_GBps);
  int changed = 0;
  for (auto& l : m.links) {
    const bool gpu_cpu = (m.is_kind(l.a, topo::DeviceKind::gpu) && m.is_kind(l.b, topo::DeviceKind::cpu)) ||
                         (m.is_kind(l.b, topo::DeviceKind::gpu) && m.is_kind(l.a, topo::DeviceKind::cpu));
    if (!gpu_cpu) continue;
    l.spec.bw_override_GBps = per_direction;
    if (const auto f = topo::figures_of(l.spec)) l.figures = *f;
    ++changed;
  }
  return changed;
}

topo::Machine with_calibrated_host_links(const topo::Machine& m) {
  topo::Machine out = m;
  if (m.origin != "detected" || m.gpus().empty()) return out;
  const std::string path = default_profile_path();
  const auto prof = try_load_profile(path);
  if (!prof || apply_gpu_copies(out, prof->gpu) == 0) return out;
  char line[256];
  std::snprintf(line, sizeof line, "GPU-host links at %.3g GB/s per direction: pinned copies (H2D %.3g, D2H %.3g GB/s) measured by `scalelab calibrate` (%s)",
                std::min(prof->gpu.h2d_GBps, prof->gpu.d2h_GBps), prof->gpu.h2d_GBps, prof->gpu.d2h_GBps, path.c_str());
  out.sources.push_back(line);
  return out;
}

bool same_state(double round_a, double round_b) {
  constexpr double kStateChange = 2.0;
  if (round_a <= 0 || round_b <= 0) return true;
  const double ratio = round_a / round_b;
  return ratio <= kStateChange && ratio >= 1 / kStateChange;
}

// ys over xs (ascending), linear in log x between the points, the end values beyond the ends.
static double log_x_interp(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  const auto i = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const double t = std::log(x / xs[i - 1]) / std::log(xs[i] / xs[i - 1]);
  return ys[i - 1] + t * (ys[i] - ys[i - 1]);
}

double cold_fraction(const Profile& p, double bytes) {
  const SizeTable& t = p.working_set;
  if (t.bytes.size() < 2) {
    const double lo = p.llc_bytes / 2, hi = p.llc_bytes * 2;
    if (bytes <= lo) return 0.0;
    if (bytes >= hi) return 1.0;
    return std::log(bytes / lo) / std::log(hi / lo);
  }
  // Times made non-decreasing in W by pooling adjacent violators (least squares: a noisy point is
  // averaged with its neighbours instead of dragging every larger W up with it), then scaled
  // between the smallest working set's time (in cache) and the largest's (from memory).
  std::vector<double> s(t.seconds.size());
  {
    std::vector<std::pair<double, std::size_t>> pools;  // (mean, points)
    for (double v : t.seconds) {
      pools.emplace_back(v, 1);
      while (pools.size() > 1 && pools[pools.size() - 2].first > pools.back().first) {
        const auto [v2, w2] = pools.back();
        pools.pop_back();
        auto& [v1, w1] = pools.back();
        v1 = (v1 * static_cast<double>(w1) + v2 * static_cast<double>(w2)) / static_cast<double>(w1 + w2);
        w1 += w2;
      }
    }
    std::size_t i = 0;
    for (const auto& [v, w] : pools)
      for (std::size_t k = 0; k < w; ++k) s[i++] = v;
  }
  const double hot = s.front(), cold = s.back();
  if (!(cold > hot)) return 0.0;
  return std::clamp((log_x_interp(t.bytes, s, bytes) - hot) / (cold - hot), 0.0, 1.0);
}

CpuCosts::CpuCosts(const Profile& p, double footprint) : p_(p), call_cold_(cold_fraction(p, footprint)) {}

double CpuCosts::blend(const SizeTable& hot, const SizeTable& cold, double bytes, double own_set) const {
  if (bytes <= 0) return 0.0;
  // The hot table at this size was measured with a working set of its own (own_set bytes), and
  // already holds that much coldness; the call's larger footprint adds only the rest.
  const double own = cold_fraction(p_, own_set);
  const double w = own >= 1.0 ? 0.0 : std::max(0.0, call_cold_ - own) / (1.0 - own);
  return (1 - w) * hot.at(bytes) + w * cold.at(bytes);
}

// Own working sets of the calibration's hot measurements: an exchange reads m and writes m, a
// reduction reads 2m and writes m, a copy reads m and writes m.
double CpuCosts::message(double bytes) const {
  const double m = std::max(bytes, 1.0);
  return blend(p_.message_hot, p_.message_cold, m, 2 * m);
}
double CpuCosts::reduce(double bytes) const { return blend(p_.reduce_hot, p_.reduce_cold, bytes, 3 * bytes); }
// An exchange-and-reduce step sends m, receives m into the scratch, reads m of its own and writes
// m: own working set 4m.
double CpuCosts::exchange_reduce(double bytes) const {
  if (p_.exchange_reduce_hot.empty() || p_.exchange_reduce_cold.empty()) return Costs::exchange_reduce(bytes);
  const double m = std::max(bytes, 1.0);
  return blend(p_.exchange_reduce_hot, p_.exchange_reduce_cold, m, 4 * m);
}
double CpuCosts::copy(double bytes) const { return blend(p_.copy_hot, p_.copy_cold, bytes, 2 * bytes); }

// The share of the take-back still paid after the peer has walked `since` bytes: the walked
// copies' difference over the unwalked one's, at the probe size, held within [0, 1]; a walk that
// differs from both its neighbours in the same direction is taken for a moment when the machine
// changed state (the median of the three stands for it); then made non-increasing in the walk (a
// longer walk never brings lines back). Log-walk interpolation (log_x_interp), toward 1 below
// the first walk, the last share past the last.
static double reclaim_kept(const Profile& p, double since) {
  const SizeTable& r = p.copy_into_read_walked;
  const SizeTable& c = p.copy_walked;
  const double base = p.copy_into_read.at(kReclaimProbeBytes) - p.copy_hot.at(kReclaimProbeBytes);
  if (r.empty() || c.bytes.size() != r.bytes.size() || base <= 0) return 0.0;
  const std::size_t n = r.bytes.size();
  std::vector<double> raw(n), kept(n);
  for (std::size_t k = 0; k < n; ++k) raw[k] = std::clamp((r.seconds[k] - c.seconds[k]) / base, 0.0, 1.0);
  double cap = 1.0;
  for (std::size_t k = 0; k < n; ++k) {
    double v = raw[k];
    if (k > 0 && k + 1 < n) v = std::max(std::min(raw[k - 1], raw[k]), std::min(std::max(raw[k - 1], raw[k]), raw[k + 1]));
    cap = std::min(cap, v);
    kept[k] = cap;
  }
  if (since <= r.bytes.front()) return kept.front() + (1.0 - kept.front()) * std::max(0.0, 1.0 - since / r.bytes.front());
  return log_x_interp(r.bytes, kept, since);
}

// The measured copy into lines the peer has just read, less the plain copy, both in cache, times
// the share still paid once the peer has walked `since` bytes.
double CpuCosts::reclaim(double bytes, double since) const {
  if (p_.copy_into_read.empty() || bytes <= 0) return 0.0;
  const double extra = std::max(0.0, p_.copy_into_read.at(bytes) - p_.copy_hot.at(bytes));
  return reclaim_kept(p_, since) * extra;
}

double CpuCosts::sync() const { return p_.shm_sync_s > 0 ? p_.shm_sync_s : message(0); }

// A staged step reads its input and writes its output (the staging stays in cache): own working
// set 2m, as for a copy.
double CpuCosts::staged(double bytes) const {
  if (p_.staged_hot.empty() || p_.staged_cold.empty()) return Costs::staged(bytes);
  return blend(p_.staged_hot, p_.staged_cold, bytes, 2 * bytes);
}

double CpuCosts::peer_copy(double bytes) const {
  if (p_.peer_copy.empty()) return copy(bytes);
  return p_.peer_copy.at(bytes);
}

double CpuCosts::fresh(double alloc_bytes, double touched_bytes) const {
  if (p_.mmap_threshold_bytes <= 0 || alloc_bytes < p_.mmap_threshold_bytes) return 0.0;
  return touched_bytes * p_.fresh_alloc_s_per_byte;
}

}  // namespace scalelab::model
