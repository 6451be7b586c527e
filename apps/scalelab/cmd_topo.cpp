// `scalelab topo`: a machine's topology as `nvidia-smi topo -m` shows it (X, NV#, PIX, PXB, PHB,
// NODE, SYS), each GPU pair's route with its bottleneck bandwidth and latency, and the best ring
// order (NCCL-style channels). --p2p off shows the routes through host memory that
// NCCL_P2P_DISABLE=1 forces. Reads topo/ (catalog, routes, rings); --json writes "scalelab.topo".
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/results.h"
#include "machine_arg.h"
#include "topo/catalog.h"
#include "topo/detect.h"
#include "topo/machine_file.h"
#include "topo/ring.h"
#include "topo/routes.h"

namespace scalelab::cli {

namespace {

using namespace scalelab::topo;

std::string upper_id(const std::string& id) {
  std::string s = id;
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The CPU socket closest to a device (fewest hops over PCIe): its affinity.
std::string affinity(const Machine& m, const RouteFinder& routes, int dev) {
  std::string best = "-";
  std::size_t hops = 1000;
  for (int cpu : m.cpus()) {
    const Route r = routes.route(dev, cpu);
    if (!r.links.empty() && r.links.size() < hops) {
      hops = r.links.size();
      best = m.devices[cpu].id;
    }
  }
  return best;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

void print_matrix(const Machine& m, const RouteFinder& routes, const std::vector<int>& devs) {
  std::printf("%-8s", "");
  for (int d : devs) std::printf("%-7s", upper_id(m.devices[d].id).c_str());
  std::printf("%s\n", "CPU Affinity");
  for (int a : devs) {
    std::printf("%-8s", upper_id(m.devices[a].id).c_str());
    for (int b : devs) std::printf("%-7s", routes.classify(a, b).label.c_str());
    std::printf("%s\n", affinity(m, routes, a).c_str());
  }
  std::printf("\n%s\n", matrix_legend().c_str());
}

nlohmann::json route_json(const Machine& m, const RouteFinder& routes, const Route& r, const PairBandwidth& pb,
                          P2P p2p) {
  return {{"from", m.vertex_id(r.from)},
          {"to", m.vertex_id(r.to)},
          {"class", routes.classify(r.from, r.to).label},
          {"path", describe_route(m, r)},
          {"paths", pb.paths},
          {"model_GBps", pb.model_GBps},
          {"copy_GBps", pb.copy_GBps},
          {"latency_us", {{"LL", r.latency_us[0]}, {"LL128", r.latency_us[1]}, {"Simple", r.latency_us[2]}}},
          {"bottleneck", describe_link(m, r.bottleneck_link)},
          {"p2p", p2p == P2P::on ? "on" : "off"}};
}

}  // namespace

int cmd_topo(const Args& args) {
  po::options_description opts("scalelab topo options");
  opts.add_options()
      ("machine,m", po::value<std::string>()->default_value("this"), "catalog name (see --list), a machine file (docs/machine-format.md), or 'this'")
      ("gpus", po::value<std::string>()->default_value(""), "GPUs to show: positions (0,3) or a count (4); default all of one node")
      ("p2p", po::value<std::string>()->default_value("on"), "on, or off: routes through host memory (NCCL_P2P_DISABLE=1)")
      ("list", "list the catalog and exit")
      ("json", po::value<std::string>(), "write the topology, routes and rings as JSON (schema scalelab.topo)");
  const auto vm = parse(args, "scalelab topo [--machine NAME|FILE] [--gpus 0,3] [--p2p off] [--json FILE]", opts);
  if (!vm) return 0;
  check_output_files(*vm, {"json"});
  if (vm->count("list")) {
    std::printf("%-16s %s\n", "this", "this machine, detected (CPU and NUMA from hwloc; GPUs from CUDA where built)");
    for (const auto& e : catalog()) std::printf("%-16s %s\n", e.name.c_str(), e.title.c_str());
    return 0;
  }
  const std::string p2p_text = (*vm)["p2p"].as<std::string>();
  if (p2p_text != "on" && p2p_text != "off") usage_error(args, "--p2p " + p2p_text + ": use on or off");
  const P2P p2p = p2p_text == "on" ? P2P::on : P2P::off;
  const Machine m = load_machine((*vm)["machine"].as<std::string>());
  const GpuSelection sel = select_gpus(m, gpus_arg(*vm));
  if (sel.nodes > 1) usage_error(args, "--gpus: topo shows one node; give at most " + std::to_string(m.gpus().size()) + " GPUs");

  std::printf("# %s\n# from %s; %d node%s\n", m.title.c_str(), m.origin.c_str(), m.nodes, m.nodes == 1 ? "" : "s");
  for (const auto& s : m.sources) std::printf("# source: %s\n", s.c_str());
  if (m.origin == "detected") std::printf("# %s\n", detection_summary().c_str());
  std::printf("\n");

  nlohmann::json doc = make_envelope("topo", 1, args.full);
  doc["machine_description"] = to_json(m);
  doc["p2p"] = p2p_text;
  doc["gpus"] = nlohmann::json::array();
  for (int g : sel.gpus) doc["gpus"].push_back(m.devices[g].id);

  if (sel.gpus.empty()) {
    std::printf("No GPUs: ranks here are CPU processes that exchange data through shared memory.\n");
    for (int c : m.cpus()) {
      std::printf("  %s: %s, %d core(s)\n", m.devices[c].id.c_str(), m.devices[c].model.c_str(), m.devices[c].cores);
    }
    std::printf("Their latency and bandwidth are measured, not read from a table: run\n"
                "  scalelab run -np 2 -- calibrate\nthen 'scalelab predict allreduce --machine this --ranks 2'.\n");
  } else {
    std::vector<int> devs = sel.gpus;
    for (int n : m.nics()) devs.push_back(n);
    // One finder for every pair: each GPU's routes are searched once (topo/routes.h).
    const RouteFinder routes(m, P2P::on);
    const RouteFinder pair_routes(m, p2p);
    print_matrix(m, routes, devs);
    // The JSON matrix and route list (a few hundred bytes per pair) only when they are written.
    const bool want_json = vm->count("json") > 0;
    for (int a : want_json ? devs : std::vector<int>{}) {
      for (int b : devs) doc["matrix"][m.devices[a].id][m.devices[b].id] = routes.classify(a, b).label;
    }
    std::printf("Routes%s (bandwidth per direction: 'collective' is what NCCL-style transfers reach, 'copy' what a\n"
                "peer copy reaches, both over every path the pair uses at once; latency per hop for the LL /\n"
                "LL128 / Simple protocols):\n",
                p2p == P2P::off ? " with P2P off, through host memory" : "");
    for (std::size_t i = 0; i < sel.gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < sel.gpus.size(); ++j) {
        const Route r = pair_routes.route(sel.gpus[i], sel.gpus[j]);
        const PairBandwidth pb = pair_routes.pair(sel.gpus[i], sel.gpus[j]);
        std::printf("  %-5s %-5s %-5s collective %7s GB/s  copy %7s GB/s  latency %s/%s/%s us  via %s%s\n",
                    m.devices[r.from].id.c_str(), m.devices[r.to].id.c_str(), routes.classify(r.from, r.to).label.c_str(),
                    fmt("%.4g", pb.model_GBps).c_str(), fmt("%.4g", pb.copy_GBps).c_str(), fmt("%.2g", r.latency_us[0]).c_str(),
                    fmt("%.2g", r.latency_us[1]).c_str(), fmt("%.2g", r.latency_us[2]).c_str(), describe_route(m, r).c_str(),
                    pb.paths > 1 ? fmt(" and %.0f more switches like it", pb.paths - 1.0).c_str() : "");
        std::printf("        bottleneck: %s%s\n", describe_link(m, r.bottleneck_link).c_str(),
                    pb.paths > 1 ? fmt(", on each of %.0f switches", static_cast<double>(pb.paths)).c_str() : "");
        if (want_json) doc["routes"].push_back(route_json(m, routes, r, pb, p2p));
      }
    }
    const RingPlan plan = plan_rings(m, sel.gpus, p2p);
    std::printf("\nBest ring order (channels as NCCL builds them; each GPU sends to the next):\n");
    for (std::size_t c = 0; c < plan.channels.size(); ++c) {
      std::string order;
      nlohmann::json ids = nlohmann::json::array();
      for (int g : plan.channels[c].order) {
        order += m.devices[g].id + " -> ";
        ids.push_back(m.devices[g].id);
      }
      order += m.devices[plan.channels[c].order.front()].id;
      std::printf("  channel %zu: %s  %.4g GB/s\n", c, order.c_str(), plan.channels[c].bw_GBps);
      doc["rings"].push_back({{"order", ids}, {"bw_GBps", plan.channels[c].bw_GBps},
                              {"bottleneck", describe_link(m, plan.channels[c].bottleneck_link)}});
    }
    std::printf("  in all: %.4g GB/s per direction; bottleneck: %s\n", plan.bw_GBps, describe_bottleneck(m, plan).c_str());
    doc["ring_bw_GBps"] = plan.bw_GBps;
    doc["ring_bottleneck"] = describe_bottleneck(m, plan);
  }
  if (vm->count("json")) write_json_file((*vm)["json"].as<std::string>(), doc);
  return 0;
}

}  // namespace scalelab::cli
