// The compute sections of a calibration profile (see profile_compute.h).
#include "model/profile_compute.h"

#include <initializer_list>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/profile_fields.h"

namespace scalelab::model {

namespace {

using profile_fields::bad_field;
using profile_fields::kMaxGBps;
using profile_fields::kMaxGflops;
using profile_fields::kMaxTableUs;
using profile_fields::number;
using profile_fields::whole;

nlohmann::json shapes_json(const std::vector<ComputeRates::Shape>& shapes) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : shapes) {
    a.push_back({{"kind", s.kind}, {"m", s.m}, {"n", s.n}, {"k", s.k}, {"batch", s.batch}, {"gflops_per_s", s.flops_per_s * 1e-9}});
  }
  return a;
}

nlohmann::json fused_json(const std::vector<ComputeRates::Fused>& runs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : runs) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : f.layers) {
      layers.push_back({{"kind", l.kind}, {"forward_flops", l.forward_flops}, {"params", l.params}, {"in_elems", l.in_elems},
                        {"out_elems", l.out_elems}});
    }
    a.push_back({{"layers", layers}, {"batch", f.batch}, {"ms_per_image", f.seconds_per_image * 1e3}});
  }
  return a;
}

nlohmann::json traffic_json(const std::vector<ComputeRates::Traffic>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& t : rows) a.push_back({{"kind", t.kind}, {"bytes", t.bytes}, {"GBps", t.bytes_per_s * 1e-9}});
  return a;
}

// The rows of the list at x[name] (absent: none), each an object, handed to `row` with its path
// ("compute.shapes[3]") for errors; `form` names the row's fields in them.
template <typename T, typename Row>
std::vector<T> rows_of(const nlohmann::json& x, const char* name, const std::string& origin, const std::string& key,
                       const char* form, Row row) {
  std::vector<T> out;
  if (!x.contains(name)) return out;
  const nlohmann::json& rows = x[name];
  const std::string list = key + "." + name;
  if (!rows.is_array()) bad_field(origin, list, std::string("is not an array of ") + form);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string at = list + "[" + std::to_string(i) + "]";
    if (!rows[i].is_object()) bad_field(origin, at, std::string("is not a ") + form + " object");
    out.push_back(row(rows[i], at));
  }
  return out;
}

// A row's "kind", one of `kinds`.
std::string kind_of(const nlohmann::json& row, const std::string& origin, const std::string& at,
                    std::initializer_list<const char*> kinds) {
  const nlohmann::json kind = row.value("kind", nlohmann::json());
  std::string list;
  for (const char* k : kinds) {
    if (kind == k) return k;
    list += (list.empty() ? "\"" : ", \"") + std::string(k) + "\"";
  }
  bad_field(origin, at + ".kind", "is " + kind.dump() + ", not one of " + list);
}

std::vector<ComputeRates::Shape> shapes_from(const nlohmann::json& x, const std::string& origin, const std::string& key) {
  return rows_of<ComputeRates::Shape>(x, "shapes", origin, key, "{kind, m, n, k, batch, gflops_per_s}",
                                      [&](const nlohmann::json& r, const std::string& at) {
                                        ComputeRates::Shape s;
                                        s.kind = kind_of(r, origin, at, {"conv", "matmul"});
                                        s.m = number(r, "m", origin, at + ".m", 0, true);
                                        s.n = number(r, "n", origin, at + ".n", 0, true);
                                        s.k = number(r, "k", origin, at + ".k", 0, true);
                                        s.batch = number(r, "batch", origin, at + ".batch", 0, false, 0.0);  // added later
                                        s.flops_per_s = number(r, "gflops_per_s", origin, at + ".gflops_per_s", 0, true,
                                                               std::nullopt, kMaxGflops) * 1e9;
                                        return s;
                                      });
}

std::vector<ComputeRates::Traffic> traffic_from(const nlohmann::json& x, const std::string& origin, const std::string& key) {
  return rows_of<ComputeRates::Traffic>(x, "traffic", origin, key, "{kind, bytes, GBps}",
                                        [&](const nlohmann::json& r, const std::string& at) {
                                          ComputeRates::Traffic t;
                                          t.kind = kind_of(r, origin, at, {"elementwise", "pool", "norm"});
                                          t.bytes = number(r, "bytes", origin, at + ".bytes", 0, true);
                                          t.bytes_per_s = number(r, "GBps", origin, at + ".GBps", 0, true, std::nullopt,
                                                                 kMaxGBps) * 1e9;
                                          return t;
                                        });
}

std::vector<ComputeRates::Fused> fused_from(const nlohmann::json& x, const std::string& origin, const std::string& key) {
  return rows_of<ComputeRates::Fused>(x, "fused", origin, key, "{layers, batch, ms_per_image}",
                                      [&](const nlohmann::json& r, const std::string& at) {
                                        ComputeRates::Fused f;
                                        const std::string list = at + ".layers";
                                        if (!r.contains("layers") || !r["layers"].is_array() || r["layers"].empty()) {
                                          bad_field(origin, list, "is not a non-empty array of {kind, forward_flops, params, in_elems, out_elems}");
                                        }
                                        for (std::size_t i = 0; i < r["layers"].size(); ++i) {
                                          const nlohmann::json& l = r["layers"][i];
                                          const std::string li = list + "[" + std::to_string(i) + "]";
                                          if (!l.is_object()) bad_field(origin, li, "is not a {kind, forward_flops, params, in_elems, out_elems} object");
                                          ComputeRates::FusedLayer fl;
                                          fl.kind = kind_of(l, origin, li, {"conv", "matmul", "pool", "elementwise", "norm"});
                                          fl.forward_flops = number(l, "forward_flops", origin, li + ".forward_flops", 0, false);
                                          fl.params = number(l, "params", origin, li + ".params", 0, false);
                                          fl.in_elems = number(l, "in_elems", origin, li + ".in_elems", 0, true);
                                          fl.out_elems = number(l, "out_elems", origin, li + ".out_elems", 0, true);
                                          f.layers.push_back(fl);
                                        }
                                        f.batch = number(r, "batch", origin, at + ".batch", 0, true);
                                        f.seconds_per_image = number(r, "ms_per_image", origin, at + ".ms_per_image", 0, true,
                                                                     std::nullopt, kMaxTableUs * 1e-3) * 1e-3;
                                        return f;
                                      });
}

}  // namespace

nlohmann::json compute_json(const ComputeRates& c) {
  if (!c.measured) return {{"measured", false}, {"reason", c.reason}};
  return {{"measured", true},
          {"blas", c.blas},
          {"threads", c.threads},
          {"batch", c.batch},
          {"conv_gflops_per_s", c.conv_flops_per_s * 1e-9},
          {"matmul_gflops_per_s", c.matmul_flops_per_s * 1e-9},
          {"elementwise_GBps", c.elementwise_bytes_per_s * 1e-9},
          {"pool_GBps", c.pool_bytes_per_s * 1e-9},
          {"norm_GBps", c.norm_bytes_per_s * 1e-9},
          {"shapes", shapes_json(c.shapes)},
          {"traffic", traffic_json(c.traffic)},
          {"fused", fused_json(c.fused)}};
}

ComputeRates compute_from(const nlohmann::json& j, const std::string& origin, const std::string& key) {
  ComputeRates c;
  if (!j.contains(key)) {
    c.reason = key == "compute" ? "this profile predates the compute measurements (schema_version 3 or older)"
                                : "this profile predates the measurement with every rank computing at once";
    return c;
  }
  const nlohmann::json& x = j[key];
  c.measured = x.at("measured").get<bool>();
  if (!c.measured) {
    c.reason = x.value("reason", std::string("not measured"));
    return c;
  }
  c.blas = x.value("blas", std::string());
  c.threads = whole(x, "threads", origin, key + ".threads", 1, 1);
  c.batch = whole(x, "batch", origin, key + ".batch", 0, 0);
  c.conv_flops_per_s = number(x, "conv_gflops_per_s", origin, key + ".conv_gflops_per_s", 0, true, std::nullopt, kMaxGflops) * 1e9;
  c.matmul_flops_per_s = number(x, "matmul_gflops_per_s", origin, key + ".matmul_gflops_per_s", 0, true, std::nullopt, kMaxGflops) * 1e9;
  c.elementwise_bytes_per_s = number(x, "elementwise_GBps", origin, key + ".elementwise_GBps", 0, true, std::nullopt, kMaxGBps) * 1e9;
  c.pool_bytes_per_s = number(x, "pool_GBps", origin, key + ".pool_GBps", 0, true, std::nullopt, kMaxGBps) * 1e9;
  // Both added after the first compute sections: absent means not measured (0, none).
  c.norm_bytes_per_s = number(x, "norm_GBps", origin, key + ".norm_GBps", 0, false, 0.0, kMaxGBps) * 1e9;
  c.shapes = shapes_from(x, origin, key);
  c.traffic = traffic_from(x, origin, key);
  c.fused = fused_from(x, origin, key);
  return c;
}

}  // namespace scalelab::model
