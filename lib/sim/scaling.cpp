// simulate_scaling (sim/scaling.h): the machine's devices, host cores and links turned into step
// inputs, one step per device count.
#include "sim/scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/error.h"
#include "core/limits.h"
#include "core/overlap_rule.h"
#include "model/profile.h"
#include "sim/cpu_rates.h"
#include "topo/catalog.h"

namespace scalelab::sim {
namespace {

// A JPEG of an ImageNet-sized photo decoded, resized and cropped on one core: about 80 images/s
// (docs/references.md, "Input pipelines").
constexpr double kJpegDecodePerCorePerS = 80.0;

std::string gib(double bytes) {
  char buf[48];
  const double g = bytes / (1024.0 * 1024.0 * 1024.0);
  std::snprintf(buf, sizeof buf, g < 1e6 ? "%.1f GiB" : "%.3g GiB", g);
  return buf;
}

void check_memory(const Workload& w, const DeviceSpec& d, const StepOptions& o, double optimizer_bytes) {
  if (d.memory_GiB <= 0) return;
  const MemoryEstimate m = training_memory(w, o.batch, o.precision, optimizer_bytes);
  const double have = d.memory_GiB * 1024.0 * 1024.0 * 1024.0;
  if (m.total() <= have) return;
  throw_parameter(ErrorKind::usage, "batch_size",
                  std::to_string(o.batch) + ": " + w.name + " needs about " + gib(m.total()) + " per device (" +
                      gib(m.parameters + m.gradients + m.optimizer_state) + " of weights, gradients and optimizer "
                      "state, " + gib(m.activations) + " of activations) but a " + d.title + " has " + gib(have) +
                      ", " + gib(m.total() - have) + " short; use a smaller batch per device" +
                      (o.precision == Precision::amp ? "" : ", or amp"));
}

// The bandwidth of a GPU's link to the host (its first PCIe link), for the input copy.
double host_link_GBps(const topo::Machine& m, int gpu) {
  for (const topo::Link& l : m.links) {
    if ((l.a == gpu || l.b == gpu) && l.spec.type == topo::LinkType::pcie) return l.figures.model_GBps;
  }
  return 0.0;
}

// A node's cores shared among the GPUs the job uses on it.
double host_cores_per_gpu(const topo::Machine& m, int gpus_used_per_node) {
  int cores = 0;
  for (const int c : m.cpus()) cores += m.devices[static_cast<std::size_t>(c)].cores;
  return cores > 0 ? static_cast<double>(cores) / std::max(1, gpus_used_per_node) : 1.0;
}

void add_efficiencies(std::vector<ScalingRow>& rows) {
  if (rows.empty()) return;
  // Against the smallest count's per-device rate (normally one device).
  const double base = rows.front().step.samples_per_s / rows.front().devices;
  for (ScalingRow& r : rows) r.scaling_efficiency = base > 0 ? r.step.samples_per_s / (base * r.devices) : 0.0;
}

ScalingResult on_this_machine(const ScalingRequest& q, ScalingResult res) {
  const std::string path = q.profile.empty() ? model::default_profile_path() : q.profile;
  const model::Profile profile = model::load_profile(path);
  res.warnings = model::profile_cautions(profile, *std::max_element(q.counts.begin(), q.counts.end()));
  res.device = device_from_profile(profile, path);
  // Several ranks on this node share its caches and memory bandwidth: their layers run at the rates
  // calibrate measured with every rank computing at once, where the profile has them.
  const DeviceSpec shared =
      profile.compute_shared.measured ? device_from_profile(profile, path, /*shared=*/true) : res.device;
  res.machine = "this machine (" + profile.host + "), CPU ranks of one thread" +
                (profile.compute_shared.measured ? "; several ranks at the layer rates measured with all computing at once"
                                                 : "");
  res.options.input = {};  // the lab data sets are decoded arrays in memory
  for (const int n : q.counts) {
    std::optional<model::Predictor> pr;
    if (n > 1) pr.emplace(profile, n);
    ScalingRow row;
    row.devices = n;
    // The trainer's choice for n ranks of one compute thread on this machine.
    // (One rank has nothing to average; the trainer's MPI thread-level condition is not known here.)
    row.overlap = n > 1 && (q.overlap == "on" || (q.overlap == "auto" && overlap_fits(limits::hardware_threads(), n, 1)));
    res.options.overlap = row.overlap;
    row.step = simulate_step({res.workload, n > 1 ? shared : res.device, pr ? &*pr : nullptr, res.options});
    if (pr && res.collectives.empty()) res.collectives = pr->where();
    res.rows.push_back(std::move(row));
  }
  return res;
}

}  // namespace

double optimizer_bytes_per_param(const std::string& optimizer) {
  // float32 reads and writes per parameter: the weight and its gradient read, the weight written,
  // and each state tensor read and written.
  if (optimizer == "sgd" || optimizer == "lars") return 12.0 + 8.0;   // + momentum
  if (optimizer == "adam" || optimizer == "lamb") return 12.0 + 16.0;  // + first and second moments
  throw_parameter(ErrorKind::usage, "optimizer", optimizer + ": unknown optimizer; use sgd, adam, lars or lamb");
}

double default_decode_rate(const Workload& w) {
  if (w.unit != "images") return 0.0;
  double raw = 1;
  for (const std::size_t d : w.input_shape) raw *= static_cast<double>(d);
  // Stored as raw pixels (the Fashion-MNIST arrays): nothing to decode.
  if (w.encoded_sample_bytes <= 0 || w.encoded_sample_bytes >= raw) return 0.0;
  return kJpegDecodePerCorePerS;
}

ScalingResult simulate_scaling(const ScalingRequest& q) {
  if (q.counts.empty()) throw_parameter(ErrorKind::usage, "counts", ": give at least one device count");
  if (q.overlap != "auto" && q.overlap != "on" && q.overlap != "off") {
    throw_parameter(ErrorKind::usage, "overlap", q.overlap + ": use auto, on or off");
  }
  ScalingResult res;
  res.workload = resolve_workload(q.workload);
  res.options = q.step;
  res.options.optimizer_bytes_per_param = optimizer_bytes_per_param(q.optimizer);
  if (q.machine == "this") {
    res = on_this_machine(q, std::move(res));
    add_efficiencies(res.rows);
    return res;
  }
  const topo::Machine m = topo::resolve_machine(q.machine);
  const std::vector<int> gpus = m.gpus();
  if (gpus.empty()) {
    throw_parameter(ErrorKind::input, "machine", m.name + ": has no GPUs to simulate; use a GPU machine or 'this'");
  }
  const topo::Device& gpu = m.devices[static_cast<std::size_t>(gpus.front())];
  res.device = device_for_model(gpu.model, m.origin + ", GPU " + gpu.id);
  // A file's own figures are the topology's; the simulator prices the catalog device its model
  // names. Where a user's file disagrees with it by more than 1%, say which it used. (Catalog
  // machines state their sources' figures, e.g. lumi-g the MI250X's FP32 vector rate where the
  // device prices its matrix rate.)
  const bool user_file = m.origin.rfind("catalog:", 0) != 0;
  for (const auto& [field, file_value, used] :
       {std::tuple{"fp32_tflops", gpu.fp32_tflops, res.device.fp32_tflops},
        std::tuple{"mem_bw_GBps", gpu.mem_bw_GBps, res.device.mem_bw_GBps},
        std::tuple{"memory_GiB", gpu.memory_GiB, res.device.memory_GiB}}) {
    if (user_file && file_value > 0 && used > 0 && std::abs(file_value - used) > 0.01 * used) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "%s: GPU %s gives %s %g, but the simulator prices the catalog device %s (%g) that its model "
                    "'%s' names; add a device file for other figures (docs/simulator.md)",
                    m.origin.c_str(), gpu.id.c_str(), field, file_value, res.device.name.c_str(), used, gpu.model.c_str());
      res.warnings.emplace_back(line);
    }
  }
  res.machine = m.title;
  const double decode = q.decode_per_core_per_s >= 0 ? q.decode_per_core_per_s : default_decode_rate(res.workload);
  res.options.input = {decode, host_cores_per_gpu(m, m.gpus_per_node()), host_link_GBps(m, gpus.front())};
  res.options.overlap = q.overlap != "off";  // NCCL on its own stream, as DDP and Horovod run it
  check_memory(res.workload, res.device, res.options, res.options.optimizer_bytes_per_param);
  for (const int n : q.counts) {
    const topo::GpuSelection sel = topo::select_gpus(m, std::to_string(n));
    StepOptions options = res.options;
    options.input.cores = host_cores_per_gpu(m, sel.nodes > 1 ? m.gpus_per_node() : sel.total);
    std::optional<model::Predictor> pr;
    if (n > 1) pr.emplace(m, sel, q.p2p ? topo::P2P::on : topo::P2P::off);
    ScalingRow row;
    row.devices = n;
    row.nodes = sel.nodes;
    row.overlap = n > 1 && options.overlap;
    row.step = simulate_step({res.workload, res.device, pr ? &*pr : nullptr, options});
    if (pr) res.collectives = pr->where() + ": " + pr->bottleneck();
    res.rows.push_back(std::move(row));
  }
  add_efficiencies(res.rows);
  return res;
}

}  // namespace scalelab::sim
