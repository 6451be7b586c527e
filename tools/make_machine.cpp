// make_machine: writes a machine file (docs/machine-format.md) of a chosen size, for measuring
// how `scalelab topo` and `scalelab predict` scale with the GPUs of a node and the node count.
// Three layouts:
//   nvswitch  N GPUs, each joined to every one of 4 NVSwitches by NVLink 4 (DGX H100-like),
//             one PCIe switch per 4 GPUs with a NIC, two CPU sockets
//   pcie      N GPUs behind PCIe Gen4 switches of 4 GPUs each, switches split between two
//             sockets joined by UPI; no GPU fabric
//   cluster   NODES nodes of the nvswitch layout with N GPUs each, over InfiniBand NDR
//
//   make_machine nvswitch 256 > /tmp/nv256.json
//   make_machine cluster 8 512 > /tmp/cluster4096.json   # 512 nodes x 8 GPUs
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int usage() {
  std::fprintf(stderr, "usage: make_machine nvswitch|pcie GPUS  |  make_machine cluster GPUS_PER_NODE NODES\n");
  return 2;
}

void write(const std::string& style, int gpus, int nodes) {
  const bool nvswitch = style != "pcie";
  const int plx = (gpus + 3) / 4;
  std::printf("{\n \"format\": \"scalelab-machine/2\",\n \"name\": \"gen-%s-%dx%d\",\n", style.c_str(), nodes, gpus);
  std::printf(" \"title\": \"generated: %d node%s of %d GPUs (%s)\",\n", nodes, nodes == 1 ? "" : "s", gpus,
              nvswitch ? "NVSwitch" : "PCIe switches");
  std::printf(" \"sources\": [\"tools/make_machine.cpp\"],\n \"nodes\": %d,\n \"devices\": [\n", nodes);
  for (int c = 0; c < 2; ++c) {
    std::printf("  {\"id\": \"cpu%d\", \"kind\": \"cpu\", \"model\": \"Xeon Platinum 8480C\", \"generation\": "
                "\"sapphirerapids\", \"cores\": 56, \"mem_bw_GBps\": 307},\n", c);
  }
  for (int g = 0; g < gpus; ++g) {
    if (nvswitch) {
      std::printf("  {\"id\": \"gpu%d\", \"kind\": \"gpu\", \"model\": \"H100-SXM5-80GB\", \"arch\": \"hopper\", \"fp32_tflops\": 67, "
                  "\"fp16_tflops\": 989, \"mem_bw_GBps\": 3350, \"memory_GiB\": 80},\n", g);
    } else {
      std::printf("  {\"id\": \"gpu%d\", \"kind\": \"gpu\", \"model\": \"A100-PCIE-40GB\", \"arch\": \"ampere\", \"fp32_tflops\": 19.5, "
                  "\"fp16_tflops\": 312, \"mem_bw_GBps\": 1555, \"memory_GiB\": 40},\n", g);
    }
  }
  for (int n = 0; n < plx; ++n) {
    std::printf("  {\"id\": \"nic%d\", \"kind\": \"nic\", \"model\": \"ConnectX-7 NDR\"}%s\n", n, n + 1 < plx ? "," : "");
  }
  std::printf(" ],\n \"switches\": [\n");
  if (nvswitch) {
    for (int s = 0; s < 4; ++s) std::printf("  {\"id\": \"nvswitch%d\", \"kind\": \"nvswitch\"},\n", s);
  }
  for (int p = 0; p < plx; ++p) std::printf("  {\"id\": \"plx%d\", \"kind\": \"pcie\"}%s\n", p, p + 1 < plx ? "," : "");
  std::printf(" ],\n \"links\": [\n");
  for (int g = 0; g < gpus; ++g) {
    if (nvswitch) {
      for (int s = 0; s < 4; ++s) {
        std::printf("  {\"between\": [\"gpu%d\", \"nvswitch%d\"], \"type\": \"nvlink\", \"gen\": \"4\", \"count\": %d},\n",
                    g, s, s == 0 || s == 3 ? 5 : 4);
      }
    }
    std::printf("  {\"between\": [\"gpu%d\", \"plx%d\"], \"type\": \"pcie\", \"gen\": \"%s\", \"width\": 16},\n", g, g / 4,
                nvswitch ? "5" : "4");
  }
  for (int p = 0; p < plx; ++p) {
    std::printf("  {\"between\": [\"nic%d\", \"plx%d\"], \"type\": \"pcie\", \"gen\": \"5\", \"width\": 16},\n", p, p);
    std::printf("  {\"between\": [\"plx%d\", \"cpu%d\"], \"type\": \"pcie\", \"gen\": \"5\", \"width\": 16},\n", p,
                p < plx / 2 || plx == 1 ? 0 : 1);
  }
  std::printf("  {\"between\": [\"cpu0\", \"cpu1\"], \"type\": \"upi\", \"gen\": \"sapphirerapids\"}\n ]");
  if (nodes > 1) std::printf(",\n \"network\": {\"type\": \"infiniband\", \"gen\": \"ndr\"}");
  std::printf("\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string style = argv[1];
  const int gpus = std::atoi(argv[2]);
  const int nodes = style == "cluster" && argc > 3 ? std::atoi(argv[3]) : 1;
  if ((style != "nvswitch" && style != "pcie" && style != "cluster") || gpus < 1 || nodes < 1 ||
      (style == "cluster") != (argc == 4) || (style != "cluster" && argc != 3)) {
    return usage();
  }
  write(style, gpus, nodes);
  return 0;
}
