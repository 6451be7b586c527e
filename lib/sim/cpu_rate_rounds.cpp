// Combining calibrate's rounds of layer timings (see cpu_rate_rounds.h).
#include "sim/cpu_rate_rounds.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/error.h"
#include "core/stats.h"

namespace scalelab::sim {

namespace {

// Every figure of a CpuRates, in one order: the per-kind rates, then the shapes', the memory-bound
// layers' and the fused runs' figures.
std::vector<double*> figures(CpuRates& r) {
  std::vector<double*> out;
  for (double& x : r.rate) out.push_back(&x);
  for (ShapeRate& x : r.shapes) out.push_back(&x.flops_per_s);
  for (TrafficRate& x : r.traffic) out.push_back(&x.bytes_per_s);
  for (FusedRate& x : r.fused) out.push_back(&x.seconds_per_sample);
  return out;
}

// The rounds' figures side by side: column j holds figure j of every round.
std::vector<std::vector<double>> columns(std::vector<CpuRates> rounds, const char* what) {
  if (rounds.empty()) throw_runtime(std::string("cpu rate rounds: no ") + what + " round to combine");
  const std::size_t n = figures(rounds.front()).size();
  std::vector<std::vector<double>> cols(n);
  for (CpuRates& r : rounds) {
    const std::vector<double*> f = figures(r);
    if (f.size() != n || r.shapes.size() != rounds.front().shapes.size() || r.traffic.size() != rounds.front().traffic.size() ||
        r.fused.size() != rounds.front().fused.size()) {
      throw_runtime(std::string("cpu rate rounds: the ") + what + " rounds time different layers");
    }
    for (std::size_t j = 0; j < n; ++j) cols[j].push_back(*f[j]);
  }
  return cols;
}

}  // namespace

CpuRates median_rates(const std::vector<CpuRates>& rounds) {
  const std::vector<std::vector<double>> cols = columns(rounds, "timing");
  CpuRates out = rounds.front();
  const std::vector<double*> f = figures(out);
  for (std::size_t j = 0; j < f.size(); ++j) *f[j] = median(cols[j]);
  return out;
}

CpuRates shared_from_rounds(const std::vector<CpuRates>& alone, const std::vector<CpuRates>& shared) {
  if (alone.size() != shared.size()) {
    throw_runtime("cpu rate rounds: " + std::to_string(alone.size()) + " rounds alone against " +
                   std::to_string(shared.size()) + " shared");
  }
  const std::vector<std::vector<double>> a = columns(alone, "alone"), s = columns(shared, "shared");
  if (a.size() != s.size()) throw_runtime("cpu rate rounds: the alone and shared rounds time different layers");
  CpuRates out = shared.front();
  const std::vector<double*> f = figures(out);
  for (std::size_t j = 0; j < f.size(); ++j) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < a[j].size(); ++i) {
      if (a[j][i] > 0 && s[j][i] > 0) ratios.push_back(s[j][i] / a[j][i]);
    }
    // A figure not measured (0: a kind the models lack) stays as the shared rounds have it.
    *f[j] = ratios.empty() ? median(s[j]) : median(a[j]) * median(ratios);
  }
  return out;
}

double spread(const std::vector<CpuRates>& rounds, LayerKind kind) {
  double lo = 0, hi = 0;
  for (const CpuRates& r : rounds) {
    const double x = r.rate[static_cast<std::size_t>(kind)];
    if (!(x > 0)) continue;
    lo = lo == 0 ? x : std::min(lo, x);
    hi = std::max(hi, x);
  }
  return lo > 0 ? hi / lo - 1.0 : 0.0;
}

std::vector<double> speeds(const CpuRates& r) {
  CpuRates copy = r;
  std::vector<double> out;
  const std::size_t first_fused = copy.rate.size() + copy.shapes.size() + copy.traffic.size();
  for (double* x : figures(copy)) {
    const bool seconds = out.size() >= first_fused;
    out.push_back(seconds ? (*x > 0 ? 1.0 / *x : 0.0) : *x);
  }
  return out;
}

void set_speeds(CpuRates& r, const std::vector<double>& speeds) {
  const std::vector<double*> f = figures(r);
  if (f.size() != speeds.size()) {
    throw_runtime("cpu rate rounds: " + std::to_string(speeds.size()) + " speeds for " + std::to_string(f.size()) + " figures");
  }
  const std::size_t first_fused = r.rate.size() + r.shapes.size() + r.traffic.size();
  for (std::size_t j = 0; j < f.size(); ++j) {
    *f[j] = j >= first_fused ? (speeds[j] > 0 ? 1.0 / speeds[j] : 0.0) : speeds[j];
  }
}

}  // namespace scalelab::sim
