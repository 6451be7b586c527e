// The device bandwidth test behind `scalelab bandwidth` and the GPU part of `scalelab calibrate`,
// as CUDA samples' bandwidthTest and nvbandwidth measure it: host-to-device and device-to-host
// copies from pinned (cudaMallocHost) and pageable (malloc'ed, pre-touched) host memory, and
// device-to-device copies, against size; optionally copies between GPU pairs with peer access on
// and off, as p2pBandwidthLatencyTest does.
//
// Protocol, per copy kind and size: `warmup` copies, then `repeats` times: an event, `iters`
// copies on one stream, an event; time per copy = elapsed / iters; the figure is the median over
// the repeats. GB/s = 1e9 bytes per second. A device-to-device copy counts the bytes read AND
// written (2 x size), as bandwidthTest does. Buffers are allocated once at the largest size, and
// at every size each host-device round trip and the device copy are checked once for the right
// bytes (a wrong copy is a runtime error); peer copies are timed, not checked.
//
//   BandwidthOptions o; o.sizes = {1 << 10, 32 << 20};
//   BandwidthReport r = run_bandwidth_test(o);   // throws Error (runtime) when no usable GPU
//
// Built only with CUDA (lib/gpu); the host-side types here are also used by the table and JSON
// (gpu/bandwidth_table.h). GPU status (scalelab bandwidth): ran on one GPU only (docs/gpu-status.md).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace scalelab::gpu {

enum class CopyKind { h2d, d2h, d2d };
enum class HostMemory { pinned, pageable, none };  // none: device-to-device

[[nodiscard]] std::string_view name_of(CopyKind k);    // "H2D", "D2H", "D2D"
[[nodiscard]] std::string_view name_of(HostMemory m);  // "pinned", "pageable", "device"

// Bytes a copy of `size` bytes moves through memory: 2 x size device-to-device (read + write).
[[nodiscard]] constexpr double counted_bytes(CopyKind k, double size) { return k == CopyKind::d2d ? 2 * size : size; }
// GB/s (1e9 bytes) of a copy of `size` bytes taking `seconds`; 0 when seconds is not positive.
[[nodiscard]] constexpr double copy_GBps(CopyKind k, double size, double seconds) {
  return seconds > 0 ? counted_bytes(k, size) / seconds / 1e9 : 0.0;
}

struct CopyPoint {
  CopyKind kind = CopyKind::h2d;
  HostMemory host = HostMemory::pinned;
  std::uint64_t bytes = 0;  // the copy's size
  double seconds = 0;       // median time per copy
  double min_seconds = 0;   // fastest repeat, per copy
  double GBps = 0;          // copy_GBps(kind, bytes, seconds)
};

struct BandwidthOptions {
  int device = 0;
  std::vector<std::uint64_t> sizes;  // ascending, each > 0
  bool pinned = true;                // H2D and D2H from pinned host memory
  bool pageable = true;              // H2D and D2H from pageable host memory
  bool d2d = true;
  bool peers = false;                // copies between every GPU pair, P2P off and on
  std::uint64_t peer_bytes = 64ull << 20;
  int iters = 20;    // copies timed together
  int warmup = 2;    // untimed copies first
  int repeats = 5;   // timed groups; the median is reported
  // Called with a size's points as soon as they are measured (the table prints rows as they come).
  std::function<void(std::uint64_t bytes, const std::vector<CopyPoint>& points)> on_size;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  std::string compute_capability;  // "9.0"
  double memory_GiB = 0;
  int device_count = 0;  // GPUs this process sees
};

// One ordered GPU pair's copy (src -> dst), with peer access off (staged through the host) and on.
struct PeerPoint {
  int src = 0;
  int dst = 0;
  bool can_access = false;   // cudaDeviceCanAccessPeer(src, dst)
  double off_GBps = 0;       // peer_bytes per median time, P2P off
  double on_GBps = 0;        // P2P on; 0 when peer access is not possible
  double off_latency_us = 0; // median time of a 4-byte copy
  double on_latency_us = 0;
};

struct BandwidthReport {
  DeviceInfo device;
  std::vector<CopyPoint> points;  // in measuring order: per size, H2D/D2H pinned, pageable, D2D
  std::vector<PeerPoint> peers;
  std::string peer_note;          // why there are no peer figures ("needs two GPUs; this machine shows 1")
  int iters = 0, warmup = 0, repeats = 0;
};

// Checks that `device` is usable and selects it (cudaSetDevice). Throws Error: runtime when no
// GPU is usable (naming the CUDA error and what to check), usage when the index does not exist.
[[nodiscard]] DeviceInfo open_device(int device);

// Runs the test on options.device. Throws Error: usage for bad options (a device index that does
// not exist, sizes empty or not ascending), runtime for no usable GPU (naming the CUDA error),
// too little device or host memory for the largest size, or a copy that came out wrong.
[[nodiscard]] BandwidthReport run_bandwidth_test(const BandwidthOptions& options);

// The point of a kind at a size, or nullptr.
[[nodiscard]] const CopyPoint* find_point(const BandwidthReport& r, CopyKind k, HostMemory m, std::uint64_t bytes);

}  // namespace scalelab::gpu
