// Calibration profile storage and the calibrated CPU costs (see profile.h).
#include "model/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/results.h"

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

std::string default_profile_path() {
  if (const char* env = std::getenv("SCALELAB_PROFILE"); env != nullptr && *env) return env;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = (xdg != nullptr && *xdg) ? std::string(xdg) : std::string(home ? home : ".") + "/.cache";
  return base + "/scalelab/this-machine.json";
}

namespace {

// An integer field, `fallback` when absent. A fraction or a number beyond int is a damaged profile
// (nlohmann would convert 1e300 to int with undefined behaviour).
int int_field(const nlohmann::json& j, const char* key, int fallback, const std::string& origin) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number_integer() || *it < std::numeric_limits<int>::min() || *it > std::numeric_limits<int>::max()) {
    throw_input(origin + ": \"" + key + "\" is not an integer; run 'scalelab calibrate' again");
  }
  return it->get<int>();
}

nlohmann::json table_json(const SizeTable& t) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t i = 0; i < t.bytes.size(); ++i) a.push_back({{"bytes", t.bytes[i]}, {"us", t.seconds[i] * 1e6}});
  return a;
}

SizeTable table_from(const nlohmann::json& j, const char* key, const std::string& origin) {
  SizeTable t;
  if (!j.contains(key)) throw_input(origin + ": profile lacks \"" + key + "\"; run 'scalelab calibrate' again");
  for (const auto& row : j[key]) {
    const double b = row.at("bytes").get<double>(), us = row.at("us").get<double>();
    if (b <= 0 || us <= 0) throw_input(origin + ": \"" + key + "\" has a non-positive entry; run 'scalelab calibrate' again");
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
  g.large_bytes = x.at("large_bytes").get<double>();
  g.small_bytes = x.at("small_bytes").get<double>();
  g.h2d_GBps = x.at("h2d_GBps").get<double>();
  g.d2h_GBps = x.at("d2h_GBps").get<double>();
  g.d2d_GBps = x.at("d2d_GBps").get<double>();
  g.h2d_latency_us = x.at("h2d_latency_us").get<double>();
  g.d2h_latency_us = x.at("d2h_latency_us").get<double>();
  g.d2d_latency_us = x.at("d2d_latency_us").get<double>();
  if (!(g.h2d_GBps > 0 && g.d2h_GBps > 0 && g.d2d_GBps > 0)) {
    throw_input(origin + ": \"gpu\" has a non-positive bandwidth; run 'scalelab calibrate' again");
  }
  return g;
}

nlohmann::json compute_json(const ComputeRates& c) {
  if (!c.measured) return {{"measured", false}, {"reason", c.reason}};
  return {{"measured", true},
          {"blas", c.blas},
          {"threads", c.threads},
          {"batch", c.batch},
          {"conv_gflops_per_s", c.conv_flops_per_s * 1e-9},
          {"matmul_gflops_per_s", c.matmul_flops_per_s * 1e-9},
          {"elementwise_GBps", c.elementwise_bytes_per_s * 1e-9},
          {"pool_GBps", c.pool_bytes_per_s * 1e-9}};
}

ComputeRates compute_from(const nlohmann::json& j, const std::string& origin) {
  ComputeRates c;
  if (!j.contains("compute")) {
    c.reason = "this profile predates the compute measurements (schema_version 3 or older)";
    return c;
  }
  const nlohmann::json& x = j["compute"];
  c.measured = x.at("measured").get<bool>();
  if (!c.measured) {
    c.reason = x.value("reason", std::string("not measured"));
    return c;
  }
  c.blas = x.value("blas", std::string());
  c.threads = int_field(x, "threads", 1, origin);
  c.batch = int_field(x, "batch", 0, origin);
  c.conv_flops_per_s = x.at("conv_gflops_per_s").get<double>() * 1e9;
  c.matmul_flops_per_s = x.at("matmul_gflops_per_s").get<double>() * 1e9;
  c.elementwise_bytes_per_s = x.at("elementwise_GBps").get<double>() * 1e9;
  c.pool_bytes_per_s = x.at("pool_GBps").get<double>() * 1e9;
  if (!(c.conv_flops_per_s > 0 && c.matmul_flops_per_s > 0 && c.elementwise_bytes_per_s > 0 && c.pool_bytes_per_s > 0)) {
    throw_input(origin + ": \"compute\" has a non-positive rate; run 'scalelab calibrate' again");
  }
  return c;
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
          {"message_hot", table_json(p.message_hot)},
          {"message_cold", table_json(p.message_cold)},
          {"reduce_hot", table_json(p.reduce_hot)},
          {"reduce_cold", table_json(p.reduce_cold)},
          {"copy_hot", table_json(p.copy_hot)},
          {"copy_cold", table_json(p.copy_cold)},
          {"gpu", gpu_json(p.gpu)},
          {"working_set", table_json(p.working_set)},
          {"compute", compute_json(p.compute)}};
}

Profile profile_from_json(const nlohmann::json& doc, const std::string& origin) {
  try {
    const nlohmann::json& j = doc.contains("profile") ? doc["profile"] : doc;
    Profile p;
    p.ranks = int_field(j, "ranks", 2, origin);
    p.host = j.value("host", std::string());
    p.cpu_model = j.value("cpu_model", std::string());
    p.mpi_library = j.value("mpi_library", std::string());
    p.created = doc.value("created", std::string());
    p.llc_bytes = j.value("llc_bytes", 32.0 * 1024 * 1024);
    p.l2_bytes = j.value("l2_bytes", 1.0 * 1024 * 1024);
    p.page_fault_s = j.value("page_fault_us", 0.0) * 1e-6;
    p.mmap_threshold_bytes = j.value("mmap_threshold_bytes", 0.0);
    p.fresh_alloc_s_per_byte = j.value("fresh_alloc_ns_per_byte", 0.0) * 1e-9;
    p.message_hot = table_from(j, "message_hot", origin);
    p.message_cold = table_from(j, "message_cold", origin);
    p.reduce_hot = table_from(j, "reduce_hot", origin);
    p.reduce_cold = table_from(j, "reduce_cold", origin);
    p.copy_hot = table_from(j, "copy_hot", origin);
    p.copy_cold = table_from(j, "copy_cold", origin);
    p.gpu = gpu_from(j, origin);
    if (j.contains("working_set")) p.working_set = table_from(j, "working_set", origin);
    p.compute = compute_from(j, origin);
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw_input(origin + ": not a scalelab calibration profile (" + std::string(e.what()) + "); run 'scalelab calibrate' again");
  }
}

std::optional<Profile> try_load_profile(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  return profile_from_json(read_json_file(path), path);
}

Profile load_profile(const std::string& path) {
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
  double v = 0;
  if (bytes <= t.bytes.front()) v = s.front();
  else if (bytes >= t.bytes.back()) v = s.back();
  else {
    const auto it = std::upper_bound(t.bytes.begin(), t.bytes.end(), bytes);
    const std::size_t i = static_cast<std::size_t>(it - t.bytes.begin());
    const double x = std::log(bytes / t.bytes[i - 1]) / std::log(t.bytes[i] / t.bytes[i - 1]);
    v = s[i - 1] + x * (s[i] - s[i - 1]);
  }
  return std::clamp((v - hot) / (cold - hot), 0.0, 1.0);
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
double CpuCosts::copy(double bytes) const { return blend(p_.copy_hot, p_.copy_cold, bytes, 2 * bytes); }

double CpuCosts::fresh(double alloc_bytes, double touched_bytes) const {
  if (p_.mmap_threshold_bytes <= 0 || alloc_bytes < p_.mmap_threshold_bytes) return 0.0;
  return touched_bytes * p_.fresh_alloc_s_per_byte;
}

}  // namespace scalelab::model
