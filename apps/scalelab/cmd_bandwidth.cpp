// `scalelab bandwidth [--cuda-device N] [-b 1K -e 1G -f 2] [--mode pinned|pageable|both] [--iters 20]
// [--peers] [--json FILE]`: host-to-device, device-to-host and device-to-device copy bandwidth
// against size (gpu/bandwidth.h measures, gpu/bandwidth_table.h prints), the course's
// bandwidthTest. Also the GPU figures `scalelab calibrate` saves in the profile
// (gpu_copies_for_profile). Built only with CUDA (cmd_bandwidth_none.cpp otherwise); never run on
// a GPU yet (docs/gpu-status.md).
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/sweep.h"
#include "commands.h"
#include "core/error.h"
#include "core/results.h"
#include "core/size_parse.h"
#include "gpu/bandwidth.h"
#include "gpu/bandwidth_table.h"
#include "model/profile.h"

namespace scalelab::cli {

namespace {

int positive(const po::variables_map& vm, const char* name, const Args& args, int at_least) {
  const std::int64_t v = parse_int(vm[name].as<std::string>(), std::string("--") + name);
  if (v < at_least || v > 1000000) {
    usage_error(args, std::string("--") + name + " " + std::to_string(v) + ": use " + std::to_string(at_least) + " to 1000000");
  }
  return static_cast<int>(v);
}

}  // namespace

int cmd_bandwidth(const Args& args) {
  po::options_description opts("scalelab bandwidth options (GB = 1e9 bytes; sizes take K, M, G = 1024^n)");
  opts.add_options()
      ("cuda-device", po::value<std::string>()->default_value("0"), "the GPU to measure (CUDA device index)")
      ("minbytes,b", po::value<std::string>()->default_value("1K"), "smallest copy")
      ("maxbytes,e", po::value<std::string>()->default_value("1G"), "largest copy")
      ("stepfactor,f", po::value<std::string>()->default_value("2"), "multiply the size by this (at least 2)")
      ("mode", po::value<std::string>()->default_value("both"), "host memory for H2D and D2H: pinned, pageable or both")
      ("iters", po::value<std::string>()->default_value("20"), "copies timed together between two CUDA events")
      ("warmup_iters", po::value<std::string>()->default_value("2"), "untimed copies before each figure")
      ("repeats", po::value<std::string>()->default_value("5"), "timed groups per figure (the median is shown)")
      ("peers", "also copy between every pair of GPUs, P2P off and on (needs two GPUs)")
      ("peer-bytes", po::value<std::string>()->default_value("64M"), "size of the peer copies")
      ("json", po::value<std::string>(), "write the scalelab.bandwidth record to FILE");
  const auto vm = parse(args,
                        "scalelab bandwidth [--cuda-device N] [-b 1K -e 1G -f 2] [--mode pinned|pageable|both] [--iters 20] "
                        "[--peers] [--json FILE]\n  (built with CUDA; GPU status (scalelab bandwidth): ran on one GPU only, docs/gpu-status.md)",
                        opts);
  if (!vm) return 0;
  check_output_files(*vm, {"json"});
  gpu::BandwidthOptions o;
  const std::int64_t device = parse_int((*vm)["cuda-device"].as<std::string>(), "--cuda-device");
  if (device < 0 || device > 1024) usage_error(args, "--cuda-device " + std::to_string(device) + ": give a CUDA device index, 0 or more");
  o.device = static_cast<int>(device);
  const std::string mode = (*vm)["mode"].as<std::string>();
  if (mode != "pinned" && mode != "pageable" && mode != "both") {
    usage_error(args, "--mode " + mode + ": use pinned, pageable or both");
  }
  o.pinned = mode != "pageable";
  o.pageable = mode != "pinned";
  bench::SweepSpec spec;
  spec.min_bytes = parse_size((*vm)["minbytes"].as<std::string>(), "-b/--minbytes");
  spec.max_bytes = parse_size((*vm)["maxbytes"].as<std::string>(), "-e/--maxbytes");
  spec.step_factor = parse_size((*vm)["stepfactor"].as<std::string>(), "-f/--stepfactor");
  if (spec.min_bytes == 0) usage_error(args, "-b/--minbytes 0: copies need at least 1 byte");
  if (spec.step_factor < 2) usage_error(args, "-f/--stepfactor " + std::to_string(spec.step_factor) + ": use 2 or more");
  o.sizes = bench::size_sweep(spec, 1);
  o.iters = positive(*vm, "iters", args, 1);
  o.warmup = positive(*vm, "warmup_iters", args, 0);
  o.repeats = positive(*vm, "repeats", args, 1);
  o.peers = vm->count("peers") > 0;
  o.peer_bytes = parse_size((*vm)["peer-bytes"].as<std::string>(), "--peer-bytes");
  if (o.peer_bytes == 0) usage_error(args, "--peer-bytes 0: copies need at least 1 byte");

  const gpu::DeviceInfo info = gpu::open_device(o.device);  // one line and exit 1 when no GPU is usable
  gpu::BandwidthTable table(std::cout, o);
  table.preamble(info);
  table.header();
  o.on_size = [&](std::uint64_t bytes, const std::vector<gpu::CopyPoint>& points) { table.row(bytes, points); };
  const gpu::BandwidthReport report = gpu::run_bandwidth_test(o);
  table.summary(report);
  if (vm->count("json")) {
    nlohmann::json doc = make_envelope("bandwidth", 1, args.full);
    doc.update(gpu::to_json(report));
    write_json_file((*vm)["json"].as<std::string>(), doc);
  }
  return 0;
}

model::GpuCopies gpu_copies_for_profile(bool quick) {
  model::GpuCopies g;
  gpu::BandwidthOptions o;
  o.device = 0;
  o.pageable = false;
  o.sizes = {8, quick ? (64ull << 20) : (256ull << 20)};
  o.iters = quick ? 5 : 20;
  o.repeats = quick ? 3 : 5;
  try {
    const gpu::BandwidthReport r = gpu::run_bandwidth_test(o);
    using gpu::CopyKind;
    using gpu::HostMemory;
    auto at = [&](CopyKind k, HostMemory m, std::uint64_t bytes) -> const gpu::CopyPoint& {
      const gpu::CopyPoint* p = gpu::find_point(r, k, m, bytes);
      if (p == nullptr) throw_runtime("calibrate: the bandwidth test did not return the " + std::string(gpu::name_of(k)) + " figure");
      return *p;
    };
    const std::uint64_t small = o.sizes.front(), large = o.sizes.back();
    g.device = r.device.name;
    g.small_bytes = static_cast<double>(small);
    g.large_bytes = static_cast<double>(large);
    g.h2d_GBps = at(CopyKind::h2d, HostMemory::pinned, large).GBps;
    g.d2h_GBps = at(CopyKind::d2h, HostMemory::pinned, large).GBps;
    g.d2d_GBps = at(CopyKind::d2d, HostMemory::none, large).GBps;
    g.h2d_latency_us = at(CopyKind::h2d, HostMemory::pinned, small).seconds * 1e6;
    g.d2h_latency_us = at(CopyKind::d2h, HostMemory::pinned, small).seconds * 1e6;
    g.d2d_latency_us = at(CopyKind::d2d, HostMemory::none, small).seconds * 1e6;
    g.measured = true;
  } catch (const Error& e) {
    g = model::GpuCopies{};
    g.reason = e.what();
  }
  return g;
}

}  // namespace scalelab::cli
