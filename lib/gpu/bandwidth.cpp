// The device bandwidth test (see bandwidth.h) with the CUDA runtime. No kernels: every copy is a
// cudaMemcpyAsync / cudaMemcpyPeerAsync on one non-blocking stream, bracketed by CUDA events, so
// the time is the device's, not the host's. Built only with CUDA.
// GPU status (scalelab bandwidth): ran on one GPU only (docs/gpu-status.md).
#include "gpu/bandwidth.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/size_parse.h"
#include "core/stats.h"

namespace scalelab::gpu {

std::string_view name_of(CopyKind k) {
  switch (k) {
    case CopyKind::h2d: return "H2D";
    case CopyKind::d2h: return "D2H";
    case CopyKind::d2d: return "D2D";
  }
  return "?";
}

std::string_view name_of(HostMemory m) {
  switch (m) {
    case HostMemory::pinned: return "pinned";
    case HostMemory::pageable: return "pageable";
    case HostMemory::none: return "device";
  }
  return "?";
}

const CopyPoint* find_point(const BandwidthReport& r, CopyKind k, HostMemory m, std::uint64_t bytes) {
  for (const auto& p : r.points) {
    if (p.kind == k && p.host == m && p.bytes == bytes) return &p;
  }
  return nullptr;
}

namespace {

void check(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw_runtime("bandwidth: " + what + " failed: " + cudaGetErrorString(rc));
}

// RAII owners, so an exception half-way frees what was allocated.
struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer(std::size_t bytes, const std::string& what) { check(cudaMalloc(&p, bytes), "cudaMalloc of " + what); }
  ~DeviceBuffer() { if (p != nullptr) cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct PinnedBuffer {
  unsigned char* p = nullptr;
  explicit PinnedBuffer(std::size_t bytes) {
    void* v = nullptr;
    check(cudaMallocHost(&v, bytes), "cudaMallocHost of " + format_size(bytes) + " (pinned host memory)");
    p = static_cast<unsigned char*>(v);
  }
  ~PinnedBuffer() { if (p != nullptr) cudaFreeHost(p); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
};

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~Stream() { if (s != nullptr) cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() { if (e != nullptr) cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// The byte every buffer holds at offset i: varies within and across pages, so a copy that drops,
// repeats or shifts a block is caught.
unsigned char pattern_at(std::size_t i) { return static_cast<unsigned char>((i ^ (i >> 9) ^ (i >> 17)) * 31u + 7u); }

void fill_pattern(unsigned char* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern_at(i);
}

void expect_pattern(const unsigned char* p, std::size_t n, const std::string& what) {
  std::size_t wrong = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != pattern_at(i)) {
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong > 0) {
    throw_runtime("bandwidth: " + what + " of " + format_size(n) + " came back with " + std::to_string(wrong) +
                  " wrong bytes (first at offset " + std::to_string(first) +
                  "); the GPU or its driver is faulty: check nvidia-smi -q and dmesg");
  }
}

struct Timing {
  double median_s = 0;
  double min_s = 0;
};

// Times `enqueue` (one copy on `stream`): warm-up copies, then `repeats` groups of `iters` copies
// between two events; per-copy time of each group, median and minimum over the groups.
template <class Enqueue>
Timing time_copies(cudaStream_t stream, const BandwidthOptions& o, const Event& start, const Event& stop,
                   std::vector<double>& per_copy, const std::string& what, Enqueue enqueue) {
  for (int i = 0; i < o.warmup; ++i) check(enqueue(), what);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after " + what);
  per_copy.clear();
  for (int r = 0; r < o.repeats; ++r) {
    check(cudaEventRecord(start.e, stream), "cudaEventRecord");
    for (int i = 0; i < o.iters; ++i) check(enqueue(), what);
    check(cudaEventRecord(stop.e, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop.e), "cudaEventSynchronize after " + what);
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.e, stop.e), "cudaEventElapsedTime");
    per_copy.push_back(static_cast<double>(ms) * 1e-3 / o.iters);
  }
  return {median(per_copy), *std::min_element(per_copy.begin(), per_copy.end())};
}

void check_options(const BandwidthOptions& o) {
  if (o.sizes.empty()) throw_parameter(ErrorKind::usage, "sizes", ": no sizes to measure; give the smallest and the largest");
  for (std::size_t i = 0; i < o.sizes.size(); ++i) {
    if (o.sizes[i] == 0 || (i > 0 && o.sizes[i] <= o.sizes[i - 1])) {
      throw_parameter(ErrorKind::usage, "sizes", ": must be positive and ascending; check the smallest, largest and factor");
    }
  }
  if (o.iters < 1) throw_parameter(ErrorKind::usage, "iters", std::to_string(o.iters) + ": give at least 1");
  if (o.repeats < 1) throw_parameter(ErrorKind::usage, "repeats", std::to_string(o.repeats) + ": give at least 1");
  if (o.warmup < 0) throw_parameter(ErrorKind::usage, "warmup_iters", std::to_string(o.warmup) + ": give 0 or more");
  if (!o.pinned && !o.pageable && !o.d2d) throw_usage("bandwidth: nothing to measure (no host memory mode and no D2D)");
}

// Copies between every ordered pair of GPUs, peer access off and (where possible) on, as
// p2pBandwidthLatencyTest does: bandwidth at peer_bytes, latency at 4 bytes.
void measure_peers(const BandwidthOptions& o, int count, BandwidthReport& r) {
  if (count < 2) {
    r.peer_note = "peer copies need two GPUs; this machine shows " + std::to_string(count);
    return;
  }
  std::vector<std::unique_ptr<DeviceBuffer>> buf(count);
  for (int d = 0; d < count; ++d) {
    check(cudaSetDevice(d), "cudaSetDevice(" + std::to_string(d) + ")");
    buf[d] = std::make_unique<DeviceBuffer>(o.peer_bytes, format_size(o.peer_bytes) + " on GPU " + std::to_string(d));
  }
  std::vector<double> per_copy;
  per_copy.reserve(static_cast<std::size_t>(o.repeats));
  for (int src = 0; src < count; ++src) {
    check(cudaSetDevice(src), "cudaSetDevice(" + std::to_string(src) + ")");
    Stream stream;
    Event start, stop;
    for (int dst = 0; dst < count; ++dst) {
      if (dst == src) continue;
      PeerPoint pp;
      pp.src = src;
      pp.dst = dst;
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, src, dst), "cudaDeviceCanAccessPeer");
      pp.can_access = can != 0;
      const std::string what = "peer copy GPU " + std::to_string(src) + " -> GPU " + std::to_string(dst);
      auto copy_of = [&](std::uint64_t bytes) {
        return [&, bytes] { return cudaMemcpyPeerAsync(buf[dst]->p, dst, buf[src]->p, src, bytes, stream.s); };
      };
      auto measure = [&](double& GBps, double& latency_us) {
        const Timing big = time_copies(stream.s, o, start, stop, per_copy, what, copy_of(o.peer_bytes));
        const Timing small = time_copies(stream.s, o, start, stop, per_copy, what, copy_of(4));
        GBps = static_cast<double>(o.peer_bytes) / big.median_s / 1e9;
        latency_us = small.median_s * 1e6;
      };
      measure(pp.off_GBps, pp.off_latency_us);
      if (pp.can_access) {
        // Access both ways, as the samples do, then back to off for the next pair.
        check(cudaDeviceEnablePeerAccess(dst, 0), what + ": cudaDeviceEnablePeerAccess");
        check(cudaSetDevice(dst), "cudaSetDevice(" + std::to_string(dst) + ")");
        const cudaError_t back = cudaDeviceEnablePeerAccess(src, 0);
        if (back != cudaErrorPeerAccessAlreadyEnabled) check(back, what + ": cudaDeviceEnablePeerAccess (reverse)");
        (void)cudaGetLastError();  // clears an already-enabled status
        check(cudaSetDevice(src), "cudaSetDevice(" + std::to_string(src) + ")");
        measure(pp.on_GBps, pp.on_latency_us);
        check(cudaDeviceDisablePeerAccess(dst), what + ": cudaDeviceDisablePeerAccess");
        check(cudaSetDevice(dst), "cudaSetDevice(" + std::to_string(dst) + ")");
        check(cudaDeviceDisablePeerAccess(src), what + ": cudaDeviceDisablePeerAccess (reverse)");
        check(cudaSetDevice(src), "cudaSetDevice(" + std::to_string(src) + ")");
      }
      r.peers.push_back(pp);
    }
  }
  check(cudaSetDevice(o.device), "cudaSetDevice(" + std::to_string(o.device) + ")");
}

}  // namespace

DeviceInfo open_device(int device) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    throw_runtime(std::string("bandwidth: no usable GPU (cudaGetDeviceCount: ") + cudaGetErrorString(rc) +
                  "); check the driver with nvidia-smi, or run on a machine with an NVIDIA GPU");
  }
  if (count == 0) throw_runtime("bandwidth: CUDA reports no GPU; run on a machine with an NVIDIA GPU");
  if (device < 0 || device >= count) {
    throw_parameter(ErrorKind::usage, "cuda_device",
                    std::to_string(device) + ": no such GPU; this machine shows " + std::to_string(count) + " (0.." +
                        std::to_string(count - 1) + ")");
  }
  check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  char bus[32] = {};
  check(cudaDeviceGetPCIBusId(bus, sizeof bus, device), "cudaDeviceGetPCIBusId");
  DeviceInfo info;
  info.index = device;
  info.name = prop.name;
  info.pci_bus_id = bus;
  info.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  info.memory_GiB = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024);
  info.device_count = count;
  return info;
}

BandwidthReport run_bandwidth_test(const BandwidthOptions& o) {
  check_options(o);
  BandwidthReport r;
  r.device = open_device(o.device);
  r.iters = o.iters;
  r.warmup = o.warmup;
  r.repeats = o.repeats;
  const std::size_t max = o.sizes.back();

  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (free_bytes < 2 * max) {
    throw_parameter(ErrorKind::usage, "max_bytes",
                    format_size(max) + ": the test needs two device buffers of that size but GPU " +
                        std::to_string(o.device) + " has " + format_size(free_bytes) + " free; use a smaller size");
  }
  // Everything allocated once at the largest size; host sources hold the pattern, and so does
  // device buffer `a` once a host-to-device copy (or the upload below) has run.
  DeviceBuffer a(max, format_size(max) + " on GPU " + std::to_string(o.device));
  DeviceBuffer b(max, format_size(max) + " on GPU " + std::to_string(o.device));
  std::unique_ptr<PinnedBuffer> pinned;
  std::unique_ptr<unsigned char[]> pageable;
  if (o.pinned || o.d2d) {
    pinned = std::make_unique<PinnedBuffer>(max);
    fill_pattern(pinned->p, max);
  }
  if (o.pageable) {
    pageable.reset(new unsigned char[max]);
    fill_pattern(pageable.get(), max);  // also touches every page before any timing
  }
  Stream stream;
  Event start, stop;
  std::vector<double> per_copy;
  per_copy.reserve(static_cast<std::size_t>(o.repeats));
  check(cudaMemcpy(a.p, pinned ? pinned->p : pageable.get(), max, cudaMemcpyHostToDevice), "initial upload");

  std::vector<CopyPoint> of_size;
  for (const std::uint64_t n : o.sizes) {
    of_size.clear();
    auto add = [&](CopyKind k, HostMemory m, const Timing& t) {
      CopyPoint p{k, m, n, t.median_s, t.min_s, copy_GBps(k, static_cast<double>(n), t.median_s)};
      of_size.push_back(p);
      r.points.push_back(p);
    };
    auto host_pair = [&](HostMemory m, unsigned char* host) {
      const std::string mem(name_of(m));
      add(CopyKind::h2d, m, time_copies(stream.s, o, start, stop, per_copy, "H2D " + mem + " copy", [&] {
            return cudaMemcpyAsync(a.p, host, n, cudaMemcpyHostToDevice, stream.s);
          }));
      add(CopyKind::d2h, m, time_copies(stream.s, o, start, stop, per_copy, "D2H " + mem + " copy", [&] {
            return cudaMemcpyAsync(host, a.p, n, cudaMemcpyDeviceToHost, stream.s);
          }));
      // The round trip must give back the pattern: clear the host bytes, copy them back, compare.
      std::memset(host, 0, n);
      check(cudaMemcpy(host, a.p, n, cudaMemcpyDeviceToHost), "D2H check copy");
      expect_pattern(host, n, "H2D + D2H " + mem + " round trip");
    };
    if (o.pinned) host_pair(HostMemory::pinned, pinned->p);
    if (o.pageable) host_pair(HostMemory::pageable, pageable.get());
    if (o.d2d) {
      check(cudaMemsetAsync(b.p, 0, n, stream.s), "cudaMemsetAsync");  // ordered before the timed copies
      add(CopyKind::d2d, HostMemory::none, time_copies(stream.s, o, start, stop, per_copy, "D2D copy", [&] {
            return cudaMemcpyAsync(b.p, a.p, n, cudaMemcpyDeviceToDevice, stream.s);
          }));
      std::memset(pinned->p, 0, n);
      check(cudaMemcpy(pinned->p, b.p, n, cudaMemcpyDeviceToHost), "D2H check copy");
      expect_pattern(pinned->p, n, "D2D copy");  // and so the pinned source holds the pattern again
    }
    if (o.on_size) o.on_size(n, of_size);
  }
  if (o.peers) measure_peers(o, r.device.device_count, r);
  return r;
}

}  // namespace scalelab::gpu
