// Workload basics and the workload file format (see workload.h and docs/workload-format.md):
// layer kinds by name, totals, and the JSON read and written. Every malformed input is one
// input error naming the file, the field and what to write instead.
#include "sim/workload.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace scalelab::sim {

namespace {

using nlohmann::json;

constexpr std::array<std::pair<LayerKind, std::string_view>, 7> kKinds = {{
    {LayerKind::conv, "conv"},
    {LayerKind::matmul, "matmul"},
    {LayerKind::attention, "attention"},
    {LayerKind::norm, "norm"},
    {LayerKind::elementwise, "elementwise"},
    {LayerKind::pool, "pool"},
    {LayerKind::embedding, "embedding"},
}};

constexpr const char* kFormat = "scalelab-workload/1";

std::string kinds_list() {
  std::string out;
  for (std::size_t i = 0; i < kKinds.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == kKinds.size() ? " or " : ", ");
    out += kKinds[i].second;
  }
  return out;
}

// The largest figure a workload file may give per sample (FLOPs, elements, bytes).
constexpr double kMaxPerSample = 1e18;

// Names the file and the field in every message: "<where>: <field>: <problem>; <fix>".
struct Reader {
  std::string where;
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw_input(where + ": " + field + ": " + problem);
  }

  const json& need(const json& obj, const std::string& ctx, const char* key, const char* what) const {
    if (!obj.contains(key)) fail(ctx + key, std::string("missing; give ") + what);
    return obj[key];
  }

  std::string string(const json& obj, const std::string& ctx, const char* key, const char* what, bool required) const {
    if (!required && !obj.contains(key)) return {};
    const json& v = need(obj, ctx, key, what);
    if (!v.is_string()) fail(ctx + key, v.dump() + " is not a string; give " + what);
    return v.get<std::string>();
  }

  double number(const json& v, const std::string& field, const char* what) const {
    if (!v.is_number()) fail(field, v.dump() + " is not a number; give " + what);
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(field, "is not finite; give " + std::string(what));
    if (x < 0) fail(field, v.dump() + " is negative; give " + what + " (0 or more)");
    // Per sample, 1e18 is beyond any network trained (GPT-3's forward pass of a 2048-token
    // sequence is about 7e14 FLOPs): a larger figure is a typo or a unit mixed up.
    if (x > kMaxPerSample) fail(field, v.dump() + " is too large (over 1e18 per sample); give " + what);
    return x;
  }

  std::size_t count(const json& v, const std::string& field, const char* what) const {
    const double x = number(v, field, what);
    if (std::floor(x) != x) fail(field, v.dump() + " is not a whole number; give " + what);
    if (x > 9007199254740992.0) fail(field, v.dump() + " is too large (over 2^53); give " + what);
    return static_cast<std::size_t>(x);
  }

  void only_known(const json& obj, const std::string& ctx, std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : obj.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (ok) continue;
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(ctx + key, "unknown field; the fields are " + list + " (docs/workload-format.md)");
    }
  }
};

WorkloadLayer parse_layer(const Reader& r, const json& j, std::size_t i) {
  const std::string ctx0 = "layers[" + std::to_string(i) + "]";
  if (!j.is_object()) r.fail(ctx0, "is not an object; give {\"name\", \"kind\", \"forward_flops\", \"params\", \"in_elems\", \"out_elems\"}");
  WorkloadLayer l;
  l.name = r.string(j, ctx0 + ".", "name", "the layer's name, e.g. \"layer1.0.conv1\"", true);
  if (l.name.empty()) r.fail(ctx0 + ".name", "is empty; give the layer's name, e.g. \"layer1.0.conv1\"");
  const std::string ctx = ctx0 + " (" + l.name + ").";
  r.only_known(j, ctx, {"name", "kind", "forward_flops", "params", "in_elems", "out_elems", "activation"});
  const std::string kind = r.string(j, ctx, "kind", "one of the layer kinds", true);
  bool found = false;
  for (const auto& [k, n] : kKinds) {
    if (n == kind) {
      l.kind = k;
      found = true;
    }
  }
  if (!found) r.fail(ctx + "kind", "'" + kind + "' is not a layer kind; use " + kinds_list());
  l.forward_flops = r.number(r.need(j, ctx, "forward_flops", "FLOPs per sample (a number)"), ctx + "forward_flops",
                             "the forward FLOPs per sample");
  l.params = r.count(r.need(j, ctx, "params", "the trainable parameter count (0 for none)"), ctx + "params",
                     "the trainable parameter count");
  l.in_elems = r.number(r.need(j, ctx, "in_elems", "input elements per sample"), ctx + "in_elems",
                        "input activation elements per sample");
  l.out_elems = r.number(r.need(j, ctx, "out_elems", "output elements per sample"), ctx + "out_elems",
                         "output activation elements per sample");
  if (j.contains("activation")) {
    l.activation = r.string(j, ctx, "activation", "\"relu\", or leave the field out", true);
    if (l.activation != "relu") r.fail(ctx + "activation", "'" + l.activation + "' is not an activation; use \"relu\" or leave the field out");
  }
  return l;
}

// Whole numbers as JSON integers ("118013952", not "118013952.0"); others as they are.
json number_json(double x) {
  if (x >= 0 && x < 9007199254740992.0 && std::floor(x) == x) return static_cast<std::uint64_t>(x);
  return x;
}

}  // namespace

std::string_view name_of(LayerKind k) {
  for (const auto& [kind, name] : kKinds) {
    if (kind == k) return name;
  }
  return "unknown";
}

LayerKind parse_layer_kind(std::string_view text) {
  for (const auto& [kind, name] : kKinds) {
    if (name == text) return kind;
  }
  std::string detail(1, '\'');
  detail.append(text);
  detail += "' is not a layer kind; use " + kinds_list();
  throw_parameter(ErrorKind::input, "kind", detail);
}

std::size_t Workload::parameters() const {
  std::size_t n = 0;
  for (const auto& l : layers) n += l.params;
  return n;
}

double Workload::forward_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.forward_flops;
  return f;
}

std::optional<GemmShape> gemm_shape(const WorkloadLayer& l, double batch) {
  if (l.kind == LayerKind::matmul && l.in_elems > 0 && l.out_elems > 0 && batch > 0) {
    return GemmShape{batch, l.out_elems, l.in_elems, batch};
  }
  if (l.kind == LayerKind::conv && l.forward_flops > 0 && l.out_elems > 0 && l.params > 0) {
    const double k = l.forward_flops / (2.0 * l.out_elems);
    const double m = static_cast<double>(l.params) / k;
    return GemmShape{m, l.out_elems / m, k, batch};
  }
  return std::nullopt;
}

Workload workload_from_json(const json& j, const std::string& where) {
  const Reader r{where};
  if (!j.is_object()) r.fail("(top level)", "is not a JSON object; a workload file is {\"format\": \"" + std::string(kFormat) + "\", ...}");
  r.only_known(j, "", {"format", "name", "title", "unit", "input_shape", "encoded_sample_bytes", "sources", "layers"});
  const std::string format = r.string(j, "", "format", "\"scalelab-workload/1\"", true);
  if (format != kFormat) r.fail("format", "'" + format + "' is not a workload file format; write \"" + kFormat + "\"");
  Workload w;
  w.name = r.string(j, "", "name", "a short name, e.g. \"resnet50\"", true);
  if (w.name.empty()) r.fail("name", "is empty; give a short name, e.g. \"resnet50\"");
  w.title = r.string(j, "", "title", "one line for humans", false);
  w.unit = r.string(j, "", "unit", "\"images\" or \"sequences\"", true);
  if (w.unit != "images" && w.unit != "sequences") r.fail("unit", "'" + w.unit + "' is not a sample unit; use images or sequences");
  const json& shape = r.need(j, "", "input_shape", "the per-sample input shape, e.g. [3, 224, 224] or [128]");
  if (!shape.is_array() || shape.empty()) r.fail("input_shape", shape.dump() + " is not a non-empty list; give e.g. [3, 224, 224] or [128]");
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::string f = "input_shape[" + std::to_string(i) + "]";
    const std::size_t d = r.count(shape[i], f, "a positive dimension");
    if (d == 0) r.fail(f, "is 0; give a positive dimension");
    w.input_shape.push_back(d);
  }
  // The format's two shapes: an image is [channels, height, width], a sequence [tokens].
  const std::size_t dims = w.unit == "images" ? 3 : 1;
  if (w.input_shape.size() != dims) {
    r.fail("input_shape", shape.dump() + " has " + std::to_string(w.input_shape.size()) + " dimensions; " +
                              (w.unit == "images" ? "an image is [channels, height, width], e.g. [1, 28, 28]"
                                                  : "a sequence is [tokens], e.g. [128]"));
  }
  if (j.contains("encoded_sample_bytes"))
    w.encoded_sample_bytes = r.number(j["encoded_sample_bytes"], "encoded_sample_bytes", "the bytes of one stored sample");
  if (j.contains("sources")) {
    const json& s = j["sources"];
    if (!s.is_array()) r.fail("sources", "is not a list; give a list of strings");
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!s[i].is_string()) r.fail("sources[" + std::to_string(i) + "]", s[i].dump() + " is not a string; give a citation as text");
      w.sources.push_back(s[i].get<std::string>());
    }
  }
  const json& layers = r.need(j, "", "layers", "the layers in forward order");
  if (!layers.is_array() || layers.empty()) r.fail("layers", "is not a non-empty list; give the layers in forward order");
  std::set<std::string> names;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    w.layers.push_back(parse_layer(r, layers[i], i));
    // The step's parts and the timeline name layers: two of one name could not be told apart.
    if (!names.insert(w.layers.back().name).second) {
      r.fail("layers[" + std::to_string(i) + "].name", "'" + w.layers.back().name + "' is the name of an earlier layer; give each layer its own");
    }
  }
  // A step of no FLOPs and no bytes takes no time: the simulator would print 0 samples/s.
  const bool any_work = std::any_of(w.layers.begin(), w.layers.end(), [](const auto& l) {
    return l.forward_flops > 0 || l.params > 0 || l.in_elems > 0 || l.out_elems > 0;
  });
  if (!any_work) r.fail("layers", "no layer has FLOPs, parameters or elements; give each layer's work");
  return w;
}

json to_json(const Workload& w) {
  json j = json::object();
  j["format"] = kFormat;
  j["name"] = w.name;
  if (!w.title.empty()) j["title"] = w.title;
  j["unit"] = w.unit;
  j["input_shape"] = w.input_shape;
  if (w.encoded_sample_bytes > 0) j["encoded_sample_bytes"] = number_json(w.encoded_sample_bytes);
  j["sources"] = w.sources;
  j["layers"] = json::array();
  for (const auto& l : w.layers) {
    j["layers"].push_back({{"name", l.name},
                           {"kind", std::string(name_of(l.kind))},
                           {"forward_flops", number_json(l.forward_flops)},
                           {"params", l.params},
                           {"in_elems", number_json(l.in_elems)},
                           {"out_elems", number_json(l.out_elems)}});
    if (!l.activation.empty()) j["layers"].back()["activation"] = l.activation;
  }
  return j;
}

}  // namespace scalelab::sim
