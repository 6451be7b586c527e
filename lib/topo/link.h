// Link types and the public figures scalelab uses for them (docs/machine-format.md lists the
// sources). A link in a machine file names a type and a generation ("nvlink" gen 2, 2 links;
// "pcie" gen 3 x16; "upi"); this file turns that into the numbers the router and the cost model
// read:
//   peak_GBps   signalling rate per direction (what a bulk peer copy approaches on NVLink/PCIe)
//   model_GBps  what a collective achieves per direction: NCCL's topology-model figure
//               (NVIDIA/nccl src/graph/topo.h), the number NCCL's own tuner uses
//   latency_us  per-hop latency by protocol (LL, LL128, Simple), NCCL's tuner (tuning.cc)
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace scalelab::topo {

enum class LinkType { nvlink, xgmi, pcie, qpi, upi, amd_fabric, infiniband, ethernet, memory };

// The three NCCL-like protocols, in NCCL's order.
enum class Protocol { ll, ll128, simple };
inline constexpr std::array<Protocol, 3> kProtocols{Protocol::ll, Protocol::ll128, Protocol::simple};
[[nodiscard]] std::string_view name_of(Protocol p);  // "LL", "LL128", "Simple"
[[nodiscard]] std::optional<Protocol> parse_protocol(std::string_view text);

// How a link is described in a machine file.
struct LinkSpec {
  LinkType type = LinkType::pcie;
  std::string generation;  // "2" for NVLink 2, "3" for PCIe Gen3, "hdr" for InfiniBand HDR, "skylake" for UPI
  int count = 1;           // NVLink/xGMI: parallel links; NICs: ports
  int width = 16;          // PCIe lanes
  std::optional<double> bw_override_GBps;  // a measured or vendor figure replacing the table's
};

// Figures derived from a LinkSpec.
// The share of a PCIe link's signalling rate that carries data in a copy: 128-byte payloads (the
// maximum payload size GPU platforms commonly negotiate) each wrapped in about 26 bytes of
// transaction-layer header (16 for 64-bit addresses), sequence number, LCRC and framing (PCI
// Express Base Specification, TLP format). Flow-control and acknowledgement packets, and
// read-completion splitting, are left out.
inline constexpr double kPcieCopyEfficiency = 128.0 / (128.0 + 26.0);

struct LinkFigures {
  double peak_GBps = 0;   // per direction
  double model_GBps = 0;  // per direction, what collectives reach (NCCL's topology model)
  double copy_GBps = 0;   // per direction, what a copy engine's transfer reaches: PCIe loses each
                          // packet's header and framing (kPcieCopyEfficiency); other links: peak
  std::array<double, 3> latency_us{};  // per hop, by Protocol
};

[[nodiscard]] std::string_view name_of(LinkType t);  // "nvlink", "pcie", ...
[[nodiscard]] std::optional<LinkType> parse_link_type(std::string_view text);
// The generations a type accepts, for error messages ("2, 3, 4").
[[nodiscard]] std::string generations_of(LinkType t);
// Figures for a spec; nullopt when the generation is unknown for the type.
[[nodiscard]] std::optional<LinkFigures> figures_of(const LinkSpec& spec);
// "NVLink 2 x2", "PCIe Gen3 x16", "UPI (Skylake)", "InfiniBand HDR".
[[nodiscard]] std::string describe(const LinkSpec& spec);

// Is this link a CPU-to-CPU (socket) interconnect? (QPI, UPI, AMD Infinity Fabric)
[[nodiscard]] bool is_cpu_interconnect(LinkType t);
// Is this a GPU-to-GPU fabric link (NVLink, xGMI)?
[[nodiscard]] bool is_gpu_fabric(LinkType t);
[[nodiscard]] bool is_network(LinkType t);
// Is a CPU of this generation ("rome", "skylake") an AMD one? (NCCL's tuner picks some figures
// by the CPU's vendor.)
[[nodiscard]] bool is_amd_cpu_generation(std::string_view generation);
// An Intel one ("broadwell", "skylake", "sapphirerapids": the QPI and UPI generations)?
[[nodiscard]] bool is_intel_cpu_generation(std::string_view generation);

}  // namespace scalelab::topo
