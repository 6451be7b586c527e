// A machine: one node's devices (GPUs, CPU sockets, NICs), switches (PCIe switches, NVSwitch) and
// the links between them, times a node count, plus the network joining the nodes. Loaded from a
// machine file (docs/machine-format.md) by topo/machine_file.h, from the built-in catalog by
// topo/catalog.h, or detected for this machine by topo/detect.h. Routes and rings over it are
// in topo/routes.h and topo/ring.h; the cost model (model/) reads all three.
//
// Vertices: devices are vertices 0..devices.size()-1, switches follow. Links join two vertices
// and carry data both ways at once (full duplex): each direction has the link's bandwidth.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topo/gpu_arch.h"
#include "topo/link.h"

namespace scalelab::topo {

enum class DeviceKind { gpu, cpu, nic };

// Which paths a GPU's peer-to-peer access to another GPU may take. `none`: every transfer goes
// through host memory (GeForce RTX 40 cards on the stock driver). `fabric`: peer access only over
// NVLink/xGMI, PCIe transfers through host memory (GeForce RTX 30 cards joined by an NVLink
// bridge: the driver enables P2P over the bridge, not over PCIe). `all`: any path. Ordered from
// least to most, so a pair gets the lesser of its two GPUs' access.
enum class PeerAccess { none, fabric, all };
enum class SwitchKind { pcie, nvswitch };

struct Device {
  std::string id;      // "gpu0"
  DeviceKind kind = DeviceKind::gpu;
  std::string model;   // "V100-SXM2-16GB"
  std::optional<GpuArch> arch;  // GPUs: always set once parsed or detected
  double fp32_tflops = 0;   // GPU peak, dense
  double fp16_tflops = 0;   // GPU tensor-core peak, dense
  double mem_bw_GBps = 0;   // device memory (GPU) or socket memory (CPU)
  double memory_GiB = 0;
  int cores = 0;            // CPU sockets
  std::string generation;   // CPU microarchitecture ("broadwell"), for the socket link's figures
  PeerAccess p2p = PeerAccess::all;  // GPUs: peer-to-peer access to other GPUs (the file's "p2p")
};

struct Switch {
  std::string id;  // "plx0", "nvswitch0"
  SwitchKind kind = SwitchKind::pcie;
};

struct Link {
  int a = -1;  // vertex indices
  int b = -1;
  LinkSpec spec;
  LinkFigures figures;
  // PCIe links to a CPU: the PCIe host bridge (root complex) of the socket the link enters, as
  // `nvidia-smi topo -m` tells them apart (the file's "host_bridge"). Two devices whose route
  // enters and leaves a CPU through different host bridges are NODE, through one PHB; empty
  // means the socket's one host bridge.
  std::string host_bridge;
};

// The fabric between nodes: every NIC port joins a non-blocking network of this type.
struct Network {
  LinkSpec port;              // InfiniBand HDR, one port per NIC unless count says more
  std::string topology = "fat-tree";
  // The share of the NIC figure (link.h's model_GBps) the network transport reaches: 1 for
  // InfiniBand RDMA (NCCL's own figure); below 1 where a measured RoCE or TCP-based transport
  // (GPUDirect-TCPX, sockets) falls short of it. The file's "efficiency".
  double efficiency = 1.0;
};

// The most nodes a machine may have (a machine file's "nodes", simulate --nodes): the largest
// systems built have a few thousand.
inline constexpr int kMaxNodes = 16'384;
// The most GPUs, devices and switches, and links one node may have (a machine file's entries):
// the largest NVLink domain built (DGX GH200) joins 256 GPUs. Past these a file is a mistake, and
// routing it would take minutes and gigabytes.
inline constexpr int kMaxGpusPerNode = 512;
inline constexpr int kMaxVerticesPerNode = 4096;
inline constexpr int kMaxLinksPerNode = 32'768;
// A machine file within those bounds is a few MiB; a larger one is refused before it is parsed.
inline constexpr long long kMaxMachineFileBytes = 64LL << 20;

struct Machine {
  std::string name;    // "dgx1"
  std::string title;   // "NVIDIA DGX-1 with 8 V100 (hybrid cube mesh)"
  std::string origin;  // the file it came from, or "catalog:dgx1", or "detected"
  std::vector<std::string> sources;  // where the figures come from
  std::vector<Device> devices;
  std::vector<Switch> switches;
  std::vector<Link> links;
  int nodes = 1;
  std::optional<Network> network;
  // Pairs of GPUs whose peer access differs from their devices' (the file's "peer_access"), keyed
  // by (lower, higher) device index.
  std::map<std::pair<int, int>, PeerAccess> pair_access;
  // What the reader guessed and the user should know (a format-1 file's GPU architectures), one
  // line each; the commands print them to stderr.
  std::vector<std::string> warnings;

  [[nodiscard]] int vertex_count() const { return static_cast<int>(devices.size() + switches.size()); }
  [[nodiscard]] const std::string& vertex_id(int v) const;
  [[nodiscard]] bool is_device(int v) const { return v < static_cast<int>(devices.size()); }
  [[nodiscard]] bool is_kind(int v, DeviceKind k) const { return is_device(v) && devices[v].kind == k; }
  [[nodiscard]] std::vector<int> gpus() const;  // device indices of the GPUs, in file order
  [[nodiscard]] std::vector<int> nics() const;
  [[nodiscard]] std::vector<int> cpus() const;
  [[nodiscard]] int gpus_per_node() const { return static_cast<int>(gpus().size()); }
  [[nodiscard]] int find_vertex(const std::string& id) const;  // -1 when absent
  // The peer access between two GPUs: the pair's own entry, else the lesser of the two devices'.
  [[nodiscard]] PeerAccess peer_access(int a, int b) const;
};

}  // namespace scalelab::topo
