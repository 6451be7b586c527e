// Routes, pair classes, ring channels, GPU fabrics and predictions on every catalog machine and
// on three generated machines (tests/topo/data/generated-*.json, written by tools/make_machine:
// 24 GPUs behind NVSwitches, 24 behind PCIe switches, 4 nodes x 8), compared field by field with
// tests/topo/data/catalog-golden.json. That file pins the answers so that faster algorithms in
// topo/ and model/ cannot change them: it was written by this test, with
//   SCALELAB_WRITE_GOLDEN=1 build/ci/tests/model/test_catalog_golden
// on the code as it was BEFORE routes were computed per source and cached (one widest-path
// search per GPU pair, a scan of every link per vertex). Rewrite it only for a deliberate change
// of the model, and say so in the commit. Numbers are compared to a relative 1e-12.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/predict.h"
#include "topo/catalog.h"
#include "topo/ring.h"
#include "topo/routes.h"

namespace scalelab::model {
namespace {

using nlohmann::json;
using topo::P2P;

const std::string kData = SCALELAB_TOPO_DATA;

json route_json(const topo::Machine& m, int a, int b, P2P p2p) {
  try {
    const topo::Route r = topo::route_between(m, a, b, p2p);
    return {{"vertices", r.vertices}, {"links", r.links}, {"forward", r.forward}, {"model", r.model_GBps},
            {"peak", r.peak_GBps}, {"copy", r.copy_GBps}, {"latency", r.latency_us}, {"bottleneck", r.bottleneck_link},
            {"through_host", r.through_host}, {"host", r.host}};
  } catch (const std::exception& e) {
    return {{"error", e.what()}};
  }
}

json ring_json(const topo::RingPlan& p) {
  json ch = json::array();
  for (const auto& c : p.channels) {
    json edges = json::array();
    for (const auto& e : c.edges) edges.push_back(e.links);
    ch.push_back({{"order", c.order}, {"bw", c.bw_GBps}, {"bottleneck", c.bottleneck_link}, {"edges", edges}});
  }
  return {{"channels", ch}, {"bw", p.bw_GBps}, {"hop_latency", p.hop_latency_us}, {"bottleneck", p.bottleneck_link},
          {"through_host", p.through_host}};
}

json fabric_json(const GpuFabric& f) {
  return {{"ranks", f.ranks}, {"nodes", f.nodes}, {"gpus_per_node", f.gpus_per_node}, {"ring", ring_json(f.ring)},
          {"intra", f.intra_GBps}, {"inter", f.inter_GBps}, {"intra_lat", f.intra_lat_us}, {"inter_lat", f.inter_lat_us},
          {"arch", std::string(topo::name_of(f.arch))}, {"nvswitch", f.nvswitch}, {"nvls_port", f.nvls_port_GBps}, {"gpu_mem", f.gpu_mem_GBps},
          {"pair_min", f.pair_min_GBps}, {"bottleneck", f.bottleneck}};
}

json predictions_json(const topo::Machine& m, const topo::GpuSelection& sel, P2P p2p) {
  const Predictor pr(m, sel, p2p);
  json out = {{"fabric", fabric_json(*pr.fabric())}, {"bottleneck", pr.bottleneck()}, {"where", pr.where()}};
  for (collectives::Collective c : collectives::all_collectives()) {
    for (const auto& a : pr.algorithms(c)) {
      for (double bytes : {8.0, 1048576.0, 1073741824.0}) {
        const Prediction x = pr.predict(c, a, std::nullopt, bytes);
        out["predict"].push_back({std::string(collectives::name_of(c)), a, bytes, x.time_s, x.busbw_GBps, x.algorithm, x.detail});
      }
    }
  }
  return out;
}

json machine_json(const topo::Machine& m) {
  json out;
  const std::vector<int> gpus = m.gpus();
  std::vector<int> devs = gpus;
  for (int n : m.nics()) devs.push_back(n);
  for (int a : devs) {
    for (int b : devs) out["class"].push_back(topo::classify(m, a, b).label);
  }
  for (P2P p2p : {P2P::on, P2P::off}) {
    const std::string key = p2p == P2P::on ? "p2p_on" : "p2p_off";
    json& o = out[key];
    for (int a : gpus) {
      for (int b : gpus) {
        if (a != b) o["routes"].push_back(route_json(m, a, b, p2p));
      }
      for (int c : m.cpus()) o["to_cpu"].push_back(route_json(m, a, c, P2P::on));
    }
    try {
      o["rings"] = ring_json(topo::plan_rings(m, gpus, p2p));
      o["one_node"] = predictions_json(m, topo::select_gpus(m, ""), p2p);
      if (m.nodes > 1) {
        o["two_nodes"] = predictions_json(m, topo::select_gpus(m, std::to_string(2 * gpus.size())), p2p);
        o["all_nodes"] = predictions_json(m, topo::select_gpus(m, std::to_string(m.nodes * gpus.size())), p2p);
      }
    } catch (const std::exception& e) {
      o["error"] = e.what();
    }
  }
  return out;
}

json everything() {
  json out;
  for (const auto& e : topo::catalog()) out[e.name] = machine_json(topo::resolve_machine(e.name));
  for (const char* f : {"generated-nvswitch-24", "generated-pcie-24", "generated-cluster-4x8"}) {
    topo::Machine m = topo::resolve_machine(kData + "/" + f + ".json");
    m.origin = f;  // error messages name the file; keep them independent of the checkout's path
    out[f] = machine_json(m);
  }
  return out;
}

// Where `now` differs from `golden` ("" when nowhere): numbers within a relative 1e-12 of each
// other count as equal, so that the order of a formula's additions and the compiler's fused
// multiply-adds (the last bit of a double) do not count as a change of the model.
std::string first_difference(const json& golden, const json& now, const std::string& path) {
  if (golden.is_number() && now.is_number()) {
    const double g = golden.get<double>(), n = now.get<double>();
    const bool same = g == n || std::abs(g - n) <= 1e-12 * std::max(std::abs(g), std::abs(n));
    return same ? "" : path + ": " + golden.dump() + " recorded, " + now.dump() + " now";
  }
  if (golden.type() != now.type() || golden.size() != now.size()) {
    return path + ": " + golden.dump().substr(0, 200) + " recorded, " + now.dump().substr(0, 200) + " now";
  }
  if (golden.is_object()) {
    for (const auto& [key, value] : golden.items()) {
      if (!now.contains(key)) return path + "/" + key + ": missing now";
      if (std::string d = first_difference(value, now[key], path + "/" + key); !d.empty()) return d;
    }
    return "";
  }
  if (golden.is_array()) {
    for (std::size_t i = 0; i < golden.size(); ++i) {
      if (std::string d = first_difference(golden[i], now[i], path + "/" + std::to_string(i)); !d.empty()) return d;
    }
    return "";
  }
  return golden == now ? "" : path + ": " + golden.dump() + " recorded, " + now.dump() + " now";
}

TEST(CatalogGolden, ComparisonIgnoresTheLastBitsOnlyOfNumbers) {
  EXPECT_EQ(first_difference(json{{"t", 9.854599020431824e-05}}, json{{"t", 9.854599020431821e-05}}, ""), "");
  EXPECT_NE(first_difference(json{{"t", 9.8545990204e-05}}, json{{"t", 9.8545990205e-05}}, ""), "");
  EXPECT_NE(first_difference(json{{"a", "ring"}}, json{{"a", "tree"}}, ""), "");
  EXPECT_NE(first_difference(json::array({1, 2}), json::array({1, 2, 3}), ""), "");
}

TEST(CatalogGolden, EveryAnswerMatchesTheRecordedOne) {
  const std::string path = kData + "/catalog-golden.json";
  // Through text, as the file was written (a NaN, "not available here", becomes null).
  const json now = json::parse(everything().dump());
  if (std::getenv("SCALELAB_WRITE_GOLDEN") != nullptr) {
    std::ofstream(path) << now.dump(0) << "\n";
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const json golden = json::parse(in);
  ASSERT_EQ(golden.size(), now.size());
  for (const auto& [name, g] : golden.items()) {
    ASSERT_TRUE(now.contains(name)) << name;
    const std::string diff = first_difference(g, now[name], "");
    EXPECT_TRUE(diff.empty()) << name << ": first difference at " << diff;
  }
}

}  // namespace
}  // namespace scalelab::model
