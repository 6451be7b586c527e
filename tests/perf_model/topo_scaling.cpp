// How long `scalelab topo` and `scalelab predict` take as machines grow: one node of N GPUs on
// NVSwitches and on PCIe switches, and clusters of 8-GPU nodes, each written by tools/make_machine
// and run through the real command (process start included, about 0.05 s). A benchmark program:
// run it by hand for the timing; CTest only checks that it runs (on small sizes).
//
//   build/ci/tests/perf_model/perf_topo_scaling      # one node up to 512 GPUs; 16 to 2,048 nodes of 8
//   build/ci/tests/perf_model/perf_topo_scaling 64   # one node up to 64 GPUs; 16 to 256 nodes of 8
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace {

// Wall seconds of one shell command; exits the benchmark when it fails.
double seconds(const std::string& cmd) {
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    std::fprintf(stderr, "failed (status %d): %s\n", rc, cmd.c_str());
    std::exit(1);
  }
  return s;
}

void row(const std::string& layout, int gpus_per_node, int nodes, const std::string& file) {
  const std::string scalelab = SCALELAB_BIN;
  const std::string machine = " --machine " + file;
  const int gpus = gpus_per_node * nodes;
  const double topo = seconds(scalelab + " topo" + machine + " > /dev/null");
  const double predict = seconds(scalelab + " predict allreduce" + machine + " --gpus " + std::to_string(gpus) + " > /dev/null");
  std::printf("%-9s %6d x %-4d %7d %9.3f %9.3f\n", layout.c_str(), nodes, gpus_per_node, gpus, topo, predict);
}

}  // namespace

int main(int argc, char** argv) {
  const int max_per_node = argc > 1 ? std::atoi(argv[1]) : 512;
  if (max_per_node < 8) {
    std::fprintf(stderr, "usage: perf_topo_scaling [MAX_GPUS_PER_NODE (>= 8, default 512)]\n");
    return 2;
  }
  const std::string make = MAKE_MACHINE_BIN;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("perf_topo_scaling." + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("%-9s %13s %7s %9s %9s\n", "layout", "nodes x GPUs", "GPUs", "topo (s)", "predict (s)");
  for (const char* layout : {"nvswitch", "pcie"}) {
    for (int n = 8; n <= max_per_node; n *= 2) {
      const std::string file = (dir / (std::string(layout) + "-" + std::to_string(n) + ".json")).string();
      seconds(make + " " + layout + " " + std::to_string(n) + " > " + file);
      row(layout, n, 1, file);
    }
  }
  for (int nodes = 16; nodes <= 4 * max_per_node; nodes *= 2) {
    const std::string file = (dir / ("cluster-" + std::to_string(nodes) + ".json")).string();
    seconds(make + " cluster 8 " + std::to_string(nodes) + " > " + file);
    row("cluster", 8, nodes, file);
  }
  std::filesystem::remove_all(dir);
  std::printf("total: %.1f ms\n", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}
