// Detection of this machine (see detect.h).
#include "topo/detect.h"

#include <unistd.h>

#include <fstream>

#ifdef SCALELAB_HAVE_HWLOC
#include <hwloc.h>
#endif
#ifdef SCALELAB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace scalelab::topo {

namespace {

struct Host {
  int sockets = 1;
  int cores = 0;
  int numa = 1;
  double memory_GiB = 0;
  std::string cpu_model;
  std::string how = "sysconf";
};

std::string cpu_model_from_proc() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

Host read_host() {
  Host h;
  h.cpu_model = cpu_model_from_proc();
  h.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  h.memory_GiB = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE)) / (1024.0 * 1024 * 1024);
#ifdef SCALELAB_HAVE_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
    h.sockets = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE));
    h.cores = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE));
    h.numa = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
    h.how = "hwloc " HWLOC_VERSION;
    hwloc_topology_destroy(topo);
  }
#endif
  return h;
}

// The socket link's generation, guessed from the CPU's vendor (for its figures only).
LinkSpec socket_link(const std::string& cpu_model) {
  LinkSpec s;
  if (cpu_model.find("AMD") != std::string::npos) {
    s.type = LinkType::amd_fabric;
    s.generation = "milan";
  } else {
    s.type = LinkType::upi;
    s.generation = "skylake";
  }
  return s;
}

void add_link(Machine& m, int a, int b, LinkSpec spec) {
  Link l;
  l.a = a;
  l.b = b;
  l.spec = std::move(spec);
  l.figures = *figures_of(l.spec);
  m.links.push_back(l);
}

#ifdef SCALELAB_HAVE_CUDA
// GPUs and their peers from the CUDA runtime. Link widths are not visible here: PCIe Gen4 x16 to
// the first socket is assumed, and pairs with native peer atomics are taken as one NVLink.
void add_cuda_gpus(Machine& m) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return;  // no driver or no device: leaves count unreliable
  const int first = static_cast<int>(m.devices.size());
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    Device d;
    d.id = "gpu" + std::to_string(i);
    d.kind = DeviceKind::gpu;
    d.model = p.name;
    d.arch = arch_from_compute_capability(p.major, p.minor);
    d.memory_GiB = static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024 * 1024);
    m.devices.push_back(d);
    add_link(m, static_cast<int>(m.devices.size()) - 1, 0, LinkSpec{LinkType::pcie, "4", 1, 16, {}});
  }
  for (int i = 0; i < count; ++i) {
    for (int j = i + 1; j < count; ++j) {
      int atomics = 0;
      if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, i, j) == cudaSuccess && atomics) {
        add_link(m, first + i, first + j, LinkSpec{LinkType::nvlink, "3", 1, 16, {}});
      }
    }
  }
}
#endif

}  // namespace

Machine detect_this_machine() {
  const Host h = read_host();
  Machine m;
  m.name = "this";
  m.origin = "detected";
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  m.title = std::string("this machine (") + host + "): " + h.cpu_model;
  m.sources = {"detected by scalelab (" + h.how + "); shared-memory figures from `scalelab calibrate`"};
  const int per_socket = std::max(1, h.cores / h.sockets);
  for (int s = 0; s < h.sockets; ++s) {
    Device d;
    d.id = "cpu" + std::to_string(s);
    d.kind = DeviceKind::cpu;
    d.model = h.cpu_model;
    d.cores = per_socket;
    d.memory_GiB = h.memory_GiB / h.sockets;
    m.devices.push_back(d);
  }
  for (int s = 1; s < h.sockets; ++s) add_link(m, 0, s, socket_link(h.cpu_model));
#ifdef SCALELAB_HAVE_CUDA
  add_cuda_gpus(m);
#endif
  return m;
}

std::string detection_summary() {
  const Host h = read_host();
  std::string gpu =
#ifdef SCALELAB_HAVE_CUDA
      "GPUs from the CUDA runtime (GPU status (topo --machine this): ran on one GPU only, docs/gpu-status.md)";
#else
      "no GPU: built without CUDA";
#endif
  return h.how + ": " + std::to_string(h.sockets) + " socket(s), " + std::to_string(h.cores) + " core(s), " +
         std::to_string(h.numa) + " NUMA node(s), " + std::to_string(static_cast<int>(h.memory_GiB + 0.5)) +
         " GiB; " + gpu;
}

}  // namespace scalelab::topo
