// Devices for the step simulator (see device.h): precisions, the roofline, the device file format
// and the catalog. The catalog's texts are compiled in from data/devices/*.json
// (cmake/EmbedFiles.cmake); docs/simulator.md ("Devices") says where every figure comes from.
//
// A device file:
//   { "name": "v100-sxm2-16gb", "title": "NVIDIA V100 SXM2 16 GB", "kind": "gpu",
//     "fp32_tflops": 15.7, "tf32_tflops": 0, "amp_tflops": 125,
//     "memory_bandwidth_GBps": 900, "memory_GiB": 16,
//     "efficiency": { "default": {"compute": 0.5, "memory": 0.8, "source": "..."},
//                     "conv": {"compute": 0.568, "tensor": 0.233, "source": "..."} },
//     "sources": ["NVIDIA V100 datasheet ..."] }
// "efficiency" holds "default" (every kind not listed) and at most one entry per layer kind; an
// entry may give compute (of the FP32 peak), tensor (of the tensor peaks), memory, or some of them
// (what it leaves out comes from "default"; the default's tensor, when absent, is its compute),
// and says where its figures come from in "source".
#include "sim/device.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/embedded_files.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/results.h"

namespace scalelab::sim {

namespace detail {
const EmbeddedFile* embedded_devices(std::size_t& count);  // generated (cmake/EmbedFiles.cmake)
}  // namespace detail

namespace {

// The device files' names for the layer kinds, in LayerKind's order. They are the workload
// format's names too (workload.cpp's name_of(LayerKind)); kept here so that reading a device file
// needs nothing of the workload code.
constexpr std::array<std::string_view, kLayerKinds> kKindNames = {"conv", "matmul", "attention", "norm",
                                                                  "elementwise", "pool", "embedding"};
static_assert(static_cast<std::size_t>(LayerKind::embedding) + 1 == kLayerKinds, "kKindNames follows LayerKind");

std::string kind_list() {
  std::string out;
  for (auto k : kKindNames) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

std::string catalog_list() {
  std::string out;
  for (const auto& n : device_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A positive number at j[key]; `required` false lets it be absent (then `fallback`).
double number(const nlohmann::json& j, const std::string& key, const std::string& where, const std::string& fix,
              bool required = true, double fallback = 0, bool zero_ok = false) {
  if (!j.contains(key)) {
    if (!required) return fallback;
    throw_input(where + ": field \"" + key + "\" is missing; " + fix);
  }
  const auto& v = j[key];
  if (!v.is_number()) throw_input(where + ": field \"" + key + "\" must be a number; " + fix);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < 0 || (x == 0 && !zero_ok)) {
    throw_input(where + ": field \"" + key + "\" is " + v.dump() + ", it must be " + (zero_ok ? "0 or more" : "more than 0") +
                "; " + fix);
  }
  return x;
}

double fraction(const nlohmann::json& j, const std::string& key, const std::string& where, double fallback) {
  const double x = number(j, key, where, "give a fraction of the peak in (0, 1]", false, fallback);
  if (x > 1) throw_input(where + ": field \"" + key + "\" is " + j[key].dump() + ", a fraction of the peak cannot exceed 1");
  return x;
}

std::string text(const nlohmann::json& j, const std::string& key, const std::string& where, const std::string& fix) {
  if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
    throw_input(where + ": field \"" + key + "\" is missing or not a non-empty string; " + fix);
  }
  return j[key].get<std::string>();
}

// `base`: the default entry, for what an entry leaves out; null while reading the default entry.
Efficiency efficiency_from(const nlohmann::json& e, const std::string& where, const Efficiency* base) {
  const Efficiency fallback = base != nullptr ? *base : Efficiency{};
  if (!e.is_object()) throw_input(where + " must be an object such as {\"compute\": 0.5, \"memory\": 0.8, \"source\": \"...\"}");
  (void)text(e, "source", where, "say where the fractions come from (docs/simulator.md, Devices)");
  for (const auto& [k, v] : e.items()) {
    if (k != "compute" && k != "tensor" && k != "memory" && k != "source") {
      throw_input(where + ": unknown field \"" + k + "\"; an efficiency has compute, tensor, memory and source");
    }
  }
  Efficiency out;
  out.compute = fraction(e, "compute", where, fallback.compute);
  // Without a tensor fraction: the default entry's, or in the default entry its compute fraction.
  out.tensor = fraction(e, "tensor", where, base != nullptr ? base->tensor : out.compute);
  out.memory = fraction(e, "memory", where, fallback.memory);
  return out;
}

DeviceSpec parse_embedded(const EmbeddedFile& d) {
  const std::string where = std::string("catalog device ") + d.name;
  nlohmann::json j;
  try {
    j = parse_json_text(d.text);
  } catch (const JsonTextError& e) {
    throw_input(where + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return device_from_json(j, where);
}

std::string normalised(std::string s) {
  for (auto& c : s) c = c == ' ' || c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string_view prefix : {"tesla-", "nvidia-", "amd-", "instinct-"}) {
    if (s.starts_with(prefix)) s.erase(0, prefix.size());
  }
  return s;
}

// The rate at x from measured (x, rate) points: log-log between neighbours, flat beyond the ends;
// points at one x (two layers of one size) count as one, their rates' geometric mean.
double log_log_at(std::vector<std::pair<double, double>> pts, double x) {
  std::sort(pts.begin(), pts.end());
  std::vector<std::pair<double, double>> merged;
  for (std::size_t i = 0; i < pts.size();) {
    std::size_t j = i;
    double log_sum = 0;
    for (; j < pts.size() && pts[j].first == pts[i].first; ++j) log_sum += std::log(pts[j].second);
    merged.emplace_back(pts[i].first, j - i == 1 ? pts[i].second : std::exp(log_sum / static_cast<double>(j - i)));
    i = j;
  }
  if (x <= merged.front().first) return merged.front().second;
  if (x >= merged.back().first) return merged.back().second;
  const auto hi = std::upper_bound(merged.begin(), merged.end(), std::make_pair(x, 0.0),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto lo = hi - 1;
  const double t = (std::log(x) - std::log(lo->first)) / (std::log(hi->first) - std::log(lo->first));
  return std::exp(std::log(lo->second) + t * (std::log(hi->second) - std::log(lo->second)));
}

}  // namespace

std::string_view name_of(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::amp: return "amp";
  }
  return "?";
}

Precision parse_precision(std::string_view t) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::amp}) {
    if (t == name_of(p)) return p;
  }
  throw_parameter(ErrorKind::usage, "precision",
                  std::string(t) + ": not a precision; use fp32 (float32), tf32 (TF32 tensor cores) or amp (float16/bfloat16 "
                                   "tensor cores with float32 master weights)");
}

double activation_bytes(Precision p) { return p == Precision::amp ? 2.0 : 4.0; }

double DeviceSpec::peak_flops(Precision p) const {
  double tflops = fp32_tflops;
  if (p == Precision::tf32 && tf32_tflops > 0) tflops = tf32_tflops;
  if (p == Precision::amp && amp_tflops > 0) tflops = amp_tflops;
  return tflops * 1e12;
}

bool DeviceSpec::on_tensor_cores(Precision p) const {
  return (p == Precision::tf32 && tf32_tflops > 0) || (p == Precision::amp && amp_tflops > 0);
}

const ShapeRate* DeviceSpec::nearest_shape(LayerKind k, const GemmShape& shape) const {
  const ShapeRate* best = nullptr;
  double best_d = 0;
  for (const ShapeRate& s : shape_rates) {
    if (s.kind != k) continue;
    const double dm = std::log(shape.m / s.shape.m), dn = std::log(shape.n / s.shape.n), dk = std::log(shape.k / s.shape.k);
    const double d = dm * dm + dn * dn + dk * dk;
    if (best == nullptr || d < best_d) {
      best = &s;
      best_d = d;
    }
  }
  return best;
}

double DeviceSpec::shape_flops_per_s(LayerKind k, const GemmShape& shape) const {
  const ShapeRate* near = nearest_shape(k, shape);
  if (near == nullptr) return 0.0;
  if (!(shape.batch > 0)) return near->flops_per_s;
  std::vector<std::pair<double, double>> pts;  // (batch, FLOP/s) of that shape, where its batch is known
  for (const ShapeRate& s : shape_rates) {
    if (s.kind == k && s.shape.m == near->shape.m && s.shape.n == near->shape.n && s.shape.k == near->shape.k &&
        s.shape.batch > 0) {
      pts.emplace_back(s.shape.batch, s.flops_per_s);
    }
  }
  return pts.empty() ? near->flops_per_s : log_log_at(std::move(pts), shape.batch);
}

namespace {

bool same_figures(const WorkloadLayer& a, const WorkloadLayer& b) {
  const auto near = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y)); };
  return a.kind == b.kind && a.params == b.params && near(a.forward_flops, b.forward_flops) && near(a.in_elems, b.in_elems) &&
         near(a.out_elems, b.out_elems);
}

bool run_matches(const std::vector<WorkloadLayer>& run, const std::vector<WorkloadLayer>& layers, std::size_t first) {
  if (run.empty() || first + run.size() > layers.size()) return false;
  for (std::size_t j = 0; j < run.size(); ++j) {
    if (!same_figures(run[j], layers[first + j])) return false;
  }
  return true;
}

}  // namespace

std::size_t DeviceSpec::fused_run_at(const std::vector<WorkloadLayer>& layers, std::size_t first, double batch,
                                     double& seconds_per_sample) const {
  // The runs were timed as a model's first layers (whose input gradient training does not compute):
  // elsewhere in a workload the same figures would cost that gradient too.
  if (first != 0) return 0;
  const FusedRate* match = nullptr;
  for (const FusedRate& f : fused_rates) {
    if (run_matches(f.layers, layers, first) && (match == nullptr || f.layers.size() > match->layers.size())) match = &f;
  }
  if (match == nullptr) return 0;
  std::vector<std::pair<double, double>> pts;  // (batch, seconds per sample) of that run
  for (const FusedRate& f : fused_rates) {
    if (f.layers.size() == match->layers.size() && run_matches(f.layers, layers, first)) pts.emplace_back(f.batch, f.seconds_per_sample);
  }
  seconds_per_sample = log_log_at(std::move(pts), batch);
  return match->layers.size();
}

double DeviceSpec::memory_Bps(LayerKind k, double bytes) const {
  std::vector<std::pair<double, double>> pts;  // (bytes, bytes/s), this kind's
  for (const TrafficRate& t : traffic_rates) {
    if (t.kind == k) pts.emplace_back(t.bytes, t.bytes_per_s);
  }
  if (pts.empty() || !(bytes > 0)) return mem_bw_GBps * 1e9 * of(k).memory;
  return log_log_at(std::move(pts), bytes);
}

double DeviceSpec::layer_seconds(LayerKind k, double flops, double bytes, Precision p,
                                 const std::optional<GemmShape>& shape) const {
  const Efficiency& e = of(k);
  const double fraction = on_tensor_cores(p) ? e.tensor : e.compute;
  const double measured = shape ? shape_flops_per_s(k, *shape) : 0.0;
  const double rate = measured > 0 ? measured : peak_flops(p) * fraction;
  const double compute_s = flops > 0 ? flops / rate : 0.0;
  const double memory_s = bytes > 0 ? bytes / memory_Bps(k, bytes) : 0.0;
  return std::max(compute_s, memory_s);
}

DeviceSpec device_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw_input(where + ": not a device file (a JSON object with name, peaks and efficiency; docs/simulator.md)");
  static const std::vector<std::string> known = {"name", "title", "kind", "fp32_tflops", "tf32_tflops", "amp_tflops",
                                                 "memory_bandwidth_GBps", "memory_GiB", "efficiency", "sources"};
  for (const auto& [k, v] : j.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      throw_input(where + ": unknown field \"" + k + "\"; a device file has name, title, kind, fp32_tflops, tf32_tflops, "
                          "amp_tflops, memory_bandwidth_GBps, memory_GiB, efficiency and sources");
    }
  }
  DeviceSpec d;
  d.name = text(j, "name", where, "give the device's catalog name, e.g. \"v100-sxm2-16gb\"");
  d.title = j.contains("title") ? text(j, "title", where, "give a title such as \"NVIDIA V100 SXM2 16 GB\"") : d.name;
  d.kind = j.contains("kind") ? text(j, "kind", where, "use \"gpu\" or \"cpu\"") : std::string("gpu");
  if (d.kind != "gpu" && d.kind != "cpu") throw_input(where + ": field \"kind\" is \"" + d.kind + "\"; use \"gpu\" or \"cpu\"");
  const std::string datasheet = "give the datasheet's figure (docs/simulator.md, Devices)";
  d.fp32_tflops = number(j, "fp32_tflops", where, datasheet);
  d.tf32_tflops = number(j, "tf32_tflops", where, "give the dense TF32 tensor peak, or 0 where there is none", false, 0, true);
  d.amp_tflops = number(j, "amp_tflops", where, "give the dense FP16/BF16 tensor peak, or 0 where there is none", false, 0, true);
  d.mem_bw_GBps = number(j, "memory_bandwidth_GBps", where, datasheet);
  d.memory_GiB = number(j, "memory_GiB", where, datasheet);
  if (!j.contains("sources") || !j["sources"].is_array() || j["sources"].empty()) {
    throw_input(where + ": field \"sources\" is missing or empty; list where the peaks come from (datasheets)");
  }
  for (const auto& s : j["sources"]) {
    if (!s.is_string()) throw_input(where + ": field \"sources\" must be a list of strings");
    d.sources.push_back(s.get<std::string>());
  }
  if (!j.contains("efficiency") || !j["efficiency"].is_object() || !j["efficiency"].contains("default")) {
    throw_input(where + ": field \"efficiency\" needs a \"default\" entry ({\"compute\": ..., \"memory\": ..., \"source\": ...})");
  }
  const nlohmann::json& eff = j["efficiency"];
  const Efficiency base = efficiency_from(eff["default"], where + ": efficiency.default", nullptr);
  d.efficiency.fill(base);
  for (const auto& [k, v] : eff.items()) {
    if (k == "default") continue;
    const auto it = std::find(kKindNames.begin(), kKindNames.end(), k);
    if (it == kKindNames.end()) {
      throw_input(where + ": efficiency." + k + ": not a layer kind; use default or one of " + kind_list());
    }
    d.efficiency[static_cast<std::size_t>(it - kKindNames.begin())] = efficiency_from(v, where + ": efficiency." + k, &base);
  }
  return d;
}

std::vector<std::string> device_names() { return embedded_names(&detail::embedded_devices); }

DeviceSpec resolve_device(const std::string& name) {
  if (names_a_file(name)) {
    if (!std::filesystem::exists(name)) {
      throw_parameter(ErrorKind::input, "device", name + ": no such device file; give a catalog name (" + catalog_list() +
                                                      ") or the path of a device file (docs/simulator.md)");
    }
    return device_from_json(read_json_file(name), name);
  }
  if (const EmbeddedFile* f = find_embedded(&detail::embedded_devices, name)) {
    DeviceSpec d = parse_embedded(*f);
    if (d.name != name) throw_input(std::string("catalog device ") + f->name + ": its \"name\" is \"" + d.name + "\"; make them agree");
    return d;
  }
  throw_parameter(ErrorKind::input, "device",
                  name + ": not a catalog device or a file; use one of " + catalog_list() + ", or a path to a device file (docs/simulator.md)");
}

DeviceSpec device_for_model(const std::string& gpu_model, const std::string& where) {
  // Machine files and nvidia-smi name GPUs in their own ways ("Tesla V100-SXM2-32GB",
  // "NVIDIA H100 80GB HBM3"); most become a catalog name once lower-cased, the vendor's prefix
  // dropped and spaces made dashes; the rest are listed here.
  static const std::vector<std::pair<std::string, std::string>> aliases = {
      {"h100-80gb-hbm3", "h100-sxm5-80gb"}, {"h100-sxm5", "h100-sxm5-80gb"},  {"k80", "k80"},
      {"p100-sxm2-16gb", "p100-sxm2"},      {"v100-sxm3-32gb-h", "v100-sxm3-32gb"}, {"mi250x", "mi250x-gcd"},
      {"a100-80gb-pcie", "a100-pcie-80gb"}, {"h200", "h200-sxm-141gb"}};
  std::string key = normalised(gpu_model);
  for (const auto& [from, to] : aliases) {
    if (key == from) key = to;
  }
  const auto names = device_names();
  if (std::find(names.begin(), names.end(), key) != names.end()) return resolve_device(key);
  const std::string problem = "no catalog device for this GPU model; the catalog has " + catalog_list() +
                              " (add a device file to data/devices, docs/simulator.md)";
  if (!where.empty()) {
    throw_parameter(ErrorKind::input, "machine", where + ": model '" + gpu_model + "': " + problem);
  }
  throw_parameter(ErrorKind::input, "gpu_model", "'" + gpu_model + "': " + problem);
}

}  // namespace scalelab::sim
