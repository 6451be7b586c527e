// A workload's step on a machine at several device counts: the scaling curve `scalelab simulate`
// prints. GPUs are filled node by node (topo::select_gpus); each count gets its own collective
// cost model over the GPUs it uses, and the host's cores are shared among a node's GPUs for the
// input pipeline. On "this" machine the devices are CPU ranks: the calibration profile gives the
// nn engine's kernel rates (sim/device.h) and the collective costs (model/profile.h), and the
// CPU engine overlaps averaging with backward where the trainer would (ScalingRequest::overlap).
//
//   ScalingRequest q;  q.workload = "resnet50";  q.machine = "dgx1";  q.counts = {1, 2, 4, 8};
//   ScalingResult r = simulate_scaling(q);   // r.rows[i].step, r.rows[i].scaling_efficiency
#pragma once
#include <string>
#include <vector>

#include "sim/step_model.h"
#include "topo/routes.h"

namespace scalelab::sim {

struct ScalingRequest {
  std::string workload = "resnet50";   // catalog name or file
  std::string machine = "dgx1";        // catalog name, machine file, or "this"
  std::string profile;                 // calibration profile for "this" (default: model::default_profile_path())
  std::vector<int> counts = {1};       // devices (GPUs, or CPU ranks on "this")
  std::string optimizer = "sgd";       // sgd (with momentum), adam, lars, lamb: the optimizer's memory traffic
  bool p2p = true;                     // GPU peer-to-peer; off: through host memory (NCCL_P2P_DISABLE=1)
  double decode_per_core_per_s = -1;   // samples per host core per second; < 0: the workload's default
  // Whether buckets are averaged while backward goes on: "on" or "auto" on GPUs (NCCL's stream,
  // DDP, Horovod); on "this" machine's CPU ranks "auto" follows the trainer's rule
  // (core/overlap_rule.h) at each rank count. "off": every bucket waits for the end of backward.
  std::string overlap = "auto";
  StepOptions step;                    // batch, precision, averaging, algorithm (overlap and input are set here)
};

struct ScalingRow {
  int devices = 1;
  int nodes = 1;
  StepResult step;
  double scaling_efficiency = 1;  // samples/s over devices x the one-device samples/s
  bool overlap = true;            // whether this count's buckets started during backward
};

struct ScalingResult {
  Workload workload;
  DeviceSpec device;
  std::string machine;        // the machine's title
  std::string collectives;    // how allreduce is priced there (the cost model's words)
  StepOptions options;        // as used (input pipeline filled in; overlap: the last row's)
  std::vector<ScalingRow> rows;
  // What the caller should say on stderr: a machine file's GPU figures that differ from the catalog
  // device the simulator prices (it reads the model name, not those figures).
  std::vector<std::string> warnings;
};

[[nodiscard]] ScalingResult simulate_scaling(const ScalingRequest& q);

// Bytes of memory traffic per parameter of an optimizer step, by name (usage error naming the
// known optimizers otherwise).
[[nodiscard]] double optimizer_bytes_per_param(const std::string& optimizer);

// Samples per second one host core decodes and augments for a workload, when not given: 0 for
// inputs stored decoded (the lab data sets' IDX arrays, token ids), a JPEG rate for images.
[[nodiscard]] double default_decode_rate(const Workload& w);

}  // namespace scalelab::sim
